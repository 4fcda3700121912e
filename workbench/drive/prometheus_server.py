"""The servers' side of a running phase as Prometheus metric families (issue 54; docs/PROMETHEUS.md).

    tally = ServerTally()
    tally.add(snapshot.server, snapshot.server_events)    # each tick, on the controller's loop
    registry.register(ServerCollector(lambda: tally.figures, labels))  # read at each scrape

The figures are those drive/server_sampler.py sampled for each tick (metrics/server.py names
them). The tally keeps, per node, the figures of the newest second in which that node was sampled,
the server events since the phase started by node and kind, and each node's GC pause seconds since
the start (the sum of its GC pause events); after each tick it hands over one frozen
`ServerFigures`, which a scrape on the HTTP server's thread reads whole (no lock: the tick replaces
the reference, never a dict being read).
Nothing here is per operation: one small dict update per node and tick.

Names: each figure is a gauge `workbench_server_<figure>` with a `node` label, every character
outside [A-Za-z0-9_] made `_` (`rss_bytes` -> `workbench_server_rss_bytes`), except a stage's
queue, `queue.<stage>.<what>`, which is `workbench_server_queue_<what>` with a `stage` label.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from workbench.drive.prometheus import RUN_LABELS, RunLabels
from workbench.metrics.server import ServerEvent

PREFIX = "workbench_server_"
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")
_QUEUE = re.compile(r"queue\.(.+)\.([A-Za-z0-9_]+)")


def series_of(figure: str) -> tuple[str, dict[str, str]]:
    """A figure's gauge name and its labels besides node: 'cpu' -> ('workbench_server_cpu', {});
    'queue.ReadStage.pending' -> ('workbench_server_queue_pending', {'stage': 'ReadStage'})."""
    queue = _QUEUE.fullmatch(figure)
    if queue is not None:
        return f"{PREFIX}queue_{queue.group(2)}", {"stage": queue.group(1)}
    return PREFIX + _UNSAFE.sub("_", figure), {}


@dataclass(frozen=True)
class ServerFigures:
    """What one scrape shows of the servers."""

    now: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # node -> newest second's
    events: Mapping[tuple[str, str], int] = field(default_factory=dict)  # (node, kind) -> since start
    gc_pause_s: Mapping[str, float] = field(default_factory=dict)  # node -> pause seconds since start


class ServerTally:
    """The servers' figures added up tick by tick (on the controller's loop only)."""

    def __init__(self) -> None:
        self.figures = ServerFigures()
        self._now: dict[str, Mapping[str, float]] = {}
        self._events: dict[tuple[str, str], int] = {}
        self._gc_s: dict[str, float] = {}

    def add(self, server: Mapping[str, Mapping[str, float]],
            events: Sequence[tuple[float, ServerEvent]]) -> None:
        """One tick's figures by node and the events begun in it (IntervalSnapshot.server,
        .server_events)."""
        if not server and not events:
            return
        for node, figures in server.items():
            self._now[node] = dict(figures)  # a node not sampled this second keeps its newest
            if "gc_pause_ms_total" in figures:
                self._gc_s.setdefault(node, 0.0)  # its GC is read: a series, 0 until a pause
        for _, event in events:
            key = (event.node, event.kind)
            self._events[key] = self._events.get(key, 0) + 1
            if event.kind == "gc":  # from the pauses, not the seconds' figures: a late answer's
                # figures are dropped, its events kept (drive/server_sampler.py)
                self._gc_s[event.node] = self._gc_s.get(event.node, 0.0) + event.seconds
        self.figures = ServerFigures(dict(self._now), dict(self._events), dict(self._gc_s))


def server_families(figures: ServerFigures, labels: RunLabels) -> list[Metric]:
    """The servers' metric families, every series with the run's labels and its node's."""
    names, run = [*RUN_LABELS, "node"], labels.values()
    gauges: dict[str, GaugeMetricFamily] = {}
    for node, values in sorted(figures.now.items()):
        for figure, value in sorted(values.items()):
            name, extra = series_of(figure)
            if name not in gauges:
                gauges[name] = GaugeMetricFamily(
                    name, f"The server figure {_doc(figure)} of each node in the newest second "
                    "sampled (metrics/server.py names its unit)", labels=[*names, *extra])
            gauges[name].add_metric([*run, node, *extra.values()], value)
    events = CounterMetricFamily("workbench_server_events", "Server events (gc, compaction, flush, "
                                 "kill, pause, ...) by node and kind since the phase started",
                                 labels=[*names, "kind"])
    for (node, kind), n in sorted(figures.events.items()):
        events.add_metric([*run, node, kind], n)
    gc = CounterMetricFamily("workbench_server_gc_pause_seconds", "GC pause seconds of each node "
                             "since the phase started (pauses of 1 ms or more)", labels=names)
    for node, seconds in sorted(figures.gc_pause_s.items()):
        gc.add_metric([*run, node], seconds)
    return [*(gauges[name] for name in sorted(gauges)), events, gc]


def _doc(figure: str) -> str:
    queue = _QUEUE.fullmatch(figure)
    return f"queue.<stage>.{queue.group(2)}" if queue is not None else figure


class ServerCollector(Collector):
    """prometheus_client's custom collector: `read()` gives the servers' figures at each scrape."""

    def __init__(self, read: Callable[[], ServerFigures], labels: Callable[[], RunLabels]) -> None:
        self.read = read
        self.labels = labels

    def collect(self) -> Iterator[Metric]:
        yield from server_families(self.read(), self.labels())

    def describe(self) -> list[Metric]:
        """The families every page has (the gauges depend on what the sources answer)."""
        return server_families(ServerFigures(), RunLabels("", ""))
