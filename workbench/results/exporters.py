"""The registry behind `--export kind=FILE`: one writer per kind, chosen by name."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from workbench.errors import ConfigError
from workbench.results.csvfile import write_summary_csv, write_timeseries_csv
from workbench.results.hdrlog import write_hdr_log
from workbench.results.jsonfile import write_json
from workbench.results.model import RunResult
from workbench.results.server_csv import write_server_csv, write_server_events_csv
from workbench.results.ycsb_text import write_ycsb_text

# Every exporter takes (result, path, layout); only the YCSB text cares about the layout.
Exporter = Callable[[RunResult, Path, str], None]

EXPORTERS: dict[str, Exporter] = {
    "ycsb": lambda result, path, layout: write_ycsb_text(result, path, layout=layout),
    "csv": lambda result, path, layout: write_summary_csv(result, path),
    "timeseries": lambda result, path, layout: write_timeseries_csv(result, path),
    "hdr": lambda result, path, layout: write_hdr_log(result, path),
    "json": lambda result, path, layout: write_json(result, path),
    "server-csv": lambda result, path, layout: write_server_csv(result, path),
    "server-events": lambda result, path, layout: write_server_events_csv(result, path),
}

SUFFIXES = {"ycsb": "txt", "timeseries": "csv", "hdr": "hlog", "server-csv": "csv", "server-events": "csv"}

DESCRIPTIONS = {
    "ycsb": "YCSB's text summary ([READ], AverageLatency(us), ...)",
    "csv": "one row per measurement",
    "timeseries": "one row per interval and measurement",
    "hdr": "HdrHistogram interval log, one Tag= per measurement",
    "json": "the whole run, lossless (import it back with workbench)",
    "server-csv": "the servers' figures (CPU, memory, disk, GC, queues): one row per interval and node",
    "server-events": "the servers' events (GC pauses, compactions, flushes): one row each",
}


def parse_spec(spec: str) -> tuple[str, Path]:
    """`kind=FILE` -> (kind, path); a ConfigError names the valid kinds."""
    valid = ", ".join(EXPORTERS)
    kind, sep, file = spec.partition("=")
    kind = kind.strip()
    if not sep or not file.strip():
        raise ConfigError(f"--export {spec!r} is not kind=FILE", f"kinds: {valid}")
    if kind not in EXPORTERS:
        raise ConfigError(f"unknown export kind {kind!r} in --export {spec!r}",
                          f"kinds: {valid}")
    return kind, Path(file.strip())


def check_target(spec: str) -> tuple[str, Path]:
    """Refuse, before a run, an `--export kind=FILE` that could not be written after it: an
    unknown kind, a directory, a missing or read-only directory."""
    kind, path = parse_spec(spec)
    if path.is_dir():
        raise ConfigError(f"--export {spec}: {path} is a directory", f"give a file name, e.g. {kind}="
                          f"{path / ('results.' + SUFFIXES.get(kind, kind))}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ConfigError(f"--export {spec}: the directory {folder} does not exist",
                          f"create it first with mkdir -p {folder}, or choose another path")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ConfigError(f"--export {spec}: {path} cannot be written (permission denied)",
                          "choose a path you can write to")
    return kind, path


def export(result: RunResult, spec: str, layout: str = "0.17") -> Path:
    """Write `result` as `--export kind=FILE` asks; returns the file written."""
    kind, path = parse_spec(spec)
    if kind == "ycsb" and layout not in ("0.17", "master"):
        raise ConfigError(f"unknown YCSB layout {layout!r}", "layouts: 0.17, master")
    EXPORTERS[kind](result, path, layout)
    return path
