"""Cassandra's own figures of each node, over CQL (4.0 and later: virtual tables), on every
provider: local, Docker and external clusters alike.

Each node is asked on a connection of its own (cassandra-driver, its load balancing a whitelist
of that one node: virtual tables are per node), three reads a second, sent to every node at once:

- `system_views.thread_pools`: per pool (stage) queue.<name>.pending/.active/.blocked;
  compactions_pending (CompactionExecutor's waiting and running tasks), flushes_pending
  (MemtableFlushWriter's), requests (Native-Transport-Requests' completed tasks over the second,
  less this source's own reads); each task MemtableFlushWriter completed is a flush event (the
  table is not named there);
- `system_views.sstable_tasks`: compactions_running, and a compaction seen running is an event
  when first seen ("... started");
- `system.compaction_history` (a local table): each compaction that ended is an event from its
  start (the time in its time-based id, the moment the node logs "Compacting") to its end
  (`compacted_at`, the moment it logs "Compacted"), with the bytes in and out.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from workbench.metrics.server import NodeSample, ServerEvent, SourceUnavailable

POOLS = ("SELECT name, active_tasks, pending_tasks, blocked_tasks, completed_tasks "
         "FROM system_views.thread_pools")
TASKS = "SELECT keyspace_name, table_name, task_id, kind FROM system_views.sstable_tasks"
HISTORY = ("SELECT id, keyspace_name, columnfamily_name, compacted_at, bytes_in, bytes_out "
           "FROM system.compaction_history WHERE compacted_at > %s ALLOW FILTERING")
QUERIES_PER_SAMPLE = 3
RECONNECT_S = 5.0  # a node that did not take a connection is tried again after this long
_UUID_EPOCH = 0x01B21DD213814000  # 100 ns intervals from 1582-10-15 to 1970-01-01


def pool_figures(rows: list[Any]) -> dict[str, float]:
    """The figures of one node's thread_pools rows (attributes name, active_tasks, pending_tasks,
    blocked_tasks)."""
    out: dict[str, float] = {}
    by_name = {}
    for row in rows:
        by_name[row.name] = row
        out[f"queue.{row.name}.pending"] = float(row.pending_tasks or 0)
        out[f"queue.{row.name}.active"] = float(row.active_tasks or 0)
        out[f"queue.{row.name}.blocked"] = float(row.blocked_tasks or 0)
    for pool, figure in (("CompactionExecutor", "compactions_pending"),
                         ("MemtableFlushWriter", "flushes_pending")):
        if pool in by_name:
            out[figure] = float((by_name[pool].pending_tasks or 0) + (by_name[pool].active_tasks or 0))
    return out


def completed(rows: list[Any], pool: str) -> int | None:
    """A pool's completed_tasks, None when the node has no such pool."""
    return next((int(r.completed_tasks or 0) for r in rows if r.name == pool), None)


def is_compaction(kind: str) -> bool:
    """An sstable task that is a compaction ("Compaction", "Major compaction", ...), not a
    validation, cleanup or index build."""
    return "compaction" in str(kind).lower() and "anticompaction" not in str(kind).lower()


def started_at(task_id: Any, fallback: float) -> float:
    """When an operation began: the time in its time-based (version 1) id, or `fallback`."""
    try:
        value = task_id if isinstance(task_id, uuid.UUID) else uuid.UUID(str(task_id))
    except ValueError:
        return fallback
    if value.version != 1:
        return fallback
    return (value.time - _UUID_EPOCH) / 1e7


def epoch(moment: Any) -> float:
    """A driver timestamp (a naive datetime in UTC) as epoch seconds."""
    if isinstance(moment, datetime):
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    return float(moment)


def _size(count: Any) -> str:
    value = float(count or 0)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return ""


