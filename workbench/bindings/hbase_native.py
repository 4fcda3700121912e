"""HBase's own RPC from Python (hbase.client=native): reads and puts go straight to the
RegionServer, with no Thrift gateway in between.

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
- Scans, deletes and buffered writes go through the Thrift client (hbase_thrift.py).
"""

from __future__ import annotations

import asyncio
import bisect
import getpass
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from struct import Struct
from time import perf_counter_ns
from typing import Any

from workbench.bindings.base import READ, LazyMapping, Outcome, Row, Status, Step, chain_outcomes
from workbench.bindings.hbase import HBaseBinding, error_kind
from workbench.bindings.wire import MalformedAnswer, SharedConnection
from workbench.core import speedups
from workbench.errors import BindingError

_U32 = Struct(">I")
# Call ids go round 1..CALL_IDS, so that each is one or two bytes on the wire; an id is used
# again only once its call has been answered (a call that times out breaks the connection).
CALL_IDS = 0x3FFF
MAX_MESSAGE = 0x7FFFFFFF  # a message's length is a Java int: HBase's client takes no longer one
PREAMBLE = b"HBas\x00\x50"  # magic, RPC version 0, auth SIMPLE (80)
# Enum values: MutationProto.Durability, MutationProto.MutationType.PUT,
# RegionSpecifier.RegionSpecifierType.REGION_NAME
DURABILITY = {"USE_DEFAULT": 0, "SKIP_WAL": 1, "ASYNC_WAL": 2, "SYNC_WAL": 3, "FSYNC_WAL": 4}
PUT = 2
REGION_NAME = 1
# Exceptions that say the region is not where we think: ask for the regions again.
MOVED = ("NotServingRegionException", "RegionMovedException", "RegionOpeningException",
         "RegionTooBusyException")


# -- the fields written and read, by number ---------------------------------------------------
# HBase 2.6.1's .proto files (package hbase.pb): each constant is MESSAGE_FIELD, the message's and
# the field's names in upper case (ColumnValue and QualifierValue are nested in MutationProto).
# tests/unit/test_hbase_protobuf_reference.py checks every one against those files, and the bytes
# made with them against the messages protobuf makes from them. csrc/speedups.c writes the same
# tags as bytes (its comments name these fields).

# RPC.proto
CONNECTION_HEADER_USER_INFO = 1
CONNECTION_HEADER_SERVICE_NAME = 2
USER_INFORMATION_EFFECTIVE_USER = 1
REQUEST_HEADER_CALL_ID = 1
REQUEST_HEADER_METHOD_NAME = 3
REQUEST_HEADER_REQUEST_PARAM = 4
RESPONSE_HEADER_CALL_ID = 1
RESPONSE_HEADER_EXCEPTION = 2
EXCEPTION_RESPONSE_EXCEPTION_CLASS_NAME = 1
EXCEPTION_RESPONSE_STACK_TRACE = 2
# HBase.proto
REGION_SPECIFIER_TYPE = 1
REGION_SPECIFIER_VALUE = 2
# Client.proto: a Get
GET_REQUEST_REGION = 1
GET_REQUEST_GET = 2
GET_ROW = 1
GET_COLUMN = 2
COLUMN_FAMILY = 1
COLUMN_QUALIFIER = 2
GET_RESPONSE_RESULT = 1
RESULT_CELL = 1
# Client.proto: a Mutate (its region is field 1 as a GetRequest's: one RegionSpecifier serves both)
MUTATE_REQUEST_REGION = 1
MUTATE_REQUEST_MUTATION = 2
MUTATION_PROTO_ROW = 1
MUTATION_PROTO_MUTATE_TYPE = 2
MUTATION_PROTO_COLUMN_VALUE = 3
MUTATION_PROTO_DURABILITY = 6
COLUMN_VALUE_FAMILY = 1
COLUMN_VALUE_QUALIFIER_VALUE = 2
QUALIFIER_VALUE_QUALIFIER = 1
QUALIFIER_VALUE_VALUE = 2
# Cell.proto
CELL_QUALIFIER = 3
CELL_VALUE = 6

