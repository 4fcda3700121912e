"""An asyncio client for HBase's Thrift1 gateway: one connection per lane, no threads.

Why not happybase in threads (the client this one replaced, retired): on
2 cores the client's CPU is taken from the server. Measured per operation (BENCHMARKS.md), a
thread pool pays a hand-off and a futex wake-up per sequence and a 256 KiB receive allocation
per reply (mmap + mremap + munmap), and thriftpy2 builds a struct object per request. Here:

- Requests for the hot calls (mutateRow, getRowWithColumns) are written straight as Thrift
  binary bytes (`encode_get`, `encode_put`); the rest go through thriftpy2's compiled codec.
- Replies land in a buffer the connection owns (asyncio.BufferedProtocol: recv_into, no
  allocation); a successful mutateRow reply is recognised by comparing bytes, other replies
  are decoded by thriftpy2's compiled codec.
- A lane's sequence of reads and updates runs as a chain of callbacks on the connection: each
  reply sends the next request at once, with no task switch between steps, and the lane is
  woken once per sequence. Every operation is still one request, timed on its own.
- A timeout costs one timer per `timeout` period per connection, not one per request.

Transports: buffered (the gateway's -threadpool default) and framed; protocol: binary only
(the compact protocol is not spoken). A transport failure
(reset, refused, timeout, a reply that does not parse) breaks the connection: the pool drops it
and the next request opens a fresh one, so a run continues once the gateway is back.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Sequence
from struct import Struct
from time import perf_counter_ns
from typing import Any

from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TTransportException
from thriftpy2.transport.buffered import TCyBufferedTransport
from thriftpy2.transport.memory import TCyMemoryBuffer

from workbench.databases.hbase.protocol.thrift_idl import Hbase
from workbench.protocols.wire import BufferedConnection

_I32 = Struct(">i")
_pack_i32 = _I32.pack
_pack_u32 = Struct(">I").pack
VERSION_1 = 0x80010000
T_STRING = 11
_MUTATION_HEAD = b"\x02\x00\x01\x00" + b"\x0b\x00\x02"  # isDelete=false, then the column
_WAL = {True: b"\x02\x00\x04\x01\x00", False: b"\x02\x00\x04\x00\x00"}  # writeToWAL, struct end
_NO_ATTRIBUTES = b"\x0d\x00\x04\x0b\x0b\x00\x00\x00\x00" + b"\x00"  # empty map, end of args


class Incomplete(Exception):
    """The reply has not fully arrived yet."""


def message_head(name: str, kind: int = TMessageType.CALL, seqid: int = 0) -> bytes:
    raw = name.encode()
    return _pack_u32(VERSION_1 | kind) + _pack_i32(len(raw)) + raw + _pack_i32(seqid)


def _string_field(fid: int, value: bytes) -> bytes:
    return bytes((T_STRING, 0, fid)) + _pack_i32(len(value)) + value


class Encoder:
    """Request bytes for one table: the constant parts made once, the row and values per call."""

    def __init__(self, table: bytes) -> None:
        self.get_head = message_head("getRowWithColumns") + _string_field(1, table)
        self.put_head = message_head("mutateRow") + _string_field(1, table)

    def get(self, row: bytes, columns: list[bytes]) -> bytes:
        """getRowWithColumns(table, row, columns, {})."""
        parts = [self.get_head, b"\x0b\x00\x02", _pack_i32(len(row)), row,
                 b"\x0f\x00\x03\x0b", _pack_i32(len(columns))]
        for column in columns:
            parts.append(_pack_i32(len(column)))
            parts.append(column)
        parts.append(_NO_ATTRIBUTES)
        return b"".join(parts)

    def put(self, row: bytes, cells: list[tuple[bytes, bytes]], wal: bool) -> bytes:
        """mutateRow(table, row, [Mutation(column, value, writeToWAL=wal)...], {})."""
        tail = _WAL[wal]
        parts = [self.put_head, b"\x0b\x00\x02", _pack_i32(len(row)), row,
                 b"\x0f\x00\x03\x0c", _pack_i32(len(cells))]
        for column, value in cells:
            parts += (_MUTATION_HEAD, _pack_i32(len(column)), column,
                      b"\x0b\x00\x03", _pack_i32(len(value)), value, tail)
        parts.append(_NO_ATTRIBUTES)
        return b"".join(parts)


def encode_call(name: str, args: Any) -> bytes:
    """Any Thrift1 call, through thriftpy2's compiled codec (the calls off the hot path)."""
    buf = TCyMemoryBuffer()
    proto = TCyBinaryProtocol(buf)
    proto.write_message_begin(name, TMessageType.CALL, 0)
    proto.write_struct(args)
    return buf.getvalue()


