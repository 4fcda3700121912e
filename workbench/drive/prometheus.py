"""A running phase as Prometheus metric families: the names and labels of docs/PROMETHEUS.md.

Nothing here is updated on the hot path or per operation. `RunFigures` is read from what the run
already holds, at scrape time: the controller's since-start histograms and status counts (read on
the controller's loop, between two ticks), its target and lanes, and the newest snapshot; the one
figure the controller does not keep (requests per node since the start) is added up by the
endpoint's tick listener (metrics_endpoint.py). `families()` turns the figures into
prometheus_client's metric families, and `RunCollector` hands them to a registry.

Imported only by metrics_endpoint.py, which only `--metrics` imports: prometheus_client is loaded
by no other run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from hdrh.histogram import HdrHistogram
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from workbench.results.model import is_error

# The latency buckets' upper bounds, seconds: 10 us (the memory binding) to 10 s (a timeout).
BOUNDS_S = (0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
            0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Labels every series carries: which run it is.
RUN_LABELS = ("phase", "db", "client", "run_id")


@dataclass(frozen=True)
class RunLabels:
    phase: str
    db: str
    client: str = ""
    run_id: str = ""  # "" when the run is not recorded (--no-store)

    def values(self) -> list[str]:
        return [self.phase, self.db, self.client, self.run_id]


@dataclass(frozen=True)
class Latency:
    """One measurement's since-start histogram as Prometheus buckets: the count of values at or
    below each of BOUNDS_S (within HdrHistogram's 3 significant digits), the count, the sum."""

    at_or_below: tuple[int, ...]
    count: int
    sum_s: float


@dataclass(frozen=True)
class RunFigures:
    """What one scrape shows, read from the run at scrape time."""

    elapsed_s: float = 0.0  # since the phase's clock started
    measured_s: float = 0.0  # the measured window up to the newest tick (warm-up excluded)
    operations: int = 0  # measured operations
    throughput: float = 0.0  # operations/s in the newest interval
    target: float = 0.0  # operations/s; 0: no limit
    lanes: int = 0
    returns: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # op -> status -> n
    latency: Mapping[str, Latency] = field(default_factory=dict)  # by YCSB measurement name
    nodes: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # (requests, failed) since start
    # failed operations by the driver's error kind since the phase started (the newest snapshot's)
    error_kinds: Mapping[str, int] = field(default_factory=dict)


@lru_cache(maxsize=4)
def _geometry(counts_len: int, shift: int, half: int, unit: int) -> tuple[np.ndarray, np.ndarray]:
    """For histograms of this layout: the counts index of each bound (a value at or below the
    bound is counted at or before it) and each index's median-equivalent value (microseconds),
    as metrics/snapshot.py's summarize() computes them."""
    i = np.arange(counts_len, dtype=np.int64)
    bucket = (i >> shift) - 1
    sub = (i & (half - 1)) + half
    low = bucket < 0
    sub = np.where(low, sub - half, sub)
    bucket = np.where(low, 0, bucket)
    value = sub << (bucket + unit)
    size = np.left_shift(1, bucket + unit)
    mids = (value + (size >> 1)).astype(np.float64)
    # the last index whose lowest value is at or below the bound
    bounds_us = np.array([round(b * 1e6) for b in BOUNDS_S], dtype=np.int64)
    index = np.searchsorted(value, bounds_us, side="right") - 1
    return index, mids


def latency_of(h: HdrHistogram) -> Latency:
    """The buckets of one HdrHistogram (values in microseconds), read from its counts array."""
    raw = memoryview(h.counts)
    counts = np.frombuffer(raw.cast("B"), dtype=f"<u{raw.itemsize}").astype(np.int64)
    index, mids = _geometry(h.counts_len, h.sub_bucket_half_count_magnitude, h.sub_bucket_half_count,
                            h.unit_magnitude)
    running = np.cumsum(counts)
    total = int(running[-1]) if len(running) else 0
    return Latency(tuple(int(running[k]) for k in index), total, float(counts @ mids) / 1e6)


def split_measurement(name: str) -> tuple[str, str, str]:
    """YCSB's measurement name -> (operation, outcome, time): Intended-READ-FAILED ->
    ("READ", "failed", "response"); READ -> ("READ", "ok", "service")."""
    time = "response" if name.startswith("Intended-") else "service"
    base = name.removeprefix("Intended-")
    outcome = "failed" if base.endswith("-FAILED") else "ok"
    return base.removesuffix("-FAILED"), outcome, time


def families(figures: RunFigures, labels: RunLabels) -> list[Metric]:
    """The run's metric families, every series labelled with the run's labels."""
    names, run = list(RUN_LABELS), labels.values()
    ops = CounterMetricFamily("workbench_operations", "Measured operations by operation and YCSB "
                              "return status (OK, NOT_FOUND, ERROR, ...)",
                              labels=[*names, "operation", "status"])
    errors = CounterMetricFamily("workbench_errors", "Measured operations that count as errors "
                                 "(every status but OK, BATCHED_OK and NOT_FOUND), by operation and "
                                 "kind (the return status)", labels=[*names, "operation", "kind"])
    for op, counts in sorted(figures.returns.items()):
        for status, n in sorted(counts.items()):
            ops.add_metric([*run, op, status], n)
            if is_error(status):
                errors.add_metric([*run, op, status], n)
    latency = HistogramMetricFamily(
        "workbench_latency_seconds", "Latency of measured operations since the start of the measured "
        "window, from its HdrHistogram; time=service from the send, response from the intended start "
        "(paced runs)", labels=[*names, "operation", "outcome", "time"])
    for name, lat in sorted(figures.latency.items()):
        buckets = [(floatToGoString(b), n) for b, n in zip(BOUNDS_S, lat.at_or_below, strict=True)]
        latency.add_metric([*run, *split_measurement(name)], [*buckets, ("+Inf", lat.count)], lat.sum_s)
    requests = CounterMetricFamily("workbench_node_requests", "Requests sent to each node since the "
                                   "phase started, as the binding's client counted them",
                                   labels=[*names, "node"])
    failed = CounterMetricFamily("workbench_node_failed", "Requests to each node that failed, since "
                                 "the phase started", labels=[*names, "node"])
    for node, (n, bad) in sorted(figures.nodes.items()):
        requests.add_metric([*run, node], n)
        failed.add_metric([*run, node], bad)
    client = CounterMetricFamily("workbench_client_errors", "Failed operations by the error kind the "
                                 "database client named (ReadTimeout, Unavailable, ...), since the phase "
                                 "started; only bindings that name them", labels=[*names, "kind"])
    for kind, n in sorted(figures.error_kinds.items()):
        client.add_metric([*run, kind], n)
    out: list[Metric] = [ops, errors, latency, requests, failed, client]
    for name, doc, value in (
        ("workbench_throughput_ops", "Operations per second in the newest interval", figures.throughput),
        ("workbench_target_rate_ops", "Target operations per second over all lanes (0: no limit)",
         figures.target),
        ("workbench_achieved_rate_ops", "Mean operations per second over the measured window",
         figures.operations / figures.measured_s if figures.measured_s > 0 else 0.0),
        ("workbench_lanes", "Lanes (YCSB threads): operations in flight", figures.lanes),
        ("workbench_elapsed_seconds", "Seconds since the phase's clock started", figures.elapsed_s),
    ):
        gauge = GaugeMetricFamily(name, doc, labels=names)
        gauge.add_metric(run, value)
        out.append(gauge)
    return out


class RunCollector(Collector):
    """prometheus_client's custom collector: `read()` gives the figures at each scrape."""

    def __init__(self, read: Callable[[], RunFigures], labels: Callable[[], RunLabels]) -> None:
        self.read = read
        self.labels = labels

    def collect(self) -> Iterator[Metric]:
        yield from families(self.read(), self.labels())

    def describe(self) -> list[Metric]:
        """The families without samples, so that registering reads no figures."""
        return families(RunFigures(), RunLabels("", ""))
