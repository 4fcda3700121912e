"""Per-worker latency recorder for the hot path.

Each operation type has a Meter. Recording one operation is a few dict increments: latencies
are tallied exactly per microsecond value and poured into HdrHistograms once per tick, which
costs a tenth of recording every value into an HdrHistogram directly and loses nothing.
A worker runs its lanes on one event loop, so nothing here takes a lock.

Names follow YCSB: successful operations under READ, failed ones under READ-FAILED, and the
response time from the intended start (paced runs only) under Intended-READ / Intended-READ-FAILED.
"""

from __future__ import annotations

from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

from workbench.bindings.base import Status
from workbench.metrics.histograms import from_counts
from workbench.metrics.keycounts import KeyTally

_OK = Status.OK
_BATCHED_OK = Status.BATCHED_OK


class Meter:
    """Latency tallies and status counts for one operation type."""

    __slots__ = ("name", "ok", "failed", "iok", "ifailed", "n_ok", "returns")

    def __init__(self, name: str) -> None:
        self.name = name
        self.ok: dict[int, int] = {}
        self.failed: dict[int, int] = {}
        self.iok: dict[int, int] = {}
        self.ifailed: dict[int, int] = {}
        # Status.OK is counted in an int: an Enum member hashes through a Python-level
        # __hash__, which would cost two Python calls per operation on the hot path.
        self.n_ok = 0
        self.returns: dict[Status, int] = {}  # every other status

    def record(self, status: Status, t_start: int, t_end: int, t_intended: int) -> None:
        """Times in perf_counter_ns; t_intended is 0 for an unpaced operation."""
        us = (t_end - t_start) // 1000
        if status is _OK:
            d = self.ok
            d[us] = d.get(us, 0) + 1
            self.n_ok += 1
            if t_intended:
                ius = (t_end - t_intended) // 1000
                di = self.iok
                di[ius] = di.get(ius, 0) + 1
            return
        d = self.failed if status is not _BATCHED_OK else self.ok
        d[us] = d.get(us, 0) + 1
        r = self.returns
        r[status] = r.get(status, 0) + 1
        if t_intended:
            ius = (t_end - t_intended) // 1000
            di = self.ifailed if status is not _BATCHED_OK else self.iok
            di[ius] = di.get(ius, 0) + 1

    def time(self, t_start: int, t_end: int, t_intended: int) -> None:
        """A latency without a status (READ-MODIFY-WRITE: its READ and UPDATE carry them)."""
        us = (t_end - t_start) // 1000
        d = self.ok
        d[us] = d.get(us, 0) + 1
        if t_intended:
            ius = (t_end - t_intended) // 1000
            di = self.iok
            di[ius] = di.get(ius, 0) + 1

    def record_value(self, us: int) -> None:
        """A latency without a status (SCAN-LATENCY-PER-RECORD, CLEANUP)."""
        d = self.ok
        d[us] = d.get(us, 0) + 1

    def count_status(self, status: Status) -> None:
        if status is _OK:
            self.n_ok += 1
            return
        r = self.returns
        r[status] = r.get(status, 0) + 1


@dataclass
class TickData:
    """What a worker hands over each tick: histograms by measurement name, status counts."""

    operations: int
    histograms: dict[str, HdrHistogram]
    returns: dict[str, dict[str, int]]
    error_kinds: dict[str, int] | None = None  # the binding's totals, on a worker's last tick
    in_flight: float = 0.0  # operations in the system, sampled over the tick (mean)
    # requests and errors per node (coordinator) this tick: {address: (requests, errors)}
    nodes: dict[str, tuple[int, int]] | None = None
    # measurement.keys: the keys its requests chose, on a worker's last tick (metrics/keycounts.py)
    keys: KeyTally | None = None
    # as nodes, per region of the tables, where the client counts them (Binding.region_counts)
    regions: dict[str, tuple[int, int]] | None = None
    # what the client did on its own, on a worker's last tick (Binding.client_counts)
    client_counts: dict[str, int] | None = None
    # the binding's error kinds that grew this tick, by how much (Binding.error_kinds, read once a
    # tick): the controller adds them up into the live kinds (IntervalSnapshot.error_kinds)
    kinds_delta: dict[str, int] | None = None
    # the nodes its client knows are disconnected now (Binding.down_nodes), None when none is
    down: tuple[str, ...] | None = None
    # paced: operations whose intended start had come by the tick's end that no lane had taken
    # yet (Pacer.behind): the lanes were that far behind their schedule; 0 unpaced
    behind: int = 0
    # the worker's event loop: its longest lag this tick (ms a 0.1 s sleep overshot), and paced,
    # the longest gap between an operation's intended start and its actual one (ms; None unpaced)
    loop_lag_ms: float | None = None
    start_gap_ms: float | None = None
    # which worker's lanes (its index), and whether its phase has ended with this tick (its
    # client closed): `down` is a state, not a delta, so the controller keeps each worker's last
    # one for a drain that its reply missed
    worker: int = 0
    last: bool = False


class Recorder:
    def __init__(self) -> None:
        self.meters: dict[str, Meter] = {}
        self.operations = 0  # completed top-level operations since the last drain

    def meter(self, name: str) -> Meter:
        m = self.meters.get(name)
        if m is None:
            m = self.meters[name] = Meter(name)
        return m

    def drain(self) -> TickData:
        """Swap out everything recorded since the last drain."""
        histograms: dict[str, HdrHistogram] = {}
        returns: dict[str, dict[str, int]] = {}
        for m in self.meters.values():
            for suffix_name, tallies in (
                (m.name, m.ok),
                (m.name + "-FAILED", m.failed),
                ("Intended-" + m.name, m.iok),
                ("Intended-" + m.name + "-FAILED", m.ifailed),
            ):
                if tallies:
                    histograms[suffix_name] = from_counts(tallies)
            if m.n_ok or m.returns:
                counts = {_OK.value: m.n_ok} if m.n_ok else {}
                counts.update((s.value, n) for s, n in m.returns.items())
                returns[m.name] = counts
            m.ok, m.failed, m.iok, m.ifailed, m.returns = {}, {}, {}, {}, {}
            m.n_ok = 0
        ops, self.operations = self.operations, 0
        return TickData(ops, histograms, returns)
