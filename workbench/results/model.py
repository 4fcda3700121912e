"""The result model every exporter writes and every importer reads.

A run is a list of measurements in YCSB's sense: one per name such as READ, UPDATE,
READ-FAILED, Intended-READ or CLEANUP. Each carries the summary YCSB prints and, when the
run was made by the workbench (not imported from text), the full cumulative HdrHistogram in
its compressed base64 form, so nothing is ever re-derived from rounded figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PERCENTILES_0_17 = (95.0, 99.0)
PERCENTILES_MASTER = (50.0, 95.0, 99.0)
# Percentiles every summary keeps (YCSB's file layouts print a subset of them).
SUMMARY_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99)

# What counts as an error, the one rule every view uses (the Run screen, Compare, a lesson's
# figures, the exit status): any status but these. NOT_FOUND is the database's right answer to
# a read, update or delete of a key it does not hold (a table never loaded, a deleted key), not a
# failure of the database or the client: YCSB reports it on a `Return=NOT_FOUND` line of its own,
# apart from ERROR and the other failures. (YCSB files its latency under READ-FAILED, because
# Status.isOk() is only OK and BATCHED_OK; metrics/recorder.py keeps that naming.)
NOT_ERRORS = frozenset({"OK", "BATCHED_OK", "NOT_FOUND"})


def is_error(status: str) -> bool:
    """Does an operation that ended with `status` (a Return= name) count as an error?"""
    return status not in NOT_ERRORS


def error_total(returns: Mapping[str, int]) -> int:
    """The operations among `returns` (status -> count) that count as errors."""
    return sum(n for status, n in returns.items() if status not in NOT_ERRORS)


@dataclass
class Measurement:
    """One `[NAME]` section of YCSB's output."""

    name: str
    operations: int
    average_us: float
    min_us: int
    max_us: int
    percentiles: dict[float, int] = field(default_factory=dict)
    # Return=STATUS counts in the order they were first seen; empty for names without them.
    returns: dict[str, int] = field(default_factory=dict)
    # Cumulative HdrHistogram (microseconds, 3 significant digits), compressed base64;
    # None when the measurement was imported from text.
    histogram: str | None = None


@dataclass
class IntervalMeasurement:
    """One measurement over one interval (the figures of a YCSB status-line bracket)."""

    count: int
    average_us: float
    min_us: int
    max_us: int
    percentiles: dict[float, int] = field(default_factory=dict)
    histogram: str | None = None


@dataclass
class Interval:
    """One reporting interval of a run (a tick: one second by default)."""

    elapsed_s: float  # seconds since the phase started, at the end of this interval
    duration_s: float
    operations: int  # operations completed in this interval
    total_operations: int  # completed since the start
    measurements: dict[str, IntervalMeasurement] = field(default_factory=dict)
    returns: dict[str, dict[str, int]] = field(default_factory=dict)  # op -> status -> count
    lanes: int = 0
    target: float | None = None
    paused: bool = False
    in_flight: float | None = None  # operations in the system, sampled over the interval (mean)
    warmup: bool = False  # before the measured window: done, not counted in the run's figures
    # requests and errors per node (Cassandra coordinator, HBase RegionServer, server) in this
    # interval, as the client counted them: {"127.0.0.1:9042": [requests, errors]}
    nodes: dict[str, list[int]] = field(default_factory=dict)
    # the same per region of the tables ({region name: [requests, errors]}), where the client
    # counts them (HBase's native client)
    regions: dict[str, list[int]] = field(default_factory=dict)
    # a paced interval: operations whose intended start had come by its end that no lane had
    # taken yet (the lanes were behind their schedule by behind / target seconds); None unpaced
    # or recorded before the workbench counted them
    behind: int | None = None
    # the servers' side of this second (metrics/server.py): node address (or "client") -> figure
    # name -> value, sampled in the parent process; {} when nothing was sampled for it
    server: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def throughput(self) -> float:
        return self.operations / self.duration_s if self.duration_s > 0 else 0.0


@dataclass
class Event:
    """Something that changed while the run went on (target, lanes, pause, stop...)."""

    elapsed_s: float
    kind: str
    value: Any = None


