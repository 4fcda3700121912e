"""HBase's own RPC from Python (workbench/databases/hbase/protocol/messages.py and rpc.py): the
protobuf helpers, the framing, call ids and timeouts, against a loopback peer that answers with
bytes written here.
Whether a RegionServer accepts all this is for the contract suite (targets_hbase_native.py)
and tests/integration/test_hbase_binding.py.
"""

from __future__ import annotations

import asyncio
import struct

import pytest

from tests.support.loopback import Transport, both_receive_paths
from workbench.databases.hbase import native as hbase_native
from workbench.databases.hbase.protocol import rpc as hbase_rpc
from workbench.databases.hbase.protocol.messages import (
    PREAMBLE,
    LazyCells,
    RemoteError,
    decode_get,
    decode_mutate,
    field,
    fields,
    found_cells,
    get_request,
    number,
    put_request,
    read_varint,
    varint,
)
from workbench.databases.hbase.protocol.rpc import Regions, RpcClient

COMPILED = hbase_rpc._fast  # workbench._speedups where it is built


receive_path = both_receive_paths(hbase_rpc, hbase_native)  # every test here runs on both receive paths


def test_varints_round_trip_across_their_byte_lengths():
    for n in [0, 1, 127, 128, 255, 300, 16383, 16384, 2**21, 2**28 + 5, 2**35, 2**63 - 1]:
        raw = varint(n)
        assert read_varint(raw + b"\xff", 0) == (n, len(raw))
        assert len(raw) == max(1, -(-n.bit_length() // 7))


def parse(buf: bytes, start: int = 0, end: int | None = None) -> list:
    """A message as nested lists of (field, value) for comparisons."""
    out = []
    for fid, v in fields(buf, start, len(buf) if end is None else end):
        out.append((fid, v if isinstance(v, int) else buf[v[0]:v[1]]))
    return out


def test_requests_say_region_row_family_qualifiers_and_durability():
    get = get_request(b"t,,1.abc.", b"user1", b"family", [b"field1", b"field2"])
    (f1, region), (f2, get_msg) = parse(get)
    assert (f1, f2) == (1, 2) and parse(region) == [(1, 1), (2, b"t,,1.abc.")]  # REGION_NAME
    row, column = parse(get_msg)
    assert row == (1, b"user1") and parse(column[1]) == [(1, b"family"), (2, b"field1"), (2, b"field2")]
    put = put_request(b"r", b"user2", b"family", [(b"field0", b"x" * 300)], 1)
    mutation = parse(parse(put)[1][1])
    assert mutation[0] == (1, b"user2") and mutation[1] == (2, 2) and mutation[3] == (6, 1)  # PUT, SKIP_WAL
    family, value = parse(mutation[2][1])
    assert family == (1, b"family") and parse(value[1]) == [(1, b"field0"), (2, b"x" * 300)]
    assert all(f != 6 for f, _ in parse(parse(put_request(b"r", b"k", b"f", [], 0))[1][1]))


def cell(qualifier: bytes, value: bytes) -> bytes:
    return field(1, field(1, b"row") + field(2, b"family") + field(3, qualifier) + number(4, 17)
                 + number(5, 4) + field(6, value))


def test_a_get_answer_becomes_qualifier_to_value_and_an_empty_one_none():
    body = field(1, cell(b"field0", b"a" * 200) + cell(b"field1", b"") + number(2, 0))
    assert decode_get(body) == {b"field0": b"a" * 200, b"field1": b""}
    assert decode_get(field(1, number(2, 0))) is None and decode_get(b"") is None


def test_a_read_finds_its_cells_without_decoding_them_until_they_are_looked_at():
    body = field(1, number(3, 1) + cell(b"field0", "é".encode() * 100) + cell(b"field1", b""))
    row = found_cells(body)
    assert isinstance(row, LazyCells) and row._row is None  # found, nothing decoded yet
    assert row == {"field0": "é" * 100, "field1": ""} and len(row) == 2 and row["field1"] == ""
    assert sorted(row) == ["field0", "field1"]
    # no cells (a Result with other fields only, an empty answer), or a field before the result
    assert found_cells(field(1, number(2, 0) + number(3, 0))) is None and found_cells(b"") is None
    assert found_cells(number(9, 1) + field(1, cell(b"f", b"v"))) == {"f": "v"}
    # exactly where decode_get finds cells, whatever comes first
    for body in (field(1, b""), field(1, number(2, 0)), field(1, cell(b"q", b"")), field(1, number(4, 1))):
        assert (found_cells(body) is None) == (decode_get(body) is None)


def test_regions_are_found_by_row():
    regions = Regions([
        {"start_key": b"user5", "end_key": b"", "name": b"r3", "server_name": b"localhost", "port": 2},
        {"start_key": b"", "end_key": b"user3", "name": b"r1", "server_name": b"localhost", "port": 1},
        {"start_key": b"user3", "end_key": b"user5", "name": b"r2", "server_name": b"localhost", "port": 1},
    ])
    assert regions.locate(b"a")[0] == b"r1" and regions.locate(b"user3")[0] == b"r2"
    assert regions.locate(b"user49")[0] == b"r2" and regions.locate(b"user5") == (b"r3", ("localhost", 2))


def answer(call_id: int, body: bytes | None = None, error: str | None = None) -> bytes:
    header = number(1, call_id)
    if error:
        header += field(2, field(1, error.encode()) + field(2, b"it broke\n\tat somewhere"))
    msg = varint(len(header)) + header + (b"" if body is None else varint(len(body)) + body)
    return struct.pack(">I", len(msg)) + msg


class RegionServer:
    """Reads the preamble and header, then requests; `reply(requests)` says what to send back
    once `batch` requests are in (a list of bytes, in any order, or None to stay silent)."""

    def __init__(self, reply, batch: int = 1) -> None:
        self.reply, self.batch = reply, batch
        self.headers: list[bytes] = []
        self.connections = 0

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader, writer) -> None:
        self.connections += 1
        try:
            assert await reader.readexactly(6) == PREAMBLE
            size = struct.unpack(">I", await reader.readexactly(4))[0]
            self.headers.append(await reader.readexactly(size))
            pending = []
            while True:
                size = struct.unpack(">I", await reader.readexactly(4))[0]
                msg = await reader.readexactly(size)
                hlen, at = read_varint(msg, 0)
                header = dict(parse(msg, at, at + hlen))
                pending.append((header[1], header[3]))
                if len(pending) == self.batch:
                    out, pending = self.reply(pending), []
                    if out is not None:
                        writer.write(b"".join(out))
                        await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def make(step):
    method, tag = step
    return method, field(1, tag), lambda body: body


def test_answers_out_of_order_reach_their_own_lanes_over_one_connection():
    async def main():
        # four lanes' first requests arrive together; the server answers them in reverse order
        server = RegionServer(lambda got: [answer(cid, field(1, b"for-%d" % cid))
                                           for cid, _ in reversed(got)], batch=4)
        where = ("127.0.0.1", await server.start())
        client = RpcClient(5000)
        results = await asyncio.gather(*(client.run(where, [(b"Get", b"lane%d" % i)], make)
                                          for i in range(4)))
        bodies = sorted(r[0][1] for r in results)
        assert bodies == [field(1, b"for-%d" % cid) for cid in (1, 2, 3, 4)]
        assert client.opened == 1 and server.connections == 1
        user, service = parse(server.headers[0])
        assert service == (2, b"ClientService") and parse(user[1])[0][0] == 1
        client.close()
        server.server.close()

    asyncio.run(main())


def test_a_server_exception_is_named_after_its_class_and_stops_the_chain():
    async def main():
        def reply(got):
            cid, method = got[0]
            if cid == 2:
                return [answer(cid, error="org.apache.hadoop.hbase.NotServingRegionException")]
            return [answer(cid, b"")]

        server = RegionServer(reply)
        where = ("127.0.0.1", await server.start())
        client = RpcClient(5000)
        answers = await client.run(where, [(b"Mutate", b"a"), (b"Mutate", b"b"), (b"Mutate", b"c")], make)
        assert [ok for ok, *_ in answers] == [True, False]
        error = answers[1][1]
        assert type(error).__name__ == "NotServingRegionException" and isinstance(error, RemoteError)
        assert "it broke" in str(error) and "somewhere" not in str(error)
        assert [ok for ok, *_ in await client.run(where, [(b"Get", b"d")], make)] == [True]
        client.close()
        server.server.close()

    asyncio.run(main())


def test_a_silent_server_fails_every_call_in_flight_with_a_timeout_then_a_fresh_connection():
    async def main():
        calls = []

        def reply(got):
            calls.extend(got)
            return None if len(calls) <= 2 else [answer(cid, b"") for cid, _ in got]

        server = RegionServer(reply)
        where = ("127.0.0.1", await server.start())
        client = RpcClient(300)
        results = await asyncio.gather(client.run(where, [(b"Get", b"x")], make),
                                       client.run(where, [(b"Get", b"y")], make))
        for answers in results:
            assert len(answers) == 1 and isinstance(answers[0][1], TimeoutError)
            assert (answers[0][3] - answers[0][2]) / 1e9 >= 0.25
        assert [ok for ok, *_ in await client.run(where, [(b"Get", b"z")], make)] == [True]
        assert client.opened == 2
        client.close()
        server.server.close()

    asyncio.run(main())


def test_a_refused_connection_is_an_answer_not_an_exception():
    async def main():
        server = RegionServer(lambda got: None)
        port = await server.start()
        server.server.close()
        await server.server.wait_closed()
        answers = await RpcClient(2000).run(("127.0.0.1", port), [(b"Get", b"x")], make)
        assert len(answers) == 1 and isinstance(answers[0][1], ConnectionRefusedError)

    asyncio.run(main())


@pytest.mark.parametrize("n", [1, 3])
def test_requests_made_in_one_turn_of_the_loop_go_out_in_one_write(n, monkeypatch):
    async def main():
        server = RegionServer(lambda got: [answer(cid, b"") for cid, _ in got], batch=n)
        where = ("127.0.0.1", await server.start())
        client = RpcClient(5000)
        conn = await client.connection(where)
        writes = []
        real = conn.transport.write
        monkeypatch.setattr(conn.transport, "write", lambda data: (writes.append(data), real(data)))
        futures = [conn.run([(b"Get", b"k%d" % i)], make) for i in range(n)]
        await asyncio.gather(*futures)
        assert len(writes) == 1
        client.close()
        server.server.close()

    asyncio.run(main())


def test_without_a_login_name_the_header_still_names_a_user(monkeypatch):
    import getpass

    def nobody():
        raise OSError("No username set in the environment")

    monkeypatch.setattr(getpass, "getuser", nobody)
    assert RpcClient(1000).user == "workbench"


def _binding():
    from workbench.config.spec import spec_from_args
    from workbench.databases.hbase.native import NativeBinding

    spec, props = spec_from_args([], ["hbase.client=native", "hbase.port=9"], "run")
    return NativeBinding(spec, dict(spec.binding_properties), {"phase": "run", "workers": 1})


def test_the_regionserver_check_lets_through_only_a_table_that_does_not_exist():
    from thriftpy2.transport import TTransportException

    from workbench.databases.hbase.protocol.rpc import NoSuchTable
    from workbench.errors import BindingError

    db = _binding()

    async def missing(table):
        Regions([])  # what the gateway's empty answer for a missing table becomes

    db._regions_of = missing
    asyncio.run(db._check_regionserver())  # an insert workload may create the table later

    async def broken(table):
        raise TTransportException(TTransportException.END_OF_FILE, "TSocket read 0 bytes")

    db._regions_of = broken
    with pytest.raises(BindingError, match="cannot learn the regions of HBase table 'usertable'.*"
                                           "END_OF_FILE.*TSocket read 0 bytes"):
        asyncio.run(db._check_regionserver())

    async def gateway_down(table):
        raise BindingError("cannot talk to the HBase Thrift gateway", "start it")

    db._regions_of = gateway_down
    with pytest.raises(BindingError, match="cannot talk to the HBase Thrift gateway"):
        asyncio.run(db._check_regionserver())
    with pytest.raises(NoSuchTable):
        Regions([])


def test_call_ids_go_round_in_two_bytes_and_skip_those_still_in_flight():
    """Ids stay below 0x4000 (one or two bytes, read where they lie in the answer), go round,
    and never reuse an id whose call has not been answered."""
    from workbench.databases.hbase.protocol.rpc import CALL_IDS, _Chain

    async def main():
        ids = []

        def reply(got):
            ids.extend(cid for cid, _ in got)
            return [answer(cid, field(1, b"for-%d" % cid)) for cid, _ in got]

        server = RegionServer(reply)
        where = ("127.0.0.1", await server.start())
        client = RpcClient(5000)
        conn = await client.connection(where)
        stuck = _Chain([], make, None, asyncio.get_running_loop().create_future())
        stuck.t0 = 1 << 62  # (not due for a timeout)
        conn._inflight[2] = stuck  # an unanswered call with id 2
        conn._call_id = CALL_IDS - 2
        steps = [(b"Get", b"k%d" % i) for i in range(6)]
        answers = await client.run(where, steps, make)
        assert ids == [CALL_IDS - 1, CALL_IDS, 1, 3, 4, 5]
        assert [body for _, body, _, _ in answers] == [field(1, b"for-%d" % cid) for cid in ids]
        assert conn._inflight == {2: stuck} and conn.broken is None
        client.close()
        server.server.close()

    asyncio.run(main())


@pytest.mark.parametrize("regions", [1, 3])
def test_a_read_of_every_field_is_the_general_get_request(regions):
    """The hot path's Get (its constant parts made once) is get_request's bytes, for rows short
    and long and whatever region holds them, compiled or not."""
    db = _binding()
    starts = [b"", b"user3", b"user5"][:regions]
    table = Regions([{"start_key": s, "name": b"t,%s,1.%d." % (s, i), "server_name": b"h", "port": 1}
                     for i, s in enumerate(starts)])
    make = db._maker(table)
    for key in ("user1", "user4", "user9" + "9" * 90, "u" * 115, "u" * 116, "user6" + "x" * 200, "usér7"):
        row = key.encode()
        method, request, decode = make(("READ", key, None))
        assert (method, decode) == (b"Get", found_cells)
        assert request == get_request(table.locate(row)[0], row, db._family_name, None)
        method, request, _ = make(("UPDATE", key, {"field1": "v" * 100, "field7": ""}))
        assert method == b"Mutate" and request == put_request(
            table.locate(row)[0], row, db._family_name, [(b"field1", b"v" * 100), (b"field7", b"")], 0)


@pytest.mark.parametrize("durability", [0, 3])
def test_an_update_of_one_field_is_the_general_put_request(durability, receive_path):
    """The hot path's Put of one cell (compiled, or its bytes up to the value made once per
    qualifier and value length) is put_request's bytes: short and long rows, qualifiers and values
    (lengths of one and two bytes at every level, text beyond ASCII), with and without a
    durability; each pair again, from the cache. A value UTF-8 cannot encode fails alike."""
    db = _binding()
    db._durability = durability
    table = Regions([{"start_key": b"", "name": b"t,,1.0.", "server_name": b"h", "port": 1}])
    make = db._maker(table)
    assert (getattr(make, "func", None) is getattr(COMPILED, "hbase_make", 0)) == (receive_path == "C")
    cases = [("user1", "field0", "v" * 100), ("u" * 200, "field0", "v" * 100), ("user2", "f" * 130, "w"),
             ("user3", "field0", "x" * 20000), ("user4", "", ""), ("user5", "field0", "y" * 100),
             ("usér6", "fïeld", "välue" * 30)]
    for _ in range(2):
        for key, qualifier, value in cases:
            method, request, decode = make(("UPDATE", key, {qualifier: value}))
            assert (method, decode) == (b"Mutate", decode_mutate)
            assert request == put_request(b"t,,1.0.", key.encode(), db._family_name,
                                          [(qualifier.encode(), value.encode())], durability)
    with pytest.raises(UnicodeEncodeError):
        make(("UPDATE", "user1", {"field0": "\udc80"}))


def test_a_request_header_of_any_length_is_framed_whole():
    """A header longer than 127 bytes (a method named at length) has a two-byte length."""
    async def main():
        seen = []

        def reply(got):
            seen.extend(got)
            return [answer(cid, b"") for cid, _ in got]

        server = RegionServer(reply)
        where = ("127.0.0.1", await server.start())
        client = RpcClient(5000)
        long_name = b"M" * 200
        answers = await client.run(where, [(long_name, b"a"), (b"Get", b"b")], make)
        assert [ok for ok, *_ in answers] == [True, True]
        assert [method for _, method in seen] == [long_name, b"Get"]
        client.close()
        server.server.close()

    asyncio.run(main())


@pytest.mark.parametrize("message", [b"", b"\x32\x08\x01", b"\x02\x08\x01\x7f\x00"],
                         ids=["empty", "header-overruns", "body-overruns"])
def test_an_answer_that_does_not_fit_its_message_breaks_the_connection_and_fails_the_call(message):
    async def main():
        server = RegionServer(lambda got: [struct.pack(">I", len(message)) + message])
        where = ("127.0.0.1", await server.start())
        client = RpcClient(5000)
        conn = await client.connection(where)
        # (a lane whose answer broke the stream once waited for ever: fail, do not hang)
        answers = await asyncio.wait_for(client.run(where, [(b"Get", b"a"), (b"Get", b"b")], make), 30)
        assert len(answers) == 1 and answers[0][0] is False
        assert conn.broken is not None and str(answers[0][1]) == str(conn.broken)
        client.close()
        server.server.close()

    asyncio.run(main())


def run_chains(flip: int) -> tuple[list, bytes, dict]:
    """Three chains on one connection over a fake transport, answered by a script with every
    kind of answer and step a chain meets; what each got, and every byte written."""
    from workbench.databases.hbase.protocol.rpc import CALL_IDS, RpcConnection

    def decode_or_fail(body: bytes):
        if body == b"garbled":
            raise ValueError("an answer that does not parse")
        return body

    def make_step(step):
        method, tag = step
        if tag == b"unmakeable":
            raise TypeError("a value this request cannot take")
        return method, field(1, tag), decode_or_fail

    async def main():
        conn = RpcConnection("me", 30, "test:16020")
        conn.connection_made(Transport())
        conn._call_id = CALL_IDS - 3  # ids go round during the test: two-byte ids, then one-byte
        asked = [0]

        def more() -> bool:
            asked[0] += 1
            return asked[0] != flip

        loop_steps = [
            [(b"Get", b"a1"), (b"Mutate", b"a2"), (b"Get", b"a3"), (b"Get", b"unmakeable"), (b"Get", b"a5")],
            [(b"Get", b"b1"), (b"M" * 200, b"b2"), (b"Get", b"b3"), (b"Get", b"error"), (b"Get", b"b5")],
            [(b"Mutate", b"c1"), (b"Get", b"c2"), (b"Get", b"garbled"), (b"Get", b"c4")],
            [(b"Get", b"d%d" % i) for i in range(6)],
        ]
        chains = [conn.run(steps, make_step, more) for steps in loop_steps]
        await asyncio.sleep(0)
        rounds = 0
        while any(not c.done() for c in chains) and rounds < 30:
            rounds += 1
            data = b""
            for cid, chain in sorted(conn._inflight.items(), reverse=True):
                tag = chain.items[len(chain.answers)][1]
                if tag == b"error":
                    data += answer(cid, error="org.apache.hadoop.hbase.RegionTooBusyException")
                elif tag == b"garbled":  # it breaks the connection: answered when nothing else waits
                    if len(conn._inflight) == 1:
                        data += answer(cid, b"garbled")
                else:
                    data += answer(cid, b"for-" + tag)
            if not data:
                await asyncio.sleep(0)
                continue
            at = 0
            for size in (len(data) // 3, 7, len(data)):  # pieces that split messages
                piece = data[at:at + size]
                if piece:
                    buf = conn.get_buffer(len(piece))
                    buf[:len(piece)] = piece
                    conn.buffer_updated(len(piece))
                    at += len(piece)
            await asyncio.sleep(0)
        got = []
        for c in chains:
            got.append([(ok, value if ok else f"{type(value).__name__}: {value}") for ok, value, t0, t1 in
                        c.result()])
            assert all(t0 <= t1 for _, _, t0, t1 in c.result())
        counts = (conn.sent, conn.failed)
        return got, conn.transport.written, dict(conn._inflight), conn.broken is not None, counts

    return asyncio.run(main())


@pytest.mark.parametrize("flip", [0, 5])
def test_chains_get_the_same_answers_and_send_the_same_bytes_on_both_receive_paths(monkeypatch, flip):
    if COMPILED is None:
        pytest.skip("workbench._speedups is not built here")
    slow = []  # messages answered by the Python _answer
    real = hbase_rpc.RpcConnection._answer
    monkeypatch.setattr(hbase_rpc.RpcConnection, "_answer",
                        lambda self, *a: (slow.append(a[1]), real(self, *a)))
    monkeypatch.setattr(hbase_rpc, "_fast", COMPILED)
    compiled = run_chains(flip)
    in_c = len(slow)
    monkeypatch.setattr(hbase_rpc, "_fast", None)
    python = run_chains(flip)
    assert compiled == python
    assert 0 < in_c < len(slow) - 4  # the usual answers were answered in C, the others in Python
    got, written, inflight, broken, (sent, failed) = python
    flat = [a for chain in got for a in chain]
    # the per-node figures, alike on both paths (compared above): every call that went out, and
    # the failed answers among them (the exception, and the answer that does not parse)
    assert sent == sum(1 for ok, v in flat if ok or not v.startswith("TypeError"))
    assert failed == sum(1 for ok, v in flat if not ok and not v.startswith("TypeError")) == 2
    assert (True, b"for-a1") in flat and (True, b"for-b3") in flat
    assert "TypeError: a value this request cannot take" in [v for _, v in flat]
    if flip:  # the lane said stop before a step: that chain is a prefix of its steps (17 in all without)
        assert len(flat) < 4 + 4 + 3 + 6
    assert any(not ok and v.startswith("RegionTooBusyException") for ok, v in flat)
    assert (False, "MalformedAnswer: the RegionServer at test:16020 sent an answer that does not parse "
                   "(ValueError: an answer that does not parse)") in flat and broken


def test_answers_decoded_in_c_are_what_found_cells_and_decode_mutate_make(monkeypatch, receive_path):
    """The compiled receive path makes found_cells's usual answer (a LazyCells, nothing decoded)
    and decode_mutate's None itself; any other body goes to found_cells. What each step gets is
    the same on both paths, and in C only the body with a field before its result made its
    LazyCells through Python (__init__)."""
    from workbench.databases.hbase.protocol.rpc import RpcConnection

    bodies = {
        b"row": field(1, cell(b"field0", b"a" * 20) + cell(b"field1", b"")),  # nearly every read
        b"long": field(1, cell(b"field0", "é".encode() * 150)),  # its result's length takes 2 bytes
        b"late": number(9, 1) + field(1, cell(b"f", b"v")),  # a field first: found_cells walks it
        b"none": field(1, number(2, 0)),  # not found
        b"empty": b"",
        b"put": b"",
        b"put-body": field(1, number(1, 1)),  # an update answered with a result: still None
    }
    inits = []
    real_init = LazyCells.__init__
    monkeypatch.setattr(LazyCells, "__init__",
                        lambda self, body: (inits.append(body), real_init(self, body))[1])

    def make_step(tag):
        if tag.startswith(b"put"):
            return b"Mutate", field(1, tag), decode_mutate
        return b"Get", field(1, tag), found_cells

    async def main():
        conn = RpcConnection("me", 30, "test:16020")
        conn.connection_made(Transport())
        tags = list(bodies)
        chains = [conn.run(tags[k:] + tags[:k], make_step) for k in range(len(tags))]
        while any(not c.done() for c in chains):
            data = b"".join(answer(cid, bodies[chain.items[len(chain.answers)]])
                            for cid, chain in sorted(conn._inflight.items()))
            buf = conn.get_buffer(len(data))
            buf[:len(data)] = data
            conn.buffer_updated(len(data))
            await asyncio.sleep(0)
        return [[(ok, type(value).__name__, value._row if isinstance(value, LazyCells) else None,
                  dict(value) if isinstance(value, LazyCells) else value) for ok, value, _, _ in c.result()]
                for c in chains]

    got = asyncio.run(main())
    for k, chain in enumerate(got):
        tags = list(bodies)
        tags = tags[k:] + tags[:k]
        for tag, (ok, kind, row, value) in zip(tags, chain, strict=True):
            assert ok and row is None  # found, nothing decoded yet
            expected = None if tag.startswith(b"put") else decode_get(bodies[tag])
            if expected is None:
                assert (kind, value) == ("NoneType", None), tag
            else:
                assert kind == "LazyCells" and value == {q.decode(): v.decode() for q, v in expected.items()}
    assert set(inits) == ({bodies[b"late"]} if receive_path == "C" else
                              {bodies[b"row"], bodies[b"long"], bodies[b"late"]})


@pytest.mark.parametrize(("failure", "relocated"), [
    (lambda: RemoteError.named("org.apache.hadoop.hbase.NotServingRegionException", "moved"), True),
    (lambda: RemoteError.named("org.apache.hadoop.hbase.regionserver.RegionServerStoppedException",
                               "Server rs4 stopping"), True),
    (lambda: ConnectionRefusedError(111, "Connection refused"), True),
    (lambda: TimeoutError("no answer in 1500 ms"), False),
])
def test_a_request_to_a_server_that_lost_its_region_is_sent_anew_where_the_region_is_now(
        failure, relocated, monkeypatch):
    """The binding's answer to a failed request (NativeBinding._steps): a region that moved, a
    RegionServer that stops (its regions moved away first) or refuses connections: the regions
    are looked up again and the request goes to the server that holds the row now, timed from its
    first attempt. A timeout is the operation's error: the server may still hold the region."""
    monkeypatch.setattr(hbase_native, "MOVE_PAUSE_S", 0.001)
    old = ("127.0.0.4", 16020)
    new = ("127.0.0.2", 16020)
    looked_up = [Regions([{"start_key": b"", "end_key": b"", "name": b"r1", "server_name": host.encode(),
                           "port": port}]) for host, port in (old, new)]
    sent = []

    class Rpc:
        async def run(self, server, steps, make, more):
            sent.append(server)
            if server == old:
                return [(False, failure(), 100, 200)]
            return [(True, "cells", 300, 400)]

    binding = hbase_native.NativeBinding.__new__(hbase_native.NativeBinding)
    binding.rpc, binding._regions, binding._region_counts = Rpc(), {}, {}
    binding._moves = {hbase_native.LOOKUPS: 0, hbase_native.RETRIED: 0}
    binding._maker = lambda regions: "make"

    async def regions_of(table, moved=False):
        found = binding._regions[table] = looked_up.pop(0)
        return found

    binding._regions_of = regions_of
    answers = asyncio.run(binding._steps("usertable", [("READ", "user1", None)], None))
    if relocated:
        assert sent == [old, new] and answers == [(True, "cells", 100, 400)]
        assert binding.client_counts() == {hbase_native.RETRIED: 1}
    else:
        assert sent == [old] and len(answers) == 1 and isinstance(answers[0][1], TimeoutError)
        assert binding.client_counts() == {}