def ended_compaction(node: str, row: Any) -> ServerEvent:
    """The event of one compaction_history row: from its start to its end."""
    end = epoch(row.compacted_at)
    start = min(started_at(row.id, end), end)
    return ServerEvent(node=node, at=start, kind="compaction", seconds=round(end - start, 3),
                       detail=f"compaction of {row.keyspace_name}.{row.columnfamily_name}: "
                              f"{_size(row.bytes_in)} -> {_size(row.bytes_out)}")


@dataclass
class NodeState:
    """What one node's previous samples leave for the next."""

    since: float  # compactions that ended before this are not the run's
    flushes: int | None = None  # MemtableFlushWriter's completed tasks at the last sample
    requests: int | None = None  # Native-Transport-Requests' completed tasks at the last sample
    last: float = 0.0  # the last sample's time
    running: set[str] = field(default_factory=set)  # compaction ids seen running
    ended: dict[str, float] = field(default_factory=dict)  # compaction ids seen ended -> end


def node_sample(node: str, state: NodeState, now: float, pools: list[Any], tasks: list[Any],
                history: list[Any]) -> NodeSample:
    """One node's figures and events for the second ending at `now` from its three answers;
    `state` moves on to this second."""
    figures = pool_figures(pools)
    events: list[ServerEvent] = []
    running = [t for t in tasks if is_compaction(t.kind)]
    figures["compactions_running"] = float(len(running))
    for task in running:
        key = str(task.task_id)
        if key not in state.running and key not in state.ended:
            events.append(ServerEvent(node=node, at=started_at(task.task_id, now), kind="compaction",
                                      detail=f"compaction of {task.keyspace_name}.{task.table_name} "
                                             f"started ({task.kind})"))
        state.running.add(key)
    for row in sorted(history, key=lambda r: epoch(r.compacted_at)):
        key = str(row.id)
        if key in state.ended or epoch(row.compacted_at) < state.since:
            continue
        state.ended[key] = epoch(row.compacted_at)
        state.running.discard(key)
        events.append(ended_compaction(node, row))
    flushes = completed(pools, "MemtableFlushWriter")
    if flushes is not None and state.flushes is not None and flushes > state.flushes:
        count = flushes - state.flushes
        events.append(ServerEvent(node=node, at=state.last or now, kind="flush",
                                  detail=f"{count} memtable flush{'es' if count > 1 else ''} completed"))
    served = completed(pools, "Native-Transport-Requests")
    if served is not None and state.requests is not None and state.last:
        figures["requests"] = float(max(0, served - state.requests - QUERIES_PER_SAMPLE))
    state.flushes, state.requests, state.last = flushes, served, now
    return NodeSample(node, figures, tuple(events))


def history_since(state: NodeState) -> datetime:
    """The compaction_history rows to ask for: those that ended since the last one seen (a few
    seconds of margin for a node's clock and the row written after its log line)."""
    newest = max(state.ended.values(), default=state.since)
    return datetime.fromtimestamp(newest - 5.0, tz=UTC)


def only_node(address: str, port: int) -> Any:
    """A load-balancing policy that sends every request to the node at address:port and to no
    other: by address and port, since a bridged Docker cluster has every node on 127.0.0.1."""
    from cassandra.policies import HostDistance, RoundRobinPolicy

    def ours(host: Any) -> bool:
        endpoint = host.endpoint
        return endpoint.address == address and getattr(endpoint, "port", port) == port

    class OnlyNode(RoundRobinPolicy):
        def populate(self, cluster: Any, hosts: Any) -> None:
            super().populate(cluster, [h for h in hosts if ours(h)])

        def distance(self, host: Any) -> Any:
            return HostDistance.LOCAL if ours(host) else HostDistance.IGNORED

        def on_up(self, host: Any) -> None:
            if ours(host):
                super().on_up(host)

        def on_add(self, host: Any) -> None:
            if ours(host):
                super().on_add(host)

    return OnlyNode()


def node_keys(nodes: Any) -> dict[str, str]:
    """Node name -> the name its figures go under (the rule every source of a cluster follows,
    clusters/node_figures.py): its address, or name@address where processes share one."""
    from workbench.databases.gc_figures import node_keys as keys

    return keys(nodes)


