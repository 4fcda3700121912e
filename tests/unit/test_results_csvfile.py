"""CSV exports: summary per measurement and time series per interval."""

from __future__ import annotations

import csv

from test_results_builders import build_run, reference

from workbench.results.csvfile import write_summary_csv, write_timeseries_csv
from workbench.results.ycsb_text import read_ycsb_text


def _rows(path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_summary_has_one_row_per_measurement_with_unrounded_numbers(tmp_path) -> None:
    run = build_run()
    path = tmp_path / "summary.csv"
    write_summary_csv(run, path)
    rows = _rows(path)
    assert [r["measurement"] for r in rows] == ["READ", "UPDATE", "READ-FAILED", "CLEANUP"]
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[:12] == ["measurement", "operations", "throughput_ops_s", "mean_us", "min_us",
                           "max_us", "p50_us", "p90_us", "p95_us", "p99_us", "p99.9_us",
                           "p99.99_us"]
    assert header[12:] == ["Return=OK", "Return=ERROR", "database", "server", "client"]
    assert rows[0]["database"] == run.database
    assert rows[0]["client"] == run.client
    read, m = rows[0], run.measurement("READ")
    assert int(read["operations"]) == m.operations
    assert float(read["throughput_ops_s"]) == m.operations * 1000 / run.runtime_ms
    assert float(read["mean_us"]) == m.average_us  # full precision, not rounded
    assert int(read["p99.9_us"]) == m.percentiles[99.9]
    assert (read["Return=OK"], read["Return=ERROR"]) == (str(m.operations), "")
    assert rows[3]["Return=OK"] == "" and rows[3]["max_us"] == "2217983"


def test_summary_of_an_imported_file_leaves_unknown_percentiles_empty(tmp_path) -> None:
    path = tmp_path / "summary.csv"
    write_summary_csv(read_ycsb_text(reference("cassandra-workloada-run.txt")), path)
    read = _rows(path)[0]
    assert (read["p95_us"], read["p99_us"], read["p50_us"]) == ("4647", "12647", "")
    assert read["mean_us"] == "1819.1159646385856"


def test_timeseries_has_one_row_per_interval_and_measurement(tmp_path) -> None:
    run = build_run(ticks=3)
    path = tmp_path / "ts.csv"
    write_timeseries_csv(run, path)
    rows = _rows(path)
    assert len(rows) == 3 * 3
    assert list(rows[0])[:7] == ["elapsed_s", "duration_s", "throughput_ops_s", "lanes",
                                 "target", "measurement", "count"]
    assert list(rows[0])[-6:] == ["p50_us", "p90_us", "p99_us", "p99.9_us", "p99.99_us", "events"]
    first, later = rows[0], rows[4]
    assert (first["elapsed_s"], first["target"], first["lanes"]) == ("1.0", "", "4")
    assert later["target"] == "1000.0" and later["measurement"] == "UPDATE"
    m = run.intervals[1].measurements["UPDATE"]
    assert int(later["count"]) == m.count and float(later["mean_us"]) == m.average_us
    assert float(first["throughput_ops_s"]) == run.intervals[0].throughput


def test_timeseries_names_the_events_of_each_interval(tmp_path) -> None:
    from workbench.results.model import Event

    run = build_run(ticks=3)
    run.events = [Event(1.5, "target", 1000.0), Event(1.7, "fault", "node2 killed"), Event(2.9, "pause")]
    path = tmp_path / "ts.csv"
    write_timeseries_csv(run, path)
    by_second = {row["elapsed_s"]: row["events"] for row in _rows(path)}
    assert by_second == {"1.0": "", "2.0": "target=1000.0; fault=node2 killed", "3.0": "pause"}
