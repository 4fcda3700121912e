"""The whole run as JSON: our own lossless format, read back into an equal RunResult.

Percentile keys are floats, which JSON objects cannot have as keys, so percentile maps are
written as [[percentile, value], ...]; tuples (e.g. environment["ycsb_extra"] entries) are
written as {"__tuple__": [...]} so they come back as tuples. Non-finite floats are written as
JSON's common extension NaN/Infinity (Python's json reads them back).
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError
from workbench.results.model import (
    Event,
    Interval,
    IntervalMeasurement,
    Measurement,
    RunResult,
    ServerEventRecord,
)

FORMAT = "workbench-run"
VERSION = 1


def _plain(value: Any) -> Any:
    """Tag tuples and turn float-keyed dicts into pair lists so that JSON can hold them."""
    if isinstance(value, tuple):
        return {"__tuple__": [_plain(v) for v in value]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        if any(not isinstance(k, str) for k in value):
            return {"__pairs__": [[_plain(k), _plain(v)] for k, v in value.items()]}
        return {k: _plain(v) for k, v in value.items()}
    return value


def _restore(value: Any) -> Any:
    if isinstance(value, list):
        return [_restore(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            return tuple(_restore(v) for v in value["__tuple__"])
        if set(value) == {"__pairs__"}:
            return {_key(_restore(k)): _restore(v) for k, v in value["__pairs__"]}
        return {k: _restore(v) for k, v in value.items()}
    return value


def _key(k: Any) -> Any:
    return tuple(k) if isinstance(k, list) else k  # dict keys must stay hashable


def to_json_dict(result: RunResult, intervals: bool = True) -> dict[str, Any]:
    """The JSON document as Python data (`intervals=False`: with an empty list of them). The
    intervals are converted one by one: a long run's may be read from a file (core/spill.py)."""
    run = asdict(replace(result, intervals=[]))
    if intervals:
        run["intervals"] = [asdict(i) for i in result.intervals]
    return {"format": FORMAT, "version": VERSION, "run": _plain(run)}


def write_json(result: RunResult, path: str | Path) -> None:
    """Write the run; `read_json` gives back an equal RunResult."""
    Path(path).write_text(json.dumps(to_json_dict(result), indent=1) + "\n", encoding="utf-8")


def _build(cls: type, data: dict[str, Any]) -> Any:
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})  # unknown keys: newer writer


def from_json_dict(doc: dict[str, Any], where: str = "<json>") -> RunResult:
    """A RunResult from a document made by `to_json_dict`."""
    if doc.get("format") != FORMAT:
        raise WorkbenchError(f"{where}: not a workbench run file", "expected format workbench-run")
    if doc.get("version", 0) > VERSION:
        raise WorkbenchError(f"{where}: run file version {doc['version']} is newer than this "
                             f"workbench reads ({VERSION})", "upgrade workbench")
    run = _restore(doc["run"])
    run["measurements"] = [_build(Measurement, m) for m in run.get("measurements", [])]
    run["events"] = [_build(Event, e) for e in run.get("events", [])]
    run["server_events"] = [_build(ServerEventRecord, e) for e in run.get("server_events", [])]
    intervals = []
    for i in run.get("intervals", []):
        i["measurements"] = {k: _build(IntervalMeasurement, m)
                             for k, m in i.get("measurements", {}).items()}
        intervals.append(_build(Interval, i))
    run["intervals"] = intervals
    return _build(RunResult, run)


def read_json(path: str | Path) -> RunResult:
    """Read a run written by `write_json`."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise WorkbenchError(f"{path}: not valid JSON ({e})") from None
    return from_json_dict(doc, str(path))
