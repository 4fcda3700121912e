"""The JVM's GC log of a node the workbench started: where it is, the flag that turns it on, and a
reader that tails it.

The local and Docker providers start every Cassandra node and HBase process with Java's unified
logging of the `gc*` tags into a file beside its own log (`beside`, `flag`), decorated with
the wall-clock time, the JVM's uptime, the level and the tags. A pause line reads, on Java 17
with G1 (ZGC's are tagged gc,phases: "GC(0) Pause Mark Start 0.014ms"):

    [2026-11-29T09:12:21.672+0000][0.627s][info][gc          ] GC(0) Pause Young (Normal)
        (G1 Evacuation Pause) 12M->4M(256M) 10.979ms      (one line in the file)

It is written when the pause ends; its time is that moment. `GcLogTail` remembers how far it has
read (a line still being written waits for its newline) and follows the JVM's own rotation (the
file renamed to NAME.gc.log.N and a new one opened, also at each start of the JVM).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

FILE_COUNT, FILE_SIZE = 5, "20M"  # at most 100 MB of GC log per node
# tags `gc` (G1, Parallel, Serial, Shenandoah) or `gc,phases` (ZGC's pauses); G1's other lines
# under gc,phases name phases, never a "Pause"
_PAUSE = re.compile(r"^\[(?P<time>[^\]]+)\]\[[^\]]*\]\[[^\]]*\]\[gc(?:,phases)?\s*\]\s+GC\(\d+\)\s+"
                    r"(?P<what>Pause .*?)\s+(?P<ms>\d+(?:\.\d+)?)ms\s*$")
_HEAP = re.compile(r"\s+\d+[KMGT]?->\d+[KMGT]?\(\d+[KMGT]?\)$")


def beside(log: Path) -> Path:
    """The GC log of the node whose own log is `log`: logs/system.log -> logs/system.gc.log
    (Cassandra), logs/master.log -> logs/master.gc.log, rs2/logs/regionserver.gc.log (HBase)."""
    return log.with_name(f"{log.stem}.gc.log")


def flag(file: Path | str) -> str:
    """The JVM option that logs every GC event into `file` (Java 9 and later)."""
    return (f"-Xlog:gc*:file={file}:time,uptime,level,tags:filecount={FILE_COUNT},"
            f"filesize={FILE_SIZE}")


@dataclass(frozen=True)
class Pause:
    """One stop-the-world pause: when it ended (epoch seconds), how long it took, what it was."""

    ended: float
    ms: float
    detail: str  # "Pause Young (Normal) (G1 Evacuation Pause) 12M->4M(256M)"

    @property
    def started(self) -> float:
        return self.ended - self.ms / 1000


def parse_line(line: str) -> Pause | None:
    """The pause a GC log line reports, or None (any other line: phases, heap, concurrent work)."""
    found = _PAUSE.match(line.rstrip("\n"))
    if found is None:
        return None
    try:
        ended = datetime.strptime(found["time"], "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
    except ValueError:
        return None
    return Pause(ended, float(found["ms"]), found["what"])


def short(pause: Pause) -> str:
    """One short line for an event: "Pause Young (Normal) (G1 Evacuation Pause) 11.0 ms"."""
    return f"{_HEAP.sub('', pause.detail)} {pause.ms:.1f} ms"


class GcLogTail:
    """Reads the pauses a GC log gained since the last call. `from_start=False` skips what the
    file already holds (a run reads the pauses of its own seconds, not those of the start-up)."""

    def __init__(self, file: Path, from_start: bool = False) -> None:
        self.file = file
        self._inode, self._offset, self._partial = 0, 0, b""
        if not from_start:
            try:
                stat = file.stat()
                self._inode, self._offset = stat.st_ino, stat.st_size
            except OSError:
                pass

    def read(self) -> list[Pause]:
        """The pauses in the lines completed since the last call, in the file's order."""
        try:
            stat = self.file.stat()
        except OSError:  # not written yet (a JVM starting), or moved away this instant
            return []
        pauses = []
        if self._inode and stat.st_ino != self._inode:  # rotated: finish the old file first
            pauses = self._pauses(self._rest_of_rotated() + b"\n")
            self._offset, self._partial = 0, b""
        elif stat.st_size < self._offset:  # truncated
            self._offset, self._partial = 0, b""
        self._inode = stat.st_ino
        return pauses + self._pauses(self._read_from(self.file))

    def _read_from(self, file: Path) -> bytes:
        try:
            with open(file, "rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except OSError:
            return b""
        self._offset += len(data)
        return data

    def _rest_of_rotated(self) -> bytes:
        for old in self.file.parent.glob(self.file.name + ".*"):
            try:
                if os.stat(old).st_ino == self._inode:
                    return self._read_from(old)
            except OSError:
                continue
        return b""

    def _pauses(self, data: bytes) -> list[Pause]:
        text = self._partial + data
        complete, _, self._partial = text.rpartition(b"\n")
        out = []
        for line in complete.decode("utf-8", errors="replace").splitlines():
            pause = parse_line(line)
            if pause is not None:
                out.append(pause)
        return out
