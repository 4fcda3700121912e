"""Cassandra's native protocol (CQL v3/v4) from Python on the lanes' event loop:
cassandra.driver=native.

Why: a C++ driver (acsylla) runs its sockets on its own thread, so every request crosses from
the event loop to that thread and every answer crosses back (two wake-ups and 2-3 system calls
per operation, BENCHMARKS.md), which costs more client CPU than everything else in an operation.
This client speaks the protocol itself, as hbase_native.py does for HBase:

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
it with this driver). Values bound: text, varchar, ascii, int, bigint, counter, smallint,
tinyint, boolean, blob; decoded: those, double, float, inet, and lists and sets of them; any
other column comes back as its raw bytes.
"""

from __future__ import annotations

import asyncio
import bisect
import ipaddress
import random
import ssl as ssl_module
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from struct import Struct
from time import perf_counter_ns
from typing import Any

from workbench.bindings.base import FIRST_ROW, LazyMapping
from workbench.bindings.cassandra_errors import QueryFailed
from workbench.bindings.cassandra_schema import KEY
from workbench.bindings.wire import MalformedAnswer, SharedConnection
from workbench.core import speedups
from workbench.errors import BindingError

try:
    from cassandra.cmurmur3 import murmur3
except ImportError:  # cassandra-driver built without its C extensions
    from cassandra.murmur3 import murmur3

HEADER = Struct(">BBhBi")
_I32 = Struct(">i")
_U16 = Struct(">H")
_I64 = Struct(">q")
_pack_i32 = _I32.pack
_ROWS_HEAD = Struct(">iiii")  # kind, metadata flags, columns, rows

# Opcodes (native_protocol_v4.spec, section 2.4)
ERROR, STARTUP, READY, AUTHENTICATE, QUERY, RESULT = 0x00, 0x01, 0x02, 0x03, 0x07, 0x08
PREPARE, EXECUTE, REGISTER, EVENT, AUTH_RESPONSE, AUTH_SUCCESS = 0x09, 0x0A, 0x0B, 0x0C, 0x0F, 0x10
# RESULT kinds
VOID, ROWS, PREPARED = 1, 2, 4
NO_METADATA = 0x0004  # Rows metadata flag
# EXECUTE flags: values, skip_metadata
WITH_VALUES, SKIP_METADATA = 0x01, 0x02
CONSISTENCY = {"ANY": 0, "ONE": 1, "TWO": 2, "THREE": 3, "QUORUM": 4, "ALL": 5, "LOCAL_QUORUM": 6,
               "EACH_QUORUM": 7, "SERIAL": 8, "LOCAL_SERIAL": 9, "LOCAL_ONE": 10}
# Error codes -> the names cassandra-driver gives them (the report's kinds)
ERROR_KINDS = {0x0000: "ServerError", 0x000A: "ProtocolError", 0x0100: "AuthenticationFailed",
               0x1000: "Unavailable", 0x1001: "Overloaded", 0x1002: "IsBootstrapping",
               0x1003: "TruncateError", 0x1100: "WriteTimeout", 0x1200: "ReadTimeout",
               0x1300: "ReadFailure", 0x1400: "FunctionFailure", 0x1500: "WriteFailure",
               0x2000: "SyntaxException", 0x2100: "Unauthorized", 0x2200: "InvalidRequest",
               0x2300: "ConfigurationException", 0x2400: "AlreadyExists", 0x2500: "Unprepared"}
UNPREPARED = 0x2500
STREAMS = 0x8000  # stream ids per connection in v3 and v4
MAX_FRAME = 256 * 1024 * 1024  # the longest frame body v3 and v4 allow (native_protocol_v4.spec, 2.5)
RECONNECT_S = (0.25, 2.0)  # first and longest wait between attempts to reach a lost node
DRAIN_S = 0.02  # how often a dropped node's connection is looked at until its requests are answered


# -- values ----------------------------------------------------------------------------------------

def _text_data(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    raise TypeError(f"a text column takes a str, not {type(value).__name__}")


def _text(value: Any) -> bytes:
    data = _text_data(value)
    return _pack_i32(len(data)) + data


def _integer(fmt: str) -> Callable[[Any], bytes]:
    packer = Struct(">i" + fmt).pack
    size = Struct(">" + fmt).size

    def encode(value: Any) -> bytes:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"an integer column takes an int, not {type(value).__name__}")
        return packer(size, value)

    return encode


def _boolean(value: Any) -> bytes:
    return b"\x00\x00\x00\x01\x01" if value else b"\x00\x00\x00\x01\x00"


def _blob(value: Any) -> bytes:
    data = bytes(value)
    return _pack_i32(len(data)) + data


def _utf8(data: bytes) -> str:
    return data.decode()


def _ascii(data: bytes) -> str:
    return data.decode("ascii")


def _inet(data: bytes) -> str:
    return str(ipaddress.ip_address(bytes(data)))


# type id -> (encode value to [bytes], decode bytes to value)
TYPES: dict[int, tuple[Callable[[Any], bytes] | None, Callable[[bytes], Any]]] = {
    0x0001: (_text, _ascii),                                          # ascii
    0x0002: (_integer("q"), lambda b: _I64.unpack(b)[0]),             # bigint
    0x0003: (_blob, bytes),                                           # blob (a copy: answers
                                                                      # may be bytearrays)
    0x0004: (_boolean, lambda b: b != b"\x00"),                       # boolean
    0x0005: (_integer("q"), lambda b: _I64.unpack(b)[0]),             # counter
    0x0007: (None, lambda b: Struct(">d").unpack(b)[0]),              # double
    0x0008: (None, lambda b: Struct(">f").unpack(b)[0]),              # float
    0x0009: (_integer("i"), lambda b: _I32.unpack(b)[0]),             # int
    0x000A: (_text, _utf8),                                           # text
    0x000D: (_text, _utf8),                                           # varchar
    0x0010: (None, _inet),                                            # inet
    0x0013: (_integer("h"), lambda b: Struct(">h").unpack(b)[0]),     # smallint
    0x0014: (_integer("b"), lambda b: Struct(">b").unpack(b)[0]),     # tinyint
}
LIST, SET = 0x0020, 0x0022


