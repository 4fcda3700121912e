"""The native CQL client's codec and routing, on bytes laid out as native_protocol_v4.spec says.

What the client does against a real node (every operation, errors by kind, TLS, login, faults,
a three-node ring) is in the contract suite and tests/integration; here are the parts whose
cases a healthy server rarely shows: rows whose lengths change, nulls, frames split across reads,
late answers to timed-out requests, the routing when nodes are down.
"""

from __future__ import annotations

import asyncio
import random
import struct
from struct import pack
from types import SimpleNamespace

import pytest

from tests.support.loopback import Transport, both_receive_paths
from workbench.bindings.base import chain_outcomes
from workbench.databases.cassandra.binding import _without_nulls
from workbench.databases.cassandra.errors import QueryFailed
from workbench.databases.cassandra.protocol import connection as cqlc
from workbench.databases.cassandra.protocol import cql
from workbench.databases.cassandra.protocol import session as cqls
from workbench.databases.cassandra.protocol.routing import TokenAwareRouting
from workbench.databases.cassandra.protocol.settings import CqlSettings
from workbench.protocols.wire import FIRST_ROW

VARCHAR, INT = 0x000D, 0x0009
COMPILED = cqlc._fast  # workbench._speedups where it is built
LOCAL = CqlSettings(hosts=("127.0.0.1",), keyspace=None, read_timeout_ms=2000)


receive_path = both_receive_paths(cqlc)  # every test here runs on both receive paths


def string(s: str) -> bytes:
    return pack(">H", len(s)) + s.encode()


def cell(value: bytes | None) -> bytes:
    return pack(">i", -1) if value is None else pack(">i", len(value)) + value


def spec(name: str, kind: int = VARCHAR) -> bytes:
    return string(name) + pack(">H", kind)


def prepared(params: list[tuple[str, int]], columns: list[tuple[str, int]] | None, keys: list[int],
             version: int = 4) -> bytes:
    """A PREPARED result body after its kind: id, bind metadata, result metadata."""
    body = pack(">H", 4) + b"\x01\x02\x03\x04" + pack(">ii", 0x0001, len(params))
    if version >= 4:
        body += pack(">i", len(keys)) + b"".join(pack(">H", k) for k in keys)
    body += string("ks") + string("t") + b"".join(spec(n, k) for n, k in params)
    if columns is None:
        return body + pack(">ii", 0x0004, 0)
    return body + pack(">ii", 0x0001, len(columns)) + string("ks") + string("t") + b"".join(
        spec(n, k) for n, k in columns)


def rows_body(rows: list[list[bytes | None]], ncols: int) -> bytes:
    """A Rows result without metadata (the answer to EXECUTE with skip_metadata), flagged as
    Cassandra 5 flags it: no metadata, global table spec."""
    return (pack(">iiii", cql.ROWS, cql.NO_METADATA | 0x0001, ncols, len(rows))
            + b"".join(cell(v) for row in rows for v in row))


def statement(params, columns, keys, version=4, consistency="QUORUM") -> cql.Statement:
    # (the binding names its key column, y_id, for protocol 3's routing)
    return cql.Statement("SELECT", cql.CONSISTENCY[consistency], prepared(params, columns, keys, version), 0,
                         version, "y_id")


def test_a_prepared_read_binds_its_key_and_routes_by_it():
    stmt = statement([("y_id", VARCHAR)], [("field0", VARCHAR), ("field1", VARCHAR)], [0])
    assert stmt.id == b"\x01\x02\x03\x04" and stmt.routing == 0 and stmt.skip
    assert stmt.columns.names == ("field0", "field1")
    # id, QUORUM (4), values + skip_metadata, one value: the key's length and bytes
    assert stmt.body(("user1",)) == (pack(">H", 4) + b"\x01\x02\x03\x04" + pack(">HBH", 4, 0x03, 1)
                                     + cell(b"user1"))
    assert stmt.body((b"raw",)).endswith(cell(b"raw"))
    with pytest.raises(TypeError, match="takes a str, not int"):
        stmt.body((5,))
    with pytest.raises(TypeError, match="takes 1 values, not 2"):
        stmt.body(("a", "b"))


def test_protocol_3_finds_the_key_by_its_name_and_updates_bind_every_value():
    stmt = statement([("field3", VARCHAR), ("y_id", VARCHAR)], None, [], version=3, consistency="ONE")
    assert stmt.routing == 1 and not stmt.skip and stmt.columns is None
    assert stmt.body(("é", "k")).endswith(pack(">HBH", 1, 0x01, 2) + cell("é".encode()) + cell(b"k"))


def test_a_scan_binds_an_int_limit_and_has_no_routing_key():
    stmt = statement([("y_id", VARCHAR), ("[limit]", INT)], [("y_id", VARCHAR)], [])
    assert stmt.routing is None
    assert stmt.body(("k", 7)).endswith(cell(b"k") + cell(pack(">i", 7)))
    with pytest.raises(TypeError, match="takes an int"):
        stmt.body(("k", "7"))


def test_a_bind_variable_of_a_type_it_cannot_write_is_refused_when_prepared():
    with pytest.raises(QueryFailed, match="UnsupportedType"):
        statement([("y_id", 0x000C)], None, [])  # uuid


