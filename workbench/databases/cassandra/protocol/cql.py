"""Cassandra's native protocol (CQL v3/v4, native_protocol_v4.spec): the frame header, the
opcodes and error codes, values bound and decoded, result metadata and rows, events, and prepared
statements. No sockets here: connection.py sends and receives frames, session.py is the
client (nodes, routing, topology). Values bound: text, varchar, ascii, int, bigint, counter,
smallint, tinyint, boolean, blob; decoded: those, double, float, inet, and lists, sets and maps of
them; any other column comes back as its raw bytes.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from functools import lru_cache
from struct import Struct
from typing import Any

from workbench.protocols.wire import LazyMapping, MalformedAnswer

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


class QueryFailed(Exception):
    """A request the server or the client reported as failed; `kind` names why as cassandra-driver
    does (ReadTimeout, Unavailable, OperationTimedOut, NoHostAvailable, ...), `message` says what
    the server or the client said (may be empty)."""

    def __init__(self, kind: str, message: str = "") -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind, self.message = kind, message


def failure(exc: BaseException) -> QueryFailed:
    """Any failure of a request as a QueryFailed, named by kind."""
    if isinstance(exc, QueryFailed):
        return exc
    if isinstance(exc, TimeoutError):
        return QueryFailed("OperationTimedOut", str(exc))
    return QueryFailed(type(exc).__name__, str(exc))


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
    when read). csrc/cql.c's answer_fast checks the same."""
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
    (docs/history/BENCHMARKS-LOG.md, "Lazy rows, and where the rest goes"). The Java driver that
    YCSB uses keeps a row's values as buffers in the same way until they are asked for."""

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

    def __init__(self, cql: str, consistency: int, prepared: bytes, i: int, version: int,
                 key_column: str | None = None) -> None:
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
        if version < 4:  # no partition key indexes in v3: the key column by its name, if known
            keys = [n for n, (name, _, _) in enumerate(params) if name == key_column][:1]
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


