"""CSV exports for spreadsheets and pandas: one summary row per measurement, or a time series.

Plain `csv` module, numbers unrounded (Python's repr of floats), one header row. Columns that
a measurement does not have (a percentile missing from an imported YCSB file, a status it never
returned) are left empty rather than filled with a made-up zero.
"""

from __future__ import annotations

import csv
from pathlib import Path

from workbench.results.model import SUMMARY_PERCENTILES, IntervalMeasurement, RunResult

TIMESERIES_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


def percentile_column(p: float) -> str:
    """p50, p99, p99.9, p99.99."""
    return f"p{int(p)}" if p % 1 == 0 else f"p{p!r}"


def _statuses(result: RunResult) -> list[str]:
    """Every status seen, in order of first appearance across measurements."""
    seen: dict[str, None] = {}
    for m in result.measurements:
        seen.update(dict.fromkeys(m.returns))
    return list(seen)


def summary_rows(result: RunResult) -> list[list[object]]:
    """Header plus one row per measurement."""
    statuses = _statuses(result)
    header: list[object] = ["measurement", "operations", "throughput_ops_s", "mean_us",
                            "min_us", "max_us"]
    header += [percentile_column(p) + "_us" for p in SUMMARY_PERCENTILES]
    header += [f"Return={s}" for s in statuses]
    header += ["database", "server", "client"]  # which database answered, which client measured
    server, client = result.server, result.client
    rows = [header]
    for m in result.measurements:
        # Per-operation throughput over the whole phase, as YCSB computes the overall figure.
        throughput = m.operations * 1000 / result.runtime_ms if result.runtime_ms > 0 else 0.0
        row: list[object] = [m.name, m.operations, throughput, m.average_us, m.min_us, m.max_us]
        row += [m.percentiles.get(p, "") for p in SUMMARY_PERCENTILES]
        row += [m.returns.get(s, "") for s in statuses]
        row += [result.database, server, client]
        rows.append(row)
    return rows


def write_summary_csv(result: RunResult, path: str | Path) -> None:
    """One row per measurement: counts, throughput, latency figures (µs), statuses."""
    _write(path, summary_rows(result))


def timeseries_rows(result: RunResult) -> list[list[object]]:
    """Header plus one row per (interval, measurement)."""
    header: list[object] = ["elapsed_s", "duration_s", "throughput_ops_s", "lanes", "target",
                            "measurement", "count", "mean_us", "min_us", "max_us"]
    header += [percentile_column(p) + "_us" for p in TIMESERIES_PERCENTILES]
    header.append("events")
    rows = [header]
    for interval in result.intervals:
        head: list[object] = [
            interval.elapsed_s, interval.duration_s, interval.throughput, interval.lanes,
            "" if interval.target is None else interval.target,
        ]
        events = _events_in(result, interval.elapsed_s - interval.duration_s, interval.elapsed_s)
        for name, m in interval.measurements.items():
            rows.append(head + _interval_cells(name, m) + [events])
    return rows


def _events_in(result: RunResult, start: float, end: float) -> str:
    """The run's events (target or lane changes, pauses, faults, nodes joining or leaving) within
    (start, end], as `kind=value` joined by `; `, so a spreadsheet shows what changed next to its
    effect."""
    found = [e for e in result.events if start < e.elapsed_s <= end]
    return "; ".join(e.kind if e.value is None else f"{e.kind}={e.value}" for e in found)


def _interval_cells(name: str, m: IntervalMeasurement) -> list[object]:
    cells: list[object] = [name, m.count, m.average_us, m.min_us, m.max_us]
    return cells + [m.percentiles.get(p, "") for p in TIMESERIES_PERCENTILES]


def write_timeseries_csv(result: RunResult, path: str | Path) -> None:
    """One row per interval and measurement, for plotting latency and throughput over time."""
    _write(path, timeseries_rows(result))


def _write(path: str | Path, rows: list[list[object]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