def test_rows_with_the_same_lengths_take_the_fixed_layout_and_a_change_falls_back():
    columns = cql.Columns([("f0", cql._utf8, VARCHAR), ("f1", cql._utf8, VARCHAR)])
    same = [[b"aa", b"bbb"]] * 3
    assert cql.decode_result(rows_body(same, 2), 0, columns) == [{"f0": "aa", "f1": "bbb"}] * 3
    assert columns.layout is not None and columns.layout[1] == (2, 3)
    # other lengths, a null and non-ASCII text after the layout was learnt: each still exact
    mixed = [[b"a", b"bbb"], [None, b"x"], ["é".encode(), b"bbb"], [b"aa", b"bbb"]]
    assert cql.decode_result(rows_body(mixed, 2), 0, columns) == [
        {"f0": "a", "f1": "bbb"}, {"f0": None, "f1": "x"}, {"f0": "é", "f1": "bbb"},
        {"f0": "aa", "f1": "bbb"}]
    # a row cut short by a layout longer than what is left is read cell by cell
    columns.layout = (cql.Struct(">i100si100s"), (100, 100))
    assert cql.decode_result(rows_body([[b"a", b"b"]], 2), 0, columns) == [{"f0": "a", "f1": "b"}]
    # the usual answer takes the short way (no metadata parsed); one with a paging state does not
    calls = []
    real = cql.read_metadata
    cql.read_metadata = lambda *a: calls.append(a) or real(*a)
    try:
        cql.decode_result(rows_body(same, 2), 0, columns)
        assert calls == []
        paged = pack(">iii", cql.ROWS, cql.NO_METADATA | 0x0002, 2) + cell(b"paging state")
        assert cql.decode_result(paged + pack(">i", 1) + cell(b"a") + cell(b"b"), 0, columns) == [
            {"f0": "a", "f1": "b"}]
        assert len(calls) == 1
    finally:
        cql.read_metadata = real


def test_a_single_row_of_the_learnt_layout_is_decoded_only_when_looked_at_and_exactly():
    columns = cql.Columns([("f0", cql._utf8, VARCHAR), ("f1", cql._utf8, VARCHAR)])
    cql.decode_result(rows_body([[b"aa", b"bbb"]] * 2, 2), 0, columns)  # the layout is learnt
    [row] = cql.decode_result(rows_body([[b"xy", b"zzz"]], 2), 0, columns)
    assert isinstance(row, cql.LazyRow) and row._row is None  # nothing decoded yet
    assert row == {"f0": "xy", "f1": "zzz"} and dict(row.items()) == {"f0": "xy", "f1": "zzz"}
    assert row["f1"] == "zzz" and len(row) == 2 and list(row) == ["f0", "f1"]
    # the same size with other lengths, or with a null: decoded cell by cell, nulls left out
    [other] = cql.decode_result(rows_body([[b"xyz", b"zz"]], 2), 0, columns)
    assert isinstance(other, cql.LazyRow) and other == {"f0": "xyz", "f1": "zz"}
    [lazy_null] = cql.decode_result(rows_body([[b"abcde", None]], 2), 0, columns)
    assert isinstance(lazy_null, cql.LazyRow) and lazy_null == {"f0": "abcde"}
    assert cqls.NativeSession.row([lazy_null]) is lazy_null and cqls.NativeSession.row([]) is None
    assert _without_nulls(lazy_null) is lazy_null  # the binding has nothing to leave out
    # a scan of one row: rows() gives dicts with every column, nulls as None, to pop the key from
    assert cqls.NativeSession.rows([lazy_null]) == [{"f0": "abcde", "f1": None}]
    assert type(cqls.NativeSession.rows([lazy_null])[0]) is dict and cqls.NativeSession.rows(None) == []
    [null] = cql.decode_result(rows_body([[None, b"abcd"]], 2), 0, columns)
    assert not isinstance(null, cql.LazyRow)  # 4 bytes shorter than the layout: decoded at once
    assert _without_nulls(cqls.NativeSession.row([null])) == {"f1": "abcd"}  # what the binding returns
    # more than one row (a scan), or a row that does not fill the body: dicts, decoded at once
    two = cql.decode_result(rows_body([[b"xy", b"zzz"]] * 2, 2), 0, columns)
    assert [type(r) for r in two] == [dict, dict]
    [short] = cql.decode_result(rows_body([[b"x", b"zzz"]], 2), 0, columns)
    assert type(short) is dict and short == {"f0": "x", "f1": "zzz"}


def test_non_text_columns_and_results_with_their_own_metadata_decode():
    # full metadata (global table spec): a varchar, an int and a set<varchar>
    body = (pack(">iii", cql.ROWS, 0x0001, 3) + string("ks") + string("t") + spec("k") + spec("n", INT)
            + string("tags") + pack(">HH", cql.SET, VARCHAR))
    body += pack(">i", 1) + cell(b"k1") + cell(pack(">i", -3)) + cell(pack(">i", 2) + cell(b"x") + cell(b"y"))
    assert cql.decode_result(body, 0, None) == [{"k": "k1", "n": -3, "tags": ["x", "y"]}]
    assert cql.decode_result(pack(">i", cql.VOID), 0, None) is None


def test_failures_are_named_as_the_report_names_them():
    assert cql.failure(TimeoutError("late")).kind == "OperationTimedOut"
    assert cql.failure(ConnectionResetError("gone")).kind == "ConnectionResetError"
    same = QueryFailed("Unavailable", "2 replicas wanted")
    assert cql.failure(same) is same and str(same) == "Unavailable: 2 replicas wanted"
    assert cql.ERROR_KINDS[0x1200] == "ReadTimeout" and cql.ERROR_KINDS[0x1000] == "Unavailable"


def frame(stream: int, opcode: int, body: bytes, flags: int = 0) -> bytes:
    return pack(">BBhBi", 0x84, flags, stream, opcode, len(body)) + body


def feed(conn: cqlc.CqlConnection, data: bytes, sizes: list[int]) -> None:
    """data into the connection's buffer in pieces of the given sizes, as recv_into would."""
    at = 0
    for size in [*sizes, len(data)]:
        piece = data[at:at + size]
        if not piece:
            break
        buf = conn.get_buffer(len(piece))
        buf[:len(piece)] = piece
        conn.buffer_updated(len(piece))
        at += len(piece)