def _collection(element: Callable[[bytes], Any]) -> Callable[[bytes], list]:
    def decode(data: bytes) -> list:
        n, i, out = _I32.unpack_from(data, 0)[0], 4, []
        for _ in range(n):
            size = _I32.unpack_from(data, i)[0]
            i += 4
            if i + size > len(data):
                raise ValueError(f"an element of {size} bytes runs past its collection")
            out.append(None if size < 0 else element(data[i:i + size]))
            i += max(size, 0)
        return out

    return decode


def _map(key: Callable[[bytes], Any], value: Callable[[bytes], Any]) -> Callable[[bytes], dict]:
    def decode(data: bytes) -> dict:
        n, i, out = _I32.unpack_from(data, 0)[0], 4, {}
        for _ in range(n):
            pair = []
            for element in (key, value):
                size = _I32.unpack_from(data, i)[0]
                i += 4
                if i + size > len(data):
                    raise ValueError(f"an entry of {size} bytes runs past its map")
                pair.append(None if size < 0 else element(data[i:i + size]))
                i += max(size, 0)
            out[pair[0]] = pair[1]
        return out

    return decode


# -- reading a message -------------------------------------------------------------------------

def read_string(buf: bytes, i: int) -> tuple[str, int]:
    n = _U16.unpack_from(buf, i)[0]
    if i + 2 + n > len(buf):
        raise ValueError(f"a string of {n} bytes runs past the answer")
    return buf[i + 2:i + 2 + n].decode(), i + 2 + n


def read_option(buf: bytes, i: int) -> tuple[Callable[[bytes], Any], int, int]:
    """A column type: (decoder, type id, index after it)."""
    kind = _U16.unpack_from(buf, i)[0]
    i += 2
    if kind == 0x0000:  # custom: a Java class name
        _, i = read_string(buf, i)
        return bytes, kind, i
    if kind in (LIST, SET):
        element, _, i = read_option(buf, i)
        return _collection(element), kind, i
    if kind == 0x0021:  # map (system_schema.keyspaces' replication, read at discovery)
        key, _, i = read_option(buf, i)
        value, _, i = read_option(buf, i)
        return _map(key, value), kind, i
    if kind == 0x0030:  # user-defined type
        _, i = read_string(buf, i)  # keyspace
        _, i = read_string(buf, i)  # type name
        n = _U16.unpack_from(buf, i)[0]
        i += 2
        for _ in range(n):
            _, i = read_string(buf, i)
            _, _, i = read_option(buf, i)
        return bytes, kind, i
    if kind == 0x0031:  # tuple
        n = _U16.unpack_from(buf, i)[0]
        i += 2
        for _ in range(n):
            _, _, i = read_option(buf, i)
        return bytes, kind, i
    return TYPES.get(kind, (None, bytes))[1], kind, i


def read_columns(buf: bytes, i: int, count: int, global_spec: bool) -> tuple[list[tuple], int]:
    """count column specs: (name, decoder, type id) each."""
    if global_spec:
        _, i = read_string(buf, i)
        _, i = read_string(buf, i)
    columns = []
    for _ in range(count):
        if not global_spec:
            _, i = read_string(buf, i)
            _, i = read_string(buf, i)
        name, i = read_string(buf, i)
        decode, kind, i = read_option(buf, i)
        columns.append((name, decode, kind))
    return columns, i


def read_metadata(buf: bytes, i: int) -> tuple[list[tuple] | None, int]:
    """Rows metadata: its columns (None when the answer left them out), and the index after it."""
    flags, count = _I32.unpack_from(buf, i)[0], _I32.unpack_from(buf, i + 4)[0]
    i += 8
    if flags & 0x0002:  # has_more_pages: a paging state
        size = _I32.unpack_from(buf, i)[0]
        i += 4 + max(size, 0)
    if flags & 0x0004:  # no_metadata
        return None, i
    return read_columns(buf, i, count, bool(flags & 0x0001))


TEXT = (0x000A, 0x000D)


@lru_cache(maxsize=64)
def _lengths_of(lengths: tuple[int, ...]) -> Struct:
    """A row layout's length fields alone (its values skipped)."""
    return Struct(">" + "".join(f"i{n}x" for n in lengths))


def _fills(buf: bytes, i: int, lengths: tuple[int, ...]) -> bool:
    """Whether one cell per length from buf[i] on fills buf exactly: a row of a layout's size
    whose cells' lengths add up, as a LazyRow's must when received (its values are decoded only
    when read). speedups.c's answer_fast checks the same."""
    if _lengths_of(lengths).unpack_from(buf, i) == lengths:  # the layout's own lengths
        return True
    end = len(buf)
    for _ in lengths:  # other lengths of the same size, or nulls
        if i + 4 > end:
            return False
        i += 4 + max(_I32.unpack_from(buf, i)[0], 0)
    return i == end