VARINT, LEN = 0, 2  # wire types: a varint; length-delimited (bytes, string, message)


def tag(fid: int, wire: int = LEN) -> int:
    """A field's key (number and wire type) as an int: one byte for every field here (numbers
    below 16). Those written as bytes are made with _BYTE (named ..._key)."""
    return fid << 3 | wire


# -- protobuf, the little that is needed -------------------------------------------------------

_BYTE = tuple(bytes((n,)) for n in range(256))  # one-byte strings, made once


def varint(n: int) -> bytes:
    if n < 0x80:
        return _BYTE[n]
    if n < 0x4000:  # (lengths of most messages and cells, call ids)
        return bytes((n & 0x7F | 0x80, n >> 7))
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(fid: int, data: bytes) -> bytes:
    """A length-delimited field (bytes, string or message)."""
    n = len(data)
    if n < 0x80 and fid < 16:  # key and length one byte each: most fields of a request
        return bytes((fid << 3 | LEN, n)) + data
    return varint(fid << 3 | LEN) + varint(n) + data


def number(fid: int, n: int) -> bytes:
    """A varint field (an unsigned integer, a bool or an enum)."""
    if fid < 16 and 0 <= n < 0x80:
        return bytes((fid << 3 | VARINT, n))
    return varint(fid << 3 | VARINT) + varint(n)


def read_varint(buf: bytes, i: int) -> tuple[int, int]:
    b = buf[i]
    if b < 0x80:
        return b, i + 1
    n, shift = b & 0x7F, 7
    while True:
        i += 1
        b = buf[i]
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, i + 1
        shift += 7


def fields(buf: bytes, i: int, end: int):
    """(field number, value) of a message in buf[i:end]; value is an int for varints and a
    (start, end) pair for length-delimited fields."""
    while i < end:
        key, i = read_varint(buf, i)
        wire = key & 7
        if wire == 2:
            n, i = read_varint(buf, i)
            if i + n > end:  # (n may have been read from past end: not in the message)
                raise ValueError("a field runs past its message")
            yield key >> 3, (i, i + n)
            i += n
        elif wire == 0:
            n, i = read_varint(buf, i)
            if i > end:
                raise ValueError("a varint runs past its message")
            yield key >> 3, n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:  # (where in the receive buffer would depend on how the reads were split)
            raise ValueError(f"protobuf wire type {wire} in a message")
    if i > end:
        raise ValueError("a field runs past its message")


class RemoteError(Exception):
    """An exception the RegionServer sent back; the class is named after the server's."""

    kinds: dict[str, type] = {}

    @classmethod
    def named(cls, java_class: str, message: str) -> RemoteError:
        short = java_class.rsplit(".", 1)[-1] or "RemoteError"
        kind = cls.kinds.get(short)
        if kind is None:
            kind = type(short, (cls,), {})
            if len(cls.kinds) < 1000:  # (a server that names endless classes grows no cache)
                cls.kinds[short] = kind
        return kind(message)


# -- requests and answers ----------------------------------------------------------------------

def region_specifier(region: bytes) -> bytes:
    """The first field of a GetRequest or MutateRequest (GET_REQUEST_REGION is
    MUTATE_REQUEST_REGION): which region (by name)."""
    return field(GET_REQUEST_REGION, number(REGION_SPECIFIER_TYPE, REGION_NAME)
                 + field(REGION_SPECIFIER_VALUE, region))


def get_request(region: bytes, row: bytes, family: bytes, qualifiers: Sequence[bytes] | None) -> bytes:
    column = field(COLUMN_FAMILY, family) + b"".join(field(COLUMN_QUALIFIER, q) for q in qualifiers or ())
    return region_specifier(region) + field(GET_REQUEST_GET, field(GET_ROW, row) + field(GET_COLUMN, column))


