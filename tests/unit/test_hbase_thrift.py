"""The asyncio Thrift1 client's codec and connection handling (workbench/databases/hbase/protocol/thrift.py).

The bytes are checked against thriftpy2's own codec; the connection is checked against a peer
on a loopback socket that answers with bytes written here (cut into pieces, late, or unasked).
Whether HBase's gateway accepts all this is for tests/integration and the contract suite.
"""

from __future__ import annotations

import asyncio
import random

import happybase  # noqa: F401  (loads the Thrift1 IDL as the Hbase_thrift module)
import pytest
from Hbase_thrift import Hbase, IOError, Mutation, TCell, TRowResult
from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport.memory import TCyMemoryBuffer

from workbench.databases.hbase.protocol.thrift import (
    ConnectionPool,
    Decoder,
    Encoder,
    Incomplete,
    breaks_connection,
    decode_get,
    decode_put,
    encode_call,
)


def reply(name: str, result, kind: int = TMessageType.REPLY) -> bytes:
    """What a Thrift1 server sends back, written by thriftpy2."""
    buf = TCyMemoryBuffer()
    proto = TCyBinaryProtocol(buf)
    proto.write_message_begin(name, kind, 0)
    proto.write_struct(result)
    return buf.getvalue()


ROW = reply("getRowWithColumns", Hbase.getRowWithColumns_result(success=[TRowResult(
    row=b"user1", columns={f"family:field{i}".encode(): TCell(value=b"v" * 100, timestamp=i)
                           for i in range(10)})]))
PUT_OK = reply("mutateRow", Hbase.mutateRow_result())
PUT = (Encoder(b"t").put(b"k", [(b"family:f", b"x")], True), decode_put)  # one put request


def test_hot_requests_are_the_bytes_thriftpy2_would_write():
    rng = random.Random(3)
    for _ in range(200):
        table = bytes(rng.randrange(33, 127) for _ in range(rng.randrange(1, 30)))
        row = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        columns = [b"family:" + bytes(rng.randrange(97, 123) for _ in range(rng.randrange(0, 9)))
                   for _ in range(rng.randrange(0, 12))]
        values = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300))) for _ in columns]
        wal = rng.random() < 0.5
        encoder = Encoder(table)
        assert encoder.get(row, columns) == encode_call("getRowWithColumns", Hbase.getRowWithColumns_args(
            tableName=table, row=row, columns=columns, attributes={}))
        assert encoder.put(row, list(zip(columns, values, strict=True)), wal) == encode_call(
            "mutateRow", Hbase.mutateRow_args(tableName=table, row=row, attributes={}, mutations=[
                Mutation(isDelete=False, column=c, value=v, writeToWAL=wal)
                for c, v in zip(columns, values, strict=True)]))


def test_replies_cut_short_are_incomplete_and_whole_ones_decode():
    decoder = Decoder()
    for cut in range(len(ROW)):
        with pytest.raises(Incomplete):
            decode_get(decoder, ROW[:cut])
    rows = decode_get(decoder, ROW)
    assert rows[0].row == b"user1" and rows[0].columns[b"family:field3"].value == b"v" * 100
    for cut in range(len(PUT_OK)):
        with pytest.raises(Incomplete):
            decode_put(decoder, PUT_OK[:cut])
    assert decode_put(decoder, PUT_OK) is None


def test_what_the_server_raises_is_raised_and_only_a_broken_stream_breaks_the_connection():
    decoder = Decoder()
    failed = reply("mutateRow", Hbase.mutateRow_result(io=IOError(message="region offline")))
    with pytest.raises(IOError, match="region offline") as caught:
        decode_put(decoder, failed)
    assert not breaks_connection(caught.value)  # an answer on a healthy connection
    unknown = reply("mutateRow", TApplicationException(TApplicationException.UNKNOWN_METHOD, "nope"),
                    TMessageType.EXCEPTION)
    with pytest.raises(TApplicationException) as caught:
        decode_put(decoder, unknown)
    assert breaks_connection(caught.value)
    with pytest.raises(TApplicationException, match="asked getRowWithColumns"):
        decode_get(decoder, PUT_OK)  # an answer to another call: out of step
    assert breaks_connection(ConnectionResetError()) and breaks_connection(TimeoutError())


class Peer:
    """A loopback server that answers every request with `answer(n)` (bytes, sent in pieces of
    `piece` bytes, or None for no answer), n counting requests across connections."""

    def __init__(self, answer, piece: int = 1_000_000) -> None:
        self.answer, self.piece = answer, piece
        self.requests = 0
        self.connections = 0
        self.writers: set = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader, writer) -> None:
        self.connections += 1
        self.writers.add(writer)
        try:
            while await reader.read(65536):
                data = self.answer(self.requests)
                self.requests += 1
                for at in range(0, len(data or b""), self.piece):
                    writer.write(data[at:at + self.piece])
                    await writer.drain()
                    await asyncio.sleep(0)
        except ConnectionError:
            pass
        finally:
            self.writers.discard(writer)
            writer.close()


