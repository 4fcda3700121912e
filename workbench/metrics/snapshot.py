"""Immutable interval snapshots: what the controller hands to every listener each tick."""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import compress

from hdrh.histogram import HdrHistogram

from workbench import speedups
from workbench.metrics.server import ServerEvent

SNAPSHOT_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99)
_C = speedups.C  # the compiled walk, or None (tests set it to None to run the Python)


@dataclass(frozen=True)
class OpStats:
    """Summary of one histogram (microseconds)."""

    count: int
    mean: float
    min: int
    max: int
    percentiles: Mapping[float, int] = field(default_factory=dict)

    @classmethod
    def of(cls, h: HdrHistogram, percentiles: tuple[float, ...] = SNAPSHOT_PERCENTILES) -> OpStats:
        n = h.get_total_count()
        if not n:
            return cls(0, 0.0, 0, 0, {p: 0 for p in percentiles})
        mean, pct = summarize(h, percentiles)
        return cls(n, mean, h.get_min_value(), h.get_max_value(), pct)


def summarize(h: HdrHistogram, percentiles: tuple[float, ...]) -> tuple[float, dict[float, int]]:
    """Mean and percentiles with HdrHistogram's exact semantics (median-equivalent values for
    the mean; highest-equivalent value at the percentile's count, as Java's getValueAtPercentile)
    but far faster than hdrh's pure-Python walk over every bucket: empty buckets are skipped at
    C speed and bucket values are computed inline. Where workbench._speedups is built, its
    summarize() makes this walk, value for value (tests/unit/test_histograms.py compares them)."""
    total = h.get_total_count()
    shift = h.sub_bucket_half_count_magnitude
    half = h.sub_bucket_half_count
    unit = h.unit_magnitude
    wanted = sorted(set(percentiles))
    targets = [max(int(min(p, 100.0) * total / 100 + 0.5), 1) for p in wanted]
    if _C is not None:
        weighted, values = _C.summarize(h.counts, shift, half, unit, tuple(wanted), tuple(targets))
        found = dict(zip(wanted, values, strict=True))
        return weighted / total, {p: found[p] for p in percentiles}
    view = memoryview(h.counts)
    counts = array(view.format[-1], view.cast("B").tobytes())
    result: dict[float, int] = {}
    running = 0
    weighted = 0
    k = 0
    for i in compress(range(len(counts)), counts):
        c = counts[i]
        bucket = (i >> shift) - 1
        sub = (i & (half - 1)) + half
        if bucket < 0:
            sub -= half
            bucket = 0
        value = sub << (bucket + unit)
        size = 1 << (bucket + unit)
        weighted += c * (value + (size >> 1))
        running += c
        while k < len(wanted) and running >= targets[k]:
            result[wanted[k]] = value + size - 1 if wanted[k] else value
            k += 1
    return weighted / total, {p: result.get(p, 0) for p in percentiles}


@dataclass(frozen=True)
class IntervalSnapshot:
    """One tick of a phase, merged over every worker.

    `histograms` are this interval's HdrHistograms by measurement name (treat as read-only);
    `cumulative` summarises the since-start histograms when the controller was asked to.
    """

    phase: str
    elapsed_s: float
    interval_s: float
    operations: int
    total_operations: int
    todo_operations: int  # 0 when the phase has no operation limit
    lanes: int
    target: float
    paused: bool
    stats: Mapping[str, OpStats]
    cumulative: Mapping[str, OpStats]
    returns: Mapping[str, Mapping[str, int]]
    histograms: Mapping[str, HdrHistogram]
    final: bool = False
    # requests and errors per node this interval, as the binding's client counted them
    # (Binding.node_counts): {address: (requests, errors)}; empty where the client does not count
    # live, every node seen so far: one without requests this interval is there with (0, 0)
    nodes: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    # failed operations by the driver's error kind since the phase started, summed over workers
    # (Binding.error_kinds, read once a tick): {"ReadTimeout": 20, "Unavailable": 14}
    error_kinds: Mapping[str, int] = field(default_factory=dict)
    # nodes of `nodes` that some worker's client knows are disconnected now (Binding.down_nodes)
    down: frozenset[str] = frozenset()
    # paced: operations whose intended start had come by the tick's end that no lane had taken
    # yet, summed over workers (core/pacing.py Pacer.behind); 0 unpaced or on schedule
    behind: int = 0
    # the servers' figures sampled for this interval, node -> figures (metrics/server.py; the
    # workbench's own side under "client"), and the server events begun in it, (elapsed_s, event)
    server: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    server_events: tuple[tuple[float, ServerEvent], ...] = ()

    @property
    def throughput(self) -> float:
        return self.operations / self.interval_s if self.interval_s > 0 else 0.0