def test_answers_split_across_reads_out_of_order_with_warnings_and_late_ones_dropped():
    async def scenario():
        conn = cqlc.CqlConnection(4, 0.05, "test:9042")
        conn.connection_made(Transport())
        stmt = statement([("y_id", VARCHAR)], [("f0", VARCHAR)], [0])
        got = []

        def one():
            future = asyncio.get_running_loop().create_future()
            call = cqlc._One(future)
            call.stmt, call.body = stmt, stmt.body(("k",))
            conn.send(call, cql.EXECUTE, call.body)
            got.append(future)

        one(), one(), one()
        await asyncio.sleep(0)  # the flush: three requests, one write
        assert len(conn.transport.written) == 3 * (9 + len(stmt.body(("k",)))) and len(conn._inflight) == 3
        warning = pack(">H", 1) + string("careful")
        error = pack(">i", 0x1200) + string("Operation timed out") + b"\x00" * 9
        data = (frame(1, cql.ERROR, error)
                + frame(0, cql.RESULT, warning + rows_body([[b"v"]], 1), flags=0x08))
        feed(conn, data, [5, 17, 3])  # pieces that split the header and the body
        assert got[0].result() == [{"f0": "v"}]
        with pytest.raises(QueryFailed, match="ReadTimeout"):
            got[1].result()
        # the third is never answered in time: OperationTimedOut, and its late answer is dropped
        with pytest.raises(QueryFailed, match="OperationTimedOut"):
            await asyncio.wait_for(got[2], 5)
        assert conn._orphans == {2} and conn.broken is None
        feed(conn, frame(2, cql.RESULT, pack(">i", cql.VOID)), [])
        assert conn._orphans == set() and conn.broken is None
        # an answer on a stream nobody used breaks the connection
        feed(conn, frame(9, cql.RESULT, pack(">i", cql.VOID)), [])
        assert isinstance(conn.broken, ConnectionError)

    asyncio.run(scenario())


class SubConnection(cqlc.CqlConnection):
    """Not exactly CqlConnection: the compiled path reads its fields by name, not at offsets."""


@pytest.mark.parametrize("cls", [cqlc.CqlConnection, SubConnection])
def test_an_answer_larger_than_the_buffer_grows_it_and_the_loops_calls_are_compiled_where_built(receive_path,
                                                                                                  cls):
    """A Rows answer of 150,000 bytes, fed as a socket would fill the free part of the buffer:
    the buffer doubles (twice) and the answer comes whole. With the extension, the loop's three
    calls a wake-up (get_buffer, buffer_updated, _flush) are its builtins bound to the connection."""
    async def scenario():
        conn = cls(4, 30, "test:9042")
        conn.connection_made(Transport())
        hooks = (conn.get_buffer, conn.buffer_updated, conn._flush)
        kind = "builtin_function_or_method" if receive_path == "C" else "method"
        assert all(type(h).__name__ == kind for h in hooks)
        stmt = statement([("y_id", VARCHAR)], [("f0", VARCHAR)], [0])
        future = asyncio.get_running_loop().create_future()
        call = cqlc._One(future)
        call.stmt, call.body = stmt, stmt.body(("k",))
        conn.send(call, cql.EXECUTE, call.body)
        await asyncio.sleep(0)  # the flush (the compiled _flush, where built, as call_soon's callback)
        assert conn.transport.written == cql.HEADER.pack(4, 0, 0, cql.EXECUTE, len(call.body)) + call.body
        value = b"abcdefghij" * 15_000
        data = frame(0, cql.RESULT, rows_body([[value]], 1))
        at, free = 0, []
        while at < len(data):
            buf = conn.get_buffer(-1)
            size = min(len(buf), len(data) - at)
            buf[:size] = data[at:at + size]
            conn.buffer_updated(size)
            free.append(len(buf))
            at += size
        assert free == [65536, 65536, 131072]  # full at 64 KiB and at 128 KiB: doubled each time
        assert len(conn._in) == 262144 and conn._n == 0 and conn._inflight == {}
        return [dict(r) for r in future.result()], value.decode()

    rows, value = asyncio.run(scenario())
    assert rows == [{"f0": value}]


@pytest.mark.parametrize("mode", ["first", "value", "call"])
def test_the_compiled_outcomes_of_a_chain_are_the_pythons(mode):
    """speedups.C.outcomes is base.chain_outcomes: failures through failed(), updates OK, a read's
    row (the value, the first of a list, or row_of's; a dict through without_nulls where given)
    or NOT_FOUND, for answers that are a prefix of the steps."""
    if COMPILED is None:
        pytest.skip("workbench._speedups is not built here")
    from workbench.bindings.base import READ, UPDATE, Status

    class Rows:  # a result that is not a list: row_of decides
        def __init__(self, rows):
            self.rows = rows

    def row_of(value):
        if isinstance(value, Rows):
            return value.rows[0] if value.rows else None
        return cqls.NativeSession.row(value)

    rng = random.Random(5)
    lazy = object()
    values = [[lazy], [{"f0": "a", "f1": None}], [{"f0": "b"}], [], None, [lazy, lazy], (), ({"f3": None},)]
    if mode == "call":
        values += [Rows([{"f2": None}]), Rows([])]
    if mode == "value":
        values += [lazy, {"f4": None}]
    how = {"first": FIRST_ROW, "value": None, "call": row_of}[mode]
    for trial in range(60):
        steps = [(rng.choice([READ, UPDATE]), "k", None) for _ in range(rng.randint(0, 40))]
        answers = []
        for _ in range(rng.randint(0, len(steps))):
            t0 = rng.randint(0, 10**12)
            ok = rng.random() < 0.8
            value = rng.choice(values) if ok else QueryFailed(rng.choice(["ReadTimeout", "Unavailable"]), "x")
            answers.append((ok, value, t0, t0 + rng.randint(0, 10**6)))
        strip = _without_nulls if trial % 3 else None
        got = {}
        for name, fn in (("C", COMPILED.outcomes), ("Python", chain_outcomes)):
            kinds = []

            def failed(exc, kinds=kinds):
                kinds.append(exc.kind)
                return Status.ERROR

            out = fn(steps, answers, READ, Status.OK, Status.NOT_FOUND, failed, how, strip)
            got[name] = ([(s, t0, t1, dict(row) if isinstance(row, dict) else row) for s, t0, t1, row in out],
                         kinds)
        assert got["C"] == got["Python"]
        assert len(got["C"][0]) == len(answers)
    with pytest.raises(TypeError, match="row_of"):
        COMPILED.outcomes([], [], READ, Status.OK, Status.NOT_FOUND, None, "second", None)


