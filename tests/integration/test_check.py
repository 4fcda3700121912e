"""`workbench check` on the memory binding: its exit statuses (0 nothing worse, 1 worse, 2 bad input
or not comparable), the baseline file, the JUnit XML read back, "not comparable" said out loud (in
check and in runs compare).

The suite runs with WORKBENCH_CHECK_SCALE=0.15 (drive/check.py: every duration and the snapshot
interval times 0.15, the number of measured intervals kept), about 8 s a check.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.inprocess import workbench
from workbench.drive.check import SCALE_ENV, CheckPlan
from workbench.results.baseline import FIGURES, FORMAT, PHASES
from workbench.results.check_verdicts import judge, parse_tolerances
from workbench.results.comparable import differing
from workbench.results.model import RunResult
from workbench.results.store import RunStore

SCALE = "0.15"


def check(store: Path, *args: str):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SCALE_ENV, SCALE)
        return workbench(store, "check", "-db", "memory", "--quick", "-q", *args)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A check saved as a baseline (and recorded in its store): (store, baseline file, process)."""
    tmp = tmp_path_factory.mktemp("check")
    store, base = tmp / "runs.db", tmp / "baseline.json"
    return store, base, check(store, "--save-baseline", str(base))


@pytest.fixture
def synthetic(tmp_path) -> Path:
    """A baseline file as `check -db memory --quick` would write, its figures made up: for what is
    refused before anything runs."""
    plan = CheckPlan((), ("db=memory",), True, None, float(SCALE))
    figures = {f: {"unit": "ops/s", "value": 1.0, "series": [1.0] * 12} for f in FIGURES[:-1]}
    doc = {"format": FORMAT, "workbench": "0", "db": "memory", "cluster": None,
           "workload_digest": plan.workload_digest(),
           "figures": {**figures, "errors": {"unit": "operations", "value": 0, "operations": 100}},
           "manifests": {p: plan.manifest() for p in PHASES},
           "properties": {p: plan.spec("A")[1] for p in PHASES}}
    path = tmp_path / "synthetic.json"
    path.write_text(json.dumps(doc))
    return path


def edited(base: Path, to: Path, change) -> Path:
    doc = json.loads(base.read_text())
    change(doc)
    to.write_text(json.dumps(doc))
    return to


def test_a_check_without_baseline_saves_one_and_records_its_runs(saved):
    store, base, done = saved
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no baseline" in done.stdout and "throughput A" in done.stdout
    doc = json.loads(base.read_text())
    assert doc["format"] == FORMAT and doc["workbench"] and doc["db"] == "memory"
    assert list(doc["figures"]) == list(FIGURES)
    assert len(doc["figures"]["throughput A"]["series"]) >= 10
    assert doc["figures"]["p99 READ"]["unit"] == "µs"  # Intended-READ: the paced run's response time
    assert doc["manifests"]["A"]["host"]["cpus"] and doc["properties"]["paced"]["target"]
    assert doc["properties"]["A"]["table"] == "workbench_check"
    with RunStore(store, create=False, write=False) as runs:
        rows = runs.list()
    # (no load run on the memory binding: each run's worker process preloads the records)
    assert sorted(r.workload for r in rows) == [f"workbench-check {p}" for p in ("A", "C", "paced")]
    assert {r.source for r in rows} == {"check"}


