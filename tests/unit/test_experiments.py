"""Experiment files: the shipped ones expand to the runs their studies make; mistakes are one
line naming the file and key; a run is resumed without repeating what completed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.errors import ConfigError
from workbench.experiments import plan
from workbench.results.store import RunStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name, steps, runs", [
    ("cassandra-vs-hbase-ops", 2 * 2 * 3, 2 * 2 * 3 * 3),
    ("cassandra-records-lanes", 5 * 3 * 7, 5 * 3 * 7 * 3),
    ("cassandra-nodes", 2, 2 * 3),
])
def test_shipped_experiments_expand_to_their_studies_runs(name, steps, runs):
    e = plan.load(name)
    assert len(e.steps()) == steps
    planned = e.runs()
    assert len(planned) == runs
    assert len({(r.step.key, r.repetition) for r in planned}) == runs  # no run twice
    # one database after the other: its runs are contiguous
    targets = [r.step.target for r in planned]
    assert targets == sorted(targets, key=list(e.targets).index)
    assert "laptop" in e.scales


def test_random_order_is_reproducible_and_scales_divide_the_counts():
    e = plan.load("cassandra-vs-hbase-ops")
    assert [(r.step.key, r.repetition) for r in e.runs()] == [(r.step.key, r.repetition) for r in e.runs()]
    assert [r.repetition for r in e.runs()] != sorted(r.repetition for r in e.runs())  # shuffled
    run = next(r for r in e.runs() if dict(r.step.values)["operationcount"] == 300000)
    full = dict(o.split("=", 1) for o in e.overrides(run, "full"))
    laptop = dict(o.split("=", 1) for o in e.overrides(run, "laptop"))
    assert (full["operationcount"], full["recordcount"]) == ("300000", "100000")
    assert (laptop["operationcount"], laptop["recordcount"]) == ("15000", "5000")
    assert laptop["threadcount"] == "16"  # not a count: never scaled
    with pytest.raises(ConfigError, match="no scale 'phone'"):
        e.overrides(run, "phone")


BASE = '''databases = ["memory"]
workloads = ["workloada"]
[sweep]
operationcount = [100, 200]
'''


@pytest.mark.parametrize("text, says", [
    ("colour = 'red'\n" + BASE, "key 'colour' is unknown"),
    (BASE.replace("[100, 200]", "[]"), "key 'sweep.operationcount' has no values"),
    (BASE.replace("operationcount =", "warpfactor ="), "key 'sweep.warpfactor' is not a parameter"),
    (BASE.replace('"memory"', '"mongodb"'), "key 'databases' names an unknown database 'mongodb'"),
    (BASE.replace('"workloada"', '"workloadz"'), "key 'workloads' names 'workloadz'"),
    (BASE.replace('["memory"]', '["memory", "memory"]'), "key 'databases' lists memory twice"),
    ('settle = "vacuum"\n' + BASE, "key 'settle' is 'vacuum'"),
    ("repetitions = 0\n" + BASE, "key 'repetitions' must be a whole number"),
    ("databases = [\n", "not valid TOML"),
])
def test_a_mistake_in_an_experiment_file_is_one_line_naming_file_and_key(tmp_path, text, says):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=None) as caught:
        plan.load(str(path))
    assert says in str(caught.value) and str(path) in str(caught.value)


def workbench(store: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_STORE=str(store))
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def test_a_bad_swept_value_is_refused_before_anything_runs(tmp_path):
    path = tmp_path / "bad-value.toml"
    path.write_text(BASE.replace("operationcount = [100, 200]", 'requestdistribution = ["zipfian", "bogus"]'))
    store = tmp_path / "runs.db"
    proc = workbench(store, "experiment", "run", str(path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().startswith("workbench: error:") and "bogus" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not store.exists()  # nothing ran, nothing was recorded


def test_an_experiment_killed_after_its_second_run_resumes_with_only_the_rest(tmp_path):
    """Four paced runs of about a second each; SIGKILL once two completed; run it again."""
    path = tmp_path / "resume.toml"
    path.write_text('''description = "resume test"
databases = ["memory"]
workloads = ["workloada"]
repetitions = 2
order = "random"
seed = 11
[properties]
recordcount = 200
target = 1000
"snapshot.interval" = 0.2
[sweep]
operationcount = [800, 1200]
''')
    store = tmp_path / "runs.db"
    env = dict(os.environ, WORKBENCH_STORE=str(store))
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "experiment", "run", str(path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)

    def completed() -> list[tuple[str, int]]:
        if not store.exists():
            return []
        with RunStore(store, write=False) as s:
            return [(step, rep) for _, step, rep, status in s.experiment_runs("resume", "full")
                    if status == "completed" and rep]

    try:
        deadline = time.monotonic() + 180
        while len(completed()) < 2:
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "two runs did not complete"
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    first = completed()
    assert 2 <= len(first) < 4, first  # killed with two (rarely three) runs done
    again = workbench(store, "experiment", "run", str(path))
    assert again.returncode == 0, again.stderr
    assert f"{4 - len(first)} of 4 runs to make, {len(first)} done already" in again.stderr
    after = completed()
    assert sorted(after) == sorted({(f"memory/workloada/operationcount={n}", r)
                                    for n in (800, 1200) for r in (1, 2)})
    assert after[:len(first)] == first  # the finished ones were not made again
    shown = workbench(store, "experiment", "show", str(path))
    assert "4 done, 0 to make" in shown.stdout
    assert "memory/workloada/operationcount=1200" in shown.stdout  # the summary table


def test_show_gives_each_steps_confidence_interval_and_welchs_test_between_the_databases(tmp_path):
    from engine_helpers import cleanup_store, make_spec, run_phase
    from scipy import stats

    from workbench.results.from_run import to_run_result
    from workbench.results.store import ExperimentTag

    path = tmp_path / "pair.toml"
    path.write_text('databases = ["memory", "cassandra"]\nworkloads = ["workloadc"]\nrepetitions = 3\n'
                    "[properties]\nrecordcount = 100\noperationcount = 300\n")
    spec, props = make_spec("recordcount=100", "operationcount=300")
    outcome, _ = run_phase(spec)
    cleanup_store(spec)
    result = to_run_result(outcome, props.as_dict())
    figures = {"memory": [1000.0, 1100.0, 1050.0], "cassandra": [700.0, 760.0, 650.0]}
    store = tmp_path / "runs.db"
    with RunStore(store) as s:  # what three repetitions on each database would have recorded
        for db, values in figures.items():
            for rep, throughput in enumerate(values, start=1):
                run_id = s.begin(phase="run", db=db, workload="workloadc", label="pair", source="experiment",
                                 properties={}, environment={},
                                 experiment=ExperimentTag("pair", f"{db}/workloadc", rep, "full"))
                result.throughput = throughput
                s.finish(run_id, result)
    shown = workbench(store, "experiment", "show", str(path))
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "6 done, 0 to make" in text
    low, high = stats.t.interval(0.95, 2, loc=1050.0, scale=stats.sem(figures["memory"]))
    assert f"{low:,.0f} - {high:,.0f}" in text  # the memory step's 95% CI
    p = stats.ttest_ind(figures["memory"], figures["cassandra"], equal_var=False).pvalue
    assert "Welch's t-test" in text and f"{p:.4f}" in text