class _Chunk:
    """The transport thriftpy2's buffered reader pulls a reply from; empty once it is used up."""

    __slots__ = ("data", "pos")

    def __init__(self) -> None:
        self.data = b""
        self.pos = 0

    def read(self, n: int) -> bytes:
        pos = self.pos
        out = self.data[pos:pos + n]
        self.pos = pos + len(out)
        return out


class Decoder:
    """Reads one reply with thriftpy2's compiled codec; raises Incomplete when it is cut short."""

    def __init__(self) -> None:
        self.chunk = _Chunk()
        self.trans = TCyBufferedTransport(self.chunk)
        self.proto = TCyBinaryProtocol(self.trans, decode_response=False)

    def result(self, body: bytes, name: str, result_cls: type) -> Any:
        """The call's `success` value, or raise what the server raised."""
        chunk, proto = self.chunk, self.proto
        chunk.data, chunk.pos = body, 0
        self.trans.clean()
        try:
            got, kind, _ = proto.read_message_begin()
            answer = TApplicationException() if kind == TMessageType.EXCEPTION else result_cls()
            proto.read_struct(answer)
        except TTransportException as exc:
            if exc.type == TTransportException.END_OF_FILE:
                raise Incomplete from None
            raise
        if kind == TMessageType.EXCEPTION:
            raise answer
        if got != name:
            raise TApplicationException(TApplicationException.WRONG_METHOD_NAME,
                                        f"asked {name}, the gateway answered {got}")
        for field in ("io", "ia", "iae"):
            error = getattr(answer, field, None)
            if error is not None:
                raise error
        return getattr(answer, "success", None)


_PUT_OK = message_head("mutateRow", TMessageType.REPLY) + b"\x00"


def decode_put(decoder: Decoder, body: bytes) -> None:
    if body == _PUT_OK:
        return None
    if len(body) < len(_PUT_OK) and _PUT_OK.startswith(body):
        raise Incomplete
    return decoder.result(body, "mutateRow", Hbase.mutateRow_result)


def decode_get(decoder: Decoder, body: bytes) -> Any:
    return decoder.result(body, "getRowWithColumns", Hbase.getRowWithColumns_result)


def breaks_connection(exc: BaseException) -> bool:
    """True when the connection's stream can no longer be trusted after `exc`."""
    if isinstance(exc, TApplicationException):
        return True  # the reply did not match the request: the stream is out of step
    # Hbase's IOError / IllegalArgument are answers from the server on a healthy connection.
    return type(exc).__module__ != "Hbase_thrift"


# One request of a chain: (request bytes, decode(decoder, body) -> value).
Request = tuple[bytes, Callable[[Decoder, bytes], Any]]
# What it did: (ok, value or exception, start ns, end ns).
Answer = tuple[bool, Any, int, int]


class ThriftConnection(BufferedConnection):
    """One connection to the gateway, running one chain of requests at a time."""

    server = "gateway"

    def __init__(self, framed: bool, timeout_s: float, where: str) -> None:
        super().__init__(timeout_s, where, 16384)
        self.framed = framed
        self.decoder = Decoder()
        # the chain under way: items, made into requests one at a time by _make
        self._items: Sequence[Any] = ()
        self._make: Callable[[Any], Request] | None = None
        self._decode: Callable[[Decoder, bytes], Any] | None = None
        self._answers: list[Answer] = []
        self._more: Callable[[], bool] | None = None
        self._done: asyncio.Future | None = None
        self._t0 = 0  # when the request in flight was sent; 0: none in flight

    # -- asyncio callbacks ---------------------------------------------------------------------

    def buffer_updated(self, nbytes: int) -> None:
        self._n += nbytes
        if not self._t0:
            self._fail(TApplicationException(TApplicationException.BAD_SEQUENCE_ID,
                                             "the gateway sent bytes nobody asked for"))
            return
        if self.framed:
            if self._n < 4:
                return
            size = _I32.unpack_from(self._in)[0]
            if self._n < 4 + size:
                return
            if self._n > 4 + size:
                self._fail(TApplicationException(TApplicationException.BAD_SEQUENCE_ID,
                                                 "the gateway answered more than it was asked"))
                return
            body = bytes(self._view[4:self._n])
        else:
            body = bytes(self._view[:self._n])
        try:
            value = self._decode(self.decoder, body)
        except Incomplete:
            return
        except Exception as exc:
            self._answer(False, exc)
            return
        self._answer(True, value)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.broken is None:
            self.broken = exc or ConnectionResetError(f"the gateway at {self.where} closed the connection")
        if self._t0:
            self._t0, t0 = 0, self._t0
            self._answers.append((False, self.broken, t0, perf_counter_ns()))
            self._finish()
        self._stop_timer()

    # -- chains --------------------------------------------------------------------------------

    def run(self, items: Sequence[Any], make: Callable[[Any], Request] | None = None,
            more: Callable[[], bool] | None = None) -> asyncio.Future:
        """Send a request per item, one after another, each when the one before has been
        answered; make(item) makes the request just before it is sent (no item is encoded
        for nothing when the chain is cut short); without `make` the items are requests.
        Before each request after the first, more() says go on. Resolves to the answers."""
        self._items, self._make, self._answers, self._more = items, make, [], more
        self._done = done = self.loop.create_future()
        if self.broken is not None:
            done.set_result([(False, self.broken, perf_counter_ns(), perf_counter_ns())])
        else:
            self._send()
        return done

    def _send(self) -> None:
        while True:
            item = self._items[len(self._answers)]
            try:
                data, self._decode = item if self._make is None else self._make(item)
                break
            except Exception as exc:  # a request that cannot be written: that step's error
                now = perf_counter_ns()
                self._answers.append((False, exc, now, now))
                if len(self._answers) == len(self._items) or (self._more is not None and not self._more()):
                    self._finish()
                    return
        if self.framed:
            data = _pack_i32(len(data)) + data
        self._n = 0
        self._t0 = perf_counter_ns()
        self.transport.write(data)
        self._arm()

    def _answer(self, ok: bool, value: Any) -> None:
        t1 = perf_counter_ns()
        self._answers.append((ok, value, self._t0, t1))
        self._t0 = 0
        if not ok and breaks_connection(value):
            self._break(value)
            self._finish()
            return
        if len(self._answers) < len(self._items) and (self._more is None or self._more()):
            self._send()
        else:
            self._finish()

    def _finish(self) -> None:
        done, self._done = self._done, None
        self._items, self._make, self._more = (), None, None
        if done is not None and not done.done():
            done.set_result(self._answers)

    def _fail(self, exc: BaseException) -> None:
        """The stream is out of step: answer the request in flight with exc and break."""
        if self._t0:
            self._answer(False, exc)
        else:
            self._break(exc)

    def _break(self, exc: BaseException) -> None:
        if self.broken is None:
            self.broken = exc
        if self.transport is not None:
            self.transport.abort()

    def _oldest(self) -> int:
        return self._t0

    def _timed_out(self, exc: TimeoutError) -> None:
        self._fail(exc)  # the request in flight fails; the connection is broken


