"""Bringing a lost node back: the schedule of attempts (the DataStax drivers'
ExponentialReconnectionPolicy, cassandra/policies.py: a wait that doubles up to a ceiling) and
the loop that runs it in the background, one task per node, until a connection is made or the
node is no longer wanted (the session closed, or the node left the cluster).

The session (session.py) says how a node is opened, whether it is still wanted, and what
to do with the connection made; this module knows nothing of CQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ExponentialReconnection:
    """Waits between attempts: `first_s`, then doubled each time up to `max_s`; the first
    attempt at once when the node is known to be back (a STATUS_CHANGE UP event)."""

    first_s: float
    max_s: float

    def schedule(self, at_once: bool = False) -> Iterator[float]:
        wait = 0.0 if at_once else self.first_s
        while True:
            yield wait
            wait = min(max(wait * 2, self.first_s), self.max_s)


class Reconnector:
    """The background attempts, by node index: start() one (none if one runs already), cancel()
    one, close() them all."""

    def __init__(self, policy: ExponentialReconnection, open_: Callable[[int], Awaitable[Any]],
                 wanted: Callable[[int], bool], connected: Callable[[int, Any], None]) -> None:
        self.policy = policy
        self._open, self._wanted, self._connected = open_, wanted, connected
        self.tasks: dict[int, asyncio.Task] = {}

    def __contains__(self, index: int) -> bool:
        return index in self.tasks

    def start(self, index: int, at_once: bool = False) -> None:
        if index in self.tasks or not self._wanted(index):
            return
        task = self.tasks[index] = asyncio.get_running_loop().create_task(self._attempts(index, at_once))
        task.add_done_callback(lambda done: self.tasks.pop(index, None)
                               if self.tasks.get(index) is done else None)

    async def _attempts(self, index: int, at_once: bool) -> None:
        for wait in self.policy.schedule(at_once):
            if not self._wanted(index):
                return
            if wait:
                await asyncio.sleep(wait)
            try:
                conn = await self._open(index)
            except asyncio.CancelledError:
                raise
            except Exception:
                continue
            if self._wanted(index):
                self._connected(index, conn)
            else:
                conn.close()
            return

    def cancel(self, index: int) -> None:
        task = self.tasks.pop(index, None)
        if task is not None:
            task.cancel()

    def close(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
