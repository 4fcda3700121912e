"""Experiment files: the shipped ones expand to the runs their studies make; mistakes are one
line naming the file and key; a run is resumed without repeating what completed."""

from __future__ import annotations

import itertools
import math
import os
import signal
import statistics
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
    ("five-mixes", 5 * 5, 5 * 5 * 3),  # Cassandra 1-3 nodes, HBase, FerretDB (mongodb)
    ("hbase-storage", 3 * 2 * 2, 3 * 2 * 2 * 3),
    ("saturation", 2 * (1 + 8), 2 * (1 + 8) * 3),
    ("elastic-speedup", 1 + 1, (1 + 1) * 3),  # the calibration, then 90% of it with a node joining
    ("scaleup", 3, 3 * 3),  # 1, 2, 3 nodes
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
    # every shipped study measures for seconds at its laptop scale, after a warm-up
    assert e.window_s("laptop") >= 5 and e.warmup_s >= 3 and e.first_warmup_s >= 60
    overrides = dict(o.split("=", 1) for o in e.overrides(planned[0], "laptop", unthrottled=1000.0))
    assert float(overrides["measurement.minimum"]) >= 5 and float(overrides["measurement.warmup"]) >= 3


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


def test_cluster_sweeps_start_a_cluster_per_shape_and_calibration_runs_come_first(tmp_path):
    path = tmp_path / "shapes.toml"
    path.write_text('''databases = ["cassandra:cassandra-3"]
workloads = ["workloada", "workloadc"]
repetitions = 2
order = "random"
seed = 4
[sweep]
nodes = [1, 3]
rate = [50, 100]
''')
    e = plan.load(str(path))
    runs = e.runs()
    assert len(runs) == 2 * 2 * 3 * 2  # workloads x nodes x (max, 50, 100) x repetitions
    shapes = [r.step.cluster_values for r in runs]
    # one cluster, then the other
    assert shapes == sorted(shapes, key=[(("nodes", 1),), (("nodes", 3),)].index)
    for shape in set(shapes):
        rates = [r.step.rate for r in runs if r.step.cluster_values == shape]
        assert rates[:4] == ["max"] * 4 and "max" not in rates[4:]  # calibration runs first
    one, three = (e.cluster_spec(next(r.step for r in runs if r.step.cluster_values == (("nodes", n),)))
                  for n in (1, 3))
    assert (one.nodes, one.replication_factor) == (1, 1)  # the preset's factor 2, capped at 1 node
    assert (three.nodes, three.replication_factor) == (3, 2)
    paced = next(r for r in runs if r.step.rate == 50)
    assert paced.step.calibration().key == paced.step.key.replace("rate=50", "rate=max")
    assert "target=1235" in e.overrides(paced, "full", unthrottled=2470.0)
    with pytest.raises(ConfigError, match="needs the throughput of"):
        e.overrides(paced, "full")
    storage = plan.load("hbase-storage")
    ram = next(s for s in storage.steps() if dict(s.values)["storage"] == "ram")
    assert storage.cluster_spec(ram).data_dir == "/dev/shm"
    assert storage.cluster_spec(ram.calibration()).data_dir == "/dev/shm"


def test_runs_of_one_record_count_follow_one_load_of_it(tmp_path):
    """A load drops the table: runs are grouped by record count (shuffled within), so each
    record count is loaded once and every run reads the table its step asks for."""
    lanes = plan.load("cassandra-records-lanes")
    counts = [dict(r.step.values)["recordcount"] for r in lanes.runs()]
    assert [k for k, _ in itertools.groupby(counts)] == [100000, 300000, 500000]
    path = tmp_path / "records.toml"
    path.write_text('''databases = ["memory"]
workloads = ["workloadc"]
repetitions = 2
order = "random"
warmup_s = 0
min_measure_s = 0
[properties]
operationcount = 50
[sweep]
recordcount = [100, 300]
lanes = [1, 2]
''')
    store = tmp_path / "runs.db"
    done = workbench(store, "experiment", "run", str(path))
    assert done.returncode == 0, done.stderr
    with RunStore(store, write=False) as s:
        made = [(step, rep) for _, step, rep, _ in s.experiment_runs("records", "full")]
    assert [step for step, rep in made if rep == 0] == ["load memory/workloadc"] * 2
    order = ["load" if rep == 0 else step.split("recordcount=")[1].split(",")[0] for step, rep in made]
    assert order == ["load"] + ["100"] * 4 + ["load"] + ["300"] * 4  # a load, then its four runs


