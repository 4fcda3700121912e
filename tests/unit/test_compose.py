"""The composition behind the Workload screen: changes, checks, command line, saved file."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from workbench.config import compose
from workbench.config.compose import DEFAULTS, FIELDS, Composition, field_of, workload_path
from workbench.config.spec import KEYS, WorkloadSpec, spec_from_args
from workbench.ui.widgets.key_preview import curve


def test_only_values_that_differ_from_the_base_file_are_changes():
    c = Composition()
    assert c.value("readproportion") == "0.5" and c.value("zipfian.constant") == "0.99"
    c.set("readproportion", "0.5")
    c.set("recordcount", "5000")
    assert c.changes == {"recordcount": "5000"}
    assert c.command_line() == "workbench run -P workloads/workloada -p recordcount=5000"


def test_a_refused_value_names_its_field_with_the_command_line_s_message():
    c = Composition()
    c.set("recordcount", "abc")
    spec, message, key = c.check()
    assert spec is None and key == "recordcount"
    assert message == "-p: recordcount='abc' is not a whole number (write e.g. recordcount=0)"
    c.set("recordcount", "100")
    c.set("zipfian.constant", "1")
    assert c.check()[2] == "zipfian.constant"
    assert field_of("the operation mix is empty: every *proportion is 0 (set readproportion ...)") \
        == "readproportion"


def test_the_saved_file_is_a_workload_the_command_line_accepts(tmp_path):
    c = Composition()
    c.set("requestdistribution", "uniform")
    c.set("operationcount", "2500")
    path = tmp_path / "mine"
    path.write_text(c.workload_text())
    spec, _ = spec_from_args([str(path)], [], "run")
    assert spec.requestdistribution == "uniform" and spec.operationcount == 2500
    assert spec.readproportion == 0.5


def test_a_cluster_sets_the_database_and_drops_a_chosen_db():
    c = Composition()
    c.set("db", "hbase")
    c.cluster = "mine"
    assert "-p db=hbase" not in c.command_line() and "--cluster mine" in c.command_line()
    # The caller looks the cluster's overrides up (drive.targets.cluster_overrides) and hands them in.
    cluster = ["db=cassandra", "hosts=127.0.0.1", "port=9042"]
    assert c.overrides(cluster) == cluster
    spec, message, _ = c.check(cluster=cluster)
    assert message is None and spec.db == "cassandra" and spec.binding_properties["hosts"] == "127.0.0.1"


def test_a_fresh_composition_takes_every_default_from_the_spec(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("")
    c = Composition(str(empty))
    spec = WorkloadSpec()  # YCSB's defaults
    assert set(DEFAULTS) == set(FIELDS)
    for key in FIELDS:
        assert KEYS[key].parse(c.value(key)) == getattr(spec, KEYS[key].attr), key
    assert [c.value(k) for k in ("readproportion", "updateproportion", "target")] == ["0.95", "0.05", "0"]
    assert c.check() == (spec, None, None)


def test_the_base_file_is_parsed_again_only_when_it_changed(tmp_path, monkeypatch):
    path = tmp_path / "mine"
    path.write_text("recordcount=10\noperationcount=10\n")
    reads = []
    merge = compose.merge
    monkeypatch.setattr(compose, "merge", lambda files, more: reads.append(files) or merge(files, more))
    c = Composition(str(path))
    for value in ("11", "12", "13"):  # keystrokes: each one is a set and a check
        c.set("recordcount", value)
        assert c.check()[0].recordcount == int(value)
    assert c.value("operationcount") == "10" and len(reads) == 1
    path.write_text("recordcount=10\noperationcount=20\n")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert c.value("operationcount") == "20" and len(reads) == 2


def test_the_config_layer_imports_nothing_above_it():
    """config/ sits under metrics, bindings, core, clusters, results, drive and the front ends:
    what it needs from them (a cluster's overrides, the key preview) its callers hand in."""
    above = ("core", "clusters", "results", "drive", "experiments", "lessons", "ui", "commands", "cli")
    config = Path(compose.__file__).parent
    for path in config.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                assert not name.startswith(tuple(f"workbench.{m}" for m in above)), f"{path.name}: {name}"


def test_the_key_preview_is_stable_and_follows_the_distribution():
    c = Composition(workload_path("workloadc"))
    c.set("recordcount", "2000")
    zipf = curve(c.check()[0])
    assert zipf == curve(c.check()[0])  # same spec, same picture
    c.set("requestdistribution", "uniform")
    uniform = curve(c.check()[0])
    assert [f for f, _ in zipf] == [0.001, 0.01, 0.1, 0.5]
    assert uniform[2][1] < 0.15 < zipf[2][1]  # the hottest 10% of keys: ~10% vs far more
