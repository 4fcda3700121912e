"""A pool of threads, each owning one happybase Connection, serving an asyncio loop.

One Thrift connection carries one request at a time (sharing one between coroutines once
returned the wrong row), so every thread has its own and no connection is ever shared. The
hand-off is kept cheap: jobs go to the threads through one SimpleQueue (no
concurrent.futures.Future per call), and results come back in a deque that the loop drains with
a single wake-up for however many results arrived meanwhile.

A transport-level failure (socket error, timeout, a reply that does not parse) closes the
thread's connection; the next job on that thread opens a fresh one, so a run continues once
the server is back. Errors the server itself sends (Thrift IOError) leave the connection open.
"""

from __future__ import annotations

import asyncio
import collections
import queue
import threading
from collections.abc import Callable
from typing import Any

import happybase
from thriftpy2.thrift import TApplicationException, TClient, TException
from thriftpy2.transport import TSocket

from workbench.bindings.hbase_idl import Hbase
from workbench.bindings.hbase_options import HBaseOptions


class _Connection(happybase.Connection):
    """happybase.Connection whose connect also gives up after the timeout (a paused server
    accepts connections in the kernel and then never answers)."""

    def _refresh_thrift_client(self) -> None:
        sock = TSocket(host=self.host, port=self.port, socket_timeout=self.timeout,
                       connect_timeout=self.timeout)
        self.transport = self._transport_class(sock)
        self.client = TClient(Hbase, self._protocol_class(self.transport, decode_response=False))


def connect(options: HBaseOptions, timeout_ms: int | None = None) -> happybase.Connection:
    """An open connection to the gateway with the configured transport and protocol."""
    return _Connection(options.host, options.port, timeout=timeout_ms or options.timeout_ms,
                       transport=options.transport, protocol=options.protocol)


def breaks_connection(exc: BaseException) -> bool:
    """True when the connection's stream can no longer be trusted after `exc`."""
    if isinstance(exc, TApplicationException):
        return True  # the reply did not match the request: the stream is out of step
    # Hbase's IOError / IllegalArgument are answers from the server on a healthy connection.
    return not isinstance(exc, TException) or type(exc).__module__ != "Hbase_thrift"


class ThriftPool:
    """`size` threads with one connection each; `call(fn, *args)` runs fn(client, *args)."""

    def __init__(self, options: HBaseOptions, size: int) -> None:
        self.options = options
        self.size = size
        self._loop = asyncio.get_running_loop()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._done: collections.deque = collections.deque()
        self._wakeup_pending = False
        self.opened = 0  # connections opened (first ones and replacements)
        self._threads = [threading.Thread(target=self._serve, name=f"hbase-{i}", daemon=True)
                         for i in range(size)]
        for thread in self._threads:
            thread.start()

    def call(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        """Queue fn(client, *args) for the next free thread; await the returned future."""
        future = self._loop.create_future()
        self._jobs.put((future, fn, args))
        return future

    def _serve(self) -> None:
        conn = None
        done = self._done
        while True:
            job = self._jobs.get()
            if job is None:
                break
            future, fn, args = job
            try:
                if conn is None:
                    conn = connect(self.options)
                    self.opened += 1
                result, ok = fn(conn.client, *args), True
            except BaseException as exc:  # handed to the awaiting coroutine
                result, ok = exc, False
                if conn is not None and breaks_connection(exc):
                    _close_quietly(conn)
                    conn = None
            done.append((future, ok, result))
            if not self._wakeup_pending:
                self._wakeup_pending = True
                try:
                    self._loop.call_soon_threadsafe(self._deliver)
                except RuntimeError:  # the loop is closed: nobody waits for this any more
                    break
        if conn is not None:
            _close_quietly(conn)

    def _deliver(self) -> None:
        # Clear the flag first: a result appended after this line schedules another call.
        self._wakeup_pending = False
        done = self._done
        while done:
            future, ok, result = done.popleft()
            if future.cancelled():
                continue
            if ok:
                future.set_result(result)
            else:
                future.set_exception(result)

    async def close(self, grace_s: float) -> None:
        """Let every thread finish its job, close its connection and exit (bounded wait)."""
        for _ in self._threads:
            self._jobs.put(None)
        deadline = self._loop.time() + grace_s
        for thread in self._threads:
            remaining = deadline - self._loop.time()
            if remaining > 0:
                await asyncio.to_thread(thread.join, remaining)
        self._deliver()


def _close_quietly(conn: happybase.Connection) -> None:
    try:
        conn.close()
    except Exception:  # a broken transport may fail to close; it is dropped either way
        pass