class Columns:
    """The columns of a result, and the decoding of its rows into dicts (column name -> value,
    None for a null).

    Rows whose cells are all text and have the lengths of the two rows before (YCSB's fixed
    field length) are read by one compiled struct (length, value, length, value, ...) instead
    of cell by cell; any other row goes cell by cell, so a change of lengths costs one row."""

    __slots__ = ("names", "decoders", "text", "layout", "_seen")

    def __init__(self, specs: list[tuple]) -> None:
        self.names = tuple(name for name, _, _ in specs)
        self.decoders = tuple(decode for _, decode, _ in specs)
        self.text = bool(specs) and all(kind in TEXT for _, _, kind in specs)
        self.layout: tuple[Struct, tuple[int, ...]] | None = None
        self._seen: tuple[int, ...] | None = None

    def rows(self, buf: bytes, i: int, count: int) -> list[Any]:
        if count < 0 or 4 * count * (len(self.names) or 1) > len(buf) - i:  # (each cell has a length)
            raise ValueError(f"{count} rows of {len(self.names)} columns in {len(buf) - i} bytes")
        layout = self.layout
        if count == 1 and layout is not None and len(buf) - i == layout[0].size and _fills(buf, i, layout[1]):
            return [LazyRow(self, layout, buf, i)]  # a read's one row of the usual layout
        out: list[Any] = []
        names = self.names
        for _ in range(count):
            layout = self.layout
            if layout is not None:
                fixed, lengths = layout
                if len(buf) - i >= fixed.size:
                    cells = fixed.unpack_from(buf, i)
                    if cells[0::2] == lengths:
                        i += fixed.size
                        out.append(dict(zip(names, map(bytes.decode, cells[1::2]), strict=True)))
                        continue
            row, i, lengths = self._row(buf, i)
            out.append(row)
            if self.text:
                if lengths == self._seen and lengths is not None:
                    self.layout = (Struct(">" + "".join(f"i{n}s" for n in lengths)), lengths)
                else:
                    self.layout = None
                self._seen = lengths
        return out

    def _row(self, buf: bytes, i: int) -> tuple[dict[str, Any], int, tuple[int, ...] | None]:
        """One row cell by cell: (row, index after it, the cells' lengths or None if one is null)."""
        unpack = _I32.unpack_from
        row: dict[str, Any] = {}
        lengths = []
        for name, decode in zip(self.names, self.decoders, strict=True):
            size = unpack(buf, i)[0]
            i += 4
            lengths.append(size)
            if size < 0:
                row[name] = None
            elif i + size > len(buf):
                raise ValueError(f"a cell of {size} bytes runs past the answer")
            else:
                row[name] = decode(buf[i:i + size])
                i += size
        return row, i, None if min(lengths, default=0) < 0 else tuple(lengths)


class LazyRow(LazyMapping):
    """A read's one row of the fixed layout, as a read-only mapping (column name -> str) that is
    decoded when first looked at; the columns that are null are left out.

    The answer is received, framed and checked like any other (its single row fills the rest of
    the body exactly, at the layout's size), but its eleven values become str objects in a dict
    only if something reads them (dataintegrity's check, a caller of Binding.read). Most runs
    never do; decoding every read cost about 6 us of client CPU here, a fifth of an operation
    (BENCHMARKS.md, "Lazy rows, and where the rest goes"). The Java driver that YCSB uses
    keeps a row's values as buffers in the same way until they are asked for."""

    __slots__ = ("_columns", "_layout", "_buf", "_i", "_row")

    def __init__(self, columns: Columns, layout: tuple[Struct, tuple[int, ...]], buf: bytes, i: int) -> None:
        self._columns, self._layout, self._buf, self._i = columns, layout, buf, i
        self._row: dict[str, Any] | None = None

    def _decoded(self) -> dict[str, Any]:
        row = self._row
        if row is None:
            (fixed, lengths), buf, i = self._layout, self._buf, self._i
            try:
                cells = fixed.unpack_from(buf, i)
                if cells[0::2] == lengths:
                    row = dict(zip(self._columns.names, map(bytes.decode, cells[1::2]), strict=True))
                else:  # the same size with other lengths (or a null): cell by cell
                    row = {k: v for k, v in self._columns._row(buf, i)[0].items() if v is not None}
            except Exception as exc:  # (received whole, its size checked: its cells only now)
                raise _undecodable(exc) from exc
            self._row = row
        return row

    def cells(self) -> dict[str, Any]:
        """Every column, nulls as None, in a dict of its own (what `rows()` gives a scan)."""
        try:
            return self._columns._row(self._buf, self._i)[0]
        except Exception as exc:
            raise _undecodable(exc) from exc


def _undecodable(exc: Exception) -> MalformedAnswer:
    """A LazyRow whose cells do not decode when looked at: the answer was framed right (the
    connection stands), but the row is malformed, named as an answer that does not parse is."""
    return MalformedAnswer(f"a row that does not decode ({type(exc).__name__}: {exc})")


def read_rows(buf: bytes, i: int, columns: Columns | None) -> list[dict[str, Any]]:
    """A Rows result from its metadata on (the statement's columns when the answer has none)."""
    given, i = read_metadata(buf, i)
    if given is not None:
        columns = Columns(given)
    if columns is None:
        raise ValueError("a Rows answer without metadata for a statement that has none")
    return columns.rows(buf, i + 4, _I32.unpack_from(buf, i)[0])