def mutation(row: bytes, family: bytes, cells: Sequence[tuple[bytes, bytes]], durability: int) -> bytes:
    """The rest of a MutateRequest after the region: a Put of the cells. The durability
    USE_DEFAULT (0, the field's default) is left out."""
    values = b"".join([field(COLUMN_VALUE_QUALIFIER_VALUE,
                             field(QUALIFIER_VALUE_QUALIFIER, q) + field(QUALIFIER_VALUE_VALUE, v))
                       for q, v in cells])
    put = (field(MUTATION_PROTO_ROW, row) + number(MUTATION_PROTO_MUTATE_TYPE, PUT)
           + field(MUTATION_PROTO_COLUMN_VALUE, field(COLUMN_VALUE_FAMILY, family) + values))
    if durability:
        put += number(MUTATION_PROTO_DURABILITY, durability)
    return field(MUTATE_REQUEST_MUTATION, put)


def put_request(region: bytes, row: bytes, family: bytes, cells: Sequence[tuple[bytes, bytes]],
                durability: int) -> bytes:
    return region_specifier(region) + mutation(row, family, cells, durability)


def _length_at(buf: bytearray, i: int, end: int, what: str) -> tuple[int, int]:
    """The varint length at buf[i] and the index after it, where it and what it counts end by
    end (read_varint would read on past end: another message's bytes, or stale ones)."""
    n = shift = 0
    while i < end:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            if i + n > end:
                raise ValueError(f"{what} of {n} bytes overruns its message")
            return n, i
        shift += 7
    raise ValueError(f"{what}'s length runs past its message")


def _skip(buf: bytes, i: int, key: int) -> int:
    """The index after the value of a field whose key was just read."""
    wire = key & 7
    if wire == 0:
        return read_varint(buf, i)[1]
    if wire == 2:
        n, i = read_varint(buf, i)
        return i + n
    if wire == 1:
        return i + 8
    if wire == 5:
        return i + 4
    raise ValueError(f"protobuf wire type {wire} at byte {i}")


_RESULT_TAG = tag(GET_RESPONSE_RESULT)  # (0x0A)
_CELL_TAG = tag(RESULT_CELL)  # (0x0A)
_QUALIFIER_TAG = tag(CELL_QUALIFIER)  # (0x1A)
_VALUE_TAG = tag(CELL_VALUE)  # (0x32)


