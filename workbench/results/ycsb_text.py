"""YCSB's final text summary (`[NAME], measurement, value`), written and read.

The writer prints what YCSB's TextMeasurementsExporter prints, in its order: `[OVERALL]`
runtime and throughput, then each measurement's Operations, AverageLatency(us), MinLatency(us),
MaxLatency(us), percentiles and `Return=STATUS` lines. Percentiles follow the run's
`hdrhistogram.percentiles` property when it has one, else the layout's default; a percentile
the model does not hold is left out rather than invented.

The reader accepts both layouts and anything else YCSB prints in that shape (JVM GC lines,
verbose histogram buckets): such lines are kept in `environment["ycsb_extra"]` as
(name, measurement, value) tuples and printed back where YCSB puts them, so an imported file
exports byte for byte as it came.
Status lines (stderr) are in ycsb_status.py, re-exported here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO

from workbench.errors import WorkbenchError
from workbench.results.javafmt import java_double, parse_java_number
from workbench.results.layouts import Layout, get_layout, ordinal
from workbench.results.model import Measurement, RunResult
from workbench.results.ycsb_status import format_status_line, read_ycsb_status_lines

__all__ = [
    "format_status_line",
    "format_ycsb_text",
    "read_ycsb_status_lines",
    "read_ycsb_text",
    "write_ycsb_text",
]

_LINE = re.compile(r"^\[(?P<name>[^\]]+)\], (?P<what>[^,]+), (?P<value>.*)$")
_PERCENTILE = re.compile(
    r"^(?P<p>\d+(?:\.\d+)?(?:E-?\d+)?)(?:st|nd|rd|th)?PercentileLatency\(us\)$"
)
Extra = tuple[str, str, "int | float | str"]


def _value(v: int | float | str) -> str:
    return java_double(v) if isinstance(v, float) else str(v)


def _line(name: str, what: str, value: int | float | str) -> str:
    return f"[{name}], {what}, {_value(value)}\n"


def _percentiles(result: RunResult, layout: Layout) -> tuple[float, ...]:
    """YCSB's rule: the property if every entry parses as a double, else the default."""
    raw = result.properties.get("hdrhistogram.percentiles")
    if raw is None:
        return layout.percentiles
    try:
        return tuple(float(p) for p in raw.split(","))
    except ValueError:
        return layout.percentiles


def _measurement_lines(m: Measurement, percentiles: tuple[float, ...], layout: Layout) -> str:
    average, lo, hi = m.average_us, m.min_us, m.max_us
    if m.operations == 0:
        average, lo, hi = layout.empty_average, layout.empty_min, layout.empty_max
    out = [
        _line(m.name, "Operations", m.operations),
        _line(m.name, "AverageLatency(us)", float(average)),
        _line(m.name, "MinLatency(us)", lo),
        _line(m.name, "MaxLatency(us)", hi),
    ]
    for p in percentiles:
        if m.operations == 0 or p in m.percentiles:
            value = m.percentiles.get(p, 0) if m.operations else 0
            out.append(_line(m.name, f"{ordinal(p)}PercentileLatency(us)", value))
    out += [_line(m.name, f"Return={status}", n) for status, n in m.returns.items()]
    return "".join(out)


def format_ycsb_text(result: RunResult, layout: str = "0.17") -> str:
    """The whole summary as YCSB of `layout` ("0.17" or "master") prints it."""
    lay = get_layout(layout)
    percentiles = _percentiles(result, lay)
    extras: list[Extra] = list(result.environment.get("ycsb_extra", []))
    names = {m.name for m in result.measurements}
    out = [
        _line("OVERALL", "RunTime(ms)", result.runtime_ms),
        _line("OVERALL", "Throughput(ops/sec)", float(result.throughput)),
    ]
    # YCSB prints [OVERALL] extras, then JVM lines, then the measurements.
    out += [_line(*e) for e in extras if e[0] == "OVERALL"]
    out += [_line(*e) for e in extras if e[0] != "OVERALL" and e[0] not in names]
    for m in result.measurements:
        out.append(_measurement_lines(m, percentiles, lay))
        out += [_line(*e) for e in extras if e[0] == m.name]
    return "".join(out)


def write_ycsb_text(result: RunResult, stream_or_path: IO[str] | str | Path,
                    layout: str = "0.17") -> None:
    """Write the summary to an open text stream or to a file."""
    text = format_ycsb_text(result, layout)
    if hasattr(stream_or_path, "write"):
        stream_or_path.write(text)
    else:
        Path(stream_or_path).write_text(text, encoding="utf-8")