def test_the_same_check_again_against_the_previous_one_in_the_store_is_not_worse(saved):
    store, _, _ = saved
    # an A/A test: generous tolerances, as the memory binding on a shared machine is noisy. Its
    # intervals see the noise within a run, not a machine that got busier between two runs (the
    # fast tier on three processes beside a three-node server test: C at 262,375 against 612,427
    # ops/s, judged worse): so a second try, and two A/A checks both judged worse fail. The
    # check's own false-alarm rate is bench/bench_check_error_rate.py's to measure (issue 55, 6).
    done = check(store, "--tolerance", "throughput=40", "p99=1000")
    if done.returncode == 1:
        done = check(store, "--tolerance", "throughput=40", "p99=1000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "baseline: the previous check in the run store (A #" in done.stdout
    rows = [line.split() for line in done.stdout.splitlines() if "(-40%)" in line or "(+1000%)" in line]
    # (a loaded machine may leave a paced run too few seconds: "unknown", never "worse")
    assert len(rows) == 4 and all(r[-1] != "worse" for r in rows), done.stdout


def test_a_candidate_held_to_a_tenth_of_the_throughput_is_worse_exit_1_with_junit(saved, tmp_path):
    store, base, _ = saved
    doc = json.loads(base.read_text())
    # a tenth of the slower phase's: -target holds both A and C, and on a loaded machine C's
    # baseline may have been measured below A's (a CI run: C at half A's was not worse than C's
    # baseline)
    target = min(doc["figures"][f"throughput {p}"]["value"] for p in ("A", "C")) / 10

    def steady_on_other_cores(d: dict) -> None:
        # its manifest says other cores: allowed, so the check goes on (exit 1, not 2)
        d["manifests"]["A"]["host"].update(cpus_usable=64)
        # and its throughput held every second: a baseline measured under two busy loops stalls,
        # and its 0.15-s seconds made every difference inconclusive, however large (rehearsal 72:
        # a candidate at a third -75.6% [-143.8, -7.4]; rehearsal 73: at a tenth -91.2% [-283.7,
        # +101.3]). What this test holds is the exit status, the JUnit file and the allowed
        # difference; the intervals are test_significance.py's, the check's power at 80% on a
        # real machine is bench/bench_check_error_rate.py's.
        for phase in ("A", "C"):
            figure = d["figures"][f"throughput {phase}"]
            figure["series"] = [figure["value"]] * len(figure["series"])

    other = edited(base, tmp_path / "cores.json", steady_on_other_cores)
    junit = tmp_path / "check.xml"
    done = check(store, "--no-store", "--baseline", str(other), "-target", f"{target:.0f}",
                 "--allow-different", "cores", "--junit", str(junit))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not comparable: cores differs: 64 (baseline)" in done.stderr and "(allowed)" in done.stderr
    said = done.stdout + done.stderr  # the verdict table too, when it fails
    # worse on a throughput both runs were held on: A, or C where a loaded machine made the
    # baseline's A too noisy to tell (at a third: -68% [-129, -7] once, under two busy loops)
    assert "worse than the baseline" in done.stderr, said
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == list(FIGURES)
    failed = {name for name, c in cases.items() if c.find("failure") is not None}
    # a test case fails for each figure the verdict table says is worse: throughput A always
    # (held to a tenth of it); C, paced at the same target, too on a quiet machine, but a CI run
    # under load once judged it not worse (item 6's error rates are bench_check_error_rate.py's)
    table = {line.split(" (")[0].strip(): line.split()[-1] for line in done.stdout.splitlines()
             if line.strip().startswith(tuple(FIGURES)) and " (" in line}
    assert set(table) == set(FIGURES), done.stdout
    assert failed == {f for f, verdict in table.items() if verdict == "worse"}, said
    assert failed & {"throughput A", "throughput C"} and "errors" not in failed, said
    assert suite.get("failures") == str(len(failed))


@pytest.mark.parametrize(("change", "says"), [
    (lambda d: d["manifests"]["A"]["server"].update(version="9.9.9"), "server.version differs"),
    (lambda d: d["manifests"]["A"]["host"].update(cpus_usable=64), "cores differs: 64"),
])
def test_a_manifest_difference_is_refused_with_the_field_named(synthetic, tmp_path, change, says):
    done = check(tmp_path / "runs.db", "--baseline", str(edited(synthetic, tmp_path / "b.json", change)))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"not comparable: {says}" in done.stderr
    assert "--allow-different" in done.stderr


def _one_line(done, *fragments):
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("workbench: error:"), done.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_bad_input_is_one_line_and_exit_2(synthetic, tmp_path):
    store, base = tmp_path / "runs.db", synthetic
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "something else", "figures": {}}))
    _one_line(check(store, "--baseline", str(other)), "is not a check's baseline", "--save-baseline")
    other.write_text("not json")
    _one_line(check(store, "--baseline", str(other)), "is not JSON")
    _one_line(check(store, "--baseline", str(edited(base, tmp_path / "w.json",
                                                    lambda d: d.update(workload_digest="0" * 64)))),
              "another workload's baseline")
    _one_line(check(store, "--baseline", str(edited(base, tmp_path / "f.json",
                                                    lambda d: d["figures"].pop("p99 UPDATE")))),
              "other figures")
    _one_line(check(store, "--tolerance", "latency=5"), "unknown figure 'latency'", "throughput, p99")
    _one_line(check(store, "--allow-different", "colour"), "--allow-different colour")
    _one_line(workbench(store, "check"), "--cluster NAME or -db memory")