def decode_result(buf: bytes, i: int, columns: Columns | None) -> list[dict[str, Any]] | None:
    """A RESULT body: rows for Rows, None for Void (and any other kind)."""
    if columns is not None and len(buf) - i >= 16:  # the usual answer to a prepared SELECT
        kind, flags, _, count = _ROWS_HEAD.unpack_from(buf, i)
        if kind == ROWS and flags & 0x0006 == NO_METADATA:  # no metadata, no paging state
            return columns.rows(buf, i + 16, count)
    if _I32.unpack_from(buf, i)[0] == ROWS:
        return read_rows(buf, i + 4, columns)
    return None


def string_map(items: dict[str, str]) -> bytes:
    out = [_U16.pack(len(items))]
    for k, v in items.items():
        for s in (k.encode(), v.encode()):
            out.append(_U16.pack(len(s)) + s)
    return b"".join(out)


def long_string(text: str) -> bytes:
    data = text.encode()
    return _pack_i32(len(data)) + data


def string_list(items: Sequence[str]) -> bytes:
    return _U16.pack(len(items)) + b"".join(_U16.pack(len(b)) + b for b in (t.encode() for t in items))


def read_event(body: bytes) -> tuple[str, str, tuple[str, int]]:
    """An EVENT's (kind, change, (address, port)): TOPOLOGY_CHANGE (NEW_NODE, REMOVED_NODE,
    MOVED_NODE) or STATUS_CHANGE (UP, DOWN), each with the node's [inet] (native_protocol_v4.spec,
    4.2.6); ValueError for any other event or a body that does not parse."""
    kind, i = read_string(body, 0)
    if kind not in ("TOPOLOGY_CHANGE", "STATUS_CHANGE"):
        raise ValueError(f"an event of kind {kind!r}")
    change, i = read_string(body, i)
    size = body[i]
    if size not in (4, 16) or i + 1 + size + 4 > len(body):
        raise ValueError(f"an [inet] of {size} bytes")
    address = str(ipaddress.ip_address(bytes(body[i + 1:i + 1 + size])))
    return kind, change, (address, _I32.unpack_from(body, i + 1 + size)[0])


# -- statements ------------------------------------------------------------------------------------

class Statement:
    """A prepared statement at one consistency: stmt(params) is the request for execute()."""

    __slots__ = ("cql", "head", "columns", "routing", "skip", "id", "body", "arity", "text_head")

    def __init__(self, cql: str, consistency: int, prepared: bytes, i: int, version: int) -> None:
        n = _U16.unpack_from(prepared, i)[0]
        self.id = prepared[i + 2:i + 2 + n]
        i += 2 + n
        flags, count = _I32.unpack_from(prepared, i)[0], _I32.unpack_from(prepared, i + 4)[0]
        i += 8
        keys: list[int] = []
        if version >= 4:
            for _ in range(_I32.unpack_from(prepared, i)[0]):
                keys.append(_U16.unpack_from(prepared, i + 4 + 2 * len(keys))[0])
            i += 4 + 2 * len(keys)
        params, i = read_columns(prepared, i, count, bool(flags & 0x0001))
        specs, i = read_metadata(prepared, i)
        self.columns = None if specs is None else Columns(specs)
        self.cql = cql
        encoders = []
        for name, _, kind in params:
            encode = TYPES.get(kind, (None, None))[0]
            if encode is None:
                raise QueryFailed("UnsupportedType", f"bind variable {name!r} has CQL type 0x{kind:04x}, "
                                                     "which the native driver cannot bind")
            encoders.append(encode)
        if version < 4:  # no partition key indexes in v3: the key column by its name
            keys = [n for n, (name, _, _) in enumerate(params) if name == KEY][:1]
        self.routing = keys[0] if len(keys) == 1 and params[keys[0]][2] in (0x0001, 0x000A, 0x000D) else None
        self.skip = self.columns is not None
        flag = WITH_VALUES | (SKIP_METADATA if self.skip else 0)
        self.head = (_U16.pack(len(self.id)) + self.id + _U16.pack(consistency) + bytes((flag,))
                     + _U16.pack(len(params)))
        self.body = _body_maker(self.head, encoders)
        # what the compiled chain step needs to make `body` itself (all values text, as str)
        self.arity = len(encoders)
        self.text_head = self.head if all(e is _text for e in encoders) else None

    def __call__(self, params: Sequence[Any]) -> tuple[Statement, Sequence[Any]]:
        return self, params


def _body_maker(head: bytes, encoders: Sequence[Callable[[Any], bytes]]) -> Callable[[Sequence[Any]], bytes]:
    """params -> an EXECUTE body; all-text statements (every YCSB one but a scan) get a loop with
    no call per value."""
    n = len(encoders)

    def wrong(params: Sequence[Any]) -> TypeError:
        return TypeError(f"the statement takes {n} values, not {len(params)}")

    if n == 1 and encoders[0] is _text:
        def one_text(params: Sequence[Any]) -> bytes:
            if len(params) != 1:
                raise wrong(params)
            value = params[0]
            data = value.encode() if type(value) is str else _text_data(value)
            return head + _pack_i32(len(data)) + data

        return one_text
    if all(e is _text for e in encoders):
        def texts(params: Sequence[Any]) -> bytes:
            if len(params) != n:
                raise wrong(params)
            out = [head]
            append = out.append
            for value in params:
                data = value.encode() if type(value) is str else _text_data(value)
                append(_pack_i32(len(data)))
                append(data)
            return b"".join(out)

        return texts

    def general(params: Sequence[Any]) -> bytes:
        if len(params) != n:
            raise wrong(params)
        return head + b"".join([encode(v) for encode, v in zip(encoders, params, strict=True)])

    return general


# -- requests in flight ------------------------------------------------------------------------------

