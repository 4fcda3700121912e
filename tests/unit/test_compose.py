"""The composition behind the Workload screen: changes, checks, command line, saved file."""

from __future__ import annotations

from workbench.config.compose import Composition, curve, field_of, workload_path
from workbench.config.spec import spec_from_args


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
    c.cluster = "no-such-cluster"
    assert "-p db=hbase" not in c.command_line() and "--cluster no-such-cluster" in c.command_line()
    spec, message, _ = c.check()
    assert spec is None and "no-such-cluster" in message


def test_the_key_preview_is_stable_and_follows_the_distribution():
    c = Composition(workload_path("workloadc"))
    c.set("recordcount", "2000")
    zipf = curve(c.check()[0])
    assert zipf == curve(c.check()[0])  # same spec, same picture
    c.set("requestdistribution", "uniform")
    uniform = curve(c.check()[0])
    assert [f for f, _ in zipf] == [0.001, 0.01, 0.1, 0.5]
    assert uniform[2][1] < 0.15 < zipf[2][1]  # the hottest 10% of keys: ~10% vs far more
