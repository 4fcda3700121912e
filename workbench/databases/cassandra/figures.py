"""Cassandra's own figures of each node, over CQL (4.0 and later: virtual tables), on every
provider: local, Docker and external clusters alike.

Each node is asked on a blocking connection of its own (protocol/blocking.py: no event loop or
thread beside the source's own; virtual tables are per node), every node at once, one read a
second and two more only when they can say something:

- `system_views.thread_pools`, always: per pool (stage) queue.<name>.pending/.active/.blocked;
  compactions_pending (CompactionExecutor's waiting and running tasks), flushes_pending
  (MemtableFlushWriter's), requests (Native-Transport-Requests' completed tasks over the second,
  less this source's own reads); each task MemtableFlushWriter completed is a flush event (the
  table is not named there);
- `system_views.sstable_tasks`, while CompactionExecutor has a task running or a compaction seen
  running is not yet accounted for: compactions_running (0, unasked, while the executor is idle);
- `system.compaction_history` (a local table), at the first second, when CompactionExecutor
  completed a task, and while a compaction seen running waits for its row: each compaction is
  ONE event, from its start (the time in its time-based id, the moment the node logs
  "Compacting") to its end (`compacted_at`, the moment it logs "Compacted"), with the bytes in
  and out. A compaction seen running whose row does not come within GIVE_UP_S of its going is
  one event to the last second it was seen; one still running when the run ends shows in
  compactions_running only.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from workbench.metrics.server import NodeSample, ServerEvent, SourceUnavailable

POOLS = ("SELECT name, active_tasks, pending_tasks, blocked_tasks, completed_tasks "
         "FROM system_views.thread_pools")
TASKS = "SELECT keyspace_name, table_name, task_id, kind FROM system_views.sstable_tasks"
HISTORY = ("SELECT id, keyspace_name, columnfamily_name, compacted_at, bytes_in, bytes_out "
           "FROM system.compaction_history WHERE compacted_at > {ms} ALLOW FILTERING")
GIVE_UP_S = 10.0  # a compaction gone from sstable_tasks with no history row this long: told as seen
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
class Running:
    """A compaction seen in sstable_tasks, not yet told."""

    start: float
    what: str  # "h7b.t (Major compaction)"
    last: float  # the last second it was seen running
    gone: float | None = None  # the first second it was not


@dataclass
class NodeState:
    """What one node's previous samples leave for the next."""

    since: float  # compactions that ended before this are not the run's
    flushes: int | None = None  # MemtableFlushWriter's completed tasks at the last sample
    requests: int | None = None  # Native-Transport-Requests' completed tasks at the last sample
    compactions: int | None = None  # CompactionExecutor's completed tasks at the last sample
    asked: int = 0  # this source's reads at the last sample (counted in Native-Transport-Requests)
    last: float = 0.0  # the last sample's time
    running: dict[str, Running] = field(default_factory=dict)  # compaction id -> seen running
    ended: dict[str, float] = field(default_factory=dict)  # compaction ids told -> end


def wanted(state: NodeState, pools: list[Any]) -> tuple[bool, bool]:
    """(ask sstable_tasks, ask compaction_history) this second, from its thread_pools answer."""
    executor = next((r for r in pools if r.name == "CompactionExecutor"), None)
    active = executor is None or bool(executor.active_tasks)
    done = completed(pools, "CompactionExecutor")
    history = (state.compactions is None or done is None or done != state.compactions
               or any(r.gone is not None for r in state.running.values()))
    return active or bool(state.running), history


def node_sample(node: str, state: NodeState, now: float, pools: list[Any], tasks: list[Any] | None,
                history: list[Any] | None) -> NodeSample:
    """One node's figures and events for the second ending at `now` from its answers (tasks and
    history None when they were not asked); `state` moves on to this second."""
    figures = pool_figures(pools)
    events: list[ServerEvent] = []
    running = [t for t in tasks or () if is_compaction(t.kind)]
    figures["compactions_running"] = float(len(running))
    seen = set()
    for task in running:
        key = str(task.task_id)
        if key in state.ended:
            continue
        seen.add(key)
        what = f"{task.keyspace_name}.{task.table_name} ({task.kind})"
        told = state.running.setdefault(key, Running(started_at(task.task_id, now), what, now))
        told.last, told.gone = now, None
    for row in sorted(history or (), key=lambda r: epoch(r.compacted_at)):
        key = str(row.id)
        if key in state.ended or epoch(row.compacted_at) < state.since:
            continue
        state.ended[key] = epoch(row.compacted_at)
        state.running.pop(key, None)
        seen.discard(key)
        events.append(ended_compaction(node, row))
    for key, told in list(state.running.items()):
        if key in seen:
            continue
        if told.gone is None:
            told.gone = now
        elif now - told.gone >= GIVE_UP_S:  # its row never came: the seconds it was seen
            del state.running[key]
            state.ended[key] = told.last
            events.append(ServerEvent(node=node, at=told.start, kind="compaction",
                                      seconds=round(max(told.last - told.start, 0.0), 3),
                                      detail=f"compaction of {told.what}, not in compaction_history"))
    flushes = completed(pools, "MemtableFlushWriter")
    if flushes is not None and state.flushes is not None and flushes > state.flushes:
        count = flushes - state.flushes
        events.append(ServerEvent(node=node, at=state.last or now, kind="flush",
                                  detail=f"{count} memtable flush{'es' if count > 1 else ''} completed"))
    served = completed(pools, "Native-Transport-Requests")
    if served is not None and state.requests is not None and state.last:
        figures["requests"] = float(max(0, served - state.requests - state.asked))
    state.flushes, state.requests, state.last = flushes, served, now
    state.compactions = completed(pools, "CompactionExecutor")
    state.asked = 1 + (tasks is not None) + (history is not None)
    return NodeSample(node, figures, tuple(events))


