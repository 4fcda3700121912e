"""`--metrics [HOST:]PORT`: the running phase served to Prometheus at http://HOST:PORT/metrics.

    endpoint = MetricsEndpoint.open("9464")      # binds 127.0.0.1:9464 now: a port in use is
    done = execute_phase(..., metrics=endpoint)  # refused before the run; attached to the phase
    endpoint.close()                             # the endpoint ends with the phase

prometheus_client serves a private registry (never its global one) on a thread of its own. Each
scrape reads the figures at that moment (prometheus.py): the controller's own totals, read on its
loop through `Controller.call`, so no figure is copied or updated per operation. The one thing
kept here is what the controller does not add up: requests per node since the start, summed by a
tick listener in the parent (one dict update per node and second). After the phase, or when the
controller's loop does not answer within READ_TIMEOUT_S, a scrape shows the last figures read.

The servers' figures (issue 54: CPU, memory, GC pauses, queues per node, as server_sampler.py
samples them for each tick) are summed by the same tick listener into a ServerTally
(prometheus_server.py), which hands each tick's figures over as one frozen value; a second
Collector in the registry reads it at each scrape, under names beginning `workbench_server_`
(docs/PROMETHEUS.md). That read needs no call on the controller's loop.
"""

from __future__ import annotations

import errno
import socket
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, start_http_server

from workbench.bindings.clients import client_name
from workbench.clusters.ports import holder
from workbench.drive.prometheus import RunCollector, RunFigures, RunLabels, latency_of
from workbench.drive.prometheus_server import ServerCollector, ServerTally
from workbench.errors import ConfigError, WorkbenchError
from workbench.metrics.snapshot import IntervalSnapshot

if TYPE_CHECKING:
    from workbench.core.controller import Controller

DEFAULT_HOST = "127.0.0.1"
READ_TIMEOUT_S = 2.0
EXAMPLE = "e.g. --metrics 9464 (on 127.0.0.1) or --metrics 0.0.0.0:9464"


def parse_address(text: str) -> tuple[str, int]:
    """'9464' -> ('127.0.0.1', 9464); 'HOST:9464'; '[::1]:9464'."""
    host, colon, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]") if colon else ""
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535 or (colon and not host):
        raise ConfigError(f"--metrics {text!r} is not PORT or HOST:PORT", EXAMPLE)
    return host or DEFAULT_HOST, number


def _holder(host: str, port: int) -> str:
    try:
        address = socket.gethostbyname(host)
    except OSError:
        address = host
    return holder(address, port) or "a process not found in /proc"


class MetricsEndpoint:
    """The /metrics endpoint of one phase: bound when made, serving until close()."""

    def __init__(self, host: str, port: int) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._controller: Controller | None = None
        self._labels = RunLabels("", "")
        self._nodes: dict[str, tuple[int, int]] = {}
        self._snapshot: IntervalSnapshot | None = None
        self._last = RunFigures()
        self._closed = False
        self.registry.register(RunCollector(self._read, lambda: self._labels))
        self._tally = ServerTally()
        self.registry.register(ServerCollector(lambda: self._tally.figures, lambda: self._labels))
        try:
            self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise WorkbenchError(f"--metrics {host}:{port}: the port is already in use by "
                                     f"{_holder(host, port)}", "pick another port, or stop that "
                                     "process") from None
            raise WorkbenchError(f"--metrics {host}:{port}: cannot listen there: "
                                 f"{exc.strerror or exc}", EXAMPLE) from None
        self.host, self.port = host, self._server.server_port  # (port 0: the one given)

    @classmethod
    def open(cls, text: str) -> MetricsEndpoint:
        return cls(*parse_address(text))

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def attach(self, controller: Controller, run_id: int | None) -> None:
        """Serve the phase `controller` runs (run_id: its ID in the run store) from now on."""
        spec = controller.spec
        try:
            client = client_name(spec.db, dict(spec.binding_properties))
        except WorkbenchError:
            client = ""  # properties the binding refuses: the run says so itself
        self._labels = RunLabels(controller.phase, spec.db, client, "" if run_id is None else str(run_id))
        self._controller = controller
        controller.subscribe(self._tick)

    def _tick(self, snapshot: IntervalSnapshot) -> None:
        """Every tick, on the controller's loop in the parent: the newest snapshot, the nodes,
        the servers' figures."""
        self._snapshot = snapshot
        self._tally.add(snapshot.server, snapshot.server_events)
        for node, (requests, failed) in snapshot.nodes.items():
            before = self._nodes.get(node, (0, 0))
            self._nodes[node] = (before[0] + requests, before[1] + failed)

    def _read(self) -> RunFigures:
        """At each scrape, on the server's thread."""
        controller = self._controller
        if controller is None or self._closed:
            return self._last
        try:
            self._last = controller.call(lambda: self._figures(controller), READ_TIMEOUT_S)
        except (RuntimeError, TimeoutError):  # the phase is over, or its loop is busy
            pass
        return self._last

    def _figures(self, controller: Controller) -> RunFigures:
        """On the controller's loop, between two ticks."""
        measured_s, operations, histograms, returns = controller.measured()
        snap = self._snapshot
        return RunFigures(
            elapsed_s=controller.elapsed(),
            measured_s=measured_s,
            operations=operations,
            throughput=snap.throughput if snap is not None else 0.0,
            target=controller.target,
            lanes=controller.lanes,
            returns={op: dict(counts) for op, counts in returns.items()},
            latency={name: latency_of(h) for name, h in histograms.items()},
            nodes=dict(self._nodes),
            error_kinds=dict(snap.error_kinds) if snap is not None else {},
        )

    def close(self) -> None:
        """Stop serving (the phase is over)."""
        if not self._closed:
            self._closed = True
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(5)