@dataclass
class ServerEventRecord:
    """Something a server did during the run (metrics/server.py's ServerEvent), on its timeline."""

    elapsed_s: float  # when it began, in seconds since the phase started
    node: str
    kind: str  # "gc", "compaction", "flush", ...
    seconds: float = 0.0  # how long it lasted (0: an instant, or not over when seen)
    detail: str = ""


@dataclass
class RunResult:
    """Everything known about one phase (load or run) of one benchmark."""

    phase: str  # "load" or "run"
    db: str
    runtime_ms: int
    operations: int
    throughput: float  # operations * 1000 / runtime_ms, as YCSB computes it
    measurements: list[Measurement] = field(default_factory=list)
    intervals: Sequence[Interval] = field(default_factory=list)  # from a run: read from a file
    events: list[Event] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    started_at: float | None = None  # Unix time
    outcome: str = "completed"  # completed | stopped | interrupted | failed
    source: str = "workbench"  # "workbench" or "ycsb-text" (imported)
    warmup_s: float = 0.0  # unmeasured seconds before runtime_ms starts (measurement.warmup)
    # measurement.keys=true: where the run's requests landed, counted by the engine over the whole
    # run (metrics/keycounts.py summarize: shares of the hottest keys, counted exactly or sampled)
    keys: dict[str, Any] | None = None
    # what makes the figures what they are: versions, settings, host, workload digests, command
    # line (results/manifest.py); {} for a run recorded before runs had one, or imported
    manifest: dict[str, Any] = field(default_factory=dict)
    # the servers' events (GC pauses, compactions, flushes) and what of the servers could not be
    # seen, and why (one line a source: "process: an external cluster's processes are not ...")
    server_events: list[ServerEventRecord] = field(default_factory=list)
    server_notes: list[str] = field(default_factory=list)

    @property
    def server(self) -> str:
        """The server's name and version as the run recorded it: the cluster's (--cluster), else
        what the binding saw ("server: ..." in its notes), else ""."""
        env = self.environment or {}
        named = str((env.get("cluster") or {}).get("server_version") or "")
        if named:
            return named
        notes = [str(n) for n in env.get("notes") or ()]
        return next((n.removeprefix("server: ") for n in notes if n.startswith("server: ")), "")

    @property
    def client(self) -> str:
        """The database client that measured the run, in one line: "native CQL v4 (hot path
        compiled, uvloop 0.21.0)"; an imported YCSB file's "YCSB (imported)"; "not recorded" for a run
        stored before runs named their client (environment.client, bindings/clients.py)."""
        env = self.environment or {}
        client = env.get("client")
        if isinstance(client, dict) and client.get("name"):
            how = ["hot path compiled" if client.get("compiled") else "hot path in Python"]
            loop = client.get("event_loop") or env.get("event_loop")
            if loop:
                how.append(str(loop))
            return f"{client['name']} ({', '.join(how)})"
        if self.source != "workbench":
            return "YCSB (imported)"
        return "not recorded"

    @property
    def database(self) -> str:
        """The database as the app labels it: `db`, and "(FerretDB)" when the server that
        answered was FerretDB (named in the cluster's server_version or the binding's notes), so
        that its figures are never shown under MongoDB's name alone."""
        env = self.environment or {}
        server = str((env.get("cluster") or {}).get("server_version") or "")
        if "FerretDB" in server or any(str(n).startswith("server: FerretDB") for n in env.get("notes") or ()):
            return f"{self.db} (FerretDB)"
        return self.db

    def node_totals(self) -> dict[str, tuple[int, int]]:
        """Requests and errors per node over the whole run (warm-up included: every request the
        nodes served), from the intervals; {} for a client that does not count them."""
        return self._totals("nodes")

    def region_totals(self) -> dict[str, tuple[int, int]]:
        """The same per region (Interval.regions); {} for a client that does not count them."""
        return self._totals("regions")

    def _totals(self, what: str) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for interval in self.intervals:
            for where, (requests, errors) in (getattr(interval, what) or {}).items():
                before = out.get(where, (0, 0))
                out[where] = (before[0] + requests, before[1] + errors)
        return dict(sorted(out.items()))

    def measurement(self, name: str) -> Measurement | None:
        for m in self.measurements:
            if m.name == name:
                return m
        return None

    def error_count(self) -> int:
        """Operations that ended in a status that counts as an error (`is_error`)."""
        return sum(error_total(m.returns) for m in self.measurements)
