"""Topology changes of the cluster under test, marked on the run that goes on meanwhile.

A run on a known cluster (the app's, a lesson's, an experiment's, `workbench run --cluster NAME`)
watches that cluster's journal (clusters/journal.py) while it runs: a node added or removed,
here or from another terminal, becomes an event of the run at the moment it happened ("+ node4
joining", "node4 normal", "- node2 leaving", "node2 gone"), on the timeline and in the exports.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from workbench.clusters import journal

if TYPE_CHECKING:
    from workbench.clusters.base import Cluster
    from workbench.core.controller import Controller

POLL_S = 0.25  # how late a change may be seen; its event carries the time it was written


class ClusterWatch:
    """Reads the journal of `cluster` from where it ends now, every POLL_S, on the run's loop."""

    def __init__(self, cluster: Cluster, controller: Controller) -> None:
        self.run_dir, self.controller = cluster.run_dir, controller
        self.offset = journal.end(self.run_dir)
        self._task: asyncio.Task | None = None

    @classmethod
    def start(cls, cluster: Cluster | None, controller: Controller) -> ClusterWatch | None:
        """A running watch, or None for a run that names no cluster of ours."""
        if cluster is None or getattr(cluster, "run_dir", None) is None:
            return None
        watch = cls(cluster, controller)
        watch._task = asyncio.get_running_loop().create_task(watch._poll())
        controller.before_final(watch.read)  # what was written in the run's last POLL_S too
        return watch

    def read(self) -> int:
        """Mark what was written since the last read; how many entries that was."""
        if journal.end(self.run_dir) <= self.offset:
            return 0
        entries, self.offset = journal.read(self.run_dir, self.offset)
        for entry in entries:
            self.controller.mark(entry.kind, entry.value, at=entry.at)
        return len(entries)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_S)
            self.read()

    async def stop(self) -> None:
        """Stop watching (the run has ended: its events are in its outcome already)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
