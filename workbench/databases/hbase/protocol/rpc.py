"""HBase's own RPC from Python (hbase.client=native): reads and puts go straight to the
RegionServer, with no Thrift gateway in between. The messages are messages.py; the binding
(YCSB's semantics) is databases/hbase/native.py.

Why: on 2 cores the gateway costs about as much CPU per operation as YCSB's whole Java client
(BENCHMARKS.md), so no Thrift client can beat YCSB by much. This speaks what YCSB's client
speaks: HBase RPC (RPC.proto) carrying ClientService's Get and Mutate (Client.proto), protobuf
written and read by the few helpers below (no protobuf dependency).

- Where rows live comes from the gateway once (Thrift's getTableRegions: each region's name,
  key range and RegionServer); a request goes to the region whose range holds its row. A region
  that moved (NotServingRegionException and the like) fails that operation and makes the
  binding ask again.
- One connection per RegionServer, shared by the lanes of a worker, as HBase's Java client
  does: requests carry a call id and answers may come back in any order. Requests made in the
  same turn of the event loop go out in one write.
- A lane's sequence is a chain: each answer sends the lane's next request from the callback.
  Every operation is still one request, timed on its own.
- No cell blocks are asked for (no codec in the connection header), so the server puts cells
  inside the protobuf answers.
- Scans, deletes and buffered writes go through the Thrift client (thrift.py).
"""

from __future__ import annotations

import asyncio
import bisect
import getpass
from collections.abc import Callable, Sequence
from time import perf_counter_ns
from typing import Any

from workbench import speedups
from workbench.databases.hbase.protocol.messages import (
    _ANSWER_CALL_ID_TAG,
    _CALL_ID_KEY,
    _METHODS,
    _U32,
    CALL_IDS,
    CONNECTION_HEADER_SERVICE_NAME,
    CONNECTION_HEADER_USER_INFO,
    EXCEPTION_RESPONSE_EXCEPTION_CLASS_NAME,
    EXCEPTION_RESPONSE_STACK_TRACE,
    MAX_MESSAGE,
    PREAMBLE,
    RESPONSE_HEADER_CALL_ID,
    RESPONSE_HEADER_EXCEPTION,
    USER_INFORMATION_EFFECTIVE_USER,
    LazyCells,
    RemoteError,
    _length_at,
    _method_fields,
    decode_mutate,
    field,
    fields,
    found_cells,
    varint,
)
from workbench.protocols.wire import SharedConnection

# -- where rows live ----------------------------------------------------------------------------

class NoSuchTable(LookupError):
    """The gateway lists no regions for the table: HBase's Thrift server answers a table that
    does not exist with an empty list (TableNotFoundException is caught on its side)."""


class Regions:
    """A table's regions: start keys in order, with each region's name and server."""

    def __init__(self, regions: list[dict]) -> None:
        if not regions:
            raise NoSuchTable("the table has no regions")
        ordered = sorted(regions, key=lambda r: r["start_key"])
        self.starts = [r["start_key"] for r in ordered]
        self.names = [r["name"] for r in ordered]
        self.servers = [(r["server_name"].decode(), int(r["port"])) for r in ordered]
        self.make: Callable[[Any], tuple[bytes, bytes, Callable]] | None = None  # the binding's

    def locate(self, row: bytes) -> tuple[bytes, tuple[str, int]]:
        at = bisect.bisect_right(self.starts, row) - 1
        return self.names[at], self.servers[at]


# -- the connection ------------------------------------------------------------------------------

class _Chain:
    """One lane's requests on a connection, each sent when the one before has been answered."""

    __slots__ = ("items", "make", "more", "answers", "done", "decode", "t0")

    def __init__(self, items, make, more, done) -> None:
        self.items, self.make, self.more, self.done = items, make, more, done
        self.answers: list = []
        self.decode: Callable | None = None
        self.t0 = 0


