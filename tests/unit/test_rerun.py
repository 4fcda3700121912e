"""What `workbench runs rerun` runs (drive/rerun.py): the stored run's phase, files and
properties; its recorded properties when a file changed; secrets from the cluster or -p only."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_results_builders import build_run

from workbench.config.spec import spec_from_args
from workbench.drive.rerun import is_masked, plan_rerun
from workbench.errors import WorkbenchError
from workbench.results.manifest import build_manifest
from workbench.results.masking import masked


def stored(tmp_path, *overrides: str, content: bytes = b"recordcount=100\noperationcount=300\n"):
    """A run as the store gives it back: masked properties, a manifest made from its -P file."""
    workload = tmp_path / "w.properties"
    workload.write_bytes(content)
    spec, props = spec_from_args([str(workload)], list(overrides), "run")
    manifest = build_manifest(spec, props.as_dict(), "run", files=[str(workload)], argv=["workbench"])
    return replace(build_run(ticks=1), phase="run", properties=masked(props.as_dict()),
                   manifest=manifest), workload


def test_the_same_files_and_overrides_give_the_same_properties(tmp_path):
    result, workload = stored(tmp_path, "db=memory", "seed=3")
    rerun = plan_rerun(5, result)
    assert (rerun.phase, rerun.files, rerun.overrides, rerun.warnings) == \
        ("run", (str(workload),), ("db=memory", "seed=3"), ())
    _, props = spec_from_args(list(rerun.files), list(rerun.overrides), rerun.phase)
    assert props.as_dict() == result.properties


def test_a_changed_file_is_said_and_the_recorded_properties_are_run(tmp_path):
    result, workload = stored(tmp_path, "db=memory")
    workload.write_bytes(b"recordcount=100\noperationcount=999\n")
    rerun = plan_rerun(5, result)
    [warning] = rerun.warnings
    assert str(workload) in warning and "changed" in warning and "recorded properties" in warning
    assert rerun.files == ()
    _, props = spec_from_args([], list(rerun.overrides), "run")
    assert props.as_dict() == result.properties  # operationcount=300, as the run had it
    workload.unlink()
    assert "is gone" in plan_rerun(5, result).warnings[0]


def test_a_run_recorded_before_manifests_runs_with_its_properties(tmp_path):
    result, _ = stored(tmp_path, "db=memory")
    rerun = plan_rerun(5, replace(result, manifest={}))
    assert "before runs had manifests" in rerun.warnings[0]
    assert dict(o.split("=", 1) for o in rerun.overrides) == result.properties


def test_secrets_come_from_the_cluster_or_from_p_and_p_sets_nothing_else(tmp_path):
    result, _ = stored(tmp_path, "db=memory", "cassandra.password=hunter2", "seed=3")
    assert "hunter2" not in repr(result)
    with pytest.raises(WorkbenchError, match="does not keep") as no_secret:
        plan_rerun(5, result)
    assert "runs rerun 5 -p cassandra.password=" in no_secret.value.hint
    given = plan_rerun(5, result, ["cassandra.password=hunter2"])
    assert "cassandra.password=hunter2" in given.overrides
    from_cluster = plan_rerun(5, result, cluster_overrides=["db=cassandra", "cassandra.password=s3"])
    assert "cassandra.password=s3" in from_cluster.overrides and "db=memory" in from_cluster.overrides
    with pytest.raises(WorkbenchError, match="only the secrets"):
        plan_rerun(5, result, ["seed=4"])


def test_an_imported_ycsb_file_cannot_be_run_again(tmp_path):
    result, _ = stored(tmp_path, "db=memory")
    with pytest.raises(WorkbenchError, match="imported from YCSB"):
        plan_rerun(5, replace(result, source="ycsb-text"))


def test_masked_values():
    assert is_masked("cassandra.password", "***") and is_masked("mongodb.url", "mongodb://u:***@h/db")
    assert not is_masked("cassandra.password", "x") and not is_masked("label", "***")
