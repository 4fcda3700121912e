"""Progress of jar downloads and cluster starts, for a terminal or for a program.

`download_bar(...)` yields `advance(nbytes)`; negative values take back bytes that have to be
downloaded again. `enabled` is True (a rich bar on stderr), False (silent: tests, non-terminal
use) or a callable that receives `ProgressEvent`s (the app shows them in its own widgets). Every
event may come from a worker thread: a callable must be cheap and must not block.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)


@dataclass(frozen=True)
class ProgressEvent:
    """stage: "fetch" (done/total in bytes), "start" (a node launched), "wait" (waiting for it
    to serve), "ready"; a node added to a running cluster: "start", "join" (bootstrapping),
    "ready" (Up/Normal; HBase: registered), "moved" (what the join moved to it: bytes streamed,
    regions balanced); a node removed: "leave" (decommissioning), "left", "gone"; message: one
    line for a person."""

    stage: str
    message: str
    done: int | None = None
    total: int | None = None


OnProgress = bool | Callable[[ProgressEvent], None]


def report(progress: OnProgress, stage: str, message: str, done: int | None = None,
           total: int | None = None) -> None:
    """Hand an event to a callable `progress`; bools have nothing to call."""
    if callable(progress):
        progress(ProgressEvent(stage, message, done, total))


@contextmanager
def download_bar(
    label: str, total: int, files: int, enabled: OnProgress = True
) -> Iterator[Callable[[int], None]]:
    if callable(enabled):
        yield _events(enabled, label, total, files)
        return
    if not enabled:
        yield lambda _n: None
        return
    lock = threading.Lock()
    progress = Progress(
        TextColumn(f"[bold]fetching {label}[/] ({files} jars)"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    with progress:
        task = progress.add_task("download", total=total)

        def advance(nbytes: int) -> None:
            with lock:
                progress.advance(task, nbytes)

        yield advance


def _events(callback: Callable[[ProgressEvent], None], label: str, total: int,
            files: int) -> Callable[[int], None]:
    """advance(nbytes) for a callback: an event per 1% of the bytes (and the last one)."""
    lock = threading.Lock()
    state = {"done": 0, "told": -1}

    def advance(nbytes: int) -> None:
        with lock:
            state["done"] += nbytes
            done = state["done"]
            step = done * 100 // total if total else 100
            if step == state["told"]:
                return
            state["told"] = step
        callback(ProgressEvent("fetch", f"fetching {label} ({files} jars): {done / 1e6:,.1f} of "
                                        f"{total / 1e6:,.1f} MB", done, total))

    return advance