class ConnectionPool:
    """Up to `size` connections; a lane takes one for a sequence and gives it back."""

    def __init__(self, host: str, port: int, framed: bool, timeout_ms: int, size: int) -> None:
        self.host, self.port, self.framed = host, port, framed
        self.timeout_s = timeout_ms / 1000
        self.size = size
        self.opened = 0  # connections opened (first ones and replacements)
        self._live = 0
        self._idle: list[ThriftConnection] = []
        self._waiters: collections.deque[asyncio.Future] = collections.deque()
        self._all: set[ThriftConnection] = set()

    async def acquire(self) -> ThriftConnection:
        while self._idle:
            conn = self._idle.pop()
            if conn.broken is None:
                return conn
            self._drop(conn)  # closed by the gateway while idle (a restart): open a fresh one
        if self._live >= self.size:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            conn = await waiter
            if conn is not None:
                return conn
        self._live += 1
        try:
            conn = await self._open()
        except BaseException:
            self._live -= 1
            self._wake(None)
            raise
        self.opened += 1
        return conn

    async def _open(self) -> ThriftConnection:
        loop = asyncio.get_running_loop()
        where = f"{self.host}:{self.port}"
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(lambda: ThriftConnection(self.framed, self.timeout_s, where),
                                       self.host, self.port),
                self.timeout_s)
        except TimeoutError:
            raise TimeoutError(f"the gateway at {where} did not accept a connection within "
                                 f"{self.timeout_s * 1000:.0f} ms") from None
        self._all.add(conn)
        return conn

    def release(self, conn: ThriftConnection) -> None:
        if conn.broken is not None:
            self._drop(conn)
            self._wake(None)  # a waiter may open a fresh one
            return
        if not self._wake(conn):
            self._idle.append(conn)

    def _drop(self, conn: ThriftConnection) -> None:
        conn.close()
        self._all.discard(conn)
        self._live -= 1

    def _wake(self, conn: ThriftConnection | None) -> bool:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return True
        return False

    async def run(self, items: Sequence[Any], make: Callable[[Any], Request] | None = None,
                  more: Callable[[], bool] | None = None) -> list[Answer]:
        """A chain on one connection of the pool (see ThriftConnection.run)."""
        t0 = perf_counter_ns()
        try:
            conn = await self.acquire()
        except Exception as exc:
            return [(False, exc, t0, perf_counter_ns())]
        try:
            return await conn.run(items, make, more)
        finally:
            self.release(conn)

    async def call(self, request: Request) -> Any:
        """One request; its value, or raise what it failed with."""
        ok, value, _, _ = (await self.run([request]))[0]
        if not ok:
            raise value
        return value

    def close(self) -> None:
        for conn in self._all:
            conn.close()
        self._all.clear()
        self._idle.clear()
