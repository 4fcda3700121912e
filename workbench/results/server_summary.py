"""The servers' side of a run in a few figures per node (issue 54, 1), for `runs show`, `runs
compare` and the Compare screen: CPU mean and max, memory, GC pauses, compactions, flushes and
the busiest queue, from the per-second figures of the intervals (Interval.server) and the run's
server events (RunResult.server_events). A figure no source saw is None, shown as "-".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.metrics.server import CLIENT
from workbench.results.model import RunResult


@dataclass(frozen=True)
class NodeSummary:
    node: str  # an address, "name@address", or "client" (the workbench's own processes)
    seconds: int  # intervals that carry figures of this node
    cpu_mean: float | None  # cores
    cpu_max: float | None
    rss_max: float | None  # bytes
    read_bytes: float | None  # over the run
    write_bytes: float | None
    gc_pauses: int | None
    gc_ms_total: float | None
    gc_ms_max: float | None
    compactions: int | None  # begun (events), else the most pending at once (figures)
    flushes: int | None
    busiest_queue: tuple[str, float] | None  # (stage, most tasks pending in a second)


def _values(series: list[dict[str, float]], name: str) -> list[float]:
    return [f[name] for f in series if name in f]


def node_summaries(result: RunResult) -> list[NodeSummary]:
    """One summary per node the run has server figures or events of, the client last."""
    per_node: dict[str, list[dict[str, float]]] = {}
    for interval in result.intervals:
        for node, figures in (getattr(interval, "server", None) or {}).items():
            per_node.setdefault(node, []).append(figures)
    events: dict[str, list] = {}
    for e in result.server_events:
        events.setdefault(e.node, []).append(e)
        per_node.setdefault(e.node, [])
    out = []
    for node in sorted(per_node, key=lambda n: (n == CLIENT, n)):
        series, seen = per_node[node], events.get(node, [])
        cpu = _values(series, "cpu")
        rss = _values(series, "rss_bytes")
        reads, writes = _values(series, "disk_read_bytes"), _values(series, "disk_write_bytes")
        gcs = [e.seconds * 1000 for e in seen if e.kind == "gc"]
        if not gcs and _values(series, "gc_pauses"):  # a source that counts pauses, no events
            gc_count: int | None = int(sum(_values(series, "gc_pauses")))
            gc_total: float | None = sum(_values(series, "gc_pause_ms_total"))
            gc_max: float | None = max(_values(series, "gc_pause_ms_max"), default=None)
        else:
            gc_count, gc_total, gc_max = (len(gcs), sum(gcs), max(gcs)) if gcs else (None, None, None)
        out.append(NodeSummary(
            node, len(series),
            sum(cpu) / len(cpu) if cpu else None, max(cpu, default=None), max(rss, default=None),
            sum(reads) if reads else None, sum(writes) if writes else None,
            gc_count, gc_total, gc_max,
            _count(seen, series, "compaction", "compactions_pending"),
            _count(seen, series, "flush", "flushes_pending"),
            _busiest(series)))
    return out


def _count(events: list, series: list[dict[str, float]], kind: str, pending: str) -> int | None:
    begun = sum(1 for e in events if e.kind == kind)
    if begun:
        return begun
    most = max(_values(series, pending), default=None)
    return None if most is None else int(most)


def _busiest(series: list[dict[str, float]]) -> tuple[str, float] | None:
    most: dict[str, float] = {}
    for figures in series:
        for name, value in figures.items():
            if name.startswith("queue.") and name.endswith(".pending"):
                stage = name[len("queue."):-len(".pending")]
                most[stage] = max(most.get(stage, 0.0), value)
    if not most:
        return None
    stage = max(sorted(most), key=lambda s: most[s])
    return stage, most[stage]


def _bytes(value: float | None) -> str:
    if value is None:
        return "-"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:,.1f} {unit}"
    return f"{value:,.0f} B"


SUMMARY_COLUMNS = ("node", "cpu mean", "cpu max", "memory", "disk read", "disk write",
                   "GC pauses", "GC total ms", "GC longest ms", "compactions", "flushes",
                   "busiest queue")


def summary_cells(s: NodeSummary) -> list[str]:
    """A node's row under SUMMARY_COLUMNS."""
    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None else fmt.format(value)

    queue = "-" if s.busiest_queue is None else f"{s.busiest_queue[0]} {s.busiest_queue[1]:,.0f}"
    return [s.node, num(s.cpu_mean, "{:.2f}"), num(s.cpu_max, "{:.2f}"), _bytes(s.rss_max),
            _bytes(s.read_bytes), _bytes(s.write_bytes), num(s.gc_pauses, "{:,}"),
            num(s.gc_ms_total, "{:,.0f}"), num(s.gc_ms_max, "{:,.0f}"), num(s.compactions, "{:,}"),
            num(s.flushes, "{:,}"), queue]


def cpu_by_node(results: Sequence[RunResult]) -> dict[str, tuple[float | None, ...]]:
    """Node -> each run's mean CPU in cores (None where a run has none of that node): the
    per-node line of `runs compare`."""
    means = [{s.node: s.cpu_mean for s in node_summaries(r)} for r in results]
    nodes = sorted({n for m in means for n, v in m.items() if v is not None},
                   key=lambda n: (n == CLIENT, n))
    return {node: tuple(m.get(node) for m in means) for node in nodes}
