"""A list that keeps only its newest items in memory and the rest in an unnamed temporary file.

A phase keeps one record per tick for its exports (summary figures and compressed interval
histograms, a few KB each). An hour at four ticks a second is 14,400 of them, tens of MB if
they stayed in memory; here at most `keep` of them do, the others are pickled to a file that the
system removes when the list is collected or the process ends (it is unlinked from the start).

    intervals = SpillList()
    intervals.append(record)         # once every tick: one write() once `keep` are waiting
    len(intervals); intervals[3]; list(intervals)   # read back with pread, in order
    intervals.mapped(convert)        # a read-only view that converts each item as it is read

Reading is re-entrant (pread at recorded offsets, no shared file position), so two iterations
may run at once. Items read back are new objects each time: change them in a copy, not in place.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")
U = TypeVar("U")

KEEP = 64  # items held in memory before they are written out together


class SpillList(Sequence[T], Generic[T]):
    def __init__(self, items: Sequence[T] = (), keep: int | None = None) -> None:
        keep = KEEP if keep is None else keep
        if keep < 1:
            raise ValueError("keep must be at least 1")
        self._keep = keep
        self._fd: int | None = None
        self._offsets = array("q")  # where each spilled item starts; the file's end after the last
        self._tail: list[T] = []
        for item in items:
            self.append(item)

    def append(self, item: T) -> None:
        self._tail.append(item)
        if len(self._tail) >= self._keep:
            self._spill()

    def _spill(self) -> None:
        if self._fd is None:
            self._fd = _unnamed_file()
            self._offsets.append(0)
        start = end = self._offsets[-1]
        chunks = []
        for item in self._tail:
            chunks.append(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))
            end += len(chunks[-1])
            self._offsets.append(end)
        blob = memoryview(b"".join(chunks))
        while blob:  # pwrite may write less than asked
            done = os.pwrite(self._fd, blob, start)
            blob, start = blob[done:], start + done
        self._tail.clear()

    @property
    def spilled(self) -> int:
        """How many items are in the file."""
        return max(len(self._offsets) - 1, 0)

    def __len__(self) -> int:
        return self.spilled + len(self._tail)

    def _read(self, i: int) -> T:
        start, end = self._offsets[i], self._offsets[i + 1]
        return pickle.loads(os.pread(self._fd, end - start, start))

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("SpillList index out of range")
        spilled = self.spilled
        return self._read(index) if index < spilled else self._tail[index - spilled]

    def __iter__(self) -> Iterator[T]:
        spilled, tail = self.spilled, list(self._tail)
        for i in range(spilled):
            yield self._read(i)
        yield from tail

    def __eq__(self, other: object) -> bool:
        return _equal(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SpillList({len(self)} items, {self.spilled} in a file)"

    def mapped(self, convert: Callable[[T], U]) -> Mapped[U]:
        return Mapped(self, convert)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._offsets = array("q")

    def __del__(self) -> None:
        fd, self._fd = getattr(self, "_fd", None), None
        if fd is not None:
            os.close(fd)

    def __reduce__(self):  # pickled (another process): as the plain list it holds
        return (list, (list(self),))


class Mapped(Sequence[U], Generic[U]):
    """A read-only view of a sequence that converts each item as it is read."""

    def __init__(self, source: Sequence[Any], convert: Callable[[Any], U]) -> None:
        self._source, self._convert = source, convert

    def __len__(self) -> int:
        return len(self._source)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self._convert(x) for x in self._source[index]]
        return self._convert(self._source[index])

    def __iter__(self) -> Iterator[U]:
        return map(self._convert, self._source)

    def __eq__(self, other: object) -> bool:
        return _equal(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Mapped({len(self)} items)"

    def __reduce__(self):
        return (list, (list(self),))


def _equal(seq: Sequence[Any], other: object) -> bool:
    """Equal to any sequence (a list too) with equal items in the same order."""
    if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
        return NotImplemented
    return len(seq) == len(other) and all(a == b for a, b in zip(seq, other, strict=True))


def _unnamed_file() -> int:
    """A file no name points at: the system frees it with the last descriptor (a crash too)."""
    folder = tempfile.gettempdir()
    try:
        return os.open(folder, os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC, 0o600)
    except (AttributeError, OSError):  # no O_TMPFILE (not Linux, or a file system without it)
        fd, path = tempfile.mkstemp(prefix="workbench-intervals-")
        os.unlink(path)
        return fd
