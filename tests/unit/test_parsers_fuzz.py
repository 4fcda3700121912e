"""Random and mutated bytes into both receive paths of the workbench's own database clients:
databases/cassandra/protocol/connection's CqlConnection and databases/hbase/protocol/rpc's
RpcConnection, each with the Python buffer_updated/_answer and with the compiled one
(workbench._speedups, csrc/, where it is built), on a fake transport with calls in flight (no servers).

For every stream, fed in random pieces as recv_into would put them in the connection's buffer:
- nothing escapes buffer_updated; no example runs long (bounded(): an alarm; a loop in C that
  never comes back to Python ends the process, as a segfault would); memory grows with what was
  received, never with what a frame declares (tracemalloc, and the receive buffer's size);
- a connection breaks only with MalformedAnswer (wire.py), and then no call waits: every call in
  flight failed with it (Cassandra: QueryFailed of kind "MalformedAnswer"); a call fails with it
  only where the connection broke; once the peer closes, every call has its answer;
- a frame certainly malformed (a length out of the protocol's range, an answer nobody asked for,
  a body cut short, ...) after valid ones: those are answered, the connection breaks at it;
- the compiled path gives every call what the Python path gives (values, error kinds and
  messages, rows lazy or not), the same broken state and the same bytes written; the Python path
  gives the same whatever the pieces (but for the bytes written: see unwritten()).

A failing example prints its reproduction blob (@reproduce_failure). The test_the_*_inputs_that_
found_bugs keep the streams that showed each bug these tests found as plain cases, and
test_a_read_row_by_where_its_last_cell_ends the rows either side of two checks a random stream
seldom reaches: a cell's length against the body's end (databases/cassandra/protocol/cql.py's
Columns._row), and a lazy row's cells ending at its end (csrc/cql.c's answer_fast).
"""

from __future__ import annotations

import asyncio
import faulthandler
import re
import signal
import struct
import time
import tracemalloc
from contextlib import contextmanager
from struct import pack

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cassandra_native import VARCHAR, rows_body, statement, string
from test_hbase_native import cell as hbase_cell

from tests.support.loopback import Transport
from workbench import speedups
from workbench.databases.cassandra.errors import QueryFailed
from workbench.databases.cassandra.protocol import connection as cqlc
from workbench.databases.cassandra.protocol import cql
from workbench.databases.hbase.protocol import messages as hm
from workbench.databases.hbase.protocol import rpc as hr
from workbench.protocols.wire import MalformedAnswer

COMPILED = speedups.C
BUILT = pytest.mark.skipif(COMPILED is None, reason="workbench._speedups is not built here")
PATHS = [pytest.param("C", marks=BUILT), "Python"]
# deadline None: each example's feeding is bounded by bounded() below instead (Hypothesis's
# deadline would flag a slow machine, and could not stop a loop that does not end)
FUZZ = settings(max_examples=200, deadline=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
EXAMPLE_S = 2.0  # what feeding one example may take (it takes a millisecond or so)
HUNG_IN_C_S = 600


# -- guards ---------------------------------------------------------------------------------------

class Hung(BaseException):
    """Raised by the alarm: a BaseException, which no `except Exception` of the code under test
    takes for a parse error."""


@contextmanager
def bounded():
    """The block may run EXAMPLE_S: then the alarm interrupts it and the example fails (with an
    AssertionError, which Hypothesis shrinks and prints a reproduction blob for). (A loop in C
    that never comes back to Python: _hung_in_c_ends_the_process.)"""
    rang = []

    def ring(signum, frame):
        rang.append(frame)
        raise Hung

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, EXAMPLE_S)
    try:
        yield
    except Hung:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not rang, (f"feeding one example took more than {EXAMPLE_S} s: a loop that does not end, at "
                      f"{rang[0].f_code.co_filename}:{rang[0].f_lineno}" if rang else "")


@pytest.fixture(autouse=True)
def _hung_in_c_ends_the_process():
    """A loop in C that never comes back to Python, which no alarm interrupts: after HUNG_IN_C_S
    (a test with its shrinking takes far less) faulthandler writes every thread's stack and ends
    the process, as a segfault would. Its watchdog thread is given time to start before any
    example starts tracemalloc (CPython 3.11's tracemalloc.start() and stop() can crash a thread
    that frees memory meanwhile, as a thread does when it starts)."""
    faulthandler.dump_traceback_later(HUNG_IN_C_S, exit=True)
    time.sleep(0.01)
    yield
    faulthandler.cancel_dump_traceback_later()


@contextmanager
def memory_bounded(received: int):
    """What the block allocates at its peak (tracemalloc): bounded by what was received (its rows
    as Python objects: many times the bytes) plus a constant, never by a declared length."""
    ours = not tracemalloc.is_tracing()
    if ours:  # (on for this block alone: tracing the whole test would make it ten times slower)
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        yield
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        if ours:
            tracemalloc.stop()
    assert peak <= 256 * 1024 + 64 * received, f"{peak} bytes allocated for {received} received"


def feed(conn, data: bytes, cuts: list[int]) -> None:
    """data into conn's free buffer (get_buffer) in pieces of the sizes in cuts (then as large
    as the buffer takes), each followed by buffer_updated, as the event loop does."""
    at, pieces = 0, iter(cuts)
    while at < len(data):
        buf = conn.get_buffer(-1)
        k = min(len(buf), max(next(pieces, len(data)), 1), len(data) - at)
        buf[:k] = data[at:at + k]
        conn.buffer_updated(k)
        at += k
        assert len(conn._in) <= max(65536, 2 * at), "the receive buffer outgrew what was received"


@contextmanager
def receive_path(module, path: str):
    """Connections made inside use the compiled receive path ("C") or the Python one."""
    saved = module._fast
    module._fast = COMPILED if path == "C" else None
    try:
        yield
    finally:
        module._fast = saved


def failed(kind: str, message: str) -> tuple:
    return ("failed", kind, message)


def failure_of(exc: BaseException) -> tuple:
    if isinstance(exc, QueryFailed):
        return failed(exc.kind, exc.message)
    return failed(type(exc).__name__, str(exc))


def looked_at(row) -> tuple:
    """A row as a caller sees it: its class (a lazy one or a dict) and its values, or the
    MalformedAnswer that reading them raises (a lazy row decodes only then)."""
    try:
        return type(row).__name__, repr(dict(row))
    except MalformedAnswer as exc:
        return type(row).__name__, "MalformedAnswer", str(exc)