def history_query(state: NodeState) -> str:
    """The compaction_history rows to ask for: those that ended since the last one told (a few
    seconds of margin for a node's clock and the row written after its log line)."""
    newest = max(state.ended.values(), default=state.since)
    return HISTORY.format(ms=int((newest - 5.0) * 1000))


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
        from workbench.databases.cassandra.cluster_external import cassandra_client

        client = cassandra_client(cluster.spec)
    else:
        from workbench.databases.cassandra.cluster import client_kwargs

        client = client_kwargs(cluster.spec, cluster.run_dir)
    keys = node_keys(cluster.nodes)
    cql = CqlFigures([(keys[n.name], n.address, n.port) for n in cluster.nodes], client)
    return [cql, *gc_sources(cluster)]


def _rows(rows: list[Any]) -> list[Any]:
    """cql.py's rows with attributes, their timeuuid and timestamp cells decoded."""
    from workbench.databases.cassandra.protocol.blocking import timestamp, timeuuid

    out = []
    for row in rows:
        cells = dict(row)
        for name in ("id", "task_id"):
            if isinstance(cells.get(name), bytes | bytearray):
                cells[name] = timeuuid(cells[name])
        if isinstance(cells.get("compacted_at"), bytes | bytearray):
            cells["compacted_at"] = timestamp(cells["compacted_at"])
        out.append(SimpleNamespace(**cells))
    return out


class CqlFigures:
    """The source: `nodes` holds (node name for the figures, address, CQL port); `client` the
    cassandra-driver Cluster arguments of the cluster (its auth_provider's login, its
    ssl_context)."""

    name = "cql"

    def __init__(self, nodes: list[tuple[str, str, int]], client: dict[str, Any] | None = None,
                 timeout: float = 0.8) -> None:
        self._nodes, self._timeout = nodes, timeout
        client = dict(client or {})
        auth = client.get("auth_provider")
        self._login = dict(username=getattr(auth, "username", None), password=getattr(auth, "password", None),
                           ssl_context=client.get("ssl_context"))
        self._conns: dict[str, Any] = {}
        self._tried: dict[str, float] = {}
        started = time.time()
        self._states = {node: NodeState(since=started) for node, _, _ in nodes}
        self._lock = threading.Lock()
        self._closed = False
        # connect now, beside the run's start, so that the first second's answer is not late
        threading.Thread(target=self._connect_all, name="workbench-cql-connect", daemon=True).start()

    def _connect_all(self) -> None:
        for node, address, port in self._nodes:
            try:
                self._conn(node, address, port)
            except Exception:  # noqa: BLE001, S112 - the first sample tries again and says why
                continue

    def _conn(self, node: str, address: str, port: int) -> Any:
        with self._lock:
            if self._closed or node in self._conns:
                return self._conns.get(node)
            if time.monotonic() - self._tried.get(node, -RECONNECT_S) < RECONNECT_S:
                return None
            self._tried[node] = time.monotonic()
            from workbench.databases.cassandra.protocol.blocking import BlockingCql

            self._conns[node] = BlockingCql(address, port, timeout=2.0, **self._login)
            return self._conns[node]

    def _drop(self, node: str) -> None:
        with self._lock:
            conn = self._conns.pop(node, None)
        if conn is not None:
            conn.close()

    def sample(self, now: float) -> list[NodeSample]:
        deadline = time.monotonic() + self._timeout
        asked, failures = [], []
        for node, address, port in self._nodes:  # every node's thread_pools at once
            try:
                conn = self._conn(node, address, port)
                if conn is not None:
                    conn.send([POOLS])
                    asked.append((node, conn))
            except Exception as exc:  # down, or not yet up: this second without it
                self._drop(node)
                failures.append(exc)
        pools = self._answers(asked, 1, deadline, failures)
        follow = []  # then, where they can say something, sstable_tasks and compaction_history
        for node, conn in asked:
            if node not in pools:
                continue
            state = self._states[node]
            tasks, history = wanted(state, pools[node][0])
            queries = [TASKS] * tasks + [history_query(state)] * history
            try:
                if queries:
                    conn.send(queries)
                follow.append((node, conn, tasks, history))
            except Exception as exc:  # noqa: BLE001 - the node broke off: this second without it
                self._drop(node)
                failures.append(exc)
        out = []
        for node, conn, tasks, history in follow:
            more = self._answers([(node, conn)], tasks + history, deadline, failures) if tasks or history \
                else {node: []}
            if node in more:
                answers = iter(more[node])
                out.append(node_sample(node, self._states[node], now, pools[node][0],
                                       next(answers) if tasks else None, next(answers) if history else None))
        if not out and failures:
            raise failures[-1]
        return out

    def _answers(self, asked: list[tuple[str, Any]], count: int, deadline: float,
                 failures: list[Exception]) -> dict[str, list[list[Any]]]:
        from workbench.databases.cassandra.protocol.cql import QueryFailed

        out = {}
        for node, conn in asked:
            try:
                out[node] = [_rows(rows) for rows in conn.receive(count, deadline)]
            except QueryFailed as exc:
                if "system_views" in str(exc) and "unconfigured" in str(exc).lower():
                    raise SourceUnavailable("no Cassandra stage figures: the nodes have no "
                                            "system_views (Cassandra 4.0 and later have them)") from None
                failures.append(exc)
            except Exception as exc:  # noqa: BLE001 - late or broken: this second without it
                self._drop(node)
                failures.append(exc)
        return out

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            conn.close()
