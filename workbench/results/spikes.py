"""Why did p99 move? The seconds of a run whose p99 stood out, and the server events that
overlapped each (issue 54): "p99 38 ms at 41 s: GC pause 412 ms on 127.0.0.2; compaction on
127.0.0.1", or that none did. The experiment report and the lab report print these lines under the
client's time series.

A second is a spike when its p99 (the highest of its operations') is at least SPIKE_FACTOR times
the median of the run's per-second p99s over its measured seconds. An event overlaps a second
when the time it ran, [start, start + length], meets the second's [end - length, end]; an event
of no length (a flush seen done, a kill) is a point in time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import median

from workbench.metrics.server import CLIENT, ServerEvent
from workbench.results.model import RunResult

SPIKE_FACTOR = 2.0
GC_MARK_MS = 100.0  # a GC pause this long or longer is marked on a timeline
# one letter per server event kind, on the Run screen's timeline and the reports' charts; Z and U,
# not P and R, which mark the run's own pause/resume
SERVER_MARKS = {"compaction": "C", "flush": "F", "gc": "G", "kill": "K", "pause": "Z",
                "resume": "U", "restart": "X"}
# the measurements that are not an operation's latency: failed operations' own histograms
_NOT_LATENCY = ("-FAILED",)


@dataclass(frozen=True)
class Second:
    """One interval of a run, as this module needs it."""

    end_s: float                   # its end, seconds since the run began
    length_s: float                # how long it was (about 1 s)
    p99_us: Mapping[str, float]    # p99 by operation, microseconds
    warmup: bool = False


@dataclass(frozen=True)
class Spike:
    at_s: float
    operation: str
    p99_us: float
    events: tuple[tuple[float, ServerEvent], ...]  # (start, seconds since the run began; event)

    def line(self) -> str:
        head = f"{self.operation} p99 {_ms(self.p99_us)} at {self.at_s:.0f} s"
        if not self.events:
            return f"{head}: no server event overlaps it"
        return f"{head}: {'; '.join(describe_events([e for _, e in self.events]))}"


def _ms(us: float) -> str:
    ms = us / 1000
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def worst(second: Second) -> tuple[str, float]:
    """The second's highest p99 of an operation (failed operations' own histograms left out)."""
    measured = {op: p for op, p in second.p99_us.items() if not op.endswith(_NOT_LATENCY)}
    if not measured:
        return "", 0.0
    op = max(measured, key=lambda o: measured[o])
    return op, measured[op]


def spikes(seconds: Sequence[Second], events: Iterable[tuple[float, ServerEvent]],
           factor: float = SPIKE_FACTOR) -> list[Spike]:
    """Every measured second whose worst p99 is at least `factor` times the run's median p99,
    with the events that overlap it (`events`: (start in seconds since the run began, event))."""
    measured = [s for s in seconds if not s.warmup and worst(s)[1] > 0]
    if not measured:
        return []
    typical = median(worst(s)[1] for s in measured)
    placed = sorted(events, key=lambda pair: pair[0])
    out = []
    for s in measured:
        op, p99 = worst(s)
        if p99 < factor * typical:
            continue
        begin, end = s.end_s - s.length_s, s.end_s
        overlapping = tuple((start, e) for start, e in placed
                            if start <= end and start + max(e.seconds, 0.0) >= begin)
        out.append(Spike(s.end_s, op, p99, overlapping))
    return out


def server_mark(event: ServerEvent) -> str | None:
    """The event's letter on a timeline, None for one too small to mark (a short GC pause)."""
    if event.kind == "gc" and event.seconds * 1000 < GC_MARK_MS:
        return None
    return SERVER_MARKS.get(event.kind, "*")


def run_seconds(result: RunResult) -> list[Second]:
    """A recorded run's intervals as Seconds: each operation's p99 where it has one."""
    return [Second(i.elapsed_s, i.duration_s,
                   {op: float(m.percentiles[99.0]) for op, m in i.measurements.items()
                    if m.count and 99.0 in m.percentiles}, i.warmup)
            for i in result.intervals]


def run_events(result: RunResult) -> list[tuple[float, ServerEvent]]:
    """A recorded run's server events of its nodes (not the client's), placed on its timeline."""
    return [(e.elapsed_s, ServerEvent(e.node, 0.0, e.kind, e.seconds, e.detail))
            for e in result.server_events if e.node != CLIENT]


def run_spikes(result: RunResult) -> list[Spike]:
    """A recorded run's spikes, with the events of its nodes that overlapped each."""
    return spikes(run_seconds(result), run_events(result))


def describe_events(events: Sequence[ServerEvent]) -> list[str]:
    """Short words for events, the longest GC pause of a node named with its length, the rest
    counted by kind and node: "GC pause 412 ms on 127.0.0.2", "2 flushes on 127.0.0.1"."""
    words: list[str] = []
    longest: dict[str, float] = {}
    counts: Counter[tuple[str, str]] = Counter()
    for e in events:
        if e.kind == "gc":
            longest[e.node] = max(longest.get(e.node, 0.0), e.seconds)
        else:
            counts[(e.kind, e.node)] += 1
    for node, seconds in sorted(longest.items(), key=lambda kv: -kv[1]):
        words.append(f"GC pause {seconds * 1000:.0f} ms on {node}")
    for (kind, node), n in sorted(counts.items()):
        name = {"compaction": "compaction", "flush": "flush"}.get(kind, kind)
        plural = f"{n} {name}{'es' if name.endswith(('sh', 'ch')) else 's'}" if n > 1 else name
        words.append(f"{plural} on {node}" if kind in ("compaction", "flush") else f"{plural} of {node}")
    return words
