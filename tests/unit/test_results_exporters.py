"""The --export registry and the importer that detects the format."""

from __future__ import annotations

import pytest
from test_results_builders import build_run, reference

from workbench.errors import ConfigError, WorkbenchError
from workbench.results.exporters import EXPORTERS, export
from workbench.results.importers import import_file
from workbench.results.ycsb_text import format_ycsb_text


def test_registry_names_the_seven_kinds() -> None:
    assert set(EXPORTERS) == {"ycsb", "csv", "timeseries", "hdr", "json", "server-csv", "server-events"}


@pytest.mark.parametrize(("kind", "start"), [
    ("ycsb", "[OVERALL], RunTime(ms), "), ("csv", "measurement,operations,"),
    ("timeseries", "elapsed_s,duration_s,"), ("hdr", "#[Logged with workbench"),
    ("json", "{"), ("server-csv", "elapsed_s,node"), ("server-events", "elapsed_s,node,kind,seconds,detail"),
])
def test_each_kind_writes_its_file(tmp_path, kind: str, start: str) -> None:
    path = tmp_path / f"out.{kind}"
    assert export(build_run(ticks=1), f"{kind}={path}") == path
    assert path.read_text(encoding="utf-8").startswith(start)


def test_ycsb_export_honours_the_layout(tmp_path) -> None:
    run = build_run(ticks=1)
    path = tmp_path / "out.txt"
    export(run, f"ycsb={path}", layout="master")
    assert path.read_text(encoding="utf-8") == format_ycsb_text(run, "master")
    with pytest.raises(ConfigError, match="layout"):
        export(run, f"ycsb={path}", layout="0.16")


@pytest.mark.parametrize("spec", ["xml=out.xml", "out.json", "json=", "=out.json"])
def test_bad_specs_name_the_valid_kinds(spec: str) -> None:
    with pytest.raises(ConfigError) as err:
        export(build_run(ticks=1), spec)
    assert "ycsb, csv, timeseries, hdr, json" in str(err.value)


def test_import_detects_json_and_ycsb_text(tmp_path) -> None:
    run = build_run(ticks=1)
    path = tmp_path / "run.json"
    export(run, f"json={path}")
    assert import_file(path) == run
    imported = import_file(reference("cassandra-workloada-load.txt"))
    assert imported.source == "ycsb-text" and imported.measurement("INSERT").operations == 20000


def test_import_refuses_other_files(tmp_path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n", encoding="utf-8")
    with pytest.raises(WorkbenchError, match="neither"):
        import_file(path)
    with pytest.raises(WorkbenchError, match="cannot read"):
        import_file(tmp_path / "missing.txt")
