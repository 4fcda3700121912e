"""HBase's RPC messages (RPC.proto's headers, Client.proto's Get and Mutate) written and read by
the few protobuf helpers below (no protobuf dependency), with every field named by a constant.
The connection and the client are rpc.py; csrc/ writes and reads the same bytes on the
compiled path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from struct import Struct

from workbench.protocols.wire import LazyMapping, MalformedAnswer

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
# ... or that the server the regions were found on stops, has not started or is gone (its
# regions moved away before it stopped, or are being reassigned): HBase's Java client clears the
# locations it had from that server and sends the request anew too (ClientExceptionsUtil's
# isMetaClearingException: every exception but the region-level ones above).
SERVER_GONE = ("RegionServerStoppedException", "ServerNotRunningYetException",
               "RegionServerAbortedException", "ConnectionRefusedError")


# -- the fields written and read, by number ---------------------------------------------------
# HBase 2.6.1's .proto files (package hbase.pb): each constant is MESSAGE_FIELD, the message's and
# the field's names in upper case (ColumnValue and QualifierValue are nested in MutationProto).
# tests/unit/test_hbase_protobuf_reference.py checks every one against those files, and the bytes
# made with them against the messages protobuf makes from them. csrc/hbase.c writes the same
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
# The first key of a ResponseHeader that is a call id alone (0x08; csrc/hbase.c's hbase_receive too)
_ANSWER_CALL_ID_TAG = tag(RESPONSE_HEADER_CALL_ID, VARINT)