def kinds(answers: list[tuple]) -> list[str]:
    return [a[1] for a in answers if a[0] == "failed"]


def unwritten(got: dict) -> dict:
    """got without the bytes written: a request that an answer made goes out at the end of the
    read that brought the answer, unless a later frame of that read broke the connection, so
    what is written depends on how the reads were split (nothing else does)."""
    return {k: v for k, v in got.items() if k != "written"}


def broken_state(conn) -> tuple | None:
    return None if conn.broken is None else (type(conn.broken).__name__, str(conn.broken))


# -- Cassandra ------------------------------------------------------------------------------------

READ, UPDATE, SETUP = "read", "update", "setup"
INT, BIGINT, BLOB, BOOLEAN, DOUBLE, INET = 0x0009, 0x0002, 0x0003, 0x0004, 0x0007, 0x0010
SERVER_KINDS = set(cql.ERROR_KINDS.values())
EVENT = 0x0C


def server_kind(kind: str) -> bool:
    return kind in SERVER_KINDS or re.fullmatch(r"Error-?[0-9a-f]{3,8}", kind) is not None


def cql_statements() -> tuple[cql.Statement, cql.Statement]:
    """A read of two text columns whose row layout is learnt (lengths 2 and 3: a read's one row
    of 13 bytes after the head becomes a LazyRow), and an update."""
    read = statement([("y_id", VARCHAR)], [("f0", VARCHAR), ("f1", VARCHAR)], [0])
    cql.decode_result(rows_body([[b"aa", b"bbb"]] * 2, 2), 0, read.columns)
    return read, statement([("f0", VARCHAR), ("y_id", VARCHAR)], None, [1])


def cql_answers(kind: str, future: asyncio.Future) -> list[tuple]:
    if not future.done():
        return [("waiting",)]
    if future.exception() is not None:
        return [failure_of(future.exception())]
    value = future.result()
    if kind == "chain":
        return [cql_answer(ok, v) for ok, v, _, _ in value]
    return [cql_answer(True, value)]


def cql_answer(ok: bool, value) -> tuple:
    if not ok:
        return failure_of(value)
    if isinstance(value, tuple):  # a set-up request's answer: (opcode, body, where the result starts)
        return ("ok", value[0], bytes(value[1]), value[2])
    if value is None:
        return ("ok", None)
    return ("ok", [looked_at(row) for row in value])


async def cql_scenario(plan: list[tuple[str, tuple[str, ...]]], data: bytes, cuts: list[int]) -> dict:
    """The calls of plan in flight on one connection (stream ids 0, 1, ... in plan's order; a
    chain's later steps take the next ones), data fed in pieces; what each call got once the
    bytes were received, and once the node closed the connection."""
    loop = asyncio.get_running_loop()
    conn = cqlc.CqlConnection(4, 30, "test:9042")
    conn.connection_made(Transport())
    read, update = cql_statements()

    def route(stmt, params):
        return conn if conn.broken is None else None

    def step(op):
        return read(("k",)) if op == READ else update(("v", "k"))

    calls = []
    for kind, ops in plan:
        if kind == "chain":
            done = loop.create_future()
            cqlc._Chain(route, [step(op) for op in ops], None, done).go(True)
            calls.append((kind, done))
        elif kind == "one":
            future = loop.create_future()
            call = cqlc._One(future)
            call.stmt, params = step(ops[0])
            call.body = call.stmt.body(params)
            conn.send(call, cql.EXECUTE, call.body)
            calls.append((kind, future))
        else:
            calls.append((kind, conn.request(cql.QUERY, cql.long_string("SELECT now() FROM system.local"))))
    await asyncio.sleep(0)  # the requests go out
    with bounded(), memory_bounded(len(data)):
        feed(conn, data, cuts)
    for _ in range(3):  # what the answers set off (a statement prepared again, then sent again)
        await asyncio.sleep(0)
    received = {
        "calls": [cql_answers(kind, f) for kind, f in calls],
        "broken": broken_state(conn),
        "inflight": sorted(conn._inflight),
        "orphans": sorted(conn._orphans),
        "layout": (read.columns.layout and read.columns.layout[1], read.columns._seen),
        "written": conn.transport.written,
    }
    conn.connection_lost(None)  # the node closes the connection
    for _ in range(3):
        await asyncio.sleep(0)
    return {**received, "closed": [cql_answers(kind, f) for kind, f in calls]}


def cql_run(path: str, plan, data: bytes, cuts: list[int]) -> dict:
    with receive_path(cqlc, path):
        return asyncio.run(cql_scenario(plan, data, cuts))


def check_cql(got: dict) -> None:
    """What holds for any stream: see the module's docstring."""
    calls, broken = got["calls"], got["broken"]
    seen = [k for answers in calls for k in kinds(answers)]
    assert all(server_kind(k) or k in ("MalformedAnswer", "NoHostAvailable") for k in seen), seen
    if broken is None:
        assert "MalformedAnswer" not in seen, got
        waiting = sum(answers == [("waiting",)] for answers in calls)
        assert waiting <= len(got["inflight"]), got
    else:
        assert broken[0] == "MalformedAnswer", broken
        assert got["inflight"] == [] and [("waiting",)] not in calls, got
    closed = [k for answers in got["closed"] for k in kinds(answers)]
    assert [("waiting",)] not in got["closed"], got["closed"]
    assert all(server_kind(k) or k in ("MalformedAnswer", "NoHostAvailable", "ConnectionShutdown",
                                       "ConnectionResetError") for k in closed), closed


@st.composite
def cql_plans(draw, setup: bool = True) -> list[tuple[str, tuple[str, ...]]]:
    plan = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["chain", "chain", "one", "setup"] if setup else ["chain", "one"]))
        steps = draw(st.integers(1, 4)) if kind == "chain" else 1
        plan.append((kind, tuple(draw(st.sampled_from([READ, UPDATE])) for _ in range(steps))))
    return plan


ASCII = st.binary(max_size=5).map(lambda b: bytes(c & 0x7F for c in b))
TEXT = st.one_of(ASCII, ASCII, st.binary(max_size=5))  # now and then not UTF-8
ROW_TYPES = [VARCHAR, INT, BIGINT, BLOB, BOOLEAN, DOUBLE, INET, (cql.SET, VARCHAR), (cql.LIST, INT)]