class RpcConnection(SharedConnection):
    """One connection to a RegionServer's ClientService, shared by many chains."""

    server = "RegionServer"
    # sent, failed: calls sent and failed answers (exceptions, timeouts, a lost connection), the
    # run's per-node figures (csrc/hbase.c's hbase_send counts what it sends, too)
    __slots__ = ("user", "_call_id", "sent", "failed")

    def __init__(self, user: str, timeout_s: float, where: str) -> None:
        super().__init__(timeout_s, where, 65536)  # _inflight: call id -> _Chain
        self.user = user
        self._call_id = 0
        self.sent = self.failed = 0
        if _fast is not None:  # the loop's three calls a wake-up, without a Python frame each
            self.get_buffer, self.buffer_updated, self._flush = _fast.hooks(self, "hbase")

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        user = field(CONNECTION_HEADER_USER_INFO, field(USER_INFORMATION_EFFECTIVE_USER, self.user.encode()))
        header = user + field(CONNECTION_HEADER_SERVICE_NAME, b"ClientService")
        transport.write(PREAMBLE + _U32.pack(len(header)) + header)  # type: ignore[attr-defined]

    def buffer_updated(self, nbytes: int) -> None:
        """Answer every whole message received; the requests their callbacks make (the chains'
        next steps) go out in one write when all are answered, not in a loop turn of their own.

        With workbench._speedups built, a connection replaces this with the compiled one (see
        __init__: csrc/hbase.c's hbase_receive), which answers the usual answer (a header of the
        call id alone, to a chain's call) with the chain's next request in C; every other
        message comes to _answer here as below."""
        self._n += nbytes
        buf, at, n = self._in, 0, self._n
        self._receiving = True
        try:
            while n - at >= 4 and self.broken is None:
                size = _U32.unpack_from(buf, at)[0]
                if size > MAX_MESSAGE:  # a message no server sends: the stream is lost
                    self._malformed(f"a message of {size} bytes")
                    break
                end = at + 4 + size
                if end > n:
                    break
                self._answer(buf, at + 4, end)
                at = end
        finally:
            self._received(at, n)

    def _answer(self, buf: bytearray, i: int, end: int) -> None:
        """The message in buf[i:end], read where it lies (its body copied once). A header that is
        the call id alone (1 or 2 bytes), as nearly all are, is read without the protobuf walker."""
        hlen = buf[i] if i < end else 0
        if hlen == 2 and i + 3 < end and buf[i + 1] == _ANSWER_CALL_ID_TAG and buf[i + 2] < 0x80:
            call_id, error, i = buf[i + 2], None, i + 3
        elif (hlen == 3 and i + 4 < end and buf[i + 1] == _ANSWER_CALL_ID_TAG and buf[i + 2] >= 0x80
              and buf[i + 3] < 0x80):
            call_id, error, i = buf[i + 2] & 0x7F | buf[i + 3] << 7, None, i + 4
        else:
            try:
                if i >= end:
                    raise ValueError("an empty answer")
                hlen, i = _length_at(buf, i, end, "an answer's header")
                call_id, error = -1, None
                for fid, v in fields(buf, i, i + hlen):
                    if fid == RESPONSE_HEADER_CALL_ID:
                        call_id = v
                    elif fid == RESPONSE_HEADER_EXCEPTION:
                        error = v
            except Exception as exc:  # a header that does not parse: the stream is suspect
                self._malformed(exc)
                return
            i += hlen
        chain = self._inflight.pop(call_id, None)
        if chain is None:
            self._malformed(f"an answer to call {call_id}, which nobody made")
            return
        t1 = perf_counter_ns()
        try:
            if error is not None:
                name = text = ""
                for fid, v in fields(buf, *error):
                    if fid == EXCEPTION_RESPONSE_EXCEPTION_CLASS_NAME:
                        name = buf[v[0]:v[1]].decode(errors="replace")
                    elif fid == EXCEPTION_RESPONSE_STACK_TRACE:
                        text = buf[v[0]:v[1]].decode(errors="replace").split("\n", 1)[0]
                value: Any = RemoteError.named(name, text)
                self.failed += 1
            else:
                if i >= end:
                    raise ValueError("an answer with neither an exception nor a body")
                size, i = _length_at(buf, i, end, "an answer's body")
                value = chain.decode(bytes(self._view[i:i + size]))
        except Exception as exc:  # an answer that does not parse: the stream is suspect
            self._failed_answer(chain, exc, t1)
            return
        chain.answers.append((error is None, value, chain.t0, t1))
        self._next(chain)

    def _failed_answer(self, chain: _Chain, why: BaseException | str, t1: int) -> None:
        """chain's answer does not parse (csrc/hbase.c's hbase_receive calls this too): the
        connection breaks, and chain's call fails with the MalformedAnswer every other call in
        flight fails with (it is out of _inflight already)."""
        exc = self._malformed(why)
        self.failed += 1
        chain.answers.append((False, exc, chain.t0, t1))
        _finish(chain)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.broken is None:
            self.broken = exc or ConnectionResetError(f"the RegionServer at {self.where} closed the "
                                                      "connection")
        self._fail_all(self.broken)
        self._stop_timer()

    def _fail_all(self, exc: BaseException) -> None:
        inflight, self._inflight = self._inflight, {}
        now = perf_counter_ns()
        self.failed += len(inflight)
        for chain in inflight.values():
            chain.answers.append((False, exc, chain.t0, now))
            _finish(chain)

    # -- chains ----------------------------------------------------------------------------------

    def run(self, items: Sequence[Any], make: Callable[[Any], tuple[bytes, bytes, Callable]],
            more: Callable[[], bool] | None = None) -> asyncio.Future:
        """make(item) -> (method name, request message, decode); see thrift's run()."""
        done = self.loop.create_future()
        chain = _Chain(items, make, more, done)
        if self.broken is not None:
            now = perf_counter_ns()
            done.set_result([(False, self.broken, now, now)])
        else:
            self._send(chain)
        return done

    def _next(self, chain: _Chain) -> None:
        answers = chain.answers
        if (len(answers) < len(chain.items) and answers[-1][0] and self.broken is None
                and (chain.more is None or chain.more())):
            self._send(chain)
        else:
            _finish(chain)

    def _send(self, chain: _Chain) -> None:
        try:
            method, param, chain.decode = chain.make(chain.items[len(chain.answers)])
        except Exception as exc:  # a request that cannot be made: that step's error
            now = perf_counter_ns()
            chain.answers.append((False, exc, now, now))
            _finish(chain)
            return
        inflight = self._inflight
        if len(inflight) >= CALL_IDS:
            now = perf_counter_ns()
            chain.answers.append((False, ConnectionError(
                f"{CALL_IDS} calls in flight to the RegionServer at {self.where}"), now, now))
            _finish(chain)
            return
        call_id = self._call_id
        while True:
            call_id = call_id + 1 if call_id < CALL_IDS else 1
            if call_id not in inflight:
                break
        self._call_id = call_id
        # RequestHeader: call_id, method_name, request_param (true)
        header = _CALL_ID_KEY + varint(call_id) + (_METHODS.get(method) or _method_fields(method))
        head, length = varint(len(header)), varint(len(param))
        if not self._out and not self._receiving:  # (while receiving, buffer_updated writes at its end)
            self.loop.call_soon(self._flush)
        out = self._out
        out.append(_U32.pack(len(head) + len(header) + len(length) + len(param)) + head + header + length)
        out.append(param)
        chain.t0 = perf_counter_ns()
        inflight[call_id] = chain
        self.sent += 1
        if self._timer is None:
            self._arm()

    def _timed_out(self, exc: TimeoutError) -> None:
        # The RegionServer is not answering: every call in flight fails, the connection goes.
        self._break(exc)