def server_sources(cluster: Any) -> list[Any]:
    """The Cassandra figures of a cluster: CQL on every provider, the GC logs of the nodes the
    workbench started (the descriptor's `server_sources`)."""
    from workbench.databases.gc_figures import gc_sources

    if cluster.provider == "external":
        from workbench.clusters.external import cassandra_client

        client = cassandra_client(cluster.spec)
    else:
        from workbench.clusters.cassandra_local import client_kwargs

        client = client_kwargs(cluster.spec, cluster.run_dir)
    keys = node_keys(cluster.nodes)
    cql = CqlFigures([(keys[n.name], n.address, n.port) for n in cluster.nodes], client)
    return [cql, *gc_sources(cluster)]


class CqlFigures:
    """The source: `nodes` holds (node name for the figures, address, CQL port); `client` the
    cassandra-driver Cluster arguments (login, TLS) of the cluster."""

    name = "cql"

    def __init__(self, nodes: list[tuple[str, str, int]], client: dict[str, Any] | None = None,
                 timeout: float = 0.8) -> None:
        self._nodes, self._client, self._timeout = nodes, dict(client or {}), timeout
        self._drivers: dict[str, Any] = {}
        self._sessions: dict[str, Any] = {}
        self._tried: dict[str, float] = {}
        started = time.time()
        self._states = {node: NodeState(since=started) for node, _, _ in nodes}
        self._lock = threading.Lock()
        # connect now, beside the run's start, so that the first second's answer is not late
        threading.Thread(target=self._connect_all, name="workbench-cql-connect", daemon=True).start()

    def _connect_all(self) -> None:
        for node, address, port in self._nodes:
            try:
                self._session(node, address, port)
            except Exception:  # noqa: BLE001, S112 - the first sample tries again and says why
                continue

    def _session(self, node: str, address: str, port: int) -> Any:
        with self._lock:
            return self._connect(node, address, port)

    def _connect(self, node: str, address: str, port: int) -> Any:
        if node in self._sessions:
            return self._sessions[node]
        if time.monotonic() - self._tried.get(node, -RECONNECT_S) < RECONNECT_S:
            return None
        self._tried[node] = time.monotonic()
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
        from cassandra.cluster import Cluster as Driver

        logging.getLogger("cassandra").setLevel(logging.CRITICAL)
        profile = ExecutionProfile(load_balancing_policy=only_node(address, port),
                                   request_timeout=self._timeout)
        driver = Driver([address], port=port, protocol_version=4, connect_timeout=2.0,
                        control_connection_timeout=2.0, schema_metadata_enabled=False,
                        token_metadata_enabled=False, execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                        **self._client)
        try:
            session = driver.connect()
        except Exception:
            driver.shutdown()
            raise
        self._drivers[node], self._sessions[node] = driver, session
        return session

    def sample(self, now: float) -> list[NodeSample]:
        asked, failures = [], []
        for node, address, port in self._nodes:
            try:
                session = self._session(node, address, port)
            except Exception as exc:  # down, or not yet up: this second without it
                failures.append(exc)
                continue
            if session is None:
                continue
            state = self._states[node]
            asked.append((node, state, session.execute_async(POOLS), session.execute_async(TASKS),
                          session.execute_async(HISTORY, (history_since(state),))))
        out = []
        for node, state, pools, tasks, history in asked:
            try:
                answers = [list(f.result()) for f in (pools, tasks, history)]
            except Exception as exc:
                if "system_views" in str(exc) and "unconfigured" in str(exc).lower():
                    raise SourceUnavailable("no Cassandra stage figures: the nodes have no "
                                            "system_views (Cassandra 4.0 and later have them)") from None
                failures.append(exc)
                continue
            out.append(node_sample(node, state, now, *answers))
        if not out and failures:
            raise failures[-1]
        return out

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        for driver in self._drivers.values():
            try:
                driver.shutdown()
            except Exception:
                pass
        self._drivers.clear()
        self._sessions.clear()