@st.composite
def typed_cell(draw, kind) -> bytes:
    if draw(st.integers(0, 9)) == 0:
        return pack(">i", -1)
    if kind == INT:
        value = pack(">i", draw(st.integers(-2**31, 2**31 - 1)))
    elif kind == BIGINT:
        value = pack(">q", draw(st.integers(-2**63, 2**63 - 1)))
    elif kind == BOOLEAN:
        value = draw(st.sampled_from([b"\x00", b"\x01"]))
    elif kind == DOUBLE:
        value = pack(">d", draw(st.floats()))
    elif kind == INET:
        value = draw(st.sampled_from([b"\x7f\x00\x00\x01", bytes(16)]))
    elif isinstance(kind, tuple):
        items = draw(st.lists(typed_cell(kind[1]), max_size=3))
        value = pack(">i", len(items)) + b"".join(items)
    else:
        value = draw(TEXT if kind == VARCHAR else st.binary(max_size=6))
    return pack(">i", len(value)) + value


@st.composite
def cql_bodies(draw, op: str | None, valid: bool = False) -> tuple[int, int, bytes]:
    """(opcode, flags, body) of an answer: one that fits op (a read's rows, an update's Void),
    or any; valid: only answers that decode, to a call of op."""
    fitting = {READ: ["lazy", "rows", "error"], UPDATE: ["void", "error"], SETUP: ["kind", "void"]}
    if valid:
        what = draw(st.sampled_from(fitting[op]))
    elif op is not None and draw(st.integers(0, 3)):
        what = draw(st.sampled_from(fitting[op] + (["meta", "kind"] if op == READ else [])))
    else:
        what = draw(st.sampled_from(["void", "lazy", "rows", "meta", "kind", "error", "unprepared", "empty"]))
    text = ASCII if valid else TEXT
    opcode = cql.RESULT
    if what == "void":
        body = pack(">i", cql.VOID)
    elif what == "lazy" and valid:  # the learnt layout's size: a LazyRow (other lengths, a null inside)
        body = rows_body([draw(st.sampled_from([[b"aa", b"bbb"], [b"xyz", b"zz"], [b"abcde", None]]))], 2)
    elif what == "lazy":  # the layout's size, values of any bytes, lengths that may not add up
        first, values = draw(st.integers(0, 5)), draw(st.binary(min_size=5, max_size=5))
        # (the last: what fills the row, a byte or two either side of it, a null, a long way past)
        lengths = (draw(st.sampled_from([first, first, -1, 0, 6, 2**31 - 1])),
                   draw(st.sampled_from([5 - first, 5 - first, 6 - first, 4 - first, 7 - first, -1, 0, 9])))
        body = rows_body([], 2)[:12] + pack(">ii", 1, lengths[0]) + values[:first] + pack(">i", lengths[1]) \
            + values[first:]
    elif what == "rows":
        cells = st.one_of(st.none(), text) if not valid else text
        rows = draw(st.lists(st.lists(cells, min_size=2, max_size=2), min_size=int(valid), max_size=3))
        body = rows_body(rows, 2)
    elif what == "meta":  # rows with their own metadata: other types, collections
        types = draw(st.lists(st.sampled_from(ROW_TYPES), max_size=3))
        specs = b"".join(string(f"c{n}") + (pack(">HH", *t) if isinstance(t, tuple) else pack(">H", t))
                         for n, t in enumerate(types))
        nrows = draw(st.integers(0, 2))
        cells = b"".join(draw(typed_cell(t)) for _ in range(nrows) for t in types)
        body = (pack(">iii", cql.ROWS, 0x0001, len(types)) + string("ks") + string("t") + specs
                + pack(">i", nrows) + cells)
    elif what == "kind":  # set_keyspace, prepared, schema_change: None to an EXECUTE
        body = pack(">i", draw(st.sampled_from([3, 4, 5]))) + string("ks")
    elif what == "error":
        codes = sorted(set(cql.ERROR_KINDS) - {cql.UNPREPARED})
        if not valid:
            codes += [draw(st.integers(-2**31, 2**31 - 1).filter(lambda c: c != cql.UNPREPARED))]
        message = draw(st.sampled_from(["", "Operation timed out", "bad value"]))
        body, opcode = pack(">i", draw(st.sampled_from(codes))) + string(message), cql.ERROR
    elif what == "unprepared":  # (the statement prepared again, then sent again)
        body = pack(">i", cql.UNPREPARED) + string("gone") + pack(">H4s", 4, b"\x01\x02\x03\x04")
        opcode = cql.ERROR
    else:
        body = b""
    flags = 0
    if draw(st.integers(0, 4)) == 0:  # what may come before the result: custom payload, warnings, tracing
        if draw(st.booleans()):
            body, flags = pack(">H", 1) + string("key") + pack(">i", 1) + b"v" + body, flags | 0x04
        if draw(st.booleans()):
            body, flags = pack(">H", 1) + string("careful") + body, flags | 0x08
        if draw(st.booleans()):
            body, flags = bytes(range(16)) + body, flags | 0x02
    return opcode, flags, body


def cql_frame(version: int, flags: int, sid: int, opcode: int, body: bytes, length: int | None = None
              ) -> bytes:
    return pack(">BBhBi", version, flags, sid, opcode, len(body) if length is None else length) + body


@st.composite
def cql_frames(draw, plan, valid: bool = False) -> list[list]:
    """Answers to the plan's calls (stream ids 0..n-1, in any order), then, unless valid, some to
    streams after them (a chain's later steps, or nobody's) and now and then an event."""
    n = len(plan)
    sids = list(draw(st.permutations(range(n))))
    if not valid:
        sids += draw(st.lists(st.integers(n, n + 6), max_size=4))
    frames = []
    for sid in sids:
        op = (SETUP if plan[sid][0] == "setup" else plan[sid][1][0]) if sid < n else None
        opcode, flags, body = draw(cql_bodies(op, valid))
        frames.append([0x84, flags, sid, opcode, body])
    if not valid and draw(st.integers(0, 5)) == 0:
        frames.insert(draw(st.integers(0, len(frames))), [0x84, 0, -1, EVENT, string("TOPOLOGY_CHANGE")])
    return frames


