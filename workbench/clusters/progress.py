"""A rich progress bar for jar downloads, usable from worker threads.

`download_bar(...)` yields `advance(nbytes)`; negative values take back bytes that have to be
downloaded again. With enabled=False (tests, non-terminal use) it is a silent no-op.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)


@contextmanager
def download_bar(
    label: str, total: int, files: int, enabled: bool = True
) -> Iterator[Callable[[int], None]]:
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