@pytest.mark.parametrize("framed", [False, True])
def test_replies_arriving_a_byte_at_a_time_are_put_together(framed):
    async def main():
        frame = (lambda b: len(b).to_bytes(4, "big") + b) if framed else (lambda b: b)
        peer = Peer(lambda n: frame(ROW if n % 2 == 0 else PUT_OK), piece=1)
        pool = ConnectionPool("127.0.0.1", await peer.start(), framed, 5000, 1)
        get = (Encoder(b"t").get(b"user1", [b"family"]), decode_get)
        put = (Encoder(b"t").put(b"user1", [(b"family:field0", b"x")], True), decode_put)
        answers = await pool.run([get, put, get, put])
        assert [ok for ok, *_ in answers] == [True] * 4
        assert answers[2][1][0].columns[b"family:field9"].value == b"v" * 100
        assert all(t0 <= t1 for _, _, t0, t1 in answers)
        assert answers[1][2] >= answers[0][3]  # one request in flight: each after the last answer
        assert pool.opened == 1 and peer.connections == 1
        pool.close()
        peer.server.close()

    asyncio.run(main())


def test_a_late_answer_is_a_timeout_the_connection_is_replaced_and_the_chain_stops():
    async def main():
        peer = Peer(lambda n: None if n == 1 else PUT_OK)  # the second request is never answered
        pool = ConnectionPool("127.0.0.1", await peer.start(), False, 300, 1)
        answers = await pool.run([PUT, PUT, PUT])
        assert [ok for ok, *_ in answers] == [True, False]  # a prefix: the chain stopped there
        assert isinstance(answers[1][1], TimeoutError) and "within 300 ms" in str(answers[1][1])
        assert 0.25 <= (answers[1][3] - answers[1][2]) / 1e9 < 5
        assert [ok for ok, *_ in await pool.run([PUT, PUT])] == [True, True]  # a fresh connection
        assert pool.opened == 2
        pool.close()
        peer.server.close()

    asyncio.run(main())


def test_a_refused_connection_is_an_answer_not_an_exception():
    async def main():
        peer = Peer(lambda n: PUT_OK)
        port = await peer.start()
        peer.server.close()
        await peer.server.wait_closed()
        pool = ConnectionPool("127.0.0.1", port, False, 2000, 4)
        answers = await pool.run([PUT, PUT])
        assert len(answers) == 1 and isinstance(answers[0][1], ConnectionRefusedError)
        with pytest.raises(ConnectionRefusedError):
            await pool.call(PUT)

    asyncio.run(main())


def test_lanes_beyond_the_pool_size_wait_for_a_connection():
    async def main():
        peer = Peer(lambda n: PUT_OK)
        pool = ConnectionPool("127.0.0.1", await peer.start(), False, 5000, 2)
        results = await asyncio.gather(*(pool.run([PUT] * 20) for _ in range(8)))
        assert all(ok for answers in results for ok, *_ in answers)
        assert sum(len(a) for a in results) == 160 and pool.opened == 2 and peer.connections == 2
        pool.close()
        peer.server.close()

    asyncio.run(main())


def test_a_connection_the_gateway_closed_while_idle_is_replaced_without_an_error():
    """A gateway restart closes the idle connections: the next chain opens a fresh one instead of
    failing its first request on a dead one."""
    async def main():
        peer = Peer(lambda n: PUT_OK)
        pool = ConnectionPool("127.0.0.1", await peer.start(), False, 5000, 1)
        assert [ok for ok, *_ in await pool.run([PUT])] == [True]
        idle = pool._idle[0]
        peer.server.close()  # stop listening, and close the open connection as a restart would
        for writer in list(peer.writers):
            writer.close()
        while idle.broken is None:
            await asyncio.sleep(0.01)
        peer.server = await asyncio.start_server(peer._serve, "127.0.0.1", pool.port)
        assert [ok for ok, *_ in await pool.run([PUT, PUT])] == [True, True]
        assert pool.opened == 2 and pool._live == 1
        pool.close()
        peer.server.close()

    asyncio.run(main())


def test_a_request_that_cannot_be_made_is_that_steps_error_and_the_chain_goes_on():
    async def main():
        peer = Peer(lambda n: PUT_OK)
        pool = ConnectionPool("127.0.0.1", await peer.start(), False, 5000, 1)

        def make(item):
            if item == "bad":
                raise UnicodeEncodeError("ascii", "\u00e9", 0, 1, "not ASCII")
            return PUT

        answers = await asyncio.wait_for(pool.run(["ok", "bad", "ok", "bad"], make), 10)
        assert [ok for ok, *_ in answers] == [True, False, True, False]
        assert isinstance(answers[1][1], UnicodeEncodeError) and peer.requests == 2
        assert [ok for ok, *_ in await pool.run([PUT])] == [True]  # the connection is still good
        pool.close()
        peer.server.close()

    asyncio.run(main())
