"""The servers' side of a run as CSV (issue 54, 1): `--export server-csv=FILE`, one row per
interval and node with a column per figure (metrics/server.py names them), the client's own
processes under the node "client"; `--export server-events=FILE`, one row per server event (a
GC pause, a compaction, a flush). Figures a node's sources did not see in a second are left
empty, never zero, as in csvfile.py.
"""

from __future__ import annotations

import csv
from pathlib import Path

from workbench.metrics.server import CLIENT
from workbench.results.model import RunResult

_FIRST = ("cpu", "rss_bytes", "disk_read_bytes", "disk_write_bytes")


def server_rows(result: RunResult) -> list[list[object]]:
    """Header (elapsed_s, node, then every figure any node had) and a row per interval and node."""
    names: set[str] = set()
    for interval in result.intervals:
        for figures in interval.server.values():
            names.update(figures)
    columns = [n for n in _FIRST if n in names] + sorted(names - set(_FIRST))
    rows: list[list[object]] = [["elapsed_s", "node", *columns]]
    for interval in result.intervals:
        for node in sorted(interval.server, key=lambda n: (n == CLIENT, n)):
            figures = interval.server[node]
            rows.append([round(interval.elapsed_s, 3), node, *(figures.get(n, "") for n in columns)])
    return rows


def server_event_rows(result: RunResult) -> list[list[object]]:
    rows: list[list[object]] = [["elapsed_s", "node", "kind", "seconds", "detail"]]
    rows += [[e.elapsed_s, e.node, e.kind, e.seconds, e.detail] for e in result.server_events]
    return rows


def _write(rows: list[list[object]], path: str | Path) -> None:
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


def write_server_csv(result: RunResult, path: str | Path) -> None:
    _write(server_rows(result), path)


def write_server_events_csv(result: RunResult, path: str | Path) -> None:
    _write(server_event_rows(result), path)
