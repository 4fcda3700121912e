"""Test data for the results tests: runs built from real HdrHistograms, and the reference files.

Imported by the other test_results_* modules; its own tests check the builder is consistent.
"""

from __future__ import annotations

import random
from pathlib import Path

from hdrh.histogram import HdrHistogram

from workbench.results.model import Event, Interval, RunResult
from workbench.results.summarize import (
    interval_measurement_from_histogram,
    measurement_from_histogram,
)

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "ycsb-0.17.0"  # see tests/data/README.md


def reference(name: str) -> Path:
    """A real YCSB 0.17.0 file; a missing one fails the test, never skips it."""
    path = REFERENCE / name
    assert path.is_file(), f"reference file missing: {path}"
    return path


def new_histogram() -> HdrHistogram:
    return HdrHistogram(1, 3_600_000_000, 3)


def build_run(seed: int = 7, ticks: int = 3, per_tick: int = 400) -> RunResult:
    """A run of READ/UPDATE (plus a failing read and a CLEANUP) with per-tick histograms."""
    rng = random.Random(seed)
    ops = {"READ": 0.5, "UPDATE": 0.45, "READ-FAILED": 0.05}
    totals = {name: new_histogram() for name in ops}
    intervals = []
    done = 0
    for tick in range(ticks):
        per = {name: new_histogram() for name in ops}
        for _ in range(per_tick):
            name = rng.choices(list(ops), weights=list(ops.values()))[0]
            # Log-normal service times around 1 ms with a long tail, like a real store.
            per[name].record_value(max(1, int(rng.lognormvariate(7.0, 0.8))))
        for name, h in per.items():
            totals[name].add(h)
        done += per_tick
        intervals.append(Interval(
            elapsed_s=float(tick + 1), duration_s=1.0, operations=per_tick,
            total_operations=done,
            measurements={n: interval_measurement_from_histogram(h) for n, h in per.items()},
            returns={"READ": {"OK": per["READ"].get_total_count()}},
            lanes=4, target=1000.0 if tick else None,
        ))
    cleanup = new_histogram()
    for v in (3, 5, 2_217_983):
        cleanup.record_value(v)
    statuses = {"READ": {"OK": 0}, "UPDATE": {"OK": 0}, "READ-FAILED": {"ERROR": 0}}
    measurements = []
    for name, h in totals.items():
        status = next(iter(statuses[name]))
        measurements.append(measurement_from_histogram(name, h, {status: h.get_total_count()}))
    measurements.append(measurement_from_histogram("CLEANUP", cleanup, {}))
    runtime_ms = ticks * 1000 + 17
    return RunResult(
        phase="run", db="cassandra", runtime_ms=runtime_ms, operations=done,
        throughput=done * 1000.0 / runtime_ms, measurements=measurements, intervals=intervals,
        events=[Event(1.0, "target", 1000.0), Event(2.5, "lanes", (4, 8))],
        properties={"workload": "site.ycsb.workloads.CoreWorkload", "recordcount": "1000"},
        environment={"python": "3.11", "hosts": ["127.0.0.1"]},
        label="test", started_at=1_700_000_000.25,
    )


def test_builder_measurements_agree_with_their_histograms() -> None:
    run = build_run()
    read = run.measurement("READ")
    assert read is not None and read.histogram is not None
    h = HdrHistogram.decode(read.histogram)
    assert read.operations == h.get_total_count() == read.returns["OK"]
    assert read.percentiles[99.0] == h.get_value_at_percentile(99.0)
    per_tick = sum(i.measurements["READ"].count for i in run.intervals)
    assert per_tick == read.operations
    assert run.error_count() == run.measurement("READ-FAILED").operations > 0