@st.composite
def frame_mutation(draw, version, flags, sid, opcode, body, kind_limit: int, length_range) -> bytes:
    """One frame with one thing changed: its length field (huge, negative, off by a little), its
    kind (opcode), flags, stream, version, or its body cut, extended or with a bit flipped."""
    length = None
    what = draw(st.sampled_from(["length", "length", "opcode", "flags", "stream", "truncate", "extend",
                                 "flip", "version"]))
    if what == "length":
        length = draw(st.one_of(st.sampled_from([-1, -2**31, 2**31 - 1, cql.MAX_FRAME, cql.MAX_FRAME + 1, 0,
                                                 len(body) + 1, max(len(body) - 1, 0)]),
                                st.integers(*length_range)))
    elif what == "opcode":
        opcode = draw(st.integers(0, kind_limit))
    elif what == "flags":
        flags = draw(st.integers(0, 255))
    elif what == "stream":
        sid = draw(st.integers(-32768, 32767))
    elif what == "truncate":
        body = body[:draw(st.integers(0, max(len(body) - 1, 0)))]
    elif what == "extend":
        body += draw(st.binary(min_size=1, max_size=8))
    elif what == "flip" and body:
        at = draw(st.integers(0, len(body) - 1))
        body = body[:at] + bytes([body[at] ^ (1 << draw(st.integers(0, 7)))]) + body[at + 1:]
    elif what == "version":
        version = draw(st.integers(0, 255))
    return cql_frame(version, flags, sid, opcode, body, length)


@st.composite
def stream_mutations(draw, data: bytes) -> bytes:
    """The whole stream with bits flipped, bytes set, inserted or deleted, or cut short."""
    for _ in range(draw(st.integers(0, 3))):
        what = draw(st.sampled_from(["flip", "set", "insert", "delete", "cut"]))
        at = draw(st.integers(0, len(data)))
        if what == "flip" and at < len(data):
            data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1:]
        elif what == "set" and at < len(data):
            data = data[:at] + bytes([draw(st.sampled_from([0x00, 0x7F, 0x80, 0xFF]))]) + data[at + 1:]
        elif what == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        elif what == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 8)):]
        elif what == "cut":
            data = data[:at]
    return data


CUTS = st.lists(st.integers(1, 48), max_size=12)


@st.composite
def cql_cases(draw) -> tuple[list, bytes, list[int]]:
    """(plan, stream, cuts): random bytes, valid answers, or valid answers mutated."""
    plan = draw(cql_plans())
    how = draw(st.sampled_from(["random", "valid", "mutated", "mutated", "mutated"]))
    if how == "random":
        data = draw(st.binary(max_size=300))
    else:
        frames = draw(cql_frames(plan))
        encoded = [cql_frame(*f) for f in frames]
        if how == "mutated":
            for k in draw(st.sets(st.integers(0, len(frames) - 1), min_size=1, max_size=2)):
                encoded[k] = draw(frame_mutation(*frames[k], 255, (-2**31, 2**31 - 1)))
            data = draw(stream_mutations(b"".join(encoded)))
        else:
            data = b"".join(encoded)
    return plan, data, draw(CUTS)


@pytest.mark.parametrize("path", PATHS)
@FUZZ
@given(case=cql_cases())
def test_cql_any_bytes_end_in_answers_or_a_named_break(path, case):
    plan, data, cuts = case
    check_cql(cql_run(path, plan, data, cuts))


CQL_CORRUPTIONS = ["negative length", "length past the limit", "nobody's stream", "not a result",
                   "body cut short", "row count", "row lengths", "last cell past"]


def last_cell(body: bytes) -> int:
    """Where the last cell of a Rows body without metadata (16 bytes of head) starts."""
    at = last = 16
    while at < len(body):
        last, at = at, at + 4 + max(struct.unpack_from(">i", body, at)[0], 0)
    return last


@st.composite
def cql_corrupted(draw) -> tuple[list, bytes, list[int], int]:
    """Valid answers to every call, the k-th made certainly malformed (then the rest as sent)."""
    plan = draw(cql_plans(setup=False))
    frames = draw(cql_frames(plan, valid=True))
    what = draw(st.sampled_from(CQL_CORRUPTIONS))
    # a corruption of rows: one of the answers that has rows, where there is one
    with_rows = [n for n, f in enumerate(frames) if not f[1] and f[4][:4] == pack(">i", cql.ROWS)]
    if what in ("row count", "row lengths", "last cell past") and with_rows:
        k = draw(st.sampled_from(with_rows))
    else:
        k = draw(st.integers(0, len(frames) - 1))
    version, flags, sid, opcode, body = frames[k]
    length = None
    rows = k in with_rows
    if what == "row count" and rows:  # (16 bytes of head, then the rows)
        count = draw(st.one_of(st.integers(-2**31, -1), st.integers(len(body), 2**31 - 1)))
        body = body[:12] + pack(">i", count) + body[16:]
    elif what == "row lengths" and rows:  # the layout's size (a LazyRow's), a first cell past the
        # rest, or a last cell that runs past the row's end by a little (the compiled path's lazy
        # row checks that the cells end at its end)
        first = draw(st.integers(0, 5))
        if draw(st.booleans()):
            lengths = (draw(st.integers(6, 2**31 - 1)), 5 - first)
        else:
            lengths = (first, 5 - first + draw(st.sampled_from([1, 2, 3, 2**31 - 6])))
        body = (body[:12] + pack(">ii", 1, lengths[0]) + bytes(first) + pack(">i", lengths[1])
                + bytes(5 - first))
    elif what == "last cell past" and rows:  # the body's last cell longer than what is left of it
        at = last_cell(body)
        left = len(body) - at - 4
        size = left + draw(st.sampled_from([1, 1, 2, 2**31 - 1 - left]))
        body = body[:at] + pack(">i", size) + body[at + 4:]
    elif what in ("row count", "row lengths", "last cell past", "body cut short"):
        # anywhere, or in the last few bytes (in the last cell, or its length)
        body = body[:draw(st.one_of(st.integers(0, len(body) - 1), st.integers(max(len(body) - 4, 0),
                                                                                len(body) - 1)))]
    elif what == "negative length":
        length = draw(st.integers(-2**31, -1))
    elif what == "length past the limit":
        length = draw(st.integers(cql.MAX_FRAME + 1, 2**31 - 1))
    elif what == "nobody's stream":
        sid = draw(st.integers(1000, 32767))
    else:
        opcode = draw(st.integers(0, 255).filter(lambda o: o not in (cql.RESULT, cql.ERROR)))
    encoded = [cql_frame(*f) for f in frames]
    encoded[k] = cql_frame(version, flags, sid, opcode, body, length)
    return plan, b"".join(encoded), draw(CUTS), k


