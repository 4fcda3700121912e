"""Runs side by side: figures, differences with the better one marked, spec differences, CSV;
the per-second figures' differences with their 95% intervals and verdicts, the baseline named."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import numpy as np
from rich.console import Console

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.results.compare import (
    compare,
    comparison_table,
    comparison_view,
    difference,
    percentile_curves,
    spec_differences,
    write_comparison_csv,
)
from workbench.results.from_run import to_run_result
from workbench.results.importers import import_file
from workbench.results.model import Interval, IntervalMeasurement, Measurement, RunResult
from workbench.results.verdicts import significance_table

DATA = Path(__file__).resolve().parents[1] / "data" / "ycsb-0.17.0"
WORKLOAD_A = str(Path(__file__).resolve().parents[2] / "workbench" / "workloads" / "workloada")


def memory_run(*overrides: str):
    spec, props = spec_from_args([WORKLOAD_A], ["db=memory", "recordcount=500", "operationcount=3000",
                                                *overrides], "run")
    return to_run_result(asyncio.run(Controller(spec, "run").run()), props.as_dict())


def text(renderable) -> str:
    console = Console(width=100, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_difference_marks_the_better_run():
    assert difference(100, 120, higher_is_better=True) == "+20.0% ✓"
    assert difference(100, 120, higher_is_better=False) == "+20.0% ✗"
    assert difference(2000, 1500, higher_is_better=False) == "-25.0% ✓"
    assert difference(None, 5, True) == "" and difference(0, 5, True) == ""


def test_ycsb_files_side_by_side():
    cassandra = import_file(DATA / "cassandra-workloada-run.txt")
    hbase = import_file(DATA / "hbase-workloada-run.txt")
    c = compare([cassandra, hbase], ["cassandra", "hbase"])
    assert list(c.ops) == ["READ", "UPDATE"]
    assert c.ops["READ"][0].latencies["p95"] == 4647 and c.ops["READ"][0].latencies["p50"] is None
    table = text(comparison_table(c))
    assert "READ p95 µs" in table and "4,503 -3.1% ✓" in table
    assert "READ p50" not in table  # YCSB 0.17.0 does not print it for either run
    assert "+6.4% ✓" in table  # throughput 3,339 -> 3,553


def test_our_runs_and_an_imported_file_compared(tmp_path):
    ours = memory_run("threadcount=2")
    theirs = import_file(DATA / "cassandra-workloada-run.txt")
    c = compare([ours, theirs], ["memory", "ycsb cassandra"])
    assert c.ops["READ"][0].latencies["p50"] is not None
    path = tmp_path / "c.csv"
    write_comparison_csv(c, path)
    rows = list(csv.DictReader(path.open()))
    tp = [r for r in rows if r["figure"] == "throughput_ops_s"]
    assert [r["run"] for r in tp] == ["memory", "ycsb cassandra"]
    expected = round((theirs.throughput - ours.throughput) / ours.throughput * 100, 2)
    assert float(tp[1]["diff_vs_first_pct"]) == expected
    curves = percentile_curves([ours, theirs], "READ")
    assert [p for p, _ in curves[0]] == [50.0, 90.0, 95.0, 99.0, 99.9, 99.99]
    assert [p for p, _ in curves[1]] == [95.0, 99.0]


def test_runs_that_differ_in_more_than_the_database_are_flagged():
    one, two = memory_run("threadcount=2"), memory_run("threadcount=4", "requestdistribution=uniform")
    diffs = spec_differences([one, two])
    assert "threadcount: 2 / 4" in diffs and "requestdistribution: zipfian / uniform" in diffs
    table = " ".join(text(comparison_table(compare([one, two], ["a", "b"]))).split())
    assert "note: the runs differ in more than the database" in table
    same = spec_differences([one, memory_run("threadcount=2", "memory.store=other")])
    assert same == []
    # every binding's own properties are where a run went, MongoDB's too (the registry says whose)
    one.properties["mongodb.url"], two.properties["mongodb.url"] = "mongodb://a/ycsb", "mongodb://b/ycsb"
    assert not [d for d in spec_differences([one, two]) if d.startswith("mongodb.")]


def per_second(throughput: float, p99: float, seconds: int, seed: int, warmup: int = 0,
               warmup_throughput: float = 0.0) -> RunResult:
    """A run of `seconds` intervals (after `warmup` ones of another throughput) whose throughput
    and READ p99 wander about the given levels (AR(1), correlation 0.5, 2% noise)."""
    rng = np.random.default_rng(seed)
    noise = np.zeros(warmup + seconds)
    for t in range(1, len(noise)):
        noise[t] = 0.5 * noise[t - 1] + rng.normal(0, 0.02)
    intervals = []
    for t, e in enumerate(noise):
        ops = round((warmup_throughput if t < warmup else throughput) * (1 + e))
        m = IntervalMeasurement(ops, p99 / 4 * (1 + e), 1, round(p99 * 2), {99.0: round(p99 * (1 + e))})
        intervals.append(Interval(t + 1.0, 1.0, ops, 0, {"READ": m}, warmup=t < warmup))
    total = sum(i.operations for i in intervals if not i.warmup)
    summary = Measurement("READ", total, p99 / 4, 1, round(p99 * 2), {99.0: round(p99)})
    return RunResult("run", "memory", seconds * 1000, total, total / seconds, [summary], intervals)


def test_each_difference_has_its_interval_and_verdict_and_the_baseline_is_named():
    baseline = per_second(1000, 2000, 60, seed=1, warmup=10, warmup_throughput=100)
    baseline.intervals.append(Interval(70.1, 0.1, 5, 0, {}))  # the run cut a tenth into its last second
    slower = per_second(800, 3000, 60, seed=2)  # -20% throughput, +50% p99: worse on both
    same = per_second(1003, 2010, 60, seed=3)
    short = per_second(1000, 2000, 5, seed=4)
    c = compare([baseline, slower, same, short], ["#12 a", "#13 b", "#14 c", "#15 d"])
    throughput = c.tested[0]
    assert (throughput.operation, throughput.figure) == ("OVERALL", "throughput")
    assert throughput.tolerance == "-10%"
    assert throughput.verdicts == ("worse", "same", "unknown")
    d = throughput.differences[0]
    assert d.baseline.n == 60  # the warm-up's ten seconds and the cut second left out
    assert d.low < d.difference < d.high and -25 < d.pct_low < d.pct < d.pct_high < -15
    p99 = next(t for t in c.tested if (t.operation, t.figure) == ("READ", "p99"))
    assert (p99.tolerance, p99.verdicts) == ("+25%", ("worse", "same", "unknown"))

    shown = text(comparison_view(c))
    table = " ".join(shown.split())
    assert "figure #12 a (baseline)" in table and "differences against the baseline, #12 a," in table
    lines = [" ".join(line.split()) for line in shown.splitlines()]
    assert f"throughput ops/s (-10%) {d.baseline.mean:,.0f} (n=60) #13 b {d.pct:+.1f}% " \
           f"[{d.pct_low:+.1f}, {d.pct_high:+.1f}] worse" in lines
    assert any(line.startswith("READ p99 µs (+25%)") and line.endswith("worse") for line in lines)
    assert any(line.startswith("#15 d") and line.endswith("too few seconds (5)") for line in lines)


def test_the_csv_carries_each_interval_verdict_and_which_run_is_the_baseline(tmp_path):
    c = compare([per_second(1000, 2000, 30, seed=1), per_second(800, 2000, 30, seed=2),
                 per_second(1000, 2000, 12, seed=3)], ["#1 a", "#2 b", "#3 c"])
    path = tmp_path / "c.csv"
    write_comparison_csv(c, path)
    rows = list(csv.DictReader(path.open()))
    assert {r["run"]: r["role"] for r in rows} == {"#1 a": "baseline", "#2 b": "compared", "#3 c": "compared"}
    tp = [r for r in rows if r["figure"] == "per_second_throughput_ops_s"]
    assert [(r["run"], r["verdict"], r["intervals"]) for r in tp] == \
        [("#1 a", "", "30"), ("#2 b", "worse", "30"), ("#3 c", "same", "12")]
    low, diff, high = (float(tp[1][k]) for k in ("diff_low_pct", "diff_vs_first_pct", "diff_high_pct"))
    assert low < diff < high < -10
    assert 1 < float(tp[1]["effective_intervals"]) <= 30
    assert [r["verdict"] for r in rows if r["figure"] == "per_second_p99_us"] == ["", "same", "same"]


def test_files_without_intervals_say_so_rather_than_guess():
    cassandra = import_file(DATA / "cassandra-workloada-run.txt")
    hbase = import_file(DATA / "hbase-workloada-run.txt")
    c = compare([cassandra, hbase], ["cassandra", "hbase"])
    assert all(v == "unknown" for t in c.tested for v in t.verdicts)
    rows = [line.split() for line in text(significance_table(c.labels, c.tested)).splitlines()]
    assert [row[-3:] for row in rows if "(-10%)" in row or "(+10%)" in row or "(+25%)" in row] == \
        [["-", "hbase", "-"]] * 5  # throughput, READ and UPDATE's mean and p99: nothing to guess from