def _finish(chain: _Chain) -> None:
    if not chain.done.done():
        chain.done.set_result(chain.answers)


# The compiled receive path (csrc/hbase.c, hbase_receive), or None: an RpcConnection made while
# it is None keeps the Python buffer_updated, which answers every message (tests switch between the
# two by setting this before they make their connections).
_fast = speedups.C
if _fast is not None:
    _fast.hbase_setup(_Chain, _finish, _METHODS, CALL_IDS, found_cells, decode_mutate, LazyCells)
    _fast.conn_setup(RpcConnection, "hbase")


def _user() -> str:
    """The login name the connection header carries (SIMPLE authentication)."""
    try:
        return getpass.getuser()
    except Exception:  # no login name anywhere (a bare container): the server only records it
        return "workbench"


class RpcClient:
    """Connections to the RegionServers a worker talks to, one per server, opened on first use."""

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_s = timeout_ms / 1000
        self.user = _user()
        self.opened = 0
        self._conns: dict[tuple[str, int], RpcConnection] = {}
        self._opening: dict[tuple[str, int], asyncio.Future] = {}
        # (sent, failed) of each server's connections that are gone, and its refused connections
        self._retired: dict[tuple[str, int], tuple[int, int]] = {}

    async def connection(self, server: tuple[str, int]) -> RpcConnection:
        conn = self._conns.get(server)
        if conn is not None and conn.broken is None:
            return conn
        pending = self._opening.get(server)
        if pending is not None:  # another lane is opening it: wait for that one
            return await asyncio.shield(pending)
        loop = asyncio.get_running_loop()
        pending = self._opening[server] = loop.create_future()
        where = f"{server[0]}:{server[1]}"
        try:
            _, conn = await asyncio.wait_for(loop.create_connection(
                lambda: RpcConnection(self.user, self.timeout_s, where), *server), self.timeout_s)
        except BaseException as exc:
            error = TimeoutError(f"the RegionServer at {where} did not accept a connection within "
                                 f"{self.timeout_s * 1000:.0f} ms") if isinstance(exc, TimeoutError) else exc
            pending.set_exception(error)
            pending.exception()  # retrieved: waiters get it through shield
            del self._opening[server]
            raise error from None
        del self._opening[server]
        old = self._conns.get(server)
        if old is not None:
            self._retire(server, old.sent, old.failed)
            old.close()
        self._conns[server] = conn
        self.opened += 1
        pending.set_result(conn)
        return conn

    async def run(self, server: tuple[str, int], items: Sequence[Any], make: Callable,
                  more: Callable[[], bool] | None = None) -> list:
        t0 = perf_counter_ns()
        try:
            conn = await self.connection(server)
        except Exception as exc:
            self._retire(server, 0, 1)
            return [(False, exc, t0, perf_counter_ns())]
        return await conn.run(items, make, more)

    def _retire(self, server: tuple[str, int], sent: int, failed: int) -> None:
        before = self._retired.get(server, (0, 0))
        self._retired[server] = (before[0] + sent, before[1] + failed)

    def counts(self) -> dict[str, tuple[int, int]]:
        """Calls sent to each RegionServer and the failed ones among them, since the start."""
        out = dict(self._retired)
        for server, conn in self._conns.items():
            before = out.get(server, (0, 0))
            out[server] = (before[0] + conn.sent, before[1] + conn.failed)
        return {f"{host}:{port}": counts for (host, port), counts in sorted(out.items())}

    def close(self) -> None:
        for server, conn in self._conns.items():
            self._retire(server, conn.sent, conn.failed)  # (the run's last tick reads them after this)
            conn.close()
        self._conns.clear()