def test_a_saturation_sweep_paces_each_rate_at_its_share_of_the_unthrottled_throughput(tmp_path):
    """End to end on the memory binding: unthrottled runs first, then paced runs whose target is
    the percentage of their mean, in rising order; the sweep goes on past its listed rates (50
    points at a time) until a step is saturated, then stops; deleting the top of the curve and
    running again continues it from there. The report names the knee under the bound."""
    path = tmp_path / "sat.toml"
    path.write_text('''databases = ["memory"]
workloads = ["workloada"]
repetitions = 2
p99_bound_ms = 1000
warmup_s = 0
min_measure_s = 0
[properties]
recordcount = 100
operationcount = 18000
"measurement.interval" = "both"
[sweep]
rate = [5, 10]
''')
    # 18,000 operations: at 5% a paced run lasts 20 times an unthrottled one (about 6 s here), so
    # that a loaded machine's stall does not make it fall under 90% of its target (600 did once
    # in a CI rehearsal under two busy loops, 3,000 did once more, in session 52's, and 9,000 in
    # rehearsal 71: the 5% step was called saturated and the sweep ended there)
    store = tmp_path / "runs.db"
    done = workbench(store, "experiment", "run", str(path))
    assert done.returncode == 0, done.stderr

    def made() -> list[tuple[int, str, int, float, str | None]]:
        with RunStore(store, write=False) as s:
            return [(run_id, step, rep, s.row(run_id).throughput, s.result(run_id).properties.get("target"))
                    for run_id, step, rep, status in s.experiment_runs("sat", "full")
                    if rep and status == "completed"]

    def rate(step: str) -> float:
        return float(step.split("rate=")[1])

    runs = made()
    assert [step for _, step, *_ in runs][:2] == ["memory/workloada/rate=max"] * 2
    unthrottled = sum(t for _, step, _, t, _ in runs if step.endswith("max")) / 2
    paced = [r for r in runs if not r[1].endswith("max")]
    targets = {step: target for _, step, _, _, target in paced}
    assert targets["memory/workloada/rate=5"] == str(round(unthrottled * 0.05))
    assert targets["memory/workloada/rate=10"] == str(round(unthrottled * 0.10))
    rates = [rate(step) for _, step, *_ in paced]
    assert rates == sorted(rates) and rates[:4] == [5, 5, 10, 10]  # rising, repetitions together
    steps = list(dict.fromkeys(rates))
    assert steps[2:] == [60 + 50 * k for k in range(len(steps) - 2)]  # past the list, 50 at a time

    def achieved_share(r: float) -> float:
        mine = [(t, float(target)) for _, step, _, t, target in paced if rate(step) == r]
        return sum(t for t, _ in mine) / sum(o for _, o in mine)
    assert all(achieved_share(r) >= 0.9 for r in steps[:-1])  # none below the top was saturated
    assert achieved_share(steps[-1]) < 0.9 or steps[-1] == 1000  # the top is: the sweep ended there
    if achieved_share(10) >= 0.9:  # the list's top kept up: the sweep went on past it
        assert len(steps) > 2, steps
    assert f"saturated at {steps[-1]:g}%" in done.stderr or steps[-1] == 1000

    report = workbench(store, "report", str(path), "--out", str(tmp_path / "out"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "out" / "sat-full.html").read_text()
    assert 'data-chart="saturation"' in page and "p99 bound 1 ms" not in page and "p99 bound 1000 ms" in page
    assert 'data-chart="offered"' in page and "Little" in page
    assert "saturation: response time against throughput" in report.stdout
    row = next(line for line in report.stdout.splitlines() if line.strip().startswith("memory workloada"))
    assert f"{steps[-2]:g}% = " in row  # the knee: the highest unsaturated step, under a 1 s bound

    # the top two steps deleted: the sweep is made again from the first missing step up
    top = [str(run_id) for run_id, step, *_ in paced if rate(step) >= steps[-2]]
    assert workbench(store, "runs", "delete", *top).returncode == 0
    kept = [run_id for run_id, *_ in made()]
    shown = workbench(store, "experiment", "show", str(path))
    assert shown.returncode == 0, shown.stderr
    assert f"next: memory/workloada/rate={steps[-2]:g} repetition 1, -p " in shown.stdout
    again = workbench(store, "experiment", "run", str(path))
    assert again.returncode == 0, again.stderr
    after = made()
    assert [run_id for run_id, *_ in after][:len(kept)] == kept  # nothing made twice
    resumed = [rate(step) for _, step, *_ in after[len(kept):]]
    assert resumed[:2] == [steps[-2]] * 2 and resumed == sorted(resumed)
    # a sweep that ended has nothing left to make, though its list had more rates
    ended = workbench(store, "experiment", "run", str(path))
    assert ended.returncode == 0 and "runs are done already" in ended.stderr, ended.stderr
    # every listed rate done, the sweep's added top step deleted: it is made again
    top_rate = max(rate(step) for _, step, *_ in made() if not step.endswith("max"))
    if top_rate > 10:
        top = [str(run_id) for run_id, step, *_ in made() if step.endswith(f"rate={top_rate:g}")]
        assert workbench(store, "runs", "delete", *top).returncode == 0
        shown = workbench(store, "experiment", "show", str(path))
        assert f"next: memory/workloada/rate={top_rate:g} repetition 1" in shown.stdout, shown.stdout
        again = workbench(store, "experiment", "run", str(path))
        assert again.returncode == 0, again.stderr
        assert [step for _, step, *_ in made()].count(f"memory/workloada/rate={top_rate:g}") == 2


BASE = '''databases = ["memory"]
workloads = ["workloada"]
[sweep]
operationcount = [100, 200]
'''


@pytest.mark.parametrize("text, says", [
    ("colour = 'red'\n" + BASE, "key 'colour' is unknown"),
    (BASE.replace("[100, 200]", "[]"), "key 'sweep.operationcount' has no values"),
    (BASE.replace("operationcount =", "warpfactor ="), "key 'sweep.warpfactor' is not a parameter"),
    (BASE.replace('"memory"', '"couchbase"'), "key 'databases' names an unknown database 'couchbase'"),
    (BASE.replace('"workloada"', '"workloadz"'), "key 'workloads' names 'workloadz'"),
    (BASE.replace('["memory"]', '["memory", "memory"]'), "key 'databases' lists memory twice"),
    ('settle = "vacuum"\n' + BASE, "key 'settle' is 'vacuum'"),
    ("repetitions = 0\n" + BASE, "key 'repetitions' must be a whole number"),
    ("databases = [\n", "not valid TOML"),
    (BASE.replace("operationcount =", "nodes ="), "key 'sweep.nodes' applies to Cassandra databases only"),
    (BASE.replace('["memory"]', '["hbase"]').replace("operationcount = [100, 200]", 'storage = ["ram"]'),
     "key 'sweep.storage' names 'ram', which the [storage] table does not"),
    (BASE + '[storage]\nram = "shm"\n', "key 'storage' must map names to absolute directories"),
    ("p99_bound_ms = 5\n" + BASE, "key 'p99_bound_ms' must be a positive number of milliseconds"),
    (BASE.replace("operationcount = [100, 200]", "rate = [0, 50]"), "key 'sweep.rate' must be percentages"),
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


def test_a_port_a_cluster_needs_that_is_taken_is_one_line_before_anything_runs(tmp_path):
    import socket

    path = tmp_path / "taken.toml"
    path.write_text('databases = ["memory", "cassandra"]\nworkloads = ["workloadc"]\n'
                    "[properties]\nrecordcount = 10\noperationcount = 10\n")
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        holder.bind(("127.0.0.1", 7000))  # Cassandra's storage port on the preset's address
        holder.listen()
    except OSError:
        pass  # already taken by something else: the experiment must refuse all the same
    try:
        store = tmp_path / "runs.db"
        proc = workbench(store, "experiment", "run", str(path))
    finally:
        holder.close()
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and str(path) in line and "key 'databases'" in line
    assert "port 127.0.0.1:7000 (Cassandra storage) is already in use" in line
    assert not store.exists()  # not even the memory database ran


def test_an_experiment_killed_after_its_second_run_resumes_with_only_the_rest(tmp_path):
    """Four paced runs of about a second each; SIGKILL once two completed; run it again."""
    path = tmp_path / "resume.toml"
    path.write_text('''description = "resume test"
databases = ["memory"]
workloads = ["workloada"]
repetitions = 2
order = "random"
seed = 11
warmup_s = 0
min_measure_s = 0
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
    logs = [math.log(v) for v in figures["memory"]]
    low, high = stats.t.interval(0.95, 2, loc=statistics.fmean(logs), scale=stats.sem(logs))
    assert f"{math.exp(low):,.0f} – {math.exp(high):,.0f}" in text  # the memory step's 95% interval
    p = stats.ttest_ind(figures["memory"], figures["cassandra"], equal_var=False).pvalue
    assert "Welch's t-test" in text and f"{p:.4f}" in text


def test_a_latency_chart_whose_every_figure_is_below_one_microsecond_is_still_drawn(tmp_path):
    from workbench.experiments import charts

    path = tmp_path / "fast.toml"
    path.write_text('databases = ["memory"]\nworkloads = ["workloada", "workloadc"]\n')
    e = plan.load(str(path))
    zeros = [("memory workloada p50", [("workloada", 0.0, None, None)]),
             ("memory workloada p99", [("workloada", 0.0, None, None)])]
    chart = charts.svg_chart("READ latency", "workload", zeros, e, log_y=True, kind="latency-READ")
    assert chart.startswith("<figure class=chart") and chart.count("<circle") == 2
    assert "no data" in charts.svg_chart("READ latency", "workload", [], e, log_y=True, kind="x")


def test_show_states_each_runs_timing_and_the_expected_duration(tmp_path):
    path = tmp_path / "timed.toml"
    path.write_text('databases = ["memory"]\nworkloads = ["workloadc"]\nrepetitions = 2\n'
                    "warmup_s = 2\nmeasure_s = 40\nmin_measure_s = 4\n[scale]\nlaptop = 20\n"
                    "[sweep]\nlanes = [1, 2, 4]\n")
    e = plan.load(str(path))
    assert e.window_s("full") == 40 and e.window_s("laptop") == 4  # 40 / 20 = 2, below the floor
    assert e.expected_s("laptop") == (6 * (2 + 4), 6 * (2 + 4))  # memory: no cluster, no first warm-up
    shown = workbench(tmp_path / "runs.db", "experiment", "show", str(path), "--scale", "laptop")
    assert shown.returncode == 0, shown.stderr
    assert "each run: 2 s of warm-up (not measured), then at least 4 s measured" in shown.stdout
    assert "expected: about 36 s of runs" in shown.stdout
    sat = plan.load("saturation")  # servers: a 60 s first warm-up per cluster, and start-up on top
    typical, longest = sat.expected_s("laptop")
    assert 54 * 15 + 2 * 55 <= typical < longest and sat.overhead_s("laptop") > 60
    bad = tmp_path / "bad.toml"
    bad.write_text(path.read_text().replace("min_measure_s = 4", "min_measure_s = -1"))
    with pytest.raises(ConfigError, match="key 'min_measure_s' must be a number of seconds from 0 to 3600"):
        plan.load(str(bad))


def test_a_calibration_on_a_new_cluster_is_capped_after_its_longer_warm_up_not_inside_it():
    e = plan.load("saturation")
    calibration = e.runs()[0]
    for first in (False, True):
        props = dict(o.split("=", 1) for o in e.overrides(calibration, "laptop", first=first))
        warmup = float(props["measurement.warmup"])
        assert warmup == (60 if first else 5)
        assert float(props["maxexecutiontime"]) == warmup + e.calibration_cap_s("laptop")