@pytest.mark.parametrize("path", PATHS)
@FUZZ
@given(case=cql_corrupted())
def test_a_malformed_cql_frame_breaks_the_connection_and_fails_every_call_in_flight(path, case):
    plan, data, cuts, k = case
    got = cql_run(path, plan, data, cuts)
    check_cql(got)
    assert got["broken"] is not None and got["broken"][0] == "MalformedAnswer", got
    answered = 0
    for (_, ops), answers in zip(plan, got["calls"], strict=True):
        names = [a[1] if a[0] == "failed" else "ok" for a in answers]
        assert len(names) == len(ops), (names, ops)  # every step has its answer
        at = names.index("MalformedAnswer") if "MalformedAnswer" in names else len(names)
        # answered before the break (ok, or the server's error); the step in flight then failed
        # with MalformedAnswer; no node for the steps after it
        assert all(n == "ok" or server_kind(n) for n in names[:at]), names
        assert names[at + 1:] == ["NoHostAvailable"] * len(names[at + 1:]), names
        answered += at
    assert answered == k, (answered, k, got)  # each frame before the broken one answered one step


@FUZZ
@given(case=cql_cases(), other_cuts=CUTS)
def test_cql_receive_paths_agree_on_every_stream(case, other_cuts):
    """The compiled path and the Python path, the same pieces: the same for every call; the
    Python path with other pieces: the same again."""
    plan, data, cuts = case
    python = cql_run("Python", plan, data, cuts)
    if COMPILED is not None:
        assert cql_run("C", plan, data, cuts) == python
    assert unwritten(cql_run("Python", plan, data, other_cuts)) == unwritten(python)


def layout_row(first: int, last: int, values: bytes = b"abcde") -> bytes:
    """A read's answer of one row at the learnt layout's size (13 bytes after the head of 16, as
    a LazyRow's): a first cell of length first, then a last cell of length last, over values."""
    return (pack(">iiiii", cql.ROWS, cql.NO_METADATA, 2, 1, first) + values[:max(first, 0)] + pack(">i", last)
            + values[max(first, 0):])


def past_the_answer(size: int) -> str:
    """The end of the message of a connection broken by databases/cassandra/protocol/cql.py's check
    that a cell fits in the body."""
    return f"an answer that does not parse (ValueError: a cell of {size} bytes runs past the answer)"


@st.composite
def layout_rows(draw) -> tuple[tuple, bytes, list[int], tuple]:
    """(call, stream, cuts, what the call gets): one read, a chain's (which the compiled path
    answers itself, trying a LazyRow) or a single execute's, answered with one row at the
    layout's size whose first cell fits and whose last cell's length is what fills the row, a
    byte or two either side, a null or a long way past: the lengths near the body's end that the
    check of a cell against the body (Columns._row) and the compiled lazy row's check that its
    cells end at its end (csrc/cql.c) decide. What the call gets: a LazyRow where the cells fill
    the row, a dict where they end before it (its last bytes left over), a break past it."""
    first = draw(st.sampled_from([2, 0, 5, -1, 1, 3, 4]))
    left = 5 - max(first, 0)  # the bytes after the last cell's length
    last = draw(st.sampled_from([left + 1, left, left - 1, left + 2, left - 2, -1, 2**31 - 1]))
    values = bytes(c & 0x7F for c in draw(st.binary(min_size=5, max_size=5)))
    f0 = None if first < 0 else values[:first].decode()
    f1 = None if last < 0 else values[max(first, 0):][:last].decode()
    if last > left:
        got = ("broken", past_the_answer(last))
    elif max(last, 0) == left:
        got = ("ok", ("LazyRow", repr({k: v for k, v in (("f0", f0), ("f1", f1)) if v is not None})))
    else:
        got = ("ok", ("dict", repr({"f0": f0, "f1": f1})))
    call = draw(st.sampled_from([("chain", (READ,)), ("one", (READ,))]))
    return call, one_read(layout_row(first, last, values)), draw(CUTS), got


def check_layout_row(got: dict, expected: tuple) -> None:
    [answers] = got["calls"]
    if expected[0] == "broken":
        assert got["broken"] is not None and got["broken"][0] == "MalformedAnswer", got
        assert got["broken"][1].endswith(expected[1]), got["broken"]
        assert answers == [failed("MalformedAnswer", got["broken"][1])], answers
    else:
        assert got["broken"] is None, got["broken"]
        assert answers == [("ok", [expected[1]])], answers


@pytest.mark.parametrize("path", PATHS)
@settings(FUZZ, max_examples=100)
@given(case=layout_rows())
def test_a_row_of_the_layouts_size_is_lazy_only_where_its_cells_fill_it(path, case):
    call, data, cuts, expected = case
    got = cql_run(path, [call], data, cuts)
    check_cql(got)
    check_layout_row(got, expected)


# -- HBase ----------------------------------------------------------------------------------------

GET, GET_NOW, PUT = "get", "get-now", "put"  # a LazyCells (found_cells), cells decoded at once, a put
CLASSES = ["org.apache.hadoop.hbase.NotServingRegionException", "java.io.IOException",
           "org.apache.hadoop.hbase.RegionTooBusyException", "", "a.b.Odd Name!"]


def hbase_make(step):
    op, key = step
    if op == PUT:
        return b"Mutate", hm.field(1, key), hm.decode_mutate
    return b"Get", hm.field(1, key), hm.found_cells if op == GET else hm.decode_get


def hbase_answer(ok: bool, value) -> tuple:
    if not ok:  # (the server's exceptions by their class's name, after "remote:")
        remote = "remote:" if isinstance(value, hm.RemoteError) else ""
        return failed(remote + type(value).__name__, str(value))
    if isinstance(value, hm.LazyCells):
        return ("ok", looked_at(value))
    return ("ok", repr(value))


async def hbase_scenario(start: int, plan: list[tuple[str, ...]], data: bytes, cuts: list[int]) -> dict:
    """The plan's chains in flight on one connection (call ids from start + 1 on, wrapping round
    CALL_IDS), data fed in pieces; what each chain got once the bytes were received, and once
    the RegionServer closed the connection."""
    conn = hr.RpcConnection("me", 30, "test:16020")
    conn.connection_made(Transport())
    conn._call_id = start
    chains = [conn.run([(op, b"k%d-%d" % (n, s)) for s, op in enumerate(ops)], hbase_make)
              for n, ops in enumerate(plan)]
    await asyncio.sleep(0)
    with bounded(), memory_bounded(len(data)):
        feed(conn, data, cuts)

    def answers(chain):
        return [hbase_answer(ok, v) for ok, v, _, _ in chain.result()] if chain.done() else [("waiting",)]

    received = {"calls": [answers(c) for c in chains], "broken": broken_state(conn),
                "inflight": sorted(conn._inflight), "written": conn.transport.written}
    conn.connection_lost(None)
    await asyncio.sleep(0)
    return {**received, "closed": [answers(c) for c in chains]}


