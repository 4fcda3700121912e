"""The figures of one measured step, flat: 'throughput', 'read.p99', 'keys.hottest_1pct', ...

What a check reads (checks.py names them). Latencies in milliseconds from the run's exact
HdrHistogram summaries; response time is YCSB's Intended-* measurement (lesson runs record both,
`measurement.interval=both`), and equals service time when the run had no target. Key figures
are the counts of the keys the run's requests chose, made by the engine during the run; node and
region figures the requests the database client sent to each node and region (place_figures).
"""

from __future__ import annotations

from statistics import median

from workbench.experiments.elastic import join_windows
from workbench.lessons.checks import KEYS, OPERATIONS, PLACES, STATS
from workbench.metrics.server import CLIENT
from workbench.results.model import Measurement, RunResult, error_total
from workbench.results.paced import CATCHING_UP, DELIVERED_WORD, run_pacing
from workbench.results.server_summary import node_summaries
from workbench.results.spikes import run_events, run_seconds, spikes


def _stats(m: Measurement) -> dict[str, float]:
    out = {}
    for name, p in STATS.items():
        if p is not None:
            if p in m.percentiles:
                out[name] = m.percentiles[p] / 1000
        elif name == "max":
            out[name] = m.max_us / 1000
        else:
            out[name] = m.average_us / 1000
    return out


def run_figures(result: RunResult) -> dict[str, float]:
    """Figures of a finished load or run."""
    measured = [i for i in result.intervals if not i.warmup and i.in_flight is not None]
    target = float(result.properties.get("target") or 0)
    out: dict[str, float] = {
        "throughput": result.throughput,
        "operations": float(result.operations),
        "errors": float(result.error_count()),
        "seconds": result.runtime_ms / 1000,
        "target": target,
        "faults": float(sum(1 for e in result.events if e.kind == "fault")),
    }
    if measured:
        out["in_flight"] = sum(i.in_flight for i in measured) / len(measured)  # type: ignore[misc]
    weighted = {"service": 0.0, "response": 0.0}
    counted = 0
    for short, name in OPERATIONS.items():
        service = result.measurement(name)
        if service is None or not service.operations:
            continue
        response = result.measurement(f"Intended-{name}")
        if response is None or not response.operations:
            response = service  # closed loop: nothing waited before it was sent
        weighted["service"] += service.average_us * service.operations
        weighted["response"] += response.average_us * service.operations
        counted += service.operations
        out[f"{short}.count"] = float(service.operations)
        out[f"{short}.errors"] = float(error_total(service.returns))
        for stat, value in _stats(service).items():
            out[f"{short}.service.{stat}"] = value
        for stat, value in _stats(response).items():
            out[f"{short}.response.{stat}"] = value
            out[f"{short}.{stat}"] = value
    if counted:
        out["service_mean"] = weighted["service"] / counted / 1000
        out["response_mean"] = weighted["response"] / counted / 1000
    return (out | paced_figures(result) | key_figures(result) | place_figures(result, "nodes")
            | place_figures(result, "regions") | join_figures(result) | server_figures(result)
            | spike_figures(result))


def paced_figures(result: RunResult) -> dict[str, float]:
    """A paced run's achieved rate against the offered one and what its throughput was
    (results/paced.py; checks.SCALARS names them); none for a run without a target."""
    paced = run_pacing(result)
    if paced is None:
        return {}
    out = {"offered_share": paced.share, "load_delivered": float(paced.verdict == DELIVERED_WORD),
           "catching_up": float(paced.verdict == CATCHING_UP)}
    if paced.behind_start_s is not None:
        out["behind_start"] = paced.behind_start_s
    if paced.behind_end_s is not None:
        out["behind_end"] = paced.behind_end_s
    return out


def join_figures(result: RunResult) -> dict[str, float]:
    """A node that joined during the run (join.*, checks.JOIN): the join's seconds and each
    window's mean throughput, p99 (ms) and failed operations; none for a run no node joined, a
    window without an interval, or a join not over before the run ended (no seconds, no after)."""
    join = join_windows(result)
    if join is None:
        return {}
    out = {} if join.duration_s is None else {"join.seconds": join.duration_s}
    for window in join.windows:
        if window.throughput is not None:
            out[f"join.{window.name}.throughput"] = window.throughput.mean
        if window.p99_us is not None:
            out[f"join.{window.name}.p99"] = window.p99_us.mean / 1000
        if window.throughput is not None:  # a window with intervals: its failed operations
            out[f"join.{window.name}.errors"] = float(window.errors)
    return out


