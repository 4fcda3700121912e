"""Runs side by side: figures, differences with the better one marked, spec differences, CSV."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

from rich.console import Console

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.results.compare import (
    compare,
    comparison_table,
    difference,
    percentile_curves,
    spec_differences,
    write_comparison_csv,
)
from workbench.results.from_run import to_run_result
from workbench.results.importers import import_file

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
