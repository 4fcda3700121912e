"""One run over time, the client's side and its servers' (issue 54): what the experiment report
and the lab report draw under each other on one time axis, and the run's spike lines
(results/spikes.py). Plain lists, so that the lab report's JSON carries it as it is.

Only a run with figures or events of a server node has one (`run_timeline` gives None for a
memory run: its report says nothing about servers). Every figure is one the run recorded: a
node's CPU in cores each second, its longest GC pause of the second (the GC source's
gc_pause_ms_max, else the longest GC event that ended in the second), its pending compactions
where a source counts them. A second a node has no figure for is None, drawn as a gap.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from workbench.metrics.server import CLIENT
from workbench.results.model import RunResult
from workbench.results.spikes import describe_events, run_events, run_seconds, run_spikes, server_mark, worst

# the server figures drawn, in the order of the legend: (figure name, words)
SERIES = (("cpu", "CPU cores"), ("gc_ms_max", "GC pause ms"), ("compactions_pending", "compactions"))


@dataclass
class RunTimeline:
    seconds: list[float]                 # each measured interval's end, seconds since the run began
    throughput: list[float]              # ops/s of each
    p99_us: list[float | None]           # the worst operation's p99 of each
    # node -> figure (SERIES) -> one value per second (None: not recorded that second); the
    # workbench's own processes under "client", last
    nodes: dict[str, dict[str, list[float | None]]] = field(default_factory=dict)
    spikes: list[str] = field(default_factory=list)  # Spike.line() of each; [] for none
    spike_at: list[float] = field(default_factory=list)  # and when each was
    # the server events marked on the servers' chart (results/spikes.py's server_mark: a GC pause
    # of 100 ms or more, compactions, flushes, kills...): [when it began, letter, words]
    marks: list[list] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict) -> RunTimeline:
        return cls(**{k: raw.get(k) or ([] if k != "nodes" else {}) for k in cls.__dataclass_fields__})


def has_servers(result: RunResult) -> bool:
    """Whether the run recorded anything of a server node (not only of the client)."""
    return (any(node != CLIENT for i in result.intervals for node in (i.server or {}))
            or any(e.node != CLIENT for e in result.server_events))


def run_timeline(result: RunResult) -> RunTimeline | None:
    """The run's measured seconds, client and servers; None for a run with no server node."""
    if not has_servers(result):
        return None
    measured = [(i, s) for i, s in zip(result.intervals, run_seconds(result), strict=True)
                if not i.warmup and i.duration_s >= 0.5]
    nodes = sorted({n for i, _ in measured for n in (i.server or {})}
                   | {e.node for e in result.server_events}, key=lambda n: (n == CLIENT, n))
    series: dict[str, dict[str, list[float | None]]] = {}
    for node in nodes:
        gc_events = [e for e in result.server_events if e.node == node and e.kind == "gc"]
        figures: dict[str, list[float | None]] = {name: [] for name, _ in SERIES}
        for interval, _ in measured:
            got = (interval.server or {}).get(node, {})
            figures["cpu"].append(got.get("cpu"))
            gc = got.get("gc_pause_ms_max")
            if gc is None and gc_events:
                begin = interval.elapsed_s - interval.duration_s
                ended = [e.seconds * 1000 for e in gc_events
                         if begin < e.elapsed_s + e.seconds <= interval.elapsed_s]
                gc = max(ended, default=0.0)
            figures["gc_ms_max"].append(gc)
            figures["compactions_pending"].append(got.get("compactions_pending"))
        series[node] = {name: values for name, values in figures.items()
                        if any(v is not None for v in values)}
    found = run_spikes(result)
    window = (measured[0][0].elapsed_s - measured[0][0].duration_s, measured[-1][0].elapsed_s) if measured \
        else (0.0, -1.0)
    return RunTimeline([i.elapsed_s for i, _ in measured], [i.throughput for i, _ in measured],
                       [worst(s)[1] or None for _, s in measured],
                       {n: f for n, f in series.items() if f},
                       [s.line() for s in found], [s.at_s for s in found], _marks(result, *window))


def _marks(result: RunResult, begin: float, end: float) -> list[list]:
    """The server events worth a mark (server_mark) that began in [begin, end], in time order."""
    return [[at, letter, f"{describe_events([e])[0]} at {at:.1f} s"]
            for at, e in sorted(run_events(result), key=lambda pair: pair[0])
            if begin <= at <= end and (letter := server_mark(e))]
