"""GC pauses of the JVMs a provider started, read from their GC logs (clusters/gc_log.py): one
source for every Cassandra node and HBase process of a local or Docker cluster.

Each pause of 1 ms or more becomes an event (kind "gc", its length, what it was) and counts in
the figures gc_pauses, gc_pause_ms_total and gc_pause_ms_max of the second it ended in: a pause
whose line is read before its second is over waits for that second's sample."""

from __future__ import annotations

from pathlib import Path

from workbench.clusters import gc_log
from workbench.metrics.server import NodeSample, ServerEvent, SourceUnavailable

MIN_MS = 1.0  # shorter pauses are not events (the threshold)


def figures(pauses: list[gc_log.Pause]) -> dict[str, float]:
    """gc_pauses, gc_pause_ms_total and gc_pause_ms_max of these pauses (all 0 for none: the log
    is read, and no pause is a figure, not a missing one)."""
    lengths = [p.ms for p in pauses]
    return {"gc_pauses": float(len(lengths)), "gc_pause_ms_total": round(float(sum(lengths)), 3),
            "gc_pause_ms_max": max(lengths, default=0.0)}


def event(node: str, pause: gc_log.Pause) -> ServerEvent:
    return ServerEvent(node=node, at=pause.started, kind="gc", seconds=pause.ms / 1000,
                       detail=gc_log.short(pause))


class GcLogSource:
    """Tails the GC log of each JVM: `logs` holds (the name its figures go under, file). A file
    that does not exist yet is read once it does; when none exists at the first sample (nodes
    started before the workbench turned GC logs on) the source is unavailable."""

    name = "gc-log"
    inline = True  # local files read from where it stopped: never blocks (drive/server_sampler.py)

    def __init__(self, logs: list[tuple[str, Path]], from_start: bool = False) -> None:
        self._logs = logs
        self._tails = [(node, gc_log.GcLogTail(file, from_start)) for node, file in logs]
        self._waiting: dict[str, list[gc_log.Pause]] = {node: [] for node, _ in logs}
        self._checked = False

    def sample(self, now: float) -> list[NodeSample]:
        if not self._checked:
            self._checked = True
            if self._logs and not any(file.exists() for _, file in self._logs):
                raise SourceUnavailable(f"no GC pauses: no GC log at {self._logs[0][1]} (nodes "
                                        "started before the workbench turned GC logs on: restart "
                                        "the cluster)")
        out = []
        for node, tail in self._tails:
            waiting = self._waiting[node] + [p for p in tail.read() if p.ms >= MIN_MS]
            due = [p for p in waiting if p.ended <= now]
            self._waiting[node] = [p for p in waiting if p.ended > now]
            out.append(NodeSample(node, figures(due), tuple(event(node, p) for p in due)))
        return out

    def close(self) -> None:
        pass


def node_keys(nodes) -> dict[str, str]:
    """Node name -> the name its figures go under, as every source of a cluster names them (the
    rule of clusters/node_figures.py): its address, or "name@address" where more than one
    process listens on that address (HBase's master and its gateway)."""
    shared = {n.address for n in nodes if sum(m.address == n.address for m in nodes) > 1}
    return {n.name: f"{n.name}@{n.address}" if n.address in shared else n.address for n in nodes}


def local_logs(cluster) -> list[tuple[str, Path]]:
    """(figures' node name, GC log) of every JVM of a local or Docker cluster (beside each
    node's own log, where its command line or container environment sends it)."""
    keys = node_keys(cluster.nodes)
    return [(keys[node.name], gc_log.beside(node.log)) for node in cluster.nodes]


def gc_sources(cluster) -> list:
    """The GC log source of a cluster the workbench started; none for an external one (its
    JVMs' logs are not ours to read: the run says so)."""
    if getattr(cluster, "provider", "") == "external":
        return []
    return [GcLogSource(local_logs(cluster))]