def _doc(errors: int, operations: int = 1000) -> dict:
    figures = {f: {"value": 1.0, "series": [1.0] * 12} for f in FIGURES[:-1]}
    return {"figures": {**figures, "errors": {"value": errors, "operations": operations}}}


@pytest.mark.parametrize(("baseline", "check_", "tolerance", "said"), [
    (0, 0, "any", "same"), (0, 1, "any", "worse"), (3, 0, "any", "better"), (3, 5, "any", "same"),
    (0, 5, "1", "same"), (0, 20, "1", "worse"), (20, 0, "1", "better"),
])
def test_the_errors_verdict(baseline, check_, tolerance, said):
    verdicts = judge(_doc(check_), _doc(baseline), parse_tolerances([f"errors={tolerance}"]))
    assert verdicts[-1].figure == "errors" and verdicts[-1].verdict == said


def test_tolerances_are_parsed_and_override_the_defaults():
    assert parse_tolerances(["throughput=5", "p99=30"]) == {"throughput": 5.0, "p99": 30.0, "errors": "any"}


def test_differing_names_each_result_changing_field():
    a = {"server": {"product": "Cassandra", "version": "5.0.2", "settings": {"read_consistency": "ONE"}},
         "client": {"name": "native"}, "host": {"cpus_usable": 8}, "cluster": {"cpu_caps": "none"}}
    b = {"server": {"product": "Cassandra", "version": "4.1.7", "settings": {"read_consistency": "QUORUM"}},
         "client": {"name": "cassandra-driver"}, "host": {"cpus_usable": 4},
         "cluster": {"cpu_caps": {"n1": 1}}}
    diffs = differing(a, b, {"recordcount": "1000"}, {"recordcount": "2000"})
    assert [d.field for d in diffs] == ["server.version", "client", "recordcount", "cores", "cpu_caps",
                                        "consistency"]
    assert differing(a, a, {}, {}) == [] and differing({}, b) == []


def test_runs_compare_says_not_comparable_for_each_differing_field(tmp_path):
    store = tmp_path / "runs.db"
    manifest = CheckPlan((), ("db=memory",)).manifest()
    result = RunResult("run", "memory", 1000, 100, 100.0, manifest=manifest, properties={"recordcount": "10"})
    with RunStore(store) as runs:
        first = runs.add(result, source="test")
        result.manifest = {**manifest, "server": {**manifest["server"], "version": "9.9.9"}}
        second = runs.add(result, source="test")
    done = workbench(store, "runs", "compare", str(first), str(second))
    assert done.returncode == 0, done.stderr
    assert f"not comparable: server.version differs: 9.9.9 (#{second}" not in done.stdout
    line = next(x for x in done.stdout.splitlines() if x.startswith("not comparable:"))
    assert "server.version differs:" in line and "9.9.9" in line and "baseline" in line
