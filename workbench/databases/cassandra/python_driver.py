"""cassandra-driver (DataStax's Python driver): the schema tool, and a selectable load driver.

It runs on its default libev reactor (its asyncio reactor breaks with protocol v5). Requests
go out with `execute_async`; the ResponseFuture's callbacks, which fire on the driver's event
thread, hand the rows (dicts) to our loop with `call_soon_threadsafe`, one wake-up per batch of
responses: no thread per request. A lane's sequence of reads and updates (`chain`) runs as a
chain of those callbacks on the driver's thread, each answer sending the next request, and
crosses to our loop once at its end: the thread hand-off is the costly part on this driver.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
from collections.abc import Callable, Sequence
from time import perf_counter_ns
from typing import Any

from cassandra import ConsistencyLevel
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
from cassandra.policies import DCAwareRoundRobinPolicy, FallthroughRetryPolicy, TokenAwarePolicy
from cassandra.query import dict_factory, tuple_factory

from workbench.databases.cassandra.errors import QueryFailed, kind_of
from workbench.databases.cassandra.schema import connect_failure
from workbench.errors import BindingError


def ssl_context(opts: Any) -> ssl.SSLContext | None:
    if not opts.use_ssl:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = opts.ssl_verify == "identity"
    if opts.ssl_verify == "none":
        context.verify_mode = ssl.CERT_NONE
    else:
        context.load_verify_locations(opts.ssl_cafile)
    if opts.ssl_certfile:
        context.load_cert_chain(opts.ssl_certfile, opts.ssl_keyfile, opts.ssl_keypassword)
    return context


def make_cluster(opts: Any, row_factory: Callable = tuple_factory) -> Cluster:
    """A cassandra-driver Cluster for these options (not connected yet)."""
    auth = PlainTextAuthProvider(opts.username, opts.password or "") if opts.username else None
    profile = ExecutionProfile(
        # cassandra.replicas: a key's replicas shuffled (the Java and C++ drivers' default) or the first
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(),
                                               shuffle_replicas=opts.replicas == "shuffle"),
        retry_policy=FallthroughRetryPolicy(),  # no hidden retries: every failure is counted by kind
        request_timeout=opts.read_timeout_ms / 1000,
        row_factory=row_factory,
        consistency_level=ConsistencyLevel.name_to_value[opts.read_consistency],
    )
    return Cluster(
        list(opts.hosts),
        port=opts.port,
        protocol_version=opts.protocol_version,
        auth_provider=auth,
        ssl_context=ssl_context(opts),
        connect_timeout=opts.connect_timeout_ms / 1000,
        control_connection_timeout=opts.connect_timeout_ms / 1000,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
    )


class _Bridge:
    """Completions from the driver's thread, handed to our loop in batches: one wake-up of the
    loop (a write to its self-pipe) per batch rather than one per response."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.done: collections.deque = collections.deque()
        self.scheduled = False

    def ok(self, rows: list, fut: asyncio.Future) -> None:  # driver thread (or ours)
        self.done.append((fut, rows, None))
        if not self.scheduled:  # appended first, so a drain that is already running sees it
            self.scheduled = True
            self.loop.call_soon_threadsafe(self.drain)

    def failed(self, exc: BaseException, fut: asyncio.Future) -> None:  # driver thread
        self.done.append((fut, None, exc))
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon_threadsafe(self.drain)

    def drain(self) -> None:  # our loop
        self.scheduled = False
        done = self.done
        while done:
            fut, rows, exc = done.popleft()
            if fut.done():  # the lane was cancelled meanwhile
                continue
            if exc is None:
                fut.set_result(rows)
            else:
                fut.set_exception(QueryFailed(kind_of(exc)))


class PythonSession:
    """Prepared statements and execution on one cassandra-driver session (see cassandra.py)."""

    driver = "python"
    errors = (QueryFailed,)  # the errback below turns every driver error into one

    def __init__(self, cluster: Cluster, session: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.cluster = cluster
        self.loop = loop
        self._bridge = _Bridge(loop)
        self._submit = session.execute_async
        self._prepare = session.prepare

    @classmethod
    async def connect(cls, opts: Any) -> PythonSession:
        cluster = make_cluster(opts, dict_factory)
        try:
            session = await asyncio.to_thread(cluster.connect)
        except (NoHostAvailable, OSError) as exc:
            await asyncio.to_thread(cluster.shutdown)
            raise BindingError(
                f"cannot connect to Cassandra at {opts.where} with cassandra-driver: {connect_failure(exc)}",
                "is the server up? check hosts, port, credentials and cassandra.useSSL") from None
        return cls(cluster, session, asyncio.get_running_loop())

    async def prepare(self, cql: str, consistency: str) -> Callable[[Sequence[Any]], Any]:
        """A function params -> request whose statement runs at `consistency`."""
        try:
            prepared = await asyncio.to_thread(self._prepare, cql)
        except Exception as exc:  # anything the driver raises while preparing
            raise QueryFailed(kind_of(exc)) from exc
        prepared.consistency_level = ConsistencyLevel.name_to_value[consistency]
        # A BoundStatement (it takes the prepared statement's consistency level): execute_async
        # would bind the parameters itself; binding here, in the driver's compiled code, spares
        # a request object of ours per operation.
        return prepared.bind

    def execute(self, request: Any) -> asyncio.Future:
        """Send; the driver's callbacks complete the returned future on our loop."""
        fut = self.loop.create_future()
        bridge = self._bridge
        self._submit(request).add_callbacks(
            bridge.ok, bridge.failed, callback_args=(fut,), errback_args=(fut,))
        return fut

    def chain(self, pending: Sequence[tuple[Callable, Sequence[Any]]],
              more: Callable[[], bool]) -> asyncio.Future:
        """Bind and run (bind, params) one after another: (ok, rows or exception, start ns,
        end ns) each.

        Each answer's callback binds and sends the next request on the driver's own thread, as
        a bare cassandra-driver loop does; our loop is woken once, when the chain ends. Before
        each request after the first, more() says whether to go on."""
        fut = self.loop.create_future()
        out: list[tuple] = []
        append = out.append
        submit, bridge = self._submit, self._bridge
        steps = iter(pending)

        def send() -> None:  # our loop for the first request, then the driver's thread
            while True:
                step = next(steps, None)
                if step is None or fut.done() or (out and not more()):
                    bridge.ok(out, fut)
                    return
                t0 = perf_counter_ns()
                try:
                    bind, params = step
                    submit(bind(params)).add_callbacks(
                        answered, failed, callback_args=(t0,), errback_args=(t0,))
                    return
                except Exception as exc:  # refused before it was sent (a closed session, a
                    append((False, exc, t0, perf_counter_ns()))  # value it cannot bind)

        def answered(rows: list, t0: int) -> None:
            append((True, rows, t0, perf_counter_ns()))
            send()

        def failed(exc: BaseException, t0: int) -> None:
            append((False, exc, t0, perf_counter_ns()))
            send()

        send()
        return fut

    @staticmethod
    def row(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
        return rows[0] if rows else None

    @staticmethod
    def rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return rows

    async def close(self) -> None:
        await asyncio.to_thread(self.cluster.shutdown)
