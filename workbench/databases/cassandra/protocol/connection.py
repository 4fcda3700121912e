"""One connection to one Cassandra node, shared by every lane of a worker: requests carry a
stream id and answers may come back in any order; requests made in the same turn of the event
loop go out in one write; answers are read into a buffer the connection owns. A lane's sequence is
a chain (_Chain): each answer sends the lane's next request from the callback. With
workbench._speedups built, the usual answer to a chain's step is handled in C (csrc/, cql_receive).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from time import perf_counter_ns
from typing import Any

from workbench import speedups
from workbench.databases.cassandra.protocol.cql import (
    _I32,
    _U16,
    ERROR,
    ERROR_KINDS,
    EVENT,
    EXECUTE,
    HEADER,
    MAX_FRAME,
    PREPARE,
    RESULT,
    STREAMS,
    UNPREPARED,
    QueryFailed,
    decode_result,
    failure,
    long_string,
    read_string,
)
from workbench.protocols.wire import MalformedAnswer, SharedConnection

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
    # run's per-node figures (csrc/cql.c's send_fast counts what it sends, too)
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
        __init__: csrc/cql.c's cql_receive), which answers the usual answer to a chain's step (no
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
            self._received(at, n)

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



# The compiled receive path (csrc/, cql_receive), or None: a CqlConnection made while it is None
# keeps the Python buffer_updated, which answers every frame (tests switch between the two by
# setting this before they make their connections).
_fast = speedups.C
if _fast is not None:
    _fast.conn_setup(CqlConnection, "cql")