class _Call:
    """A request waiting for its answer: a chain's step, a single execute, or a set-up message."""

    __slots__ = ("t0", "stmt", "body", "retried")

    def answered(self, ok: bool, value: Any, t1: int) -> None:
        raise NotImplementedError("a _Call subclass says what its answer does")


class _Waiter(_Call):
    """A set-up request (STARTUP, PREPARE, QUERY): its future gets (opcode, body, index)."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future) -> None:
        self.future, self.stmt, self.retried = future, None, True

    def answered(self, ok: bool, value: Any, t1: int) -> None:
        if not self.future.done():
            if ok:
                self.future.set_result(value)
            else:
                self.future.set_exception(value)


class _One(_Waiter):
    """One execute(): the future gets the decoded result, or the QueryFailed."""

    __slots__ = ()

    def __init__(self, future: asyncio.Future) -> None:
        self.future, self.retried = future, False


class _Chain(_Call):
    """One lane's steps, each sent when the one before has been answered; a step that fails at
    once (a value its statement cannot take, no node connected) is answered in the loop, so a
    long chain does not recurse."""

    __slots__ = ("items", "more", "answers", "done", "route")

    def __init__(self, route: Callable, items: Sequence[tuple], more: Callable[[], bool] | None,
                 done: asyncio.Future) -> None:
        self.route, self.items, self.more, self.done = route, items, more, done
        self.answers: list[tuple] = []
        self.retried = False

    def answered(self, ok: bool, value: Any, t1: int) -> None:
        self.answers.append((ok, value, self.t0, t1))
        self.retried = False
        self.go(False)

    def go(self, first: bool) -> None:
        """Send the next step, or end the chain (before each step after the first, more() says
        whether to go on)."""
        answers, items, more = self.answers, self.items, self.more
        while True:
            n = len(answers)
            if n >= len(items) or not (first or more is None or more()):
                if not self.done.done():
                    self.done.set_result(answers)
                return
            first = False
            stmt, params = items[n]
            try:
                body = stmt.body(params)
                conn = self.route(stmt, params)
                if conn is None:
                    raise QueryFailed("NoHostAvailable", "no Cassandra node is connected")
                self.stmt, self.body = stmt, body
                conn.send(self, EXECUTE, body)
                return
            except Exception as exc:
                now = perf_counter_ns()
                answers.append((False, failure(exc), now, now))


# -- the connection ------------------------------------------------------------------------------------

class CqlConnection(SharedConnection):
    """One connection to one node, shared by every lane of the worker."""

    server = "Cassandra node"
    # sent, failed: requests sent and failed answers (timeouts, errors, a lost connection), the
    # run's per-node figures (speedups.c's send_fast counts what it sends, too)
    __slots__ = ("version", "_orphans", "_stream", "on_lost", "on_event", "sent", "failed")

    def __init__(self, version: int, timeout_s: float, where: str) -> None:
        super().__init__(timeout_s, where, 65536)  # _inflight: stream id -> _Call
        self.version = version
        self._orphans: set[int] = set()  # timed out: the id is reused only once its answer came
        self._stream = 0
        self.on_lost: Callable[[CqlConnection], None] | None = None
        self.on_event: Callable[[bytes], None] | None = None  # EVENT frames (the control connection)
        self.sent = self.failed = 0
        if _fast is not None:  # the loop's three calls a wake-up, without a Python frame each
            self.get_buffer, self.buffer_updated, self._flush = _fast.hooks(self, "cql")

    # -- sending -----------------------------------------------------------------------------------

    def send(self, call: _Call, opcode: int, body: bytes) -> None:
        inflight = self._inflight
        sid = self._stream
        if sid in inflight or sid in self._orphans:
            if len(inflight) + len(self._orphans) >= STREAMS:
                raise QueryFailed("BusyConnection", f"{STREAMS} requests in flight to {self.where}")
            while sid in inflight or sid in self._orphans:
                sid = (sid + 1) & 0x7FFF
        self._stream = (sid + 1) & 0x7FFF
        out = self._out
        if not out and not self._receiving:  # (while receiving, buffer_updated writes at its end)
            self.loop.call_soon(self._flush)
        out.append(HEADER.pack(self.version, 0, sid, opcode, len(body)))
        out.append(body)
        call.t0 = perf_counter_ns()
        inflight[sid] = call
        self.sent += 1
        if self._timer is None:
            self._arm()

    def request(self, opcode: int, body: bytes) -> asyncio.Future:
        """A set-up request; the future gets (opcode, body, index of the body's start)."""
        future = self.loop.create_future()
        try:
            if self.broken is not None:
                raise self.broken
            self.send(_Waiter(future), opcode, body)
        except BaseException as exc:
            future.set_exception(exc)
        return future

    # -- receiving ---------------------------------------------------------------------------------

    def buffer_updated(self, nbytes: int) -> None:
        """Answer every whole frame received; the requests their callbacks make (the chains' next
        steps) go out in one write when all are answered, not in a loop turn of their own.

        With workbench._speedups built, a connection replaces this with the compiled one (see
        __init__: speedups.c's cql_receive), which answers the usual answer to a chain's step (no
        flags, a Void or one row of the layout) with the next step in C; every other frame comes
        to _answer here as below."""
        self._n += nbytes
        buf, at, n = self._in, 0, self._n
        self._receiving = True
        try:
            while n - at >= 9 and self.broken is None:
                _, flags, sid, opcode, size = HEADER.unpack_from(buf, at)
                if size < 0 or size > MAX_FRAME:  # a frame no server sends: the stream is lost
                    self._malformed(f"a frame of {size} bytes")
                    break
                end = at + 9 + size
                if end > n:
                    break
                body = buf[at + 9:end]
                at = end
                self._answer(flags, sid, opcode, body)
        finally:
            self._receiving = False
            if at:
                rest = n - at
                buf[:rest] = buf[at:n]
                self._n = rest
        if self._out:
            self._flush()

    def _answer(self, flags: int, sid: int, opcode: int, body: bytes) -> None:
        call = self._inflight.pop(sid, None)
        if call is None:
            if sid in self._orphans:  # the answer to a request that timed out
                self._orphans.discard(sid)
            elif sid == -1 and opcode == EVENT and self.on_event is not None:
                self.on_event(body)
            elif sid >= 0:  # (-1: an event, which nobody registered for)
                self._malformed(f"an answer on stream {sid}, which nobody used")
            return
        t1 = perf_counter_ns()
        i = 0
        try:
            if flags & 0x02:  # tracing id
                i += 16
            if flags & 0x08:  # warnings: a string list
                count, i = _U16.unpack_from(body, i)[0], i + 2
                for _ in range(count):
                    i += 2 + _U16.unpack_from(body, i)[0]
            if flags & 0x04:  # custom payload: a bytes map
                count, i = _U16.unpack_from(body, i)[0], i + 2
                for _ in range(count):
                    i += 2 + _U16.unpack_from(body, i)[0]
                    i += 4 + max(_I32.unpack_from(body, i)[0], 0)
            if opcode == ERROR:
                code = _I32.unpack_from(body, i)[0]
                message, _ = read_string(body, i + 4)
                if code == UNPREPARED and call.stmt is not None and not call.retried:
                    self._prepare_again(call)
                    return
                ok, value = False, QueryFailed(ERROR_KINDS.get(code, f"Error{code:04x}"), message)
                self.failed += 1
            elif call.stmt is None:
                ok, value = True, (opcode, body, i)
            elif opcode != RESULT:
                raise ValueError(f"opcode 0x{opcode:02x} in answer to an EXECUTE")
            else:
                ok, value = True, decode_result(body, i, call.stmt.columns)
        except Exception as exc:  # an answer that does not parse: the stream is suspect
            malformed = self._malformed(exc)  # (every other request in flight fails with it)
            self.failed += 1
            call.answered(False, failure(malformed) if call.stmt is not None else malformed, t1)
            return
        call.answered(ok, value, t1)

    def _prepare_again(self, call: _Call) -> None:
        """The node does not know the statement (it restarted): prepare it, then send the request
        again (once); the operation's time includes both."""
        call.retried = True
        stmt, t0 = call.stmt, call.t0

        def prepared(future: asyncio.Future) -> None:
            try:
                future.result()
                if self.broken is not None:  # (it broke meanwhile: nothing more goes out on it)
                    raise self.broken
                self.send(call, EXECUTE, call.body)
            except BaseException as exc:
                call.t0 = t0
                call.answered(False, failure(exc), perf_counter_ns())
                return
            call.t0 = t0

        self.request(PREPARE, long_string(stmt.cql)).add_done_callback(prepared)

    # -- failures ----------------------------------------------------------------------------------

    def connection_lost(self, exc: Exception | None) -> None:
        if self.broken is None:
            self.broken = exc or ConnectionResetError(f"{self.where} closed the connection")
        self._fail_all(self.broken)
        self._stop_timer()
        if self.on_lost is not None:
            self.on_lost(self)

    def _fail_all(self, exc: BaseException) -> None:
        inflight, self._inflight = self._inflight, {}
        failed = failure(exc) if isinstance(exc, MalformedAnswer) else QueryFailed("ConnectionShutdown",
                                                                                   f"{self.where}: {exc}")
        now = perf_counter_ns()
        self.failed += len(inflight)
        for call in inflight.values():
            call.answered(False, failed if call.stmt is not None else exc, now)

    def _timed_out(self, exc: TimeoutError) -> None:
        """Fail every request older than the timeout; the connection stays (the node may only be
        slow), and their stream ids wait for the late answers."""
        limit = perf_counter_ns() - int(self.timeout_s * 1e9)
        overdue = []
        for sid, call in self._inflight.items():
            if call.t0 > limit:
                break
            overdue.append(sid)
        failed = QueryFailed("OperationTimedOut", str(exc))
        now = perf_counter_ns()
        for sid in overdue:
            call = self._inflight.pop(sid, None)
            if call is None:  # answered by a callback of one before it
                continue
            self._orphans.add(sid)
            self.failed += 1
            call.answered(False, failed if call.stmt is not None else exc, now)
        oldest = self._oldest()
        if oldest and self._timer is None and self.broken is None:  # watch the next one when it is due
            due = (oldest - perf_counter_ns()) / 1e9 + self.timeout_s
            self._timer = self.loop.call_later(max(due, 0.001), self._watch)


# -- the session -----------------------------------------------------------------------------------------

class NativeSession:
    """Prepared statements and execution over the native protocol (see cassandra.py's contract)."""

    driver = "native"
    errors = (QueryFailed,)

    def __init__(self, opts: Any) -> None:
        self.opts = opts
        self.version = opts.protocol_version
        self.timeout_s = opts.read_timeout_ms / 1000
        self.hosts: list[tuple[str, int]] = []
        self.conns: list[CqlConnection | None] = []
        self._ring: list[int] = []  # tokens, ascending
        self._owners: list[int] = []  # the host index owning each token
        # the host indexes of each token's replicas in the local datacenter, its owner first
        self._replicas: list[tuple[int, ...]] = []
        self._shuffle = getattr(opts, "replicas", "shuffle") == "shuffle"
        self.unreachable: list[str] = []  # "address: why" of discovered nodes not reached at connect
        self._rr = 0
        self._closed = False
        self._reconnecting: dict[int, asyncio.Task] = {}
        self._gone: set[int] = set()  # indexes of nodes that left the cluster
        self._control: CqlConnection | None = None  # the connection registered for events
        self._refreshing: asyncio.Task | None = None
        self.events: list[tuple[str, str, str]] = []  # (kind, change, address) as they came
        self._retired: dict[int, tuple[int, int]] = {}  # counts of a node's closed connections
        self._draining: set[CqlConnection] = set()  # dropped nodes' connections, open until answered
        self._ssl = _ssl_context(opts) if opts.use_ssl else None

    # -- connecting --------------------------------------------------------------------------------

    @classmethod
    async def connect(cls, opts: Any) -> NativeSession:
        self = cls(opts)
        errors = []
        for host in opts.hosts:
            try:
                conn = await self._open((host, opts.port))
            except BindingError:
                raise
            except Exception as exc:
                errors.append(f"{host}:{opts.port} {type(exc).__name__} ({exc})")
                continue
            self.hosts, self.conns = [(host, opts.port)], [conn]
            await self._discover(conn)
            return self
        raise BindingError(f"cannot connect to Cassandra at {opts.where} with the native driver: "
                           + "; ".join(errors),
                           "is the server up? check hosts, port, credentials and cassandra.useSSL")

    async def _open(self, host: tuple[str, int]) -> CqlConnection:
        loop = asyncio.get_running_loop()
        where = f"{host[0]}:{host[1]}"
        timeout = self.opts.connect_timeout_ms / 1000
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
            user, password = self.opts.username, self.opts.password
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
        """How many replicas the keyspace keeps in this datacenter (1 when it cannot tell: the
        keyspace does not exist yet, or a strategy it does not know). SimpleStrategy's
        replication_factor, or NetworkTopologyStrategy's count for the datacenter; racks are not
        considered (a local cluster has one), so with several racks the set may differ from the
        server's, which costs a hop, never a wrong answer."""
        keyspace = self.opts.keyspace if isinstance(getattr(self.opts, "keyspace", None), str) else None
        if keyspace is None:
            return 1
        try:
            rows = await self.query(conn, "SELECT replication FROM system_schema.keyspaces "
                                          f"WHERE keyspace_name = '{keyspace}'")
        except QueryFailed:
            return 1
        replication = (rows[0].get("replication") if rows else None) or {}
        if not isinstance(replication, dict):
            return 1
        wanted = replication.get("replication_factor") if "SimpleStrategy" in str(replication.get("class")) \
            else replication.get(datacenter or "")
        try:
            return max(int(str(wanted).partition("/")[0]), 1)  # "3/1": transient replicas after the slash
        except ValueError:
            return 1

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
        partitioner = local[0].get("partitioner") or "" if local else ""
        datacenter = local[0].get("data_center") if local else None
        here = self.conns.index(conn) if conn in self.conns else 0
        listed: dict[tuple[str, int], list] = {
            self.hosts[here]: list(local[0].get("tokens") or []) if local else []}
        for peer in peers:
            if datacenter is not None and peer.get("data_center") not in (None, datacenter):
                continue
            address = peer.get("native_address") or peer.get("rpc_address") or peer.get("peer")
            if address in (None, "0.0.0.0", "::"):
                address = peer.get("peer")
            if address is None:
                continue
            port = peer.get("native_port") or self.opts.port
            listed.setdefault((address, port), list(peer.get("tokens") or []))
        new = []
        for host in listed:
            if host not in self.hosts:
                self.hosts.append(host)
                self.conns.append(None)
                new.append(len(self.hosts) - 1)
        back = self._gone
        self._gone = {index for index, host in enumerate(self.hosts) if host not in listed}
        for index in self._gone:
            self._drop(index)
        # a node that had left and is listed again (added back at its old address) is connected
        # again like a new one: neither the UP event (it came while it was still gone) nor the
        # listing alone would do it
        new += [index for index in sorted(back - self._gone)
                if self.conns[index] is None and index not in self._reconnecting]
        ring = sorted((int(t), self.hosts.index(host)) for host, tokens in listed.items() for t in tokens)
        if partitioner.endswith("Murmur3Partitioner") and ring and len(listed) > 1:
            owners = [h for _, h in ring]
            factor = await self._replication_factor(conn, datacenter)
            self._ring, self._owners = [t for t, _ in ring], owners
            self._replicas = replica_sets(owners, factor)
        else:
            self._ring, self._owners, self._replicas = [], [], []
        return new

    def _drop(self, index: int) -> None:
        """A node that left the cluster: no new requests, no reconnection. Its connection closes
        once the requests in flight on it are answered (a decommissioned node goes on serving for
        its ring delay after it announced that it left) or have timed out: closed at once, they
        would all fail, though the node was about to answer them."""
        task = self._reconnecting.pop(index, None)
        if task is not None:
            task.cancel()
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
            self._refresh_soon(change, host)
        elif kind == "STATUS_CHANGE" and change == "UP":
            if host not in self.hosts:
                self._refresh_soon("NEW_NODE", host)
                return
            index = self.hosts.index(host)
            conn = self.conns[index]
            if index not in self._gone and (conn is None or conn.broken is not None):
                task = self._reconnecting.pop(index, None)
                if task is not None:
                    task.cancel()
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
            if change == "REMOVED_NODE":
                return host not in self.hosts or self.hosts.index(host) in self._gone
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
        if index in self._reconnecting or self._closed or index in self._gone:
            return

        async def attempts() -> None:
            wait = 0.0 if at_once else RECONNECT_S[0]
            while not self._closed and index not in self._gone:
                if wait:
                    await asyncio.sleep(wait)
                try:
                    conn = await self._open(self.hosts[index])
                except asyncio.CancelledError:
                    raise
                except Exception:
                    wait = min(max(wait * 2, RECONNECT_S[0]), RECONNECT_S[1])
                    continue
                if self._closed or index in self._gone:
                    conn.close()
                else:
                    self.conns[index] = conn
                    if self._control is None:
                        self._new_control()
                return

        task = self._reconnecting[index] = asyncio.get_running_loop().create_task(attempts())
        task.add_done_callback(lambda done: self._reconnecting.pop(index, None)
                               if self._reconnecting.get(index) is done else None)

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

    # -- statements ---------------------------------------------------------------------------------

    async def prepare(self, cql: str, consistency: str) -> Statement:
        conn = self._any()
        if conn is None:
            raise QueryFailed("NoHostAvailable", "no Cassandra node is connected")
        _, body, i = await conn.request(PREPARE, long_string(cql))
        kind = _I32.unpack_from(body, i)[0]
        if kind != PREPARED:
            raise QueryFailed("ProtocolError", f"PREPARE answered with result kind {kind}")
        return Statement(cql, CONSISTENCY[consistency], body, i + 4, self.version)

    def _any(self) -> CqlConnection | None:
        for conn in self.conns:
            if conn is not None and conn.broken is None:
                return conn
        return None

    def _route(self, stmt: Statement, params: Sequence[Any]) -> CqlConnection | None:
        """The connection to a replica of the statement's partition key: with cassandra.replicas=
        shuffle (the default, as the DataStax Java and C++ drivers do) any live one at random,
        with `first` the first live one in ring order; when none is up, the next node up on the
        ring. Round robin when the key or the ring is unknown."""
        conns = self.conns
        if len(conns) == 1:
            conn = conns[0]
            return conn if conn is not None and conn.broken is None else None
        ring = self._ring
        if ring and stmt.routing is not None:
            key = params[stmt.routing]
            at = bisect.bisect_left(ring, murmur3(key.encode() if isinstance(key, str) else key))
            owners, n = self._owners, len(ring)
            replicas = self._replicas[at % n] if self._replicas else ()
            if len(replicas) > 1:
                live = [c for c in (conns[h] for h in replicas) if c is not None and c.broken is None]
                if live:
                    return live[_below(len(live))] if self._shuffle and len(live) > 1 else live[0]
            for step in range(n):
                conn = conns[owners[(at + step) % n]]
                if conn is not None and conn.broken is None:
                    return conn
            return None
        for _ in range(len(conns)):
            self._rr = (self._rr + 1) % len(conns)
            conn = conns[self._rr]
            if conn is not None and conn.broken is None:
                return conn
        return None

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
        for task in list(self._reconnecting.values()):
            task.cancel()
        if self._refreshing is not None:
            self._refreshing.cancel()
        for index, conn in enumerate(self.conns):
            if conn is not None:
                self._retire(index, conn)  # (the run's last tick reads the counts after this)
                conn.on_lost = None
                conn.close()
        self.conns = [None] * len(self.conns)
        for conn in list(self._draining):  # (its counts were retired when its node was dropped)
            conn.on_lost = None
            conn.close()
        self._draining.clear()


# The compiled receive path (csrc/speedups.c, cql_receive), or None: a CqlConnection made while
# it is None keeps the Python buffer_updated, which answers every frame (tests switch between the
# two by setting this before they make their connections).
_fast = speedups.C
if _fast is not None:
    _fast.cql_setup(_Chain, LazyRow, NativeSession._route)
    _fast.conn_setup(CqlConnection, "cql")


_below = random.Random().randrange  # the replica a shuffled request goes to (not the lanes' streams)


def replica_sets(owners: Sequence[int], factor: int) -> list[tuple[int, ...]]:
    """For each ring position, the first `factor` distinct hosts from it on round the ring (the
    owner first): the replicas of the keys whose token falls there, as SimpleStrategy places them
    (and NetworkTopologyStrategy within one datacenter and rack)."""
    n = len(owners)
    hosts = len(set(owners))
    factor = min(max(factor, 1), hosts)
    out = []
    for at in range(n):
        chosen: list[int] = []
        for step in range(n):
            host = owners[(at + step) % n]
            if host not in chosen:
                chosen.append(host)
                if len(chosen) == factor:
                    break
        out.append(tuple(chosen))
    return out


def failure(exc: BaseException) -> QueryFailed:
    """Any failure of a request as a QueryFailed, named by kind."""
    if isinstance(exc, QueryFailed):
        return exc
    if isinstance(exc, TimeoutError):
        return QueryFailed("OperationTimedOut", str(exc))
    return QueryFailed(type(exc).__name__, str(exc))


def _ssl_context(opts: Any) -> ssl_module.SSLContext:
    ctx = ssl_module.SSLContext(ssl_module.PROTOCOL_TLS_CLIENT)
    if opts.ssl_verify == "none":
        ctx.check_hostname = False
        ctx.verify_mode = ssl_module.CERT_NONE
    else:
        ctx.load_verify_locations(cafile=opts.ssl_cafile)
        ctx.check_hostname = opts.ssl_verify == "identity"
    if opts.ssl_certfile:
        ctx.load_cert_chain(opts.ssl_certfile, opts.ssl_keyfile, opts.ssl_keypassword)
    return ctx