def test_the_compiled_statements_of_a_sequence_are_the_pythons_or_none_where_one_is_not_prepared():
    """speedups.C.pending is CassandraBinding._statements where every statement is prepared: a read
    of every field binds read_every to (key,), an update its shape's statement to (*values, key).
    Where a step needs a statement not prepared yet (or values it cannot take) it says None, and
    the Python prepares it."""
    if COMPILED is None:
        pytest.skip("workbench._speedups is not built here")
    from workbench.bindings.base import READ, UPDATE
    from workbench.databases.cassandra.binding import CassandraBinding

    binding = CassandraBinding.__new__(CassandraBinding)
    binding.fields = ("f0", "f1")
    binding._read_every, binding._cache = "read f0 f1", {}
    binding._updates = {("f1",): "update f1", ("f0", "f1"): "update f0 f1"}

    async def never(kind, shape):
        raise AssertionError(f"{kind} {shape} is prepared already")

    binding._prepare = never
    rng = random.Random(8)
    shapes = [{"f1": "v"}, {"f0": "a", "f1": "b"}]
    for _ in range(30):
        steps = [(READ, f"user{rng.randint(0, 99)}", None) if rng.random() < 0.5
                 else (UPDATE, f"user{rng.randint(0, 99)}", dict(rng.choice(shapes)))
                 for _ in range(rng.randint(0, 64))]
        compiled = COMPILED.pending(steps, READ, binding._read_every, binding._updates)
        assert compiled == asyncio.run(binding._statements(steps))
    usual = [(READ, "k", None), (UPDATE, "k", {"f1": "v"})]
    for odd in [(READ, "k", ["f0"]), (UPDATE, "k", {"f0": "v"}), (UPDATE, "k", {"f1": "a", "f0": "b"}),
                (UPDATE, "k", [("f1", "v")])]:
        assert COMPILED.pending([*usual, odd], READ, binding._read_every, binding._updates) is None
    assert COMPILED.pending(usual, READ, None, binding._updates) is None  # no read_every
    assert COMPILED.pending(tuple(usual), READ, binding._read_every, binding._updates) is None


def test_a_chain_whose_steps_all_fail_at_once_ends_without_recursing():
    async def scenario():
        session = cqls.NativeSession(LOCAL)
        session.conns.append(SimpleNamespace(broken=OSError()))  # the one node, down
        stmt = statement([("y_id", VARCHAR)], None, [0])
        answers = await session.chain([stmt((f"k{i}",)) for i in range(5000)], lambda: True)
        assert len(answers) == 5000 and {a[1].kind for a in answers} == {"NoHostAvailable"}
        stopped = await session.chain([stmt(("k",))] * 10, lambda: False)
        assert len(stopped) == 1  # more() is asked before every step after the first

    asyncio.run(scenario())


def test_a_node_that_lost_a_statement_is_given_it_again_once_and_a_broken_answer_breaks_the_connection():
    async def scenario():
        conn = cqlc.CqlConnection(4, 30, "test:9042")
        conn.connection_made(Transport())
        stmt = statement([("y_id", VARCHAR)], [("f0", VARCHAR)], [0])

        def one() -> asyncio.Future:
            future = asyncio.get_running_loop().create_future()
            call = cqlc._One(future)
            call.stmt, call.body = stmt, stmt.body(("k",))
            conn.send(call, cql.EXECUTE, call.body)
            return future

        async def turns() -> None:  # the callbacks and the flush they schedule
            for _ in range(3):
                await asyncio.sleep(0)

        def sent() -> list[tuple[int, int]]:  # (stream, opcode) of every frame written so far
            data, out, at = conn.transport.written, [], 0
            while at < len(data):
                _, _, sid, opcode, size = cql.HEADER.unpack_from(data, at)
                out.append((sid, opcode))
                at += 9 + size
            return out

        unprepared = pack(">i", cql.UNPREPARED) + string("Prepared query with ID 01020304 not found") + \
            pack(">H", 4) + b"\x01\x02\x03\x04"
        first = one()
        await turns()
        feed(conn, frame(0, cql.ERROR, unprepared), [])
        await turns()
        assert sent() == [(0, cql.EXECUTE), (1, cql.PREPARE)]  # the statement's CQL, on the same node
        again = pack(">i", cql.PREPARED) + prepared([("y_id", VARCHAR)], None, [0])
        feed(conn, frame(1, cql.RESULT, again), [])
        await turns()
        assert sent()[-1] == (2, cql.EXECUTE) and not first.done()  # the same request again
        feed(conn, frame(2, cql.RESULT, rows_body([[b"v"]], 1)), [])
        assert first.result() == [{"f0": "v"}]
        # a second Unprepared for the same request is its error, not a loop
        second = one()
        await turns()
        feed(conn, frame(3, cql.ERROR, unprepared), [])
        await turns()
        feed(conn, frame(4, cql.RESULT, again), [])
        await turns()
        feed(conn, frame(5, cql.ERROR, unprepared), [])
        with pytest.raises(QueryFailed, match="Unprepared"):
            second.result()
        # rows that claim more cells than the frame holds: that request fails, the connection goes
        third = one()
        await turns()
        feed(conn, frame(6, cql.RESULT, pack(">iiii", cql.ROWS, cql.NO_METADATA, 1, 3) + cell(b"v")), [])
        with pytest.raises(QueryFailed, match="MalformedAnswer"):
            third.result()
        assert type(conn.broken).__name__ == "MalformedAnswer"

    asyncio.run(scenario())


