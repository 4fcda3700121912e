"""YCSB status lines: formatted byte for byte as StatusThread prints them, and parsed back."""

from __future__ import annotations

from datetime import datetime

import pytest
from test_results_builders import reference

from workbench.results.model import IntervalMeasurement
from workbench.results.ycsb_status import format_remaining
from workbench.results.ycsb_text import format_status_line, read_ycsb_status_lines

STATUS = ["cassandra-workloada-run.status.txt", "hbase-workloada-run.status.txt"]
OPERATION_COUNT = 50_000  # both reference runs: operationcount=50000


def _stamp(line: str) -> datetime:
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S:%f")


@pytest.mark.parametrize("name", STATUS)
def test_reference_lines_are_reproduced_from_their_own_numbers(name: str) -> None:
    lines = reference(name).read_text(encoding="utf-8").splitlines()
    intervals = read_ycsb_status_lines("\n".join(lines))
    assert len(intervals) == len(lines) == 3
    for line, interval in zip(lines, intervals, strict=True):
        produced = format_status_line(
            now=_stamp(line),
            elapsed_ms=round(interval.elapsed_s * 1000),
            total_ops=interval.total_operations,
            interval_ops=interval.operations,
            interval_ms=round(interval.duration_s * 1000),
            todo_ops=OPERATION_COUNT - interval.total_operations,
            brackets=list(interval.measurements.items()),
        )
        assert produced == line


def test_parsed_intervals_recover_durations_and_runtime() -> None:
    intervals = read_ycsb_status_lines(reference(STATUS[0]).read_text(encoding="utf-8"))
    assert [i.operations for i in intervals] == [0, 33515, 16485]
    assert [i.duration_s for i in intervals] == [0.0, 10.001, 4.973]
    # The durations add up to the RunTime(ms) of the matching summary file.
    assert intervals[-1].elapsed_s == 14.974
    cleanup = intervals[-1].measurements["CLEANUP"]
    assert (cleanup.count, cleanup.max_us, cleanup.min_us) == (8, 2217983, 3)
    assert cleanup.percentiles == {90.0: 8, 99.0: 2217983, 99.9: 2217983, 99.99: 2217983}
    hbase = read_ycsb_status_lines(reference(STATUS[1]).read_text(encoding="utf-8"))
    assert hbase[-1].elapsed_s == 14.074  # hbase-workloada-run.txt: RunTime(ms), 14074


def test_quirks_of_the_counters() -> None:
    t = datetime(2026, 1, 2, 3, 4, 5, 6000)
    start = format_status_line(t, 0, 0, 0, 0, 0, [])
    assert start == "2026-01-02 03:04:05:006 0 sec: 0 operations; "
    # Work done and none left: a rate but no estimate.
    assert format_status_line(t, 1500, 7, 7, 1500, 0, [], label="L1 ") == \
        "L1 2026-01-02 03:04:05:006 1 sec: 7 operations; 4.67 current ops/sec; "
    # Nothing done yet with time gone: Java divides by zero into Long.MAX_VALUE seconds.
    assert format_status_line(t, 10_000, 0, 0, 10_000, 5, []).endswith(
        "0 operations; est completion in 106751991167300 days 15 hours ")


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0 second "), (5, "5 second "), (11, "11 seconds "), (59, "59 seconds "),
    (60, "1 minute "), (125, "2 minutes "), (3600, "1 hour "), (3720, "1 hour 2 minutes "),
    (86_400, "1 day "), (2 * 86_400 + 3 * 3600 + 120, "2 days 3 hours "),
])
def test_remaining_formatter(seconds: int, text: str) -> None:
    assert format_remaining(seconds) == text


def _bracket(count: int) -> IntervalMeasurement:
    pct = {50.0: 7, 90.0: 9, 99.0: 11, 99.9: 12, 99.99: 13}
    return IntervalMeasurement(count, 8.125, 2, 13, pct if count else {})


def test_master_brackets_add_the_median() -> None:
    line = format_status_line(datetime(2026, 1, 1), 1000, 4, 4, 1000, 0,
                              [("READ", _bracket(4))], layout="master")
    assert line.endswith("[READ: Count=4, Max=13, Min=2, Avg=8.12, 50=7, 90=9, 99=11, "
                         "99.9=12, 99.99=13] ")
    parsed = read_ycsb_status_lines(line)[0].measurements["READ"]
    assert parsed.percentiles[50.0] == 7 and parsed.average_us == 8.12


def test_empty_brackets_follow_each_hdrhistogram_version() -> None:
    args = (datetime(2026, 1, 1), 1000, 4, 0, 1000, 0, [("CLEANUP", _bracket(0))])
    old = format_status_line(*args)
    assert old.endswith("[CLEANUP: Count=0, Max=0, Min=9223372036854775807, Avg=NaN, "
                        "90=0, 99=0, 99.9=0, 99.99=0] ")
    assert "Min=0, Avg=0, 50=0," in format_status_line(*args, layout="master")
    back = read_ycsb_status_lines(old)[0].measurements["CLEANUP"]
    assert (back.count, back.min_us, back.average_us) == (0, 0, 0.0)


def test_missing_percentile_is_an_error_not_a_guess() -> None:
    m = IntervalMeasurement(3, 1.0, 1, 1, {90.0: 1})
    with pytest.raises(ValueError, match="99"):
        format_status_line(datetime(2026, 1, 1), 1, 3, 3, 1, 0, [("READ", m)])


def test_other_stderr_lines_are_skipped() -> None:
    text = "Command line: -db site.ycsb.BasicDB\n" + reference(STATUS[1]).read_text("utf-8")
    assert len(read_ycsb_status_lines(text)) == 3
