"""Counters shared by the lanes of one worker: the load key sequence and YCSB's
AcknowledgedCounterGenerator, whose limit only moves past keys whose insert has finished."""

from __future__ import annotations

from workbench.errors import WorkbenchError

WINDOW_SIZE = 1 << 20


class Counter:
    """Hands out start, start+1, ... (lanes of one worker share it on one event loop)."""

    def __init__(self, start: int) -> None:
        self.value = start

    def next(self) -> int:
        v = self.value
        self.value = v + 1
        return v

    def last(self) -> int:
        return self.value - 1


class AcknowledgedCounter(Counter):
    """`last()` is the highest number below which every handed-out number was acknowledged."""

    def __init__(self, start: int) -> None:
        super().__init__(start)
        self.limit = start - 1
        self._acked: set[int] = set()

    def last(self) -> int:
        return self.limit

    def acknowledge(self, value: int) -> None:
        if value == self.limit + 1:
            limit = value
            acked = self._acked
            while limit + 1 in acked:
                limit += 1
                acked.discard(limit)
            self.limit = limit
            return
        if len(self._acked) >= WINDOW_SIZE:
            raise WorkbenchError(
                "too many unacknowledged insertion keys (an insert is stuck)",
                "check the database: inserts stopped completing",
            )
        self._acked.add(value)
