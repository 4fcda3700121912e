"""Cassandra's native protocol (CQL v3/v4) from Python on the lanes' event loop:
cassandra.driver=native. The codec is cql.py, a connection connection.py.

Why: a C++ driver (acsylla, once a choice here) runs its sockets on its own thread, so every
request crosses from the event loop to that thread and every answer crosses back (two wake-ups
and 2-3 system calls per operation, BENCHMARKS.md), which costs more client CPU than everything
else in an operation. This client speaks the protocol itself, as hbase/protocol/rpc.py does for HBase:

- One connection per node, shared by the worker's lanes; requests carry a stream id and answers
  may come back in any order. Requests made in the same turn of the event loop go out in one
  write; answers are read into a buffer the connection owns.
- Statements are prepared; EXECUTE asks the node not to repeat the result metadata, and rows are
  decoded with the metadata the PREPARE answer gave.
- Token-aware over the contact point's datacenter: with the Murmur3 partitioner (every
  Cassandra default) a request goes to the node that owns its partition key's token
  (cassandra-driver's C murmur3), else to the next node up on the ring, like the Java driver's
  TokenAwarePolicy over DCAwareRoundRobinPolicy that YCSB uses. Other partitioners get round
  robin.
- A lane's sequence is a chain: each answer sends the lane's next request from the callback.
  Every operation is still one request, timed on its own; errors do not stop the chain.
- Failures are counted by kind as cassandra-driver names them: the server's error codes
  (ReadTimeout, WriteTimeout, Unavailable, ...), OperationTimedOut when no answer came within
  cassandra.readtimeoutmillis (the connection stays; the late answer is dropped), and
  NoHostAvailable when no node is connected. A lost node is reconnected in the background, and
  a node that no longer knows a statement (Unprepared, after a restart) is given it again.
- Authentication is PasswordAuthenticator's SASL PLAIN; TLS is Python's ssl module.

Protocol versions 3 and 4 (v5's framing with checksums is not implemented: options.py refuses
it with this driver); the values it binds and decodes are cql.py's.

Along the DataStax drivers' seams: the settings it is given are settings.py's; what it
reads of the cluster (nodes, tokens, replicas) is metadata.py's, which connection a request
goes to routing.py's, and how a lost node is tried again reconnect.py's. This module
is the session: connecting, the control connection and its events, nodes joining and leaving,
the per-node figures, and executing statements.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench import speedups
from workbench.databases.cassandra.protocol.connection import CqlConnection, _Chain, _One
from workbench.databases.cassandra.protocol.cql import (
    _I32,
    _U16,
    AUTH_RESPONSE,
    AUTH_SUCCESS,
    AUTHENTICATE,
    CONSISTENCY,
    EXECUTE,
    PREPARE,
    PREPARED,
    QUERY,
    READY,
    REGISTER,
    STARTUP,
    LazyRow,
    QueryFailed,
    Statement,
    _pack_i32,
    decode_result,
    failure,
    long_string,
    read_event,
    string_list,
    string_map,
)
from workbench.databases.cassandra.protocol.metadata import NO_TOKENS, TokenMap, replication_factor, topology
from workbench.databases.cassandra.protocol.reconnect import ExponentialReconnection, Reconnector
from workbench.databases.cassandra.protocol.routing import TokenAwareRouting
from workbench.databases.cassandra.protocol.settings import CqlSettings
from workbench.errors import BindingError
from workbench.protocols.wire import FIRST_ROW

DRAIN_S = 0.02  # how often a dropped node's connection is looked at until its requests are answered
# A node announced as REMOVED_NODE is dropped when the event comes, as the Java driver 3 (YCSB's)
# does, not once the ring read again stops listing it: a decommissioned node serves only for its
# ring delay after it announced that it left, and on a loaded machine the event, the wait for the
# system tables and the three queries on a busy node took longer than that (CI rehearsal 69: nine
# requests sent to node3 as it closed, in the elasticity lesson). While the tables still list it
# (they lag the event a little) it stays dropped, for at most this long; a NEW_NODE ends it.
REMOVED_HOLD_S = 60.0


# -- the session -----------------------------------------------------------------------------------------

class NativeSession:
    """Prepared statements and execution over the native protocol (see cassandra.py's contract)."""

    driver = "native"
    errors = (QueryFailed,)

    def __init__(self, settings: CqlSettings, key_column: str | None = None) -> None:
        self.settings = settings
        self.key_column = key_column  # the partition key's name: v3 routes by it (v4 by index)
        self.version = settings.protocol_version
        self.timeout_s = settings.read_timeout_ms / 1000
        self.hosts: list[tuple[str, int]] = []
        # one entry per host index, None while it has no connection; the routing reads this list,
        # so it is changed in place, never replaced
        self.conns: list[CqlConnection | None] = []
        self.tokens: TokenMap = NO_TOKENS
        self.routing = TokenAwareRouting(self.conns, settings.shuffle_replicas)
        self._route = self.routing.route
        self.unreachable: list[str] = []  # "address: why" of discovered nodes not reached at connect
        self._closed = False
        self._reconnector = Reconnector(
            ExponentialReconnection(settings.reconnect_first_s, settings.reconnect_max_s),
            lambda index: self._open(self.hosts[index]),
            lambda index: not self._closed and index not in self._gone, self._reconnected)
        self._gone: set[int] = set()  # indexes of nodes that left the cluster
        self._removed: dict[tuple[str, int], float] = {}  # REMOVED_NODE hosts -> held gone until
        self._control: CqlConnection | None = None  # the connection registered for events
        self._refreshing: asyncio.Task | None = None
        self.events: list[tuple[str, str, str]] = []  # (kind, change, address) as they came
        self._retired: dict[int, tuple[int, int]] = {}  # counts of a node's closed connections
        self._draining: set[CqlConnection] = set()  # dropped nodes' connections, open until answered
        self._ssl = settings.tls.context() if settings.tls is not None else None

    # -- connecting --------------------------------------------------------------------------------

    @classmethod
    async def connect(cls, settings: CqlSettings, key_column: str | None = None) -> NativeSession:
        self = cls(settings, key_column)
        errors = []
        for host in settings.hosts:
            try:
                conn = await self._open((host, settings.port))
            except BindingError:
                raise
            except Exception as exc:
                errors.append(f"{host}:{settings.port} {type(exc).__name__} ({exc})")
                continue
            self.hosts.append((host, settings.port))
            self.conns.append(conn)
            await self._discover(conn)
            return self
        raise BindingError(f"cannot connect to Cassandra at {settings.where} with the native driver: "
                           + "; ".join(errors),
                           "is the server up? check hosts, port, credentials and cassandra.useSSL")

    async def _open(self, host: tuple[str, int]) -> CqlConnection:
        loop = asyncio.get_running_loop()
        where = f"{host[0]}:{host[1]}"
        timeout = self.settings.connect_timeout_ms / 1000
        try:
            _, conn = await asyncio.wait_for(loop.create_connection(
                lambda: CqlConnection(self.version, self.timeout_s, where), *host, ssl=self._ssl,
                server_hostname=host[0] if self._ssl is not None else None), timeout)
        except TimeoutError:
            raise TimeoutError(f"no connection within {timeout * 1000:.0f} ms") from None
        try:
            await asyncio.wait_for(self._startup(conn), timeout)
        except BaseException:
            conn.close()
            raise
        conn.on_lost = self._lost
        return conn

    async def _startup(self, conn: CqlConnection) -> None:
        opcode, body, i = await conn.request(STARTUP, string_map({"CQL_VERSION": "3.0.0",
                                                                  "DRIVER_NAME": "workbench"}))
        if opcode == AUTHENTICATE:
            user, password = self.settings.username, self.settings.password
            if not user:
                raise BindingError(f"Cassandra at {conn.where} asks for a login",
                                   "set cassandra.username and cassandra.password")
            token = b"\x00" + user.encode() + b"\x00" + (password or "").encode()
            try:
                opcode, body, i = await conn.request(AUTH_RESPONSE, _pack_i32(len(token)) + token)
            except QueryFailed as exc:
                raise BindingError(f"Cassandra at {conn.where} refused the login: {exc.kind} ({exc.message})",
                                   "check cassandra.username and cassandra.password") from None
            if opcode != AUTH_SUCCESS:
                raise ConnectionError(f"{conn.where} answered the login with opcode {opcode}")
        elif opcode != READY:
            raise ConnectionError(f"{conn.where} answered STARTUP with opcode {opcode}")

    async def query(self, conn: CqlConnection, cql: str) -> list[dict[str, Any]]:
        """A statement without values, at ONE, on one connection: its rows."""
        _, body, i = await conn.request(QUERY, long_string(cql) + _U16.pack(CONSISTENCY["ONE"]) + b"\x00")
        return decode_result(body, i, None) or []

    async def _replication_factor(self, conn: CqlConnection, datacenter: str | None) -> int:
        """How many replicas the keyspace keeps in this datacenter (metadata.py reads its
        row; 1 without a keyspace, or when its row cannot be read)."""
        keyspace = self.settings.keyspace
        if keyspace is None:
            return 1
        try:
            rows = await self.query(conn, "SELECT replication FROM system_schema.keyspaces "
                                          f"WHERE keyspace_name = '{keyspace}'")
        except QueryFailed:
            return 1
        return replication_factor(rows, datacenter)

    async def _discover(self, conn: CqlConnection) -> None:
        """The other nodes of the contact point's datacenter and their token ring, from
        system.local and the peers table. Like the Java driver's DC-aware policy (YCSB's), no
        request goes to another datacenter: LOCAL_QUORUM and LOCAL_ONE mean the coordinator's.
        Then, as the reference drivers do, the contact point's connection registers for the
        cluster's topology and status events (the control connection): a node that joins is
        used, one that leaves is dropped, one that comes back up is connected at once."""
        new = await self._refresh(conn)
        opened = await asyncio.gather(*(self._open(self.hosts[i]) for i in new), return_exceptions=True)
        for index, opening in zip(new, opened, strict=True):
            if isinstance(opening, CqlConnection):
                self.conns[index] = opening
            else:  # down or unreachable now: tried again in the background
                host, port = self.hosts[index]
                self.unreachable.append(f"{host}:{port} ({type(opening).__name__}: {opening})")
                self._reconnect(index)
        await self._listen(conn)

    async def _refresh(self, conn: CqlConnection) -> list[int]:
        """Read the nodes and the ring again from `conn`'s system tables: a node listed for the
        first time is added (its index returned, not yet connected); a node no longer listed is
        dropped (its connection closed, never tried again unless it is listed again); the ring
        and the replica sets are made anew."""
        local = await self.query(conn, "SELECT * FROM system.local")
        try:
            peers = await self.query(conn, "SELECT * FROM system.peers_v2")
        except QueryFailed:  # Cassandra 3
            peers = await self.query(conn, "SELECT * FROM system.peers")
        here = self.conns.index(conn) if conn in self.conns else 0
        topo = topology(local, peers, self.hosts[here], self.settings.port)
        listed = topo.nodes
        new = []
        for host in listed:
            if host not in self.hosts:
                self.hosts.append(host)
                self.conns.append(None)
                new.append(len(self.hosts) - 1)
        back = self._gone
        now = asyncio.get_running_loop().time()
        for host, until in list(self._removed.items()):
            if host not in listed or until <= now:  # the tables agree with the event, or the hold ran out
                del self._removed[host]
        self._gone = {index for index, host in enumerate(self.hosts)
                      if host not in listed or host in self._removed}
        for index in self._gone:
            self._drop(index)
        # a node that had left and is listed again (added back at its old address) is connected
        # again like a new one: neither the UP event (it came while it was still gone) nor the
        # listing alone would do it
        new += [index for index in sorted(back - self._gone)
                if self.conns[index] is None and index not in self._reconnector]
        factor = await self._replication_factor(conn, topo.datacenter) if topo.routed else 1
        self.tokens = TokenMap.of(topo, self.hosts, factor)
        self.routing.use(self.tokens)
        return new

    def _drop(self, index: int) -> None:
        """A node that left the cluster: no new requests, no reconnection. Its connection closes
        once the requests in flight on it are answered (a decommissioned node goes on serving for
        its ring delay after it announced that it left) or have timed out: closed at once, they
        would all fail, though the node was about to answer them."""
        self._reconnector.cancel(index)
        conn, self.conns[index] = self.conns[index], None
        if conn is None:
            return
        self._retire(index, conn)
        conn.on_lost = lambda lost: self._retire(index, lost)  # (what its last requests did)
        if conn is self._control:  # events come on another connection from now on
            self._control = None
            self._new_control()
        self._draining.add(conn)
        loop = asyncio.get_running_loop()
        self._close_when_answered(conn, loop, loop.time() + self.timeout_s + 1)

    def _close_when_answered(self, conn: CqlConnection, loop: asyncio.AbstractEventLoop,
                             deadline: float) -> None:
        if conn._inflight and conn.broken is None and not self._closed and loop.time() < deadline:
            loop.call_later(DRAIN_S, self._close_when_answered, conn, loop, deadline)
            return
        self._draining.discard(conn)
        conn.close()

    # -- events (the control connection) ----------------------------------------------------------

    async def _listen(self, conn: CqlConnection) -> None:
        """REGISTER for topology and status events on `conn`; a server that refuses leaves the
        session as it was (events only make it notice changes sooner)."""
        try:
            opcode, _, _ = await asyncio.wait_for(
                conn.request(REGISTER, string_list(("TOPOLOGY_CHANGE", "STATUS_CHANGE"))), self.timeout_s)
        except Exception:
            return
        if opcode == READY:
            conn.on_event = self._on_event
            self._control = conn

    def _on_event(self, body: bytes) -> None:
        try:
            kind, change, host = read_event(body)
        except (ValueError, IndexError, UnicodeDecodeError):
            return  # an event this client does not read: nothing to do
        self.events.append((kind, change, f"{host[0]}:{host[1]}"))
        if kind == "TOPOLOGY_CHANGE":
            if change == "REMOVED_NODE" and host in self.hosts:  # no new request to it from now on
                self._removed[host] = asyncio.get_running_loop().time() + REMOVED_HOLD_S
                index = self.hosts.index(host)
                if index not in self._gone:
                    self._gone.add(index)
                    self._drop(index)
            elif change == "NEW_NODE":
                self._removed.pop(host, None)
            self._refresh_soon(change, host)
        elif kind == "STATUS_CHANGE" and change == "UP":
            if host not in self.hosts:
                self._refresh_soon("NEW_NODE", host)
                return
            index = self.hosts.index(host)
            conn = self.conns[index]
            if index not in self._gone and (conn is None or conn.broken is not None):
                self._reconnector.cancel(index)
                self._reconnect(index, at_once=True)
        # STATUS_CHANGE DOWN: the connections' own failures decide, as with the reference drivers
        # (a node another node cannot see may still answer this client)

    def _refresh_soon(self, change: str, host: tuple[str, int]) -> None:
        """Read the ring again after the event, and again (1, 2, 4, 8 s) until the event's node
        is listed (NEW_NODE) or gone (REMOVED_NODE): the system tables lag the event a little."""
        if self._closed or (self._refreshing is not None and not self._refreshing.done()):
            return

        def settled() -> bool:
            if change == "NEW_NODE":
                return host in self.hosts and self.hosts.index(host) not in self._gone
            if change == "REMOVED_NODE":  # (gone since the event; settled once no longer listed)
                return host not in self._removed
            return True

        async def again() -> None:
            wait = 1.0
            for _ in range(5):
                await asyncio.sleep(wait)
                wait *= 2
                control = self._control if self._control is not None and self._control.broken is None \
                    else self._any()
                if control is None:
                    continue
                try:
                    new = await self._refresh(control)
                except Exception:
                    continue
                for index in new:
                    self._reconnect(index, at_once=True)
                if settled():
                    return

        self._refreshing = asyncio.get_running_loop().create_task(again())

    def _new_control(self) -> None:
        """The control connection was lost: listen on another live connection, then read the
        ring again from it (events may have been missed meanwhile)."""
        conn = self._any()
        if conn is None or self._closed:
            return  # the next connection made (_reconnect) becomes the control connection

        async def take() -> None:
            await self._listen(conn)
            if self._control is conn:
                try:
                    for index in await self._refresh(conn):
                        self._reconnect(index, at_once=True)
                except Exception:
                    pass

        asyncio.get_running_loop().create_task(take())

    # -- lost connections ------------------------------------------------------------------------

    def _lost(self, conn: CqlConnection) -> None:
        if self._closed:
            return
        for index, c in enumerate(self.conns):
            if c is conn:
                self._retire(index, conn)
                self.conns[index] = None
                self._reconnect(index)
        if conn is self._control:
            self._control = None
            self._new_control()

    def _reconnect(self, index: int, at_once: bool = False) -> None:
        """Try the node again in the background (reconnect.py), unless it is tried already,
        it left the cluster, or the session closed."""
        self._reconnector.start(index, at_once)

    def _reconnected(self, index: int, conn: CqlConnection) -> None:
        self.conns[index] = conn
        if self._control is None:
            self._new_control()

    # -- per-node figures ------------------------------------------------------------------------

    def _retire(self, index: int, conn: CqlConnection) -> None:
        """Keep a connection's counts when it goes (the node's totals go on with the next one)."""
        sent, failed = self._retired.get(index, (0, 0))
        self._retired[index] = (sent + conn.sent, failed + conn.failed)
        conn.sent = conn.failed = 0

    def node_counts(self) -> dict[str, tuple[int, int]]:
        """Requests sent to each node and the failed ones among them, since connect."""
        out = {}
        for index, (host, port) in enumerate(self.hosts):
            sent, failed = self._retired.get(index, (0, 0))
            conn = self.conns[index]
            if conn is not None:
                sent, failed = sent + conn.sent, failed + conn.failed
            if sent or failed:
                out[f"{host}:{port}"] = (sent, failed)
        return out

    def down_nodes(self) -> frozenset[str]:
        """Nodes of the cluster (not those that left it) with no working connection now."""
        return frozenset(f"{host}:{port}" for index, (host, port) in enumerate(self.hosts)
                         if index not in self._gone and (self.conns[index] is None
                                                         or self.conns[index].broken is not None))

    # -- statements ---------------------------------------------------------------------------------

    async def prepare(self, cql: str, consistency: str) -> Statement:
        conn = self.routing.any()
        if conn is None:
            raise QueryFailed("NoHostAvailable", "no Cassandra node is connected")
        _, body, i = await conn.request(PREPARE, long_string(cql))
        kind = _I32.unpack_from(body, i)[0]
        if kind != PREPARED:
            raise QueryFailed("ProtocolError", f"PREPARE answered with result kind {kind}")
        return Statement(cql, CONSISTENCY[consistency], body, i + 4, self.version, self.key_column)

    def _any(self) -> CqlConnection | None:
        return self.routing.any()

    # -- execution ---------------------------------------------------------------------------------------

    def execute(self, request: tuple[Statement, Sequence[Any]]) -> asyncio.Future:
        """The result of one request (rows, or None): a future, which raises QueryFailed."""
        future = asyncio.get_running_loop().create_future()
        stmt, params = request
        try:
            body = stmt.body(params)
            conn = self._route(stmt, params)
            if conn is None:
                raise QueryFailed("NoHostAvailable", "no Cassandra node is connected")
            call = _One(future)
            call.stmt, call.body = stmt, body
            conn.send(call, EXECUTE, body)
        except Exception as exc:
            future.set_exception(failure(exc))
        return future

    def chain(self, pending: Sequence[tuple[Statement, Sequence[Any]]],
              more: Callable[[], bool]) -> asyncio.Future:
        """Run (statement, params) one after another: (ok, rows/None or QueryFailed, start ns, end ns)
        each. Before each request after the first, more() says whether to go on."""
        done = asyncio.get_running_loop().create_future()
        _Chain(self._route, pending, more, done).go(True)
        return done

    @staticmethod
    def row(result: list[Any] | None) -> Mapping[str, Any] | None:
        return result[0] if result else None

    row_of = FIRST_ROW  # what row() does, as chain_outcomes (compiled or not) does it without a call

    @staticmethod
    def rows(result: list[Any] | None) -> list[dict[str, Any]]:
        """Every row as a dict, nulls as None (a scan of one row came back as a LazyRow)."""
        if not result:
            return []
        return [row.cells() if row.__class__ is LazyRow else row for row in result]

    async def close(self) -> None:
        self._closed = True
        self._reconnector.close()
        if self._refreshing is not None:
            self._refreshing.cancel()
        for index, conn in enumerate(self.conns):
            if conn is not None:
                self._retire(index, conn)  # (the run's last tick reads the counts after this)
                conn.on_lost = None
                conn.close()
        self.conns[:] = [None] * len(self.conns)
        for conn in list(self._draining):  # (its counts were retired when its node was dropped)
            conn.on_lost = None
            conn.close()
        self._draining.clear()



# The compiled chain step (csrc/, cql_receive answers a chain's next step with the session's route:
# with one connection, without calling it).
if speedups.C is not None:
    speedups.C.cql_setup(_Chain, LazyRow, TokenAwareRouting.route)
