"""Fixed live data for the Run screen's tests and snapshots: a LiveState built from histograms
filled with known latencies, and a finished-run stand-in carrying it, so screens render the same
picture on every machine (no clocks, no timings of this machine)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from workbench.config.spec import spec_from_args
from workbench.drive.background import LiveState
from workbench.metrics.histograms import new_histogram
from workbench.metrics.snapshot import IntervalSnapshot, OpStats

WORKLOAD_A = "workloads/workloada"


def histogram(values_us: list[int]):
    h = new_histogram()
    for v in values_us:
        h.record_value(v)
    return h


def latencies(base: int, n: int = 1000) -> list[int]:
    """A spread with a tail: mostly around `base`, 1% ten times slower, one outlier."""
    return [base + (i % 50) * base // 25 for i in range(n - 11)] + [base * 10] * 10 + [base * 80]


def live_state(ticks: int = 40, paced: bool = True, events=None, errors: int = 0) -> LiveState:
    names = {"READ": 300, "UPDATE": 450}
    hist = {}
    for op, base in names.items():
        hist[op] = histogram(latencies(base))
        if paced:
            hist[f"Intended-{op}"] = histogram(latencies(base * 3))
    stats = {name: OpStats.of(h) for name, h in hist.items()}
    cumulative = {name: OpStats(s.count * ticks, s.mean, s.min, s.max, s.percentiles)
                  for name, s in stats.items()}
    returns = {"READ": {"OK": 1000 * ticks - errors, **({"TIMEOUT": errors} if errors else {})},
               "UPDATE": {"OK": 1000 * ticks}}
    snap = IntervalSnapshot(
        phase="run", elapsed_s=float(ticks), interval_s=1.0, operations=2000,
        total_operations=2000 * ticks, todo_operations=200_000, lanes=16, target=2000.0 if paced else 0,
        paused=False, stats=stats, cumulative=cumulative, returns={}, histograms=hist)
    throughput = tuple(1500.0 + (i * 37 % 11) * 60 for i in range(ticks))
    targets = tuple(2000.0 if paced else 0.0 for _ in range(ticks))
    return LiveState(ticks, snap, throughput, targets, tuple(events or ()), returns,
                     paced=paced, paused=False, target=snap.target, lanes=snap.lanes)


@dataclass
class FixedRun:
    """Quacks like a BackgroundRun for drawing: a phase frozen at one LiveState (no controller:
    the screens read only the state)."""

    state: LiveState
    title: str = "cassandra workloada run"
    phase: str = "run"
    error: str | None = None
    result: object = None
    finished: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.spec, _ = spec_from_args([WORKLOAD_A], ["operationcount=200000", "db=memory"], self.phase)

    def command(self, *_args) -> None:
        raise AssertionError("a frozen run takes no commands")


def with_servers(state: LiveState, behind: int = 0, client_cpu: float = 0.4) -> LiveState:
    """`state` with the servers' side (issue 54): three nodes' figures each second, node 2 killed
    at 30.2 s after a 412 ms GC pause at 24.5 s, a compaction and a flush; the client's own."""
    from dataclasses import replace

    from workbench.metrics.server import CLIENT, ServerEvent

    def second(i: int) -> dict[str, dict[str, float]]:
        nodes = {"127.0.0.1": {"cpu": 1.2, "compactions_pending": 2.0, "flushes_pending": 1.0},
                 "127.0.0.3": {"cpu": 0.8}}
        if i < 30:
            nodes["127.0.0.2"] = {"cpu": 0.9, "gc_pause_ms_max": 412.0 if i == 24 else 3.0}
        nodes[CLIENT] = {"cpu": client_cpu, "loop_lag_ms": 1.5, "start_gap_ms": 2.25}
        return nodes

    ticks = len(state.throughput)
    seconds = tuple(second(i) for i in range(ticks))
    events = ((12.3, ServerEvent("127.0.0.1", 0.0, "compaction", 3.0, "ycsb.usertable")),
              (18.9, ServerEvent("127.0.0.3", 0.0, "flush")),
              (20.0, ServerEvent("127.0.0.3", 0.0, "gc", 0.004, "G1 Young 4 ms")),
              (24.5, ServerEvent("127.0.0.2", 0.0, "gc", 0.412, "G1 Young 412 ms")),
              (30.2, ServerEvent("127.0.0.2", 0.0, "kill")))
    snap = replace(state.snapshot, server=seconds[-1], behind=behind)
    return replace(state, snapshot=snap, server=seconds, server_events=events)