def hbase_run(path: str, start: int, plan, data: bytes, cuts: list[int]) -> dict:
    with receive_path(hr, path):
        return asyncio.run(hbase_scenario(start, plan, data, cuts))


def check_hbase(got: dict) -> None:
    """What holds for any stream: see the module's docstring."""
    calls, broken = got["calls"], got["broken"]
    seen = [k for answers in calls for k in kinds(answers)]
    assert all(k == "MalformedAnswer" or k.startswith("remote:") for k in seen), seen
    if broken is None:
        assert "MalformedAnswer" not in seen, got
        waiting = sum(answers == [("waiting",)] for answers in calls)
        assert waiting <= len(got["inflight"]), got
    else:
        assert broken[0] == "MalformedAnswer", broken
        assert got["inflight"] == [] and [("waiting",)] not in calls, got
    closed = [k for answers in got["closed"] for k in kinds(answers)]
    assert [("waiting",)] not in got["closed"], got["closed"]
    assert all(k in ("MalformedAnswer", "ConnectionResetError") or k.startswith("remote:")
               for k in closed), closed


@st.composite
def hbase_plans(draw) -> tuple[int, list[tuple[str, ...]]]:
    start = draw(st.sampled_from([0, 120, hm.CALL_IDS - 2]))  # one-byte ids, two-byte ids, going round
    plan = [tuple(draw(st.lists(st.sampled_from([GET, GET, GET_NOW, PUT]), min_size=1, max_size=4)))
            for _ in range(draw(st.integers(1, 5)))]
    return start, plan


def call_ids(start: int, count: int) -> list[int]:
    out, cid = [], start
    for _ in range(count):
        cid = cid + 1 if cid < hm.CALL_IDS else 1
        out.append(cid)
    return out


def hbase_message(header: bytes, body: bytes | None, length: int | None = None) -> bytes:
    msg = hm.varint(len(header)) + header + (b"" if body is None else hm.varint(len(body)) + body)
    return pack(">I", len(msg) if length is None else length) + msg


@st.composite
def hbase_parts(draw, cid: int, op: str | None, valid: bool = False) -> tuple[bytes, bytes | None]:
    """(header, body) of an answer to call cid: one that fits op (a row's cells, a put's empty
    answer), a server exception, or anything."""
    header = hm.number(1, cid)
    if not valid and draw(st.integers(0, 5)) == 0:
        header += hm.number(9, draw(st.integers(0, 300)))  # a field it does not know: skipped
    what = draw(st.sampled_from(["error"] + ([op, op, op] if op is not None else [GET, PUT, "none"])))
    if what == "error":
        name = draw(st.sampled_from(CLASSES))
        return header + hm.field(2, hm.field(1, name.encode()) + hm.field(2, b"it broke\n\tat here")), None
    if what == "none":  # a header alone
        return header, None
    if what == PUT:
        return header, draw(st.sampled_from([b"", hm.field(1, hm.number(1, 1))]))
    text = ASCII if valid else TEXT
    cells = b"".join(hbase_cell(draw(text), draw(text)) for _ in range(draw(st.integers(0, 3))))
    body = draw(st.sampled_from([hm.field(1, cells), hm.number(9, 1) + hm.field(1, cells)]))
    if not valid and draw(st.integers(0, 2)) == 0:  # not found, or bytes that may not decode
        body = draw(st.one_of(st.sampled_from([b"", hm.field(1, hm.number(2, 0))]), st.binary(max_size=12)))
    return header, body


@st.composite
def hbase_frames(draw, start: int, plan, valid: bool = False) -> list[tuple[bytes, bytes | None, str | None]]:
    """(header, body, op of the call answered) of answers to the chains' first calls (in any
    order), then, unless valid, some to the ids after them (later steps, or nobody's)."""
    ids = call_ids(start, len(plan) + 6)
    order = list(draw(st.permutations(range(len(plan)))))
    if not valid:
        order += draw(st.lists(st.integers(len(plan), len(plan) + 5), max_size=4))
    ops = [plan[n][0] if n < len(plan) else None for n in order]
    return [(*draw(hbase_parts(ids[n], op, valid)), op) for n, op in zip(order, ops, strict=True)]