def key_figures(result: RunResult) -> dict[str, float]:
    """Where the run's own requests landed (keys.*), as the engine counted them: a run with
    measurement.keys=true (the lesson's steps set it) carries them in result.keys, counted
    exactly for up to a million loaded keys and from a sample above, with its bound in
    keys.error (metrics/keycounts.py). A run that did not count its keys has none."""
    counted = result.keys or {}
    return {f"keys.{name}": float(counted[name]) for name in KEYS if counted.get(name) is not None}


def place_figures(result: RunResult, where: str) -> dict[str, float]:
    """Where the run's requests went, per node ("nodes": each Cassandra coordinator, HBase
    RegionServer, MongoDB server) or per region of an HBase table ("regions"), as the database
    client counted the requests it sent (each interval's `nodes` / `regions`; warm-up included,
    as RunResult.node_totals). Among the nodes or regions that got requests:
    count; max_share and min_share, the busiest's and the least busy one's share of the requests;
    spread, max over min; interval_max_share, the share of the requests that went to whichever
    was busiest in their own interval (1 when each second's requests all went to one place, even
    if that place moved; about 1/count when every second was spread evenly). None of them for a
    client that does not count (the Thrift and cassandra-driver clients, the memory binding)."""
    totals: dict[str, int] = {}
    busiest = 0
    for interval in result.intervals:
        counts = {place: c[0] for place, c in (getattr(interval, where) or {}).items() if c[0] > 0}
        if counts:
            busiest += max(counts.values())
        for place, requests in counts.items():
            totals[place] = totals.get(place, 0) + requests
    everything = sum(totals.values())
    if not everything:
        return {}
    most, least = max(totals.values()), min(totals.values())
    values = (len(totals), most / everything, least / everything, most / least, busiest / everything)
    return {f"{where}.{name}": float(value) for name, value in zip(PLACES, values, strict=True)}


def server_figures(result: RunResult) -> dict[str, float]:
    """The servers' side of the run over the cluster's nodes (server.*, checks.SERVER), from the
    per-node summaries `runs show` prints (results/server_summary.py); the client's own processes
    left out. A figure no node's source saw is absent (a run on the memory binding has none)."""
    nodes = [n for n in node_summaries(result) if n.node != CLIENT]
    out: dict[str, float] = {}

    def total(name: str, values) -> None:
        seen = [v for v in values if v is not None]
        if seen:
            out[f"server.{name}"] = float(sum(seen))

    def most(name: str, values) -> None:
        seen = [v for v in values if v is not None]
        if seen:
            out[f"server.{name}"] = float(max(seen))

    total("gc_pauses", (n.gc_pauses for n in nodes))
    most("gc_pause_ms_max", (n.gc_ms_max for n in nodes))
    total("gc_pause_ms_total", (n.gc_ms_total for n in nodes))
    total("compactions", (n.compactions for n in nodes))
    total("flushes", (n.flushes for n in nodes))
    most("cpu_max", (n.cpu_max for n in nodes))
    for name in ("compactions_pending", "flushes_pending"):
        most(name, (figures.get(name) for i in result.intervals
                    for node, figures in (i.server or {}).items() if node != CLIENT))
    return out


def spike_figures(result: RunResult) -> dict[str, float]:
    """The run's spikes (spikes.*, checks.SPIKES; results/spikes.py: its seconds whose p99 is at
    least twice the median p99) and how many of them a server event of a node overlapped, of
    any kind and per kind. None for a run without a measured second's p99."""
    seconds = run_seconds(result)
    typical = [max((p for op, p in s.p99_us.items() if not op.endswith("-FAILED")), default=0.0)
               for s in seconds if not s.warmup]
    typical = [p for p in typical if p > 0]
    if not typical:
        return {}
    found = spikes(seconds, run_events(result))
    kinds = [{e.kind for _, e in spike.events} for spike in found]
    return {"spikes.count": float(len(found)),
            "spikes.explained": float(sum(1 for k in kinds if k)),
            "spikes.gc": float(sum(1 for k in kinds if "gc" in k)),
            "spikes.compaction": float(sum(1 for k in kinds if "compaction" in k)),
            "spikes.flush": float(sum(1 for k in kinds if "flush" in k)),
            "spikes.worst_ratio": max(typical) / median(typical)}
