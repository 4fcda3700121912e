"""HdrHistogram interval logs: our writer read by hdrh's own reader, by ours, and by eye."""

from __future__ import annotations

import re

import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
from test_results_builders import build_run

from workbench.results.hdrlog import read_hdr_log, write_hdr_log

# One interval line of HdrHistogram's log format: Tag=,start,length,max,payload ("%.3f").
LINE = re.compile(r"^Tag=([^, ]+),(\d+\.\d{3}),(\d+\.\d{3}),(\d+\.\d{3}),(HIST[A-Za-z0-9+/=]+)$")


def test_format_matches_histogram_log_writer(tmp_path) -> None:
    path = tmp_path / "run.hlog"
    run = build_run(ticks=2)
    write_hdr_log(run, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("#[")
    assert lines[1] == "#[Histogram log format version 1.3]"
    assert lines[2] == ("#[StartTime: 1700000000.250 (seconds since epoch), "
                        "Tue Nov 14 22:13:20 UTC 2023]")
    assert lines[3] == "#[BaseTime: 1700000000.250 (seconds since epoch)]"
    assert lines[4] == '"StartTimestamp","Interval_Length","Interval_Max",' \
                       '"Interval_Compressed_Histogram"'
    body = [LINE.match(line) for line in lines[5:]]
    assert all(body) and len(body) == 2 * 3
    first = body[0]
    read0 = run.intervals[0].measurements["READ"]
    assert first.groups()[:3] == ("READ", "0.000", "1.000")
    assert float(first[4]) == pytest.approx(read0.max_us / 1000, abs=0.0005)
    assert first[5] == read0.histogram
    assert [m[1] for m in body[3:]] == ["READ", "UPDATE", "READ-FAILED"]
    assert body[3][2] == "1.000"


def test_hdrh_reader_reads_every_tagged_interval(tmp_path) -> None:
    path = tmp_path / "run.hlog"
    run = build_run(ticks=3)
    write_hdr_log(run, path)
    reader = HistogramLogReader(str(path), HdrHistogram(1, 3_600_000_000, 3))
    seen = []
    while (h := reader.get_next_interval_histogram()) is not None:
        seen.append((h.get_tag(), h.get_start_time_stamp(), h.get_total_count()))
    reader.close()
    expected = [(name, (run.started_at + i.elapsed_s - i.duration_s) * 1000, m.count)
                for i in run.intervals for name, m in i.measurements.items()]
    assert [(t, c) for t, _, c in seen] == [(t, c) for t, _, c in expected]
    for (_, got, _), (_, want, _) in zip(seen, expected, strict=True):
        assert got == pytest.approx(want, abs=1)  # ms; the log keeps milliseconds


def test_our_reader_groups_by_tag_with_relative_times(tmp_path) -> None:
    path = tmp_path / "run.hlog"
    run = build_run(ticks=3)
    write_hdr_log(run, path)
    log = read_hdr_log(path)
    assert list(log) == ["READ", "UPDATE", "READ-FAILED"]
    assert [(s, e) for s, e, _ in log["UPDATE"]] == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]
    total = sum(h.get_total_count() for _, _, h in log["READ"])
    assert total == run.measurement("READ").operations


def test_reader_accepts_untagged_absolute_java_logs(tmp_path) -> None:
    h = HdrHistogram(1, 3_600_000_000, 3)
    h.record_value(488)
    payload = h.encode().decode("ascii")
    path = tmp_path / "ycsb.hdr"
    path.write_text("#[Logging for: READ]\n#[Histogram log format version 1.1]\n"
                    "#[StartTime: 1438613579.295 (seconds since epoch), Mon Aug 03 2015]\n"
                    f"1438613579.290,0.660,0.488,{payload}\n", encoding="utf-8")
    (start, end, hist), = read_hdr_log(path)[None]
    assert (round(start, 3), round(end, 3)) == (-0.005, 0.655)
    assert hist.get_max_value() == h.get_max_value()


def test_tags_with_delimiters_are_refused(tmp_path) -> None:
    run = build_run(ticks=1)
    run.intervals[0].measurements["READ MODIFY"] = run.intervals[0].measurements["READ"]
    with pytest.raises(ValueError, match="tag"):
        write_hdr_log(run, tmp_path / "x.hlog")