def _cells(body: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of every Cell of a GetResponse: GetResponse.result, Result.cell;
    anything else is skipped."""
    i, n = 0, len(body)
    while i < n:
        key, i = read_varint(body, i)
        if key != _RESULT_TAG:
            i = _skip(body, i, key)
            continue
        size, i = read_varint(body, i)
        end = i + size
        if end > n:
            raise ValueError(f"a result of {size} bytes runs past the answer")
        while i < end:
            key, i = read_varint(body, i)
            if key != _CELL_TAG:
                i = _skip(body, i, key)
                continue
            size, i = read_varint(body, i)
            if i + size > end:
                raise ValueError(f"a cell of {size} bytes runs past its result")
            yield i, i + size
            i += size
        if i > end:
            raise ValueError("a field runs past its result")


def decode_get(body: bytes) -> dict[bytes, bytes] | None:
    """GetResponse -> {qualifier: value}, or None when the row has no cells. Of a Cell only the
    qualifier and the value are read (every field of a Cell has a one-byte key); anything else
    is skipped."""
    out: dict[bytes, bytes] = {}
    qualifier_tag, value_tag = _QUALIFIER_TAG, _VALUE_TAG
    for i, cell_end in _cells(body):
        qualifier = value = b""
        while i < cell_end:
            key = body[i]
            i += 1
            if key == qualifier_tag or key == value_tag:
                size = body[i]
                if size < 0x80:
                    i += 1
                else:
                    size, i = read_varint(body, i)
                if i + size > cell_end:
                    raise ValueError(f"a cell's field of {size} bytes runs past the cell")
                if key == qualifier_tag:
                    qualifier = body[i:i + size]
                else:
                    value = body[i:i + size]
                i += size
            else:
                i = _skip(body, i, key)
        out[qualifier] = value
    return out or None


def found_cells(body: bytes) -> LazyCells | None:
    """GetResponse -> its cells as a LazyCells, or None when the row has none (as decode_get
    says, without decoding them: only the fields up to the first cell are read)."""
    # What the RegionServer sends for a row: a result (its tag, length) that starts with a cell.
    if len(body) > 3 and body[0] == _RESULT_TAG and body[1]:
        at = 2 if body[1] < 0x80 else 3 if body[2] < 0x80 else 0
        if at and body[at] == _CELL_TAG:
            return LazyCells(body)
    for _ in _cells(body):
        return LazyCells(body)
    return None


class LazyCells(LazyMapping):
    """A read's cells as a read-only mapping (qualifier -> value, both str), decoded when first
    looked at: by dataintegrity's check or a caller of Binding.read. Most runs never look, and
    decoding ten cells and their strings cost more client CPU than the rest of a read's answer
    (BENCHMARKS.md)."""

    __slots__ = ("_body", "_row")

    def __init__(self, body: bytes) -> None:
        self._body = body
        self._row: dict[str, str] | None = None

    def _decoded(self) -> dict[str, str]:
        row = self._row
        if row is None:
            try:
                cells = decode_get(self._body) or {}
                row = {q.decode(): v.decode() for q, v in cells.items()}
            except Exception as exc:  # (received whole: its cells only now)
                raise MalformedAnswer(f"cells that do not decode ({type(exc).__name__}: {exc})") from exc
            self._row, self._body = row, b""
        return row



def decode_mutate(body: bytes) -> None:
    return None


def _method_fields(method: bytes) -> bytes:
    """The end of a RequestHeader after its call id: the method's name, and a request follows."""
    return field(REQUEST_HEADER_METHOD_NAME, method) + number(REQUEST_HEADER_REQUEST_PARAM, 1)


# A RequestHeader's start, its call id's key; its end for the methods the hot path calls.
_CALL_ID_KEY = _BYTE[tag(REQUEST_HEADER_CALL_ID, VARINT)]
_METHODS = {m: _method_fields(m) for m in (b"Get", b"Mutate")}
# The first key of a ResponseHeader that is a call id alone (0x08; speedups.c's hbase_receive too)
_ANSWER_CALL_ID_TAG = tag(RESPONSE_HEADER_CALL_ID, VARINT)


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
        self.make: Callable[[Step], tuple[bytes, bytes, Callable]] | None = None  # NativeBinding's

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
    # run's per-node figures (speedups.c's hbase_send counts what it sends, too)
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
        __init__: speedups.c's hbase_receive), which answers the usual answer (a header of the
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
            self._receiving = False
            if at:
                rest = n - at
                buf[:rest] = buf[at:n]
                self._n = rest
        if self._out:
            self._flush()

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
        """chain's answer does not parse (speedups.c's hbase_receive calls this too): the
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
        """make(item) -> (method name, request message, decode); see hbase_thrift's run()."""
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


# The compiled receive path (csrc/speedups.c, hbase_receive), or None: an RpcConnection made while
# it is None keeps the Python buffer_updated, which answers every message (tests switch between the
# two by setting this before they make their connections).
_fast = speedups.C
_chain_outcomes = _fast.outcomes if _fast is not None else chain_outcomes
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


# -- the binding -----------------------------------------------------------------------------------



class NativeBinding(HBaseBinding):
    """HBaseBinding whose reads and puts go to the RegionServers over HBase's own RPC."""

    def __init__(self, spec: Any, properties: dict[str, str], context: dict[str, Any]) -> None:
        super().__init__(spec, properties, context)
        self.rpc: RpcClient | None = None
        self._closed_counts: dict[str, tuple[int, int]] = {}
        self._regions: dict[str, Regions] = {}
        self._durability = DURABILITY[self.options.durability]
        self._family_name = self.options.family.encode()

    def node_counts(self) -> dict[str, tuple[int, int]]:
        """Reads and puts sent to each RegionServer (scans and deletes, which go through the
        Thrift gateway, are not among them)."""
        return self.rpc.counts() if self.rpc is not None else self._closed_counts

    async def init(self) -> None:
        await super().init()  # checks the gateway; its pool serves scans, deletes and buffering
        self.rpc = RpcClient(self.options.timeout_ms)
        await self._check_regionserver()

    async def _check_regionserver(self) -> None:
        """One Get on the table's first region: the RegionServer answers HBase RPC from here, or
        a BindingError says so. Only a table that does not exist yet is let through (an insert
        workload's run may create it; reads then fail per operation); any other failure to
        learn its regions is an error here."""
        table = self.spec.table
        try:
            regions = await self._regions_of(table)
        except NoSuchTable:
            self._regions.pop(table, None)
            return
        except BindingError:
            raise
        except Exception as exc:
            raise BindingError(
                f"cannot learn the regions of HBase table {table!r} from the {self.options.describe()} "
                f"({error_kind(exc)}: {exc})",
                "is the HBase master up and the table online? `workbench cluster status` shows "
                "the servers") from None
        region, server = regions.names[0], regions.servers[0]
        ok, error, _, _ = (await self.rpc.run(server, [None], lambda _: (
            b"Get", get_request(region, regions.starts[0] or b"\0", self._family_name, None),
            decode_get)))[0]
        if not ok:
            raise BindingError(
                f"cannot reach the RegionServer at {server[0]}:{server[1]} over HBase RPC "
                f"({type(error).__name__}: {error})",
                "hbase.client=native talks to the RegionServers the gateway names; where they are "
                "not reachable from here (a Docker bridge, a firewall, Kerberos), use "
                "hbase.client=async, which goes through the Thrift gateway only")

    async def cleanup(self) -> None:
        try:
            await super().cleanup()
        finally:
            if self.rpc is not None:
                self.rpc.close()
                self._closed_counts = self.rpc.counts()  # (the run's last tick reads them after this)
                self.rpc = None

    async def _regions_of(self, table: str) -> Regions:
        regions = self._regions.get(table)
        if regions is None:
            def fetch() -> list[dict]:
                conn = self._checked_connection()
                try:
                    return conn.table(table).regions()
                finally:
                    conn.close()

            regions = self._regions[table] = Regions(await asyncio.to_thread(fetch))
        return regions

    def _maker(self, regions: Regions) -> Callable[[Step], tuple[bytes, bytes, Callable]]:
        family, durability, locate = self._family_name, self._durability, regions.locate
        # get_request's and put_request's bytes with their constant parts made once: the region
        # specifier per region; for a Get of every field of a short row (nearly every read) also
        # the family's Column and the Get's own key and one-byte length.
        specifiers: dict[bytes, bytes] = {}
        every = field(GET_COLUMN, field(COLUMN_FAMILY, family))
        # the keys of GetRequest.get and Get.row, of MutateRequest.mutation and MutationProto.row
        get_key, get_row_key = _BYTE[tag(GET_REQUEST_GET)], _BYTE[tag(GET_ROW)]
        mutation_key, mutation_row_key = _BYTE[tag(MUTATE_REQUEST_MUTATION)], _BYTE[tag(MUTATION_PROTO_ROW)]
        only = regions.names[0] if len(regions.names) == 1 else None  # no search for one region
        tail = len(every)
        short = 0x80 - 2 - tail  # rows shorter than this make a Get whose length is one byte
        # A Put of one cell (every update of YCSB's default workloads): its bytes from the row's
        # key to the cell's value depend only on the qualifier and the value's length, made once
        # per pair; what follows the value is the durability, if any.
        heads: dict[tuple[bytes, int], bytes] = {}
        after = number(MUTATION_PROTO_DURABILITY, durability) if durability else b""

        def head_of(qualifier: bytes, size: int) -> bytes:
            whole = field(MUTATION_PROTO_COLUMN_VALUE, field(COLUMN_VALUE_FAMILY, family) + field(
                COLUMN_VALUE_QUALIFIER_VALUE,
                field(QUALIFIER_VALUE_QUALIFIER, qualifier) + field(QUALIFIER_VALUE_VALUE, bytes(size))))
            head = number(MUTATION_PROTO_MUTATE_TYPE, PUT) + whole[:len(whole) - size]
            heads[qualifier, size] = head
            return head

        def make(step: Step) -> tuple[bytes, bytes, Callable]:
            op, key, arg = step
            row = key.encode()
            region = only or locate(row)[0]
            spec = specifiers.get(region)
            if spec is None:
                spec = specifiers[region] = region_specifier(region)
            if op == READ:
                if arg is None and len(row) < short:
                    size = len(row)
                    get = get_row_key + _BYTE[size] + row + every  # (the row's key and length: 2 bytes)
                    return b"Get", spec + get_key + _BYTE[2 + size + tail] + get, found_cells
                return (b"Get", get_request(region, row, family,
                                            None if arg is None else [f.encode() for f in arg]), found_cells)
            if len(arg) == 1:
                ((qualifier, value),) = arg.items()
                qualifier, value = qualifier.encode(), value.encode()
                head = heads.get((qualifier, len(value))) or head_of(qualifier, len(value))
                put = mutation_row_key + varint(len(row)) + row + head + value + after
                return b"Mutate", spec + mutation_key + varint(len(put)) + put, decode_mutate
            cells = [(f.encode(), v.encode()) for f, v in arg.items()]
            return b"Mutate", spec + mutation(row, family, cells, durability), decode_mutate

        if _fast is not None and only is not None:  # the usual steps' bytes made in C, the same
            return partial(_fast.hbase_make, (region_specifier(only), every, family, after, make,
                                              found_cells, decode_mutate, b"Get", b"Mutate", READ))
        return make

    async def _steps(self, table: str, steps: Sequence[Step], more: Callable[[], bool] | None) -> list:
        """The answers of a run of steps (a prefix of them when cut short): one chain per run of
        consecutive steps on the same RegionServer."""
        try:
            regions = await self._regions_of(table)
        except Exception as exc:
            now = perf_counter_ns()
            return [(False, exc, now, now)]
        make = regions.make
        if make is None:  # made once per table (its regions as last asked), not per sequence
            make = regions.make = self._maker(regions)
        answers, at = [], 0
        single = len(set(regions.servers)) == 1
        while at < len(steps):
            server = regions.locate(steps[at][1].encode())[1]
            end = len(steps) if single else at + 1
            while end < len(steps) and regions.locate(steps[end][1].encode())[1] == server:
                end += 1
            got = await self.rpc.run(server, steps[at:end], make, more)
            answers += got
            if len(got) < end - at or not got[-1][0] or (end < len(steps) and more is not None
                                                          and not more()):
                break
            at = end
        if answers and not answers[-1][0] and type(answers[-1][1]).__name__ in MOVED:
            self._regions.pop(table, None)  # ask where the regions are before the next request
        return answers

    def _outcomes(self, steps: Sequence[Step], answers: list) -> list[Outcome]:
        """A read's answer is its LazyCells, or None: not found."""
        return _chain_outcomes(steps, answers, READ, Status.OK, Status.NOT_FOUND, self._failed, None, None)

    async def sequence(self, table: str, steps: Sequence[Step], more: Callable[[], bool]) -> list[Outcome]:
        if self._buffering:
            return await super().sequence(table, steps, more)
        return self._outcomes(steps, await self._steps(table, steps, more))

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        status, _, _, row = self._outcomes([(READ, key, fields)],
                                           await self._steps(table, [(READ, key, fields)], None))[0]
        return status, row

    async def _put(self, table: str, key: str, values: Row) -> Status:
        if self._buffering:
            return await super()._put(table, key, values)
        step = ("UPDATE", key, values)
        return self._outcomes([step], await self._steps(table, [step], None))[0][0]