def _text_of(path_or_text: str | Path) -> tuple[str, str]:
    """(text, where) from a path or from the text itself (recognised by a newline or `[`)."""
    if isinstance(path_or_text, str) and ("\n" in path_or_text or path_or_text.startswith("[")):
        return path_or_text, "<text>"
    return Path(path_or_text).read_text(encoding="utf-8"), str(path_or_text)


def _parse(value: str) -> int | float | str:
    try:
        return parse_java_number(value)
    except ValueError:
        return value.strip()


def _guess_phase(measurements: list[Measurement]) -> str:
    """YCSB does not print the phase: a file whose operations are all inserts is a load."""
    ops = {m.name.removeprefix("Intended-").removesuffix("-FAILED") for m in measurements}
    ops.discard("CLEANUP")
    return "load" if ops == {"INSERT"} else "run"


def read_ycsb_text(path_or_text: str | Path, phase: str | None = None, db: str = "") -> RunResult:
    """A RunResult (source "ycsb-text") from YCSB's final summary, either layout."""
    text, where = _text_of(path_or_text)
    sections: dict[str, list[tuple[str, int | float | str]]] = {}
    order: list[tuple[str, str, int | float | str]] = []
    for raw in text.splitlines():
        match = _LINE.match(raw.rstrip("\r"))
        if match:  # other stdout lines ("Loading workload...") are not part of the summary
            item = (match["name"], match["what"], _parse(match["value"]))
            sections.setdefault(item[0], []).append(item[1:])
            order.append(item)
    overall = dict(sections.get("OVERALL", []))
    if "RunTime(ms)" not in overall:
        raise WorkbenchError(f"{where}: no '[OVERALL], RunTime(ms)' line", "is it YCSB output?")
    measurements: list[Measurement] = []
    used: set[tuple[str, str]] = {("OVERALL", "RunTime(ms)"), ("OVERALL", "Throughput(ops/sec)")}
    for name, fields in sections.items():
        if name != "OVERALL" and any(what == "Operations" for what, _ in fields):
            measurements.append(_measurement(name, fields, used, where))
    extras = [item for item in order if (item[0], item[1]) not in used]
    runtime_ms = _number(int, overall["RunTime(ms)"], where, "OVERALL", "RunTime(ms)")
    throughput = _number(float, overall.get("Throughput(ops/sec)", 0.0), where, "OVERALL",
                         "Throughput(ops/sec)")
    if runtime_ms > 0:
        operations = round(throughput * runtime_ms / 1000.0)
    else:
        operations = sum(m.operations for m in measurements if m.name != "CLEANUP")
    return RunResult(
        phase=phase or _guess_phase(measurements), db=db, runtime_ms=runtime_ms,
        operations=operations, throughput=throughput, measurements=measurements,
        environment={"ycsb_extra": extras}, source="ycsb-text",
    )


def _number(kind: type, value: int | float | str, where: str, name: str, what: str):
    """int(value) or float(value); a value that is not one is a corrupt file, said in one line."""
    try:
        return kind(value)
    except (TypeError, ValueError, OverflowError):
        raise WorkbenchError(f"{where}: corrupt YCSB output: [{name}], {what}, {value!r} is not a number",
                             "use the file exactly as YCSB wrote it") from None


def _measurement(name: str, fields: list[tuple[str, int | float | str]],
                 used: set[tuple[str, str]], where: str = "<text>") -> Measurement:
    m = Measurement(name=name, operations=0, average_us=0.0, min_us=0, max_us=0)
    for what, value in fields:
        known = True
        pct = _PERCENTILE.match(what)
        if what == "Operations":
            m.operations = _number(int, value, where, name, what)
        elif what == "AverageLatency(us)":
            m.average_us = _number(float, value, where, name, what)
        elif what == "MinLatency(us)":
            m.min_us = _number(int, value, where, name, what)
        elif what == "MaxLatency(us)":
            m.max_us = _number(int, value, where, name, what)
        elif what.startswith("Return="):
            m.returns[what.removeprefix("Return=")] = _number(int, value, where, name, what)
        elif pct and isinstance(value, int):
            m.percentiles[float(pct["p"])] = value
        elif pct and isinstance(value, str):
            _number(float, value, where, name, what)
            known = False
        else:
            known = False
        if known:
            used.add((name, what))
    if m.operations == 0:  # Java's empty-histogram figures (NaN, Long.MAX_VALUE) -> model zeros
        m.average_us, m.min_us, m.max_us = 0.0, 0, 0
    return m
