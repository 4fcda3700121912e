"""What the server-side tests read for themselves, not with the code under test: Cassandra's
system.log lines in a time window, and a process's CPU seconds between two samples of them."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

# Cassandra's system.log: "INFO  [thread] 2026-11-29 09:16:13,623 File.java:175 - message"
_LINE = re.compile(r"^\w+\s+\[[^\]]*\] (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \S+ - (.*)$")


def log_lines(log: Path, since: float, until: float) -> list[tuple[float, str]]:
    """(Unix time, message) of each line of a Cassandra log between since and until."""
    out = []
    for line in log.read_text(errors="replace").splitlines():
        found = _LINE.match(line)
        if found:
            when = datetime.strptime(found[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()  # the node's local time
            if since <= when <= until:
                out.append((when, found[2]))
    return out


def cpu_at(samples: list[tuple[float, float]], when: float) -> float:
    """The CPU seconds at `when`, between the two (time, CPU seconds) samples around it."""
    for (t0, c0), (t1, c1) in zip(samples, samples[1:], strict=False):
        if t0 <= when <= t1:
            return c0 + (c1 - c0) * (when - t0) / (t1 - t0)
    span = f"{samples[0][0]:.2f} to {samples[-1][0]:.2f}" if samples else "none"
    raise AssertionError(f"no CPU samples around {when:.2f} (samples: {span})")


# Of a run's seconds, how many a loaded machine may leave without a source's figures: an answer
# late for its second (the sampler gives it 0.2 s), or a source still busy with the last one. A CI
# rehearsal under two busy loops (load average 10) had 6 of 53 from HBase's /jmx.
def allowed_gaps(seconds: int) -> int:
    return max(2, seconds // 5)


def noted_gaps(notes: list[str], source: str) -> int:
    """The seconds a run's notes say `source` (a source's name prefix) was skipped, and those the
    sampler's thread did not ask at all (woken more than a second late)."""
    out = 0
    for note in notes:
        if note.startswith((source, "sampler:")):
            found = re.search(r": (\d+) of \d+ seconds (?:skipped|not asked)", note)
            out += int(found[1]) if found else 0
    return out


def few_skips(notes: list[str], sources: tuple[str, ...]) -> None:
    """None of `sources` was unavailable or failed more than two seconds; an answer late for its
    second, or a source busy, is the machine's load: at most one second in five."""
    for note in notes:
        if note.startswith(sources):
            found = re.search(r": (\d+) of (\d+) seconds skipped \(([^)]*)\)", note)
            assert found, notes
            how = dict((what, int(n)) for n, what in re.findall(r"(\d+) (\w+)", found[3]))
            assert how.get("failed", 0) + how.get("garbage", 0) <= 2, notes
            assert how.get("late", 0) + how.get("busy", 0) <= allowed_gaps(int(found[2])), notes
