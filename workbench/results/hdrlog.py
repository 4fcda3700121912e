"""HdrHistogram interval logs (format 1.3, as HistogramLogWriter writes them), both ways.

One file holds every measurement: each interval line carries `Tag=NAME,` so HdrHistogram's
own tools (HistogramLogProcessor -tag READ, HistogramLogAnalyzer, hdrh's HistogramLogReader)
can pick one out. Timestamps are seconds relative to the `#[BaseTime: ...]` line, which is the
phase start. The Interval_Max column is the interval's maximum divided by 1000, i.e.
milliseconds for our microsecond values (the writer's 1e6 default assumes nanoseconds; YCSB
keeps that default, so its own .hdr files show max/1e6). Histograms are written exactly as the
model stores them (hdrh's compressed base64, which Java's decoder reads).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from hdrh.histogram import HdrHistogram

from workbench.results.model import RunResult

FORMAT_VERSION = "1.3"
MAX_VALUE_UNIT_RATIO = 1000.0
_LEGEND = '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
_BAD_TAG = re.compile(r"[, \r\n]")
_BASE_TIME = re.compile(r"#\[BaseTime: *([\d.]+) ")
_START_TIME = re.compile(r"#\[StartTime: *([\d.]+) ")

HdrLog = dict[str | None, list[tuple[float, float, HdrHistogram]]]


def _java_date(epoch_s: float) -> str:
    """java.util.Date.toString() in UTC: `Wed Sep 09 15:24:39 UTC 2015`."""
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(epoch_s))


def _header(result: RunResult) -> list[str]:
    lines = [f"#[Logged with workbench: {result.db or 'unknown db'} {result.phase}]",
             f"#[Histogram log format version {FORMAT_VERSION}]"]
    if result.started_at is not None:
        start_ms = round(result.started_at * 1000)
        lines.append(f"#[StartTime: {start_ms / 1000:.3f} (seconds since epoch), "
                     f"{_java_date(start_ms / 1000)}]")
        lines.append(f"#[BaseTime: {start_ms / 1000:.3f} (seconds since epoch)]")
    lines.append(_LEGEND)
    return lines


def hdr_log_lines(result: RunResult) -> list[str]:
    """Every line of the log; intervals without a histogram are skipped."""
    lines = _header(result)
    for interval in result.intervals:
        start = interval.elapsed_s - interval.duration_s
        for name, m in interval.measurements.items():
            if m.histogram is None:
                continue
            if _BAD_TAG.search(name):
                raise ValueError(f"measurement name {name!r} cannot be an HdrHistogram log tag")
            max_value = HdrHistogram.decode(m.histogram).get_max_value()
            lines.append(f"Tag={name},{start:.3f},{interval.duration_s:.3f},"
                         f"{max_value / MAX_VALUE_UNIT_RATIO:.3f},{m.histogram}")
    return lines


def write_hdr_log(result: RunResult, path: str | Path) -> None:
    """Write the interval histograms of every measurement to one tagged log."""
    Path(path).write_text("".join(line + "\n" for line in hdr_log_lines(result)),
                          encoding="utf-8")


def read_hdr_log(path: str | Path) -> HdrLog:
    """Tag (None for untagged lines) -> [(start_s, end_s, histogram)] in file order.

    Times are as written, relative to the BaseTime line; a log with absolute timestamps and a
    StartTime but no BaseTime (older Java writers) is made relative to its StartTime.
    """
    out: HdrLog = {}
    base: float | None = None
    start_time: float | None = None
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            if m := _BASE_TIME.match(line):
                base = float(m.group(1))
            elif m := _START_TIME.match(line):
                start_time = float(m.group(1))
            continue
        if not line.strip() or line.startswith('"'):
            continue
        tag = None
        if line.startswith("Tag="):
            tag, line = line[4:].split(",", 1)
        start_s, length_s, _max, payload = line.split(",", 3)
        start = float(start_s)
        if base is None and start_time is not None and start > start_time - 365 * 24 * 3600:
            start -= start_time  # HdrHistogram's own rule: timestamps near StartTime are absolute
        histogram = HdrHistogram.decode(payload.strip())
        out.setdefault(tag, []).append((start, start + float(length_s), histogram))
    return out
