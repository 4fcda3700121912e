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
    return {"gc_pauses": float(len(lengths)), "gc_pause_ms_total": round(sum(lengths), 3),
            "gc_pause_ms_max": max(lengths, default=0.0)}


def event(node: str, pause: gc_log.Pause, process: str = "") -> ServerEvent:
    detail = gc_log.short(pause)
    return ServerEvent(node=node, at=pause.started, kind="gc", seconds=pause.ms / 1000,
                       detail=f"{process}: {detail}" if process else detail)


class GcLogSource:
    """Tails the GC log of each JVM: `logs` holds (node address, process name, file). The JVMs
    at one address (HBase's master and its gateway) make one node's figures, their events named
    by process. A file that does not exist yet is read once it does; when none exists at the
    first sample (nodes started before the workbench turned GC logs on) the source is
    unavailable."""

    name = "gc-log"

    def __init__(self, logs: list[tuple[str, str, Path]], from_start: bool = False) -> None:
        self._logs = logs
        self._tails = [(node, process, gc_log.GcLogTail(file, from_start)) for node, process, file in logs]
        self._waiting: dict[str, list[tuple[str, gc_log.Pause]]] = {node: [] for node, _, _ in logs}
        self._shared = {node for node in self._waiting if sum(n == node for n, _, _ in logs) > 1}
        self._checked = False

    def sample(self, now: float) -> list[NodeSample]:
        if not self._checked:
            self._checked = True
            if self._logs and not any(file.exists() for _, _, file in self._logs):
                raise SourceUnavailable(f"no GC pauses: no GC log at {self._logs[0][2]} (nodes "
                                        "started before the workbench turned GC logs on: restart "
                                        "the cluster)")
        for node, process, tail in self._tails:
            self._waiting[node].extend((process, p) for p in tail.read() if p.ms >= MIN_MS)
        out = []
        for node, waiting in self._waiting.items():
            due = sorted((p for p in waiting if p[1].ended <= now), key=lambda p: p[1].ended)
            self._waiting[node] = [p for p in waiting if p[1].ended > now]
            label = (lambda process: process) if node in self._shared else (lambda process: "")
            out.append(NodeSample(node, figures([p for _, p in due]),
                                  tuple(event(node, p, label(process)) for process, p in due)))
        return out

    def close(self) -> None:
        pass


def local_logs(cluster) -> list[tuple[str, str, Path]]:
    """(node address, process, GC log) of every JVM of a local or Docker cluster (beside each
    node's own log, where its command line or container environment sends it)."""
    return [(node.address, node.name, gc_log.beside(node.log)) for node in cluster.nodes]
