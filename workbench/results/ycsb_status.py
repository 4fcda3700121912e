"""YCSB's status lines (what StatusThread prints to stderr every status.interval), both ways.

A line reads `LABEL` + `yyyy-MM-dd HH:mm:ss:SSS N sec: T operations; C current ops/sec;
est completion in R [READ: Count=.., Max=.., Min=.., Avg=.., 90=.., ...] ` with YCSB's quirks
kept: "current ops/sec" only when T != 0, "est completion" only when operations remain, the
remaining time formatted by Client.RemainingFormatter ("5 second" but "11 seconds": it tests
the length of the text, not the number) and a space after every part, so lines end in one.

Reading turns a log into Intervals. The printed "N sec" is truncated, so an interval's length
is recovered from its operations and its printed rate (ops * 1000 / rate, to the millisecond),
or from the timestamps when the rate is missing; the sum reproduces YCSB's RunTime(ms).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime

from workbench.results.javafmt import decimal_2, java_divide, java_long, parse_java_number
from workbench.results.layouts import Layout, get_layout
from workbench.results.model import Interval, IntervalMeasurement

_TIMESTAMP = "%Y-%m-%d %H:%M:%S"
_STATUS = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d):(?P<ms>\d{3}) (?P<sec>-?\d+) sec: "
    r"(?P<total>-?\d+) operations; (?:(?P<cur>\S+) current ops/sec; )?"
    r"(?:est completion in (?P<est>[^\[]*))?(?P<brackets>.*)$"
)
_BRACKET = re.compile(r"\[(?P<name>[^:\]]+): (?P<body>[^\]]*)\]")


def format_remaining(seconds: int) -> str:
    """Client.RemainingFormatter: days and hours, minutes under a day, seconds alone."""
    text = ""
    days = _truncdiv(seconds, 86400)
    if days > 0:
        text += f"{days} {'day' if days == 1 else 'days'} "
        seconds -= days * 86400
    hours = _truncdiv(seconds, 3600)
    if hours > 0:
        text += f"{hours} {'hour' if hours == 1 else 'hours'} "
        seconds -= hours * 3600
    if days < 1:
        minutes = _truncdiv(seconds, 60)
        if minutes > 0:
            text += f"{minutes} {'minute' if minutes == 1 else 'minutes'} "
    if not text:
        number = str(seconds)
        text = number + (" second " if len(number) == 1 else " seconds ")
    return text


def _truncdiv(a: int, b: int) -> int:
    """Java's long division (truncates toward zero)."""
    q = abs(a) // b
    return q if a >= 0 else -q


def _label(p: float) -> str:
    return str(int(p)) if p % 1 == 0 else repr(p)


def format_bracket(name: str, m: IntervalMeasurement, layout: Layout) -> str:
    """One `[NAME: Count=.., ...]` summary as OneMeasurementHdrHistogram.getSummary builds it."""
    average, lo, hi = m.average_us, m.min_us, m.max_us
    if m.count == 0:
        average, lo, hi = layout.empty_average, layout.empty_min, layout.empty_max
    parts = [f"Count={m.count}", f"Max={hi}", f"Min={lo}", f"Avg={decimal_2(average)}"]
    for p in layout.status_percentiles:
        if m.count and p not in m.percentiles:
            raise ValueError(f"{name}: the status line needs percentile {p}; the interval lacks it")
        parts.append(f"{_label(p)}={m.percentiles[p] if m.count else 0}")
    return f"[{name}: {', '.join(parts)}]"


def format_status_line(
    now: datetime, elapsed_ms: int, total_ops: int, interval_ops: int, interval_ms: int,
    todo_ops: int, brackets: Sequence[tuple[str, IntervalMeasurement]],
    layout: str = "0.17", label: str = "",
) -> str:
    """One status line, byte for byte as YCSB's StatusThread.computeStats prints it."""
    lay = get_layout(layout)
    stamp = now.strftime(_TIMESTAMP) + f":{now.microsecond // 1000:03d}"
    text = f"{label}{stamp} {_truncdiv(elapsed_ms, 1000)} sec: {total_ops} operations; "
    if total_ops != 0:
        current = 1000.0 * java_divide(float(interval_ops), float(interval_ms))
        text += f"{decimal_2(current)} current ops/sec; "
    if todo_ops != 0:
        throughput = 1000.0 * java_divide(float(total_ops), float(elapsed_ms))
        estimate = java_divide(float(todo_ops), throughput)  # NaN at 0 ms: Java's cast gives 0
        remaining = java_long(math.ceil(estimate) if math.isfinite(estimate) else estimate)
        text += "est completion in " + format_remaining(remaining)
    return text + "".join(format_bracket(n, m, lay) + " " for n, m in brackets)


def _number(text: str) -> float:
    try:
        return float(parse_java_number(text))
    except ValueError:  # JDK 8 prints NaN as U+FFFD
        return math.nan


def parse_bracket(body: str) -> IntervalMeasurement:
    """The figures of one bracket (either layout; unknown keys such as Return(OK) are skipped)."""
    fields = dict(part.split("=", 1) for part in body.split(", ") if "=" in part)
    m = IntervalMeasurement(
        count=int(fields.get("Count", 0)), average_us=_number(fields.get("Avg", "0")),
        min_us=int(fields.get("Min", 0)), max_us=int(fields.get("Max", 0)),
    )
    for key, value in fields.items():
        if re.fullmatch(r"\d+(?:\.\d+)?", key):
            m.percentiles[float(key)] = int(_number(value))
    if m.count == 0:  # Java's empty-histogram figures -> model zeros (see layouts.py)
        m.average_us, m.min_us, m.max_us = 0.0, 0, 0
    return m


def read_ycsb_status_lines(text: str) -> list[Interval]:
    """Intervals from a status log; lines that are not status lines are ignored."""
    intervals: list[Interval] = []
    elapsed_ms = prev_total = 0
    prev_time: datetime | None = None
    for line in text.splitlines():
        match = _STATUS.search(line)
        if not match:
            continue
        when = datetime.strptime(match["ts"], _TIMESTAMP).replace(
            microsecond=int(match["ms"]) * 1000)
        total = int(match["total"])
        ops = total - prev_total
        current = _number(match["cur"]) if match["cur"] else math.nan
        if prev_time is None:  # the first line: only YCSB's truncated seconds are known
            duration_ms = elapsed_ms = int(match["sec"]) * 1000
        else:
            if ops > 0 and math.isfinite(current) and current > 0:
                duration_ms = round(ops * 1000 / current)
            else:
                duration_ms = round((when - prev_time).total_seconds() * 1000)
            elapsed_ms += duration_ms
        measurements = {b["name"]: parse_bracket(b["body"])
                        for b in _BRACKET.finditer(match["brackets"])}
        intervals.append(Interval(
            elapsed_s=elapsed_ms / 1000, duration_s=duration_ms / 1000, operations=ops,
            total_operations=total, measurements=measurements,
        ))
        prev_total, prev_time = total, when
    return intervals
