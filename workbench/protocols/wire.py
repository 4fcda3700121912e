"""What the workbench's own asyncio protocol clients share: a connection that receives into a
buffer it owns and keeps one timeout timer, whatever the wire protocol (Thrift, HBase RPC, CQL),
the error a malformed answer raises, and the base of rows decoded only when looked at.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Iterator, Mapping
from time import perf_counter_ns
from typing import Any

# What a client's `row_of` says when the value of a read's answer is a list of rows whose first is
# the read's row (bindings/base.py chain_outcomes, and its compiled twin, look for it).
FIRST_ROW = "first"


class LazyMapping(Mapping):
    """A read-only mapping whose dict `_decoded()` makes when it is first looked at: the base of
    the native clients' rows (cql.LazyRow, hbase_rpc.LazyCells)."""

    __slots__ = ()

    @abstractmethod
    def _decoded(self) -> dict[str, Any]:
        """The values as a dict, made on the first call and kept."""

    def __getitem__(self, name: str) -> Any:
        return self._decoded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._decoded()!r})"


class MalformedAnswer(ConnectionError):
    """What a server sent does not parse: a frame or message no server sends (a length out of the
    protocol's range, an answer to a request nobody made) or an answer that does not decode.
    Nothing after it in the stream can be trusted, so the connection breaks
    (SharedConnection._malformed) and every request in flight fails with this, on the Python
    receive path and the compiled one alike (tests/unit/test_parsers_fuzz.py)."""


class BufferedConnection(asyncio.BufferedProtocol):
    """What the asyncio clients' connections share (databases/hbase/protocol/thrift's
    ThriftConnection, databases/hbase/protocol/rpc's RpcConnection and
    databases/cassandra/protocol/connection's CqlConnection): replies received into
    the connection's own growing buffer (no allocation per recv), and one timeout timer per
    connection, not one per request."""

    server = "server"  # how messages name the other end
    # Slots for what the receive path reads on every wake-up (workbench._speedups reads them at
    # their offsets, without a lookup), and a __dict__ for the rest (a subclass's own, the
    # compiled hooks a connection sets on itself).
    __slots__ = ("loop", "timeout_s", "where", "transport", "broken", "_in", "_view", "_n", "_timer",
                 "__dict__")

    def __init__(self, timeout_s: float, where: str, size: int) -> None:
        self.loop = asyncio.get_running_loop()
        self.timeout_s, self.where = timeout_s, where
        self.transport: asyncio.Transport | None = None
        self.broken: BaseException | None = None
        self._in = bytearray(size)
        self._view = memoryview(self._in)
        self._n = 0
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._n == len(self._in):  # a large reply (a scan): a buffer twice the size
            bigger = bytearray(2 * self._n)
            bigger[:self._n] = self._in
            self._in, self._view = bigger, memoryview(bigger)
        return self._view[self._n:]

    # The two hooks each connection class fills in (what is in flight, what a timeout does).
    def _oldest(self) -> int:
        """When the oldest request in flight was sent (perf_counter_ns); 0: none in flight."""
        raise NotImplementedError("a BufferedConnection subclass says what is in flight")

    def _timed_out(self, exc: TimeoutError) -> None:
        """The oldest request waited longer than timeout_s: fail what is in flight."""
        raise NotImplementedError("a BufferedConnection subclass says what a timeout fails")

    def _arm(self) -> None:
        if self._timer is None:
            self._timer = self.loop.call_later(self.timeout_s, self._watch)

    def _watch(self) -> None:
        self._timer = None
        t0 = self._oldest()
        if not t0 or self.broken is not None:
            return
        overdue = (perf_counter_ns() - t0) / 1e9 - self.timeout_s
        if overdue >= 0:
            self._timed_out(TimeoutError(f"no answer from the {self.server} at {self.where} "
                                         f"within {self.timeout_s * 1000:.0f} ms"))
        else:
            self._timer = self.loop.call_later(-overdue, self._watch)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def close(self) -> None:
        self._stop_timer()
        if self.transport is not None:
            self.transport.close()


class SharedConnection(BufferedConnection):
    """A BufferedConnection that many lanes share (databases/hbase/protocol/rpc's RpcConnection
    and databases/cassandra/protocol/connection's CqlConnection): requests carry an id and wait in
    `_inflight` (id -> the request's state, which has `t0`, oldest first) for answers that may come
    in any order.

    Requests made in one turn of the loop wait in `_out` and go out in one write (`_flush`, made
    a callback by the first of them); those made while `_receiving` (the callbacks of the answers
    one read brought) go out when the read has been answered, in the subclass's buffer_updated."""

    __slots__ = ("_out", "_inflight", "_receiving")

    def __init__(self, timeout_s: float, where: str, size: int) -> None:
        super().__init__(timeout_s, where, size)
        self._out: list[bytes] = []
        self._inflight: dict[int, Any] = {}
        self._receiving = False

    def _received(self, at: int, n: int) -> None:
        """The end of a wake-up's receiving: the bytes after the last whole answer (`at` of the `n`
        received) move to the buffer's start, and the requests the answers' callbacks made go out
        in one write (CqlConnection's and RpcConnection's buffer_updated; csrc/conn.c does the
        same on the compiled path)."""
        self._receiving = False
        if at:
            rest = n - at
            buf = self._in
            buf[:rest] = buf[at:n]
            self._n = rest
        if self._out:
            self._flush()

    def _flush(self) -> None:
        out, self._out = self._out, []
        if self.transport is not None and self.broken is None:
            self.transport.write(b"".join(out))

    def _oldest(self) -> int:
        for request in self._inflight.values():
            return request.t0
        return 0

    def _fail_all(self, exc: BaseException) -> None:
        """Every request in flight has failed with exc (the subclass answers them)."""
        raise NotImplementedError("a SharedConnection subclass answers what was in flight")

    def _malformed(self, why: BaseException | str) -> MalformedAnswer:
        """What was received does not parse (why: what is wrong, or the decoder's exception):
        the connection breaks with a MalformedAnswer that says so, which every request in flight
        fails with; returned for the request whose answer it was (out of _inflight already)."""
        if isinstance(why, BaseException):
            why = f"an answer that does not parse ({type(why).__name__}: {why})"
        exc = MalformedAnswer(f"the {self.server} at {self.where} sent {why}")
        self._break(exc)
        return exc

    def _break(self, exc: BaseException) -> None:
        """The connection is unusable (an answer that does not parse, a timeout where the server
        is gone): fail what is in flight and drop it."""
        if self.broken is None:
            self.broken = exc
        self._fail_all(exc)
        if self.transport is not None:
            self.transport.abort()