def run_chains(conn_more_flip: int, session_route: bool = False) -> tuple[list, bytes, set, dict]:
    """Three chains of reads and updates over one connection, answered by a script that has every
    kind of answer a chain's step can get; what each chain got, and every byte written.
    session_route: routed by a NativeSession of that one connection (no step without a node)."""
    async def scenario():
        conn = cqlc.CqlConnection(4, 30, "test:9042")
        conn.connection_made(Transport())
        read = statement([("y_id", VARCHAR)], [("f0", VARCHAR), ("f1", VARCHAR)], [0])
        update = statement([("f0", VARCHAR), ("y_id", VARCHAR)], None, [1])
        asked = [0]

        def more() -> bool:
            asked[0] += 1
            return asked[0] != conn_more_flip

        def route(stmt, params):
            return None if params[-1] == "nohost" else conn

        if session_route:
            session = cqls.NativeSession(LOCAL)
            session.conns.append(conn)
            route = session._route

        loop = asyncio.get_running_loop()
        chains = []
        steps = [
            [read(("k1",)), update(("v", "k1")), read(("k2",)), read((5,)), read(("k3",)), read(("k4",))],
            [update(("w", "k5")), read(("k6",)), read(("k6" if session_route else "nohost",)), read(("k7",)),
             update(("x", "k8"))],
            [read(("k9",)), update(("é", "k10")), read(("\ud800",)), read(("k11",)), read((b"k12",))],
        ]
        conn._orphans.add(7)  # a late answer awaited there: the stream id is skipped
        for items in steps:
            done = loop.create_future()
            cqlc._Chain(route, items, more, done).go(True)
            chains.append(done)
        await asyncio.sleep(0)
        row = rows_body([[b"aa", b"bbb"]], 2)
        other = rows_body([[b"a", b"b"]], 2)  # the same size, other lengths (a second layout)
        warned = pack(">H", 1) + string("careful") + row
        error = pack(">i", 0x2200) + string("bad value") + b""
        # the server's answers, in an order a node might use: updates get Void (the third an
        # error); reads go through this script
        reads = [row, row, row, rows_body([], 2), row, other, (warned, 0x08), (error, 0), row]
        answered, updates = 0, 0
        while any(not c.done() for c in chains) and answered < 40:
            pending = sorted(conn._inflight)
            if not pending:
                await asyncio.sleep(0)
                continue
            data = b""
            for sid in pending[::-1]:  # newest first
                if conn._inflight[sid].stmt is update:
                    updates += 1
                    body, flags = (error, 0) if updates == 3 else (pack(">i", cql.VOID), 0)
                else:
                    answer = reads[answered % len(reads)]
                    body, flags = answer if isinstance(answer, tuple) else (answer, 0)
                    answered += 1
                opcode = cql.ERROR if body is error else cql.RESULT
                data += frame(sid, opcode, body, flags)
            feed(conn, data, [len(data) // 3, 11])
            await asyncio.sleep(0)
        got = []
        for c in chains:
            got.append([(ok, value.kind if isinstance(value, QueryFailed)
                         else [dict(r) for r in value] if value is not None else None)
                        for ok, value, t0, t1 in c.result()])
            assert all(t0 <= t1 for _, _, t0, t1 in c.result())
        return got, conn.transport.written, set(conn._orphans), dict(conn._inflight), (conn.sent, conn.failed)

    return asyncio.run(scenario())


@pytest.mark.parametrize("flip,session_route", [(0, False), (6, False), (0, True)])
def test_chains_get_the_same_answers_and_send_the_same_bytes_on_both_receive_paths(monkeypatch, flip,
                                                                                    session_route):
    if COMPILED is None:
        pytest.skip("workbench._speedups is not built here")
    slow = []  # frames answered by the Python _answer
    answer = cqlc.CqlConnection._answer
    monkeypatch.setattr(cqlc.CqlConnection, "_answer", lambda self, *a: (slow.append(a[1]), answer(self, *a)))
    monkeypatch.setattr(cqlc, "_fast", COMPILED)
    compiled = run_chains(flip, session_route)
    in_c = len(slow)
    monkeypatch.setattr(cqlc, "_fast", None)
    python = run_chains(flip, session_route)
    assert compiled == python
    assert 0 < in_c < len(slow) - 4  # the usual answers were answered in C, the others in Python
    got, written, orphans, inflight, (sent, failed) = python
    assert orphans == {7} and inflight == {}
    flat = [answer for chain in got for answer in chain]
    kinds = {value if not ok else "rows" if value else "void" if value is None else "none"
             for ok, value in flat}
    assert {"rows", "void", "none", "TypeError", "UnicodeEncodeError"} <= kinds, flat
    assert ("NoHostAvailable" in kinds) != session_route
    assert any(not ok and value == "InvalidRequest" for ok, value in flat), flat  # the error answer
    assert [{"f0": "a", "f1": "b"}] in [value for _, value in flat]  # the second layout, decoded
    # the per-node figures: every request that went out (not those refused before), and the
    # error answers among them, counted alike by both paths (compared above)
    frames, at = 0, 0
    while at < len(written):
        frames, at = frames + 1, at + 9 + cql.HEADER.unpack_from(written, at)[4]
    assert sent == sum(1 for ok, value in flat if ok or value == "InvalidRequest") == frames
    assert failed == sum(1 for ok, value in flat if value == "InvalidRequest") > 0
    if flip:
        assert sum(len(chain) for chain in got) < 6 + 5 + 5


def test_the_compiled_path_takes_only_classes_whose_fields_are_slots_and_keeps_its_own_otherwise(
        monkeypatch):
    """C reads and writes _Chain's and LazyRow's slots where their member descriptors say they
    are; a class without one of them is refused, and the classes in use stay in use."""
    if COMPILED is None:
        pytest.skip("workbench._speedups is not built here")

    class Chain:  # the same names, in a __dict__
        def __init__(self):
            self.items = self.more = self.answers = self.done = self.route = None

    class Row:
        __slots__ = ("_columns", "_layout", "_buf", "_i")  # no _row

    route = TokenAwareRouting.route
    with pytest.raises(TypeError, match="slot"):
        COMPILED.cql_setup(Chain, cql.LazyRow, route)
    with pytest.raises(TypeError, match="_row"):
        COMPILED.cql_setup(cqlc._Chain, Row, route)
    from workbench.databases.hbase.protocol import rpc as hbase_native
    with pytest.raises(TypeError, match="slot"):
        COMPILED.hbase_setup(Chain, hbase_native._finish, hbase_native._METHODS, hbase_native.CALL_IDS,
                             hbase_native.found_cells, hbase_native.decode_mutate, hbase_native.LazyCells)
    with pytest.raises(TypeError, match="_body"):  # LazyCells's slots, checked with the chain's
        COMPILED.hbase_setup(hbase_native._Chain, hbase_native._finish, hbase_native._METHODS,
                             hbase_native.CALL_IDS, hbase_native.found_cells, hbase_native.decode_mutate, Row)
    with pytest.raises(ValueError, match="kind"):
        COMPILED.conn_setup(cqlc.CqlConnection, "thrift")
    monkeypatch.setattr(cqlc, "_fast", COMPILED)
    compiled = run_chains(0)
    monkeypatch.setattr(cqlc, "_fast", None)
    assert compiled == run_chains(0)


def test_the_nodes_and_ring_come_from_the_system_tables_of_the_contact_points_datacenter():
    async def scenario():
        session = cqls.NativeSession(CqlSettings(hosts=("127.0.0.1",), keyspace="ycsb"))
        session.hosts.append(("127.0.0.1", 9042))
        session.conns.append("contact")
        tables = {
            "SELECT * FROM system.local": [{"partitioner": "org.apache.cassandra.dht.Murmur3Partitioner",
                                           "data_center": "dc1", "tokens": ["0", "-100"]}],
            "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'ycsb'": [
                {"replication": {"class": "org.apache.cassandra.locator.NetworkTopologyStrategy",
                                 "dc1": "2", "dc2": "3"}}],
            "SELECT * FROM system.peers_v2": [
                {"peer": "127.0.0.2", "native_address": "127.0.0.2", "native_port": 9042,
                 "data_center": "dc1", "tokens": ["100"]},
                {"peer": "127.0.0.3", "native_address": "0.0.0.0", "native_port": 9043,
                 "data_center": "dc1", "tokens": ["200"]},
                {"peer": "127.0.0.4", "native_address": "127.0.0.4", "native_port": 9042,
                 "data_center": "dc2", "tokens": ["50"]},  # another datacenter: never used
            ],
        }
        opened = []

        async def query(conn, cql):
            return tables[cql]

        async def open_(host):
            opened.append(host)
            raise ConnectionRefusedError("down for now")  # then tried again in the background

        session.query, session._open = query, open_
        session._reconnect = lambda index: opened.append(("again", index))
        await session._discover("contact")
        assert session.hosts == [("127.0.0.1", 9042), ("127.0.0.2", 9042), ("127.0.0.3", 9043)]
        assert session.tokens.ring == [-100, 0, 100, 200] and session.tokens.owners == [0, 0, 1, 2]
        assert session.routing.ring is session.tokens.ring  # the routing uses the ring just read
        assert opened == [("127.0.0.2", 9042), ("127.0.0.3", 9043), ("again", 1), ("again", 2)]
        # two replicas in dc1 (its own count, not dc2's): each token's owner and the next host round
        assert session.tokens.replicas == [(0, 1), (0, 1), (1, 2), (2, 0)]
        # a discovered node that was not reached is named, with why
        assert session.unreachable == ["127.0.0.2:9042 (ConnectionRefusedError: down for now)",
                                       "127.0.0.3:9043 (ConnectionRefusedError: down for now)"]

    asyncio.run(scenario())


def test_a_map_column_decodes_to_a_dict_and_a_short_one_is_refused():
    def element(b: bytes | None) -> bytes:
        return struct.pack(">i", -1) if b is None else struct.pack(">i", len(b)) + b

    decode, kind, end = cql.read_option(struct.pack(">HHH", 0x0021, 0x000D, 0x000D), 0)
    assert (kind, end) == (0x0021, 6)
    data = struct.pack(">i", 2) + element(b"class") + element(b"SimpleStrategy") \
        + element(b"replication_factor") + element(None)
    assert decode(data) == {"class": "SimpleStrategy", "replication_factor": None}
    with pytest.raises(ValueError, match="runs past its map"):
        decode(data[:-10] + struct.pack(">i", 50))


def _event(kind: str, change: str, address: bytes, port: int) -> bytes:
    def string(text: str) -> bytes:
        return struct.pack(">H", len(text)) + text.encode()

    return string(kind) + string(change) + bytes([len(address)]) + address + struct.pack(">i", port)


def test_events_are_read_and_others_refused():
    assert cql.read_event(_event("TOPOLOGY_CHANGE", "NEW_NODE", bytes([127, 0, 0, 4]), 9042)) == (
        "TOPOLOGY_CHANGE", "NEW_NODE", ("127.0.0.4", 9042))
    assert cql.read_event(_event("STATUS_CHANGE", "UP", bytes(15) + b"\x01", 9043))[2] == ("::1", 9043)
    with pytest.raises(ValueError, match="SCHEMA_CHANGE"):
        cql.read_event(_event("SCHEMA_CHANGE", "CREATED", b"", 0))
    with pytest.raises(ValueError, match="inet"):
        cql.read_event(_event("STATUS_CHANGE", "UP", b"\x7f\x00", 9042))


def test_an_event_frame_reaches_the_control_connections_listener_on_both_receive_paths():
    got = []

    async def scenario():
        conn = cqlc.CqlConnection(4, 30, "test:9042")
        conn.connection_made(Transport())
        conn.on_event = got.append
        body = _event("STATUS_CHANGE", "UP", bytes([127, 0, 0, 2]), 9042)
        feed(conn, frame(-1, cql.EVENT, body), [5])
        assert conn.broken is None  # (an event is not an answer nobody asked for)
        return body

    assert got == [asyncio.run(scenario())]


def test_a_session_reads_the_ring_again_on_a_topology_event_and_reconnects_an_up_node(monkeypatch):
    sleep = asyncio.sleep

    async def no_wait(_):  # the refresh's waits for the system tables to catch up
        await sleep(0)

    async def scenario():
        session = cqls.NativeSession(CqlSettings(hosts=("127.0.0.1",), keyspace="ycsb", read_timeout_ms=1000))
        session.hosts[:] = [("127.0.0.1", 9042), ("127.0.0.2", 9042), ("127.0.0.3", 9042)]
        live = SimpleNamespace(broken=None, sent=0, failed=0, on_lost=None, close=lambda: None)
        session.conns[:] = [live, None, live]
        refreshed, reconnected = [], []

        async def refresh(conn):  # the system tables now list node 4 and no longer node 3
            refreshed.append(conn)
            if ("127.0.0.4", 9042) not in session.hosts:
                session.hosts.append(("127.0.0.4", 9042))
                session.conns.append(None)
                session._gone = {2}
                return [3]
            return []

        session._refresh = refresh
        session._reconnect = lambda index, at_once=False: reconnected.append((index, at_once))
        session._control = live
        monkeypatch.setattr(cqlc.asyncio, "sleep", no_wait)
        session._on_event(_event("TOPOLOGY_CHANGE", "NEW_NODE", bytes([127, 0, 0, 4]), 9042))
        await session._refreshing
        monkeypatch.setattr(cqlc.asyncio, "sleep", sleep)
        assert refreshed == [live] and reconnected == [(3, True)]
        session._on_event(_event("STATUS_CHANGE", "UP", bytes([127, 0, 0, 2]), 9042))  # known, not connected
        assert reconnected[-1] == (1, True)
        # DOWN: left to the connection's own failures
        session._on_event(_event("STATUS_CHANGE", "DOWN", bytes([127, 0, 0, 1]), 9042))
        assert reconnected[-1] == (1, True) and session.conns[0] is live
        assert [e[:2] for e in session.events] == [("TOPOLOGY_CHANGE", "NEW_NODE"), ("STATUS_CHANGE", "UP"),
                                                   ("STATUS_CHANGE", "DOWN")]

    asyncio.run(scenario())


def test_a_node_that_left_gets_no_new_requests_and_its_connection_closes_once_its_last_are_answered():
    """The ring read again after REMOVED_NODE no longer lists node 2, which goes on serving for its
    ring delay after it announced that it left (`nodetool decommission`): the request in flight to
    it is answered, not failed; no new request goes there; its connection closes once it is idle,
    and what was sent to it stays in the per-node figures. Listed again later (a node added back
    at its old address), it is connected again like a new node."""
    class Closing(Transport):  # closes as asyncio's transports do: connection_lost comes later
        def __init__(self, conn: cqlc.CqlConnection) -> None:
            super().__init__()
            self.conn, self.closed = conn, False

        def close(self) -> None:
            if not self.closed:
                self.closed = True
                asyncio.get_running_loop().call_soon(self.conn.connection_lost, None)

    async def scenario():
        session = cqls.NativeSession(LOCAL)
        session.hosts = [("127.0.0.1", 9042), ("127.0.0.2", 9042)]
        for host, _ in session.hosts:
            conn = cqlc.CqlConnection(4, 2.0, f"{host}:9042")
            conn.connection_made(Closing(conn))
            conn.on_lost = session._lost
            session.conns.append(conn)
        first, second = session.conns
        session._control = first
        peers = [{"peer": "127.0.0.2", "native_address": "127.0.0.2", "native_port": 9042, "tokens": ["100"]}]
        listed = {"peers": peers}

        async def query(conn, cql):
            if cql == "SELECT * FROM system.local":
                return [{"partitioner": "org.apache.cassandra.dht.Murmur3Partitioner", "data_center": "dc1",
                         "tokens": ["0"]}]
            return listed["peers"] if "peers" in cql else []

        session.query = query
        read = statement([("y_id", VARCHAR)], [("f0", VARCHAR)], [0], consistency="ONE")
        future = asyncio.get_running_loop().create_future()
        call = cqlc._One(future)
        call.stmt, call.body = read, read.body(("k",))
        second.send(call, cql.EXECUTE, call.body)  # in flight to node 2 when it leaves

        listed["peers"] = []
        assert await session._refresh(first) == []
        assert session.conns == [first, None] and session._gone == {1}
        assert not second.transport.closed and not future.done()
        assert all(session._route(read, (f"k{i}",)) is first for i in range(20))
        feed(second, frame(0, cql.RESULT, rows_body([[b"v"]], 1)), [])
        assert future.result() == [{"f0": "v"}]  # answered by the node that left
        for _ in range(20):
            await asyncio.sleep(cqls.DRAIN_S)
            if second.broken is not None:
                break
        assert second.transport.closed and not session._draining
        assert session.node_counts()["127.0.0.2:9042"] == (1, 0)
        assert session._control is first and first.broken is None

        listed["peers"] = peers  # added back at its old address
        assert await session._refresh(first) == [1] and session._gone == set()

    asyncio.run(scenario())


def test_a_removed_node_event_drops_the_node_at_once_and_lagging_tables_do_not_bring_it_back(monkeypatch):
    """REMOVED_NODE for node 2: no new request goes there from the event on (a decommissioned
    node serves only for its ring delay, and on a loaded machine the ring read again came later
    than that); the request in flight to it is still answered. Ring reads that still list it (the
    tables lag the event) keep it dropped, until one no longer lists it; a NEW_NODE for it (added
    back at its old address) and a listing bring it back, as does the hold running out."""
    async def scenario():
        session = cqls.NativeSession(LOCAL)
        monkeypatch.setattr(session, "_refresh_soon", lambda change, host: None)  # the test reads the ring
        reconnected = []
        monkeypatch.setattr(session, "_reconnect", lambda index, at_once=False: reconnected.append(index))
        session.hosts = [("127.0.0.1", 9042), ("127.0.0.2", 9042)]
        for host, _ in session.hosts:
            conn = cqlc.CqlConnection(4, 2.0, f"{host}:9042")
            conn.connection_made(Transport())
            conn.on_lost = session._lost
            session.conns.append(conn)
        first, second = session.conns
        session._control = first
        peers = [{"peer": "127.0.0.2", "native_address": "127.0.0.2", "native_port": 9042,
                  "tokens": ["-4611686018427387904"]}]  # a quarter of the ring and half of it wrapped

        async def query(conn, cql):
            if cql == "SELECT * FROM system.local":
                return [{"partitioner": "org.apache.cassandra.dht.Murmur3Partitioner", "data_center": "dc1",
                         "tokens": ["0"]}]
            return peers if "peers" in cql else []

        session.query = query
        await session._refresh(first)
        read = statement([("y_id", VARCHAR)], [("f0", VARCHAR)], [0], consistency="ONE")
        assert {session._route(read, (f"k{i}",)) for i in range(40)} == {first, second}
        future = asyncio.get_running_loop().create_future()
        call = cqlc._One(future)
        call.stmt, call.body = read, read.body(("k",))
        second.send(call, cql.EXECUTE, call.body)  # in flight to node 2 when the event comes

        session._on_event(_event("TOPOLOGY_CHANGE", "REMOVED_NODE", bytes([127, 0, 0, 2]), 9042))
        assert session.conns == [first, None] and session._gone == {1}
        assert all(session._route(read, (f"k{i}",)) is first for i in range(40))
        feed(second, frame(0, cql.RESULT, rows_body([[b"v"]], 1)), [])
        assert future.result() == [{"f0": "v"}]  # answered, not failed
        assert await session._refresh(first) == [] and session._gone == {1}  # still listed: held
        assert session.conns == [first, None] and reconnected == []
        peers_then = peers[:]
        peers.clear()  # the tables catch up: the hold ends, the listing decides from now on
        assert await session._refresh(first) == [] and session._gone == {1} and not session._removed
        peers.extend(peers_then)  # added back at its old address
        session._on_event(_event("TOPOLOGY_CHANGE", "NEW_NODE", bytes([127, 0, 0, 2]), 9042))
        assert await session._refresh(first) == [1] and session._gone == set()
        # a hold that ran out: the listing decides again
        session._on_event(_event("TOPOLOGY_CHANGE", "REMOVED_NODE", bytes([127, 0, 0, 2]), 9042))
        assert session._gone == {1}
        session._removed[("127.0.0.2", 9042)] = asyncio.get_running_loop().time() - 1
        assert await session._refresh(first) == [1] and session._gone == set()

    asyncio.run(scenario())


def test_a_killed_node_stays_in_the_per_node_counts_and_is_down_until_it_is_back(monkeypatch):
    """Issue 54, 9: node 2 killed (its connection lost): its totals stay in node_counts (what was
    sent to it), and down_nodes names it while it has no connection; a node that left the
    cluster is not down, and a node connected again is not either."""
    async def scenario():
        session = cqls.NativeSession(LOCAL)
        monkeypatch.setattr(session, "_reconnect", lambda index, at_once=False: None)
        session.hosts = [("127.0.0.1", 9042), ("127.0.0.2", 9042), ("127.0.0.3", 9042)]
        for host, _ in session.hosts:
            conn = cqlc.CqlConnection(4, 2.0, f"{host}:9042")
            conn.connection_made(Transport())
            conn.on_lost = session._lost
            conn.sent = 5
            session.conns.append(conn)
        session._control = session.conns[0]
        assert session.down_nodes() == frozenset()
        killed = session.conns[1]
        killed.connection_lost(ConnectionResetError("killed"))
        assert session.conns[1] is None
        assert session.node_counts() == {"127.0.0.1:9042": (5, 0), "127.0.0.2:9042": (5, 0),
                                         "127.0.0.3:9042": (5, 0)}
        assert session.down_nodes() == {"127.0.0.2:9042"}
        session._gone = {2}  # node 3 left the cluster (decommissioned): not down
        session.conns[2] = None
        assert session.down_nodes() == {"127.0.0.2:9042"}
        back = cqlc.CqlConnection(4, 2.0, "127.0.0.2:9042")
        back.connection_made(Transport())
        session.conns[1] = back
        assert session.down_nodes() == frozenset()
        back.broken = ConnectionResetError("a broken answer")  # still held, not usable
        assert session.down_nodes() == {"127.0.0.2:9042"}
        from workbench.databases.cassandra.binding import CassandraBinding

        binding = CassandraBinding.__new__(CassandraBinding)  # what the engine reads once a tick
        binding.db = session
        assert binding.down_nodes() == {"127.0.0.2:9042"}
        binding.db = SimpleNamespace()  # cassandra-driver's session: it cannot say
        assert binding.down_nodes() == frozenset()

    asyncio.run(scenario())
