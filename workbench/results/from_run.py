"""Turn a finished phase (the engine's PhaseOutcome) into the RunResult every exporter reads.

`measurement.interval` decides which latencies the YCSB-style measurements show, as in YCSB:
`op` the service time from the actual send (READ), `intended` the response time from the
intended start under the plain names, `both` the two (READ and Intended-READ). Without a
target rate the intended start is the actual send, so both views hold the same figures.
The run's record keeps every histogram whatever the view.
"""

from __future__ import annotations

import os
import platform
import socket
import sys
from importlib import metadata
from typing import TYPE_CHECKING

from hdrh.histogram import HdrHistogram

from workbench import __version__, speedups
from workbench.bindings.clients import client_record
from workbench.core.controller import PhaseOutcome, StoredInterval
from workbench.core.spill import SpillList
from workbench.databases import find
from workbench.metrics.histograms import new_histogram
from workbench.metrics.keycounts import summarize as summarize_keys
from workbench.metrics.server import ServerEvent
from workbench.results.manifest import complete
from workbench.results.masking import masked
from workbench.results.model import Event, Interval, IntervalMeasurement, RunResult, ServerEventRecord
from workbench.results.summarize import measurement_from_histogram

if TYPE_CHECKING:
    from workbench.clusters.base import Cluster
    from workbench.config.spec import WorkloadSpec

# Measurements that have no intended start (timed outside the paced schedule).
_UNPACED = ("CLEANUP", "VERIFY", "SCAN-LATENCY-PER-RECORD")


def _has_intended(name: str) -> bool:
    return not name.startswith(_UNPACED)


def view(histograms: dict[str, HdrHistogram], mode: str) -> dict[str, HdrHistogram]:
    """The measurements YCSB would report for measurement.interval = mode."""
    service = {n: h for n, h in histograms.items() if not n.startswith("Intended-")}
    if mode == "op":
        return service
    intended = {
        n: histograms.get("Intended-" + n, h) for n, h in service.items() if _has_intended(n)
    }
    if mode == "intended":
        return {n: intended.get(n, h) for n, h in service.items()}
    out = dict(service)
    out.update({"Intended-" + n: h for n, h in intended.items()})
    return out


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _versions(packages: tuple[str, ...]) -> dict[str, str]:
    found = {}
    for name in packages:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def environment(spec: WorkloadSpec | None = None, cluster: Cluster | None = None) -> dict[str, object]:
    """Where a run ran: workbench and Python, the machine, the database client that measured it
    (bindings/clients.py) and the drivers installed, and, for a cluster the workbench started,
    its provider, topology and server version."""
    env: dict[str, object] = {
        "workbench": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "cpus": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        # the hot path compiled or in Python (workbench/speedups.py): this process's, which its
        # worker processes share (a Ray run's workers elsewhere may differ)
        "speedups": speedups.describe(),
    }
    if spec is not None:
        env["client"] = client_record(spec.db, dict(spec.binding_properties))
    described = find(spec.db) if spec is not None else None
    if described is not None and described.drivers:  # the packages its descriptor names
        env["drivers"] = _versions(described.drivers)
    if cluster is not None:
        # a local Cassandra or HBase names its pinned release ("4.1.10"); a cluster started
        # before clusters named theirs: its spec's (the default, if it has no version field)
        pinned = getattr(cluster.spec, "release", "") if cluster.provider == "local" else ""
        env["cluster"] = {
            "name": cluster.name,
            "provider": cluster.provider,
            "kind": cluster.kind,
            "server_version": cluster.server_version or pinned or "unknown",
            "nodes": cluster.nodes_seen or len(cluster.nodes),
            "heap": getattr(cluster.spec, "heap", None),
            "replication_factor": getattr(cluster.spec, "replication_factor", None),
            "addresses": [f"{host}:{port}" for host, port in cluster.contact_points],
        }
    return env


def interval_from_stored(i: StoredInterval) -> Interval:
    """The result model's interval from what the controller kept of one tick."""
    return Interval(
        elapsed_s=i.elapsed_s,
        duration_s=i.interval_s,
        operations=i.operations,
        total_operations=i.total_operations,
        measurements={
            n: IntervalMeasurement(s.count, s.mean, s.min, s.max, dict(s.percentiles), i.histograms.get(n))
            for n, s in i.stats.items()
        },
        returns={op: dict(c) for op, c in i.returns.items()},
        lanes=i.lanes,
        target=i.target or None,
        paused=i.paused,
        in_flight=round(i.in_flight, 3),
        warmup=i.warmup,
        nodes={node: [requests, errors] for node, (requests, errors) in i.nodes.items()},
        regions={region: [requests, errors] for region, (requests, errors) in i.regions.items()},
        behind=i.behind if i.target else None,
        server={node: dict(figures) for node, figures in i.server.items()},
    )


def server_event_record(elapsed_s: float, event: ServerEvent) -> ServerEventRecord:
    """The result model's record of a server event begun `elapsed_s` into the run."""
    return ServerEventRecord(round(elapsed_s, 3), event.node, event.kind, round(event.seconds, 6),
                             event.detail)


def to_run_result(outcome: PhaseOutcome, properties: dict[str, str],
                  cluster: Cluster | None = None, manifest: dict | None = None) -> RunResult:
    spec = outcome.spec
    shown = view(outcome.histograms, spec.measurement_interval)
    measurements = []
    for name, h in shown.items():
        base = name.removeprefix("Intended-")
        # YCSB attaches Return= counts to the operation's own (first) measurement.
        returns = outcome.returns.get(name, {}) if base == name else {}
        measurements.append(measurement_from_histogram(name, h, returns))
    # An operation whose every call failed still gets its Return= lines.
    for op, counts in outcome.returns.items():
        if op not in shown:
            measurements.append(measurement_from_histogram(op, new_histogram(), counts))
    # converted as they are read: a long run's intervals stay in their file (core/spill.py)
    intervals = (outcome.intervals.mapped(interval_from_stored) if isinstance(outcome.intervals, SpillList)
                 else [interval_from_stored(i) for i in outcome.intervals])
    runtime = outcome.runtime_ms
    env = environment(spec, cluster)
    if outcome.error:
        env["error"] = outcome.error
    if outcome.error_kinds:
        env["error_kinds"] = dict(outcome.error_kinds)
    if outcome.client_counts:
        env["client_counts"] = dict(outcome.client_counts)
    if outcome.notes:
        env["notes"] = list(outcome.notes)
    if outcome.ray is not None:
        env["ray"] = outcome.ray
    if outcome.event_loop:
        env["event_loop"] = outcome.event_loop
        if "client" in env:
            env["client"]["event_loop"] = outcome.event_loop
    return RunResult(
        phase=outcome.phase,
        db=spec.db,
        runtime_ms=runtime,
        operations=outcome.operations,
        throughput=outcome.operations * 1000.0 / runtime if runtime > 0 else 0.0,
        measurements=measurements,
        intervals=intervals,
        events=[Event(t, kind, value) for t, kind, value in outcome.events],
        properties=masked(properties),
        environment=env,
        label=spec.label,
        started_at=outcome.started_at,
        outcome=outcome.outcome,
        warmup_s=round(outcome.warmup_s, 3),
        keys=summarize_keys(outcome.keys),
        manifest=complete(manifest or {}, env),
        server_events=[server_event_record(t, e) for t, e in outcome.server_events],
    )