@st.composite
def hbase_mutation(draw, header: bytes, body: bytes | None) -> bytes:
    """One message with one thing changed: its length (huge, off by a little), its header
    (another call, an exception that does not parse, bytes), its body (cut, extended, a bit
    flipped, its length field or not adjusted)."""
    length = None
    full = len(hbase_message(header, body)) - 4
    what = draw(st.sampled_from(["length", "length", "call", "header", "exception", "body", "flip"]))
    if what == "length":
        length = draw(st.one_of(st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**32 - 1, full + 1,
                                                 max(full - 1, 0)]), st.integers(0, 2**32 - 1)))
    elif what == "call":
        header = hm.number(1, draw(st.integers(0, 2**35)))
    elif what == "header":
        header = draw(st.binary(max_size=6))
    elif what == "exception":
        garbage = draw(st.sampled_from([b"\x0f", b"\x0a\x05ab", hm.field(1, b"a\x00b"), b"\x08\xff"]))
        header += hm.field(2, garbage)
    elif what == "body":
        body = (body or b"")
        body = draw(st.sampled_from([body[:len(body) // 2], body + b"\x01\x02", b"\x80"]))
        if draw(st.booleans()):  # a body length that is not the body's: the message does not add up
            msg = hm.varint(len(header)) + header + hm.varint(len(body) + 1) + body
            return pack(">I", len(msg)) + msg
    elif what == "flip" and header:
        at = draw(st.integers(0, len(header) - 1))
        header = header[:at] + bytes([header[at] ^ (1 << draw(st.integers(0, 7)))]) + header[at + 1:]
    return hbase_message(header, body, length)


@st.composite
def hbase_cases(draw) -> tuple[int, list, bytes, list[int]]:
    start, plan = draw(hbase_plans())
    how = draw(st.sampled_from(["random", "valid", "mutated", "mutated", "mutated"]))
    if how == "random":
        data = draw(st.binary(max_size=300))
    else:
        frames = draw(hbase_frames(start, plan))
        encoded = [hbase_message(header, body) for header, body, _ in frames]
        if how == "mutated":
            for k in draw(st.sets(st.integers(0, len(frames) - 1), min_size=1, max_size=2)):
                encoded[k] = draw(hbase_mutation(*frames[k][:2]))
            data = draw(stream_mutations(b"".join(encoded)))
        else:
            data = b"".join(encoded)
    return start, plan, data, draw(CUTS)


@pytest.mark.parametrize("path", PATHS)
@FUZZ
@given(case=hbase_cases())
def test_hbase_any_bytes_end_in_answers_or_a_named_break(path, case):
    start, plan, data, cuts = case
    check_hbase(hbase_run(path, start, plan, data, cuts))


HBASE_CORRUPTIONS = ["length past the limit", "nobody's call", "header overruns", "body overruns",
                     "message cut short", "exception that does not parse", "body that does not decode"]
# bodies certainly not decoded: a qualifier past its cell (a read's cells decoded at once), a
# result past the answer after another field (found_cells walks to the first cell)
UNDECODABLE = {GET_NOW: hm.field(1, hm.field(1, b"\x1a\x09ab")),
               GET: hm.number(9, 1) + hm.field(1, b"\x0a\x09ab")}


@st.composite
def hbase_corrupted(draw) -> tuple[int, list, bytes, list[int], int]:
    """Valid answers to every chain's first call, the k-th made certainly malformed."""
    start, plan = draw(hbase_plans())
    frames = draw(hbase_frames(start, plan, valid=True))
    k = draw(st.integers(0, len(frames) - 1))
    header, body, op = frames[k]
    cid = dict(hm.fields(header, 0, len(header)))[1]
    what = draw(st.sampled_from(HBASE_CORRUPTIONS))
    if what == "body that does not decode" and op in UNDECODABLE:
        bad = hbase_message(hm.number(1, cid), UNDECODABLE[op])
    elif what == "length past the limit":
        bad = hbase_message(header, body, draw(st.integers(hm.MAX_MESSAGE + 1, 2**32 - 1)))
    elif what == "nobody's call":
        bad = hbase_message(hm.number(1, draw(st.sampled_from([0, hm.CALL_IDS + 1, 2**40]))), body)
    elif what == "header overruns":
        msg = hm.varint(len(header) + draw(st.integers(1, 300))) + header
        bad = pack(">I", len(msg)) + msg
    elif what in ("body overruns", "body that does not decode"):  # (after a header of the call id
        # alone: an exception's answer has no body)
        body, header = body or b"", hm.number(1, cid)
        msg = hm.varint(len(header)) + header + hm.varint(len(body) + draw(st.integers(1, 300))) + body
        bad = pack(">I", len(msg)) + msg
    elif what == "message cut short":
        whole = hbase_message(header, body)
        bad = hbase_message(header, body, len(whole) - 4 - draw(st.integers(1, len(whole) - 4)))
    else:
        garbage = draw(st.sampled_from([b"\x0f", hm.field(1, b"a\x00b"), b"\x0a\x09ab", b"\x08"]))
        bad = hbase_message(hm.number(1, cid) + hm.field(2, garbage), None)
    encoded = [hbase_message(header, body) for header, body, _ in frames]
    encoded[k] = bad
    return start, plan, b"".join(encoded), draw(CUTS), k


@pytest.mark.parametrize("path", PATHS)
@FUZZ
@given(case=hbase_corrupted())
def test_a_malformed_hbase_message_breaks_the_connection_and_fails_every_call_in_flight(path, case):
    start, plan, data, cuts, k = case
    got = hbase_run(path, start, plan, data, cuts)
    check_hbase(got)
    assert got["broken"] is not None and got["broken"][0] == "MalformedAnswer", got
    answered = 0
    for ops, answers in zip(plan, got["calls"], strict=True):
        names = [a[1] if a[0] == "failed" else "ok" for a in answers]
        if "MalformedAnswer" in names:  # the call in flight at the break: failed by it, the chain ends
            assert names.index("MalformedAnswer") == len(names) - 1, names
            answered += len(names) - 1
        else:  # the chain ended before: all its steps, or an exception from the server
            assert len(names) == len(ops) or names[-1] != "ok", (names, ops)
            answered += len(names)
    assert answered == k, (answered, k, got)


@FUZZ
@given(case=hbase_cases(), other_cuts=CUTS)
def test_hbase_receive_paths_agree_on_every_stream(case, other_cuts):
    start, plan, data, cuts = case
    python = hbase_run("Python", start, plan, data, cuts)
    if COMPILED is not None:
        assert hbase_run("C", start, plan, data, cuts) == python
    assert unwritten(hbase_run("Python", start, plan, data, other_cuts)) == unwritten(python)


# -- the inputs that found bugs --------------------------------------------------------------------

ZERO_COLUMNS = pack(">iii", cql.ROWS, 0x0001, 0) + string("ks") + string("t") + pack(">i", 2**31 - 1)


def one_read(body: bytes, opcode: int = cql.RESULT, sid: int = 0, length: int | None = None) -> bytes:
    return cql_frame(0x84, 0, sid, opcode, body, length)


# a read's one row of the learnt layout's size (13 bytes) whose first cell says 9 bytes
LAZY_PAST = pack(">iiiii", cql.ROWS, cql.NO_METADATA, 2, 1, 9) + b"aa" + pack(">i", 3) + b"bbb"

CQL_BUGS = {
    # answered as a LazyRow, which raised struct.error when read (the connection stood)
    "a lazy row whose cells run past it": one_read(LAZY_PAST),
    # 23 bytes: rows of no columns, 2**31 - 1 of them: as many empty dicts (hung, then no memory)
    "rows of no columns": one_read(ZERO_COLUMNS),
    # a last cell of 100 bytes with 4 there: the row was {'f0': 'aa', 'f1': 'abcd'}
    "a last cell cut short": one_read(pack(">iiiii", cql.ROWS, cql.NO_METADATA, 2, 1, 2) + b"aa"
                                      + pack(">i", 100) + b"abcd"),
    # an error whose message is cut short: InvalidRequest 'bad'
    "an error message cut short": one_read(pack(">iH", 0x2200, 50) + b"bad", cql.ERROR),
    # too short to parse: the call failed with kind "error" (struct.error), the other ConnectionShutdown
    "a body that does not parse": one_read(b"\x00\x02"),
    # a frame of 2**31 - 1 bytes: waited for 2 GiB (every call timed out, the connection stayed)
    "a frame longer than the protocol allows": one_read(b"", length=2**31 - 1),
    # (ConnectionError, the calls ConnectionShutdown)
    "a frame of negative length": one_read(b"", length=-7),
    # READY (0x02) in answer to an EXECUTE: decoded as a result
    "an answer that is not a result": one_read(pack(">i", cql.VOID), opcode=0x02),
}


# a read's row whose last cell ends past the body, before it or at it, by the two checks that
# decide (each path, a chain's step and a single execute): what the call gets. Without
# databases/cassandra/protocol/cql.py's check of a cell against the body, a last cell past it is cut
# short (here {'f0': 'ab', 'f1': 'cde'}, the connection standing); without csrc/cql.c's check that a lazy
# row's cells end at its end, the compiled path makes a row of the layout's size whose last cell
# ends past or before it a LazyRow (one that breaks only when read, or not a dict).
CELLS_AT_THE_END = {
    "a last cell a byte past a row": (layout_row(2, 4), ("broken", past_the_answer(4))),
    "a last cell far past a row": (layout_row(2, 2**31 - 1), ("broken", past_the_answer(2**31 - 1))),
    "a last cell past the body after a row that fits": (
        rows_body([[b"aa", b"bbb"], [b"c", b"dd"]], 2)[:-6] + pack(">i", 3) + b"dd",
        ("broken", past_the_answer(3))),
    # the layout's size, the last cell ending before it: decoded at once, a dict (the bytes left
    # over are not looked at)
    "a last cell a byte short of a row": (layout_row(2, 2), ("ok", ("dict", repr({"f0": "ab", "f1": "cd"})))),
    "a null last cell short of a row": (layout_row(2, -1), ("ok", ("dict", repr({"f0": "ab", "f1": None})))),
    # cells that end at the row's end: a LazyRow
    "cells that fill a row": (layout_row(2, 3), ("ok", ("LazyRow", repr({"f0": "ab", "f1": "cde"})))),
    "a null last cell that fills a row": (layout_row(5, -1), ("ok", ("LazyRow", repr({"f0": "abcde"})))),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", list(CELLS_AT_THE_END))
def test_a_read_row_by_where_its_last_cell_ends(path, name):
    body, expected = CELLS_AT_THE_END[name]
    for call in (("chain", (READ,)), ("one", (READ,))):
        for cuts in ([], [1] * 40, [5, 9, 2]):
            got = cql_run(path, [call], one_read(body), cuts)
            check_cql(got)
            check_layout_row(got, expected)


def hbase_bug(header: bytes, body: bytes | None = None, length: int | None = None) -> bytes:
    return hbase_message(header, body, length)


NEXT = pack(">I", 0x01000000)

HBASE_BUGS = {
    # an exception field of wire type 7: ValueError out of buffer_updated, the chain never answered
    "an exception that does not parse": hbase_bug(hm.number(1, 1) + hm.field(2, b"\x0f")),
    # a class name with a NUL: type() refused it, ValueError out of buffer_updated, the chain hung
    "an exception class named with a NUL": hbase_bug(hm.number(1, 1) + hm.field(2, hm.field(1, b"a\x00b"))),
    # (NEXT: the start of a message that is never whole, whose first byte is not 0)
    # the call id's varint runs past its header and message: it was read on from the next message
    # (call 129: nobody's, ConnectionError) or, where a read ended after the message, from stale
    # bytes (call 1: that call failed with ValueError)
    "a call id past its header": pack(">I", 3) + bytes([2, 0x08, 0x81]) + NEXT,
    # no body: its length was read from the next message (ValueError, 1 byte) or stale bytes (0)
    "a header alone": hbase_bug(hm.number(1, 1)) + NEXT,
    # a message of 4 GiB: waited for it
    "a message longer than a Java int": hbase_bug(hm.number(1, 1), b"", length=2**32 - 1),
    # a read's answer found_cells cannot walk: its ValueError was the call's error and every
    # other call's (unnamed)
    "a body that does not decode": hbase_bug(hm.number(1, 1), UNDECODABLE[GET]),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", sorted(CQL_BUGS))
def test_the_cql_inputs_that_found_bugs(path, name):
    # the frame answers stream 0: a single execute's, or a chain's step (which C answers itself)
    one, chain = ("one", (READ,)), ("chain", (READ, UPDATE))
    for plan in ([one, chain], [chain, one]):
        for cuts in ([], [1] * 40, [5, 9, 2]):
            got = cql_run(path, plan, CQL_BUGS[name], cuts)
            check_cql(got)
            assert got["broken"][0] == "MalformedAnswer", got
            assert [answers[0][1] for answers in got["calls"]] == ["MalformedAnswer"] * 2, got


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", sorted(HBASE_BUGS))
def test_the_hbase_inputs_that_found_bugs(path, name):
    results = []
    for cuts in ([], [1] * 40, [7, 3]):
        got = hbase_run(path, 0, [(GET,), (PUT, GET)], HBASE_BUGS[name], cuts)
        check_hbase(got)
        assert got["broken"][0] == "MalformedAnswer" and got["calls"][0][-1][1] == "MalformedAnswer", got
        results.append(got)
    assert results[1:] == results[:-1]  # the same, however the reads were split


def test_cells_or_a_row_that_do_not_decode_raise_malformed_answer_when_looked_at():
    """A read's cells (hbase: LazyCells) and its one row of the learnt layout (LazyRow) are
    decoded when looked at: one framed right but malformed inside raises MalformedAnswer then
    (before: IndexError, struct.error or UnicodeDecodeError; a value running past its cell read
    the next cell's bytes)."""
    # a cell whose value says 9 bytes, 3 of them in the cell (then the next cell's)
    past = hm.field(1, hm.field(1, b"\x1a\x01q\x32\x09abc") + hbase_cell(b"r", b"s"))
    for body in (hm.field(1, hbase_cell(b"q", b"\xff")), hm.field(1, hm.field(1, b"\x1a\x09ab")), past):
        cells = hm.found_cells(body)
        with pytest.raises(MalformedAnswer, match="cells that do not decode"):
            dict(cells)
    with pytest.raises(ValueError, match="runs past"):
        hm.decode_get(past)
    read, _ = cql_statements()
    for row in ([b"a\xff", b"bbb"], [b"aa", b"\xffbb"]):
        [lazy] = cql.decode_result(rows_body([row], 2), 0, read.columns)
        assert isinstance(lazy, cql.LazyRow)
        with pytest.raises(MalformedAnswer, match="a row that does not decode"):
            dict(lazy)
    # the same size, cells whose lengths do not add up: no LazyRow, decoded at once (on a
    # connection: MalformedAnswer, CQL_BUGS)
    with pytest.raises(struct.error):
        cql.decode_result(LAZY_PAST, 0, read.columns)
