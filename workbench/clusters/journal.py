"""A cluster's journal: what changed in its topology, for the runs that go on meanwhile.

A node added or removed while a run goes on is an event of that run ("+ node4 joining",
"node4 normal", "- node2 leaving", "node2 gone"), and so is a fault ("node2 killed", "node2
paused (frozen)", "node2 resumed", "node2 restarting", "node2 restarted": kind "fault"),
wherever the change was asked for: this
process (the app, a lesson, an experiment) or another one (`workbench cluster add-node` in a
second terminal). The provider that changes the cluster appends a line to `journal.jsonl` in the
cluster's folder; a run on that cluster reads the lines added since it started (drive/phase.py
ClusterWatch) and marks each one on its timeline at the moment it was written.

One JSON object a line: {"t": wall-clock seconds, "kind": "cluster", "value": text}. Lines are
appended whole (one write of one line, O_APPEND); a reader skips a line that does not parse yet.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

FILE = "journal.jsonl"
KIND = "cluster"  # the run events' kind: the timeline's mark, the exports' events column
FAULT = "fault"  # a node killed, frozen, resumed or restarted: the timeline's "!"
FAULTS = {"kill": "killed", "pause": "paused (frozen)", "resume": "resumed", "restart": "restarted"}


@dataclass(frozen=True)
class Entry:
    at: float  # wall clock (time.time())
    kind: str
    value: str


def path(run_dir: Path) -> Path:
    return Path(run_dir) / FILE


def append(run_dir: Path, value: str, kind: str = KIND) -> None:
    """Add one line to the cluster's journal (a cluster whose folder is gone is not an error:
    the journal serves runs, it does not decide anything)."""
    line = json.dumps({"t": time.time(), "kind": kind, "value": value}) + "\n"
    try:
        fd = os.open(path(run_dir), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        return
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def fault(run_dir: Path, node: str, what: str) -> None:
    """A provider disturbed a node (what: kill, pause, resume, restart; or "restarting" as a
    restart begins): "node2 killed", an event of every run on the cluster, in any process."""
    append(run_dir, f"{node} {FAULTS.get(what, what)}", FAULT)


def end(run_dir: Path) -> int:
    """Where the journal ends now (a reader that starts here sees only what comes after)."""
    try:
        return path(run_dir).stat().st_size
    except OSError:
        return 0


def read(run_dir: Path, offset: int) -> tuple[list[Entry], int]:
    """The whole lines added after `offset`, and the offset after the last of them."""
    try:
        with open(path(run_dir), "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return [], offset
    entries: list[Entry] = []
    done = data.rfind(b"\n") + 1  # a line still being written waits for the next read
    for raw in data[:done].splitlines():
        try:
            item = json.loads(raw)
            entries.append(Entry(float(item["t"]), str(item.get("kind", KIND)), str(item["value"])))
        except (ValueError, KeyError, TypeError):
            continue
    return entries, offset + done
