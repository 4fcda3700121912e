"""Apache HBase through its Thrift1 gateway.

YCSB's hbase2 semantics: one row per key in column family `columnfamily`, one column per field;
insert and update are puts, delete is blind (OK even if the row was absent), a read of a missing
row is NOT_FOUND, a scan returns up to `count` rows from the start key in key order. The table is
created, pre-split if asked, in prepare() (schema.py). Properties: options.py and
docs/CLIENTS.md.

Two clients, chosen by hbase.client (the registry's client factory,
hbase_options.binding_target, picks the class):
- `native` (the default): native.py, reads and puts over HBase's own RPC straight to the
  RegionServers; everything else as `async`.
- `async`: this class, an asyncio Thrift client (databases/hbase/protocol/thrift.py) with one connection per
  lane; a lane's sequence of reads and updates is a chain of requests on one connection, one
  request per operation, each timed on its own.
happybase (in a thread) only administers the table: schema.py.

With clientbuffering=true, puts collect in this worker's buffer (BATCHED_OK) until it holds
`writebuffersize` bytes; the put that fills it waits for the flush (OK), as YCSB's
BufferedMutator does. cleanup() flushes the rest.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from typing import Any

from thriftpy2.transport import TTransportException

from workbench.bindings.base import READ, Binding, Outcome, Row, Status, Step
from workbench.databases.hbase.admin import DDL_TIMEOUT_MS, connect
from workbench.databases.hbase.options import BUFFER_NOTE, parse_options
from workbench.databases.hbase.protocol.thrift import (
    ConnectionPool,
    Encoder,
    decode_get,
    decode_put,
    encode_call,
)
from workbench.databases.hbase.protocol.thrift_idl import BatchMutation, Hbase, Mutation, TScan
from workbench.databases.hbase.schema import ensure_table
from workbench.errors import BindingError

_TRANSPORT_KINDS = {0: "UNKNOWN", 1: "NOT_OPEN", 2: "ALREADY_OPEN", 3: "TIMED_OUT", 4: "END_OF_FILE"}
MISMATCH_HINT = (
    "is HBase's Thrift server running there, and do hbase.transport / hbase.protocol match it? "
    "The default -threadpool server speaks buffered/binary; -hsha and -nonblocking need framed. "
    "A mismatch shows as 'TSocket read 0 bytes' or as a wait until hbase.timeout"
)


def cells(columns: dict, cut: int) -> Row:
    """A TRowResult's columns as YCSB's field -> value (the family prefix cut off)."""
    return {name[cut:].decode(): cell.value.decode() for name, cell in columns.items()}


def error_kind(exc: BaseException) -> str:
    """A short name for a failure: the class, and the reason for transport errors."""
    if isinstance(exc, TTransportException):
        return f"TTransportException.{_TRANSPORT_KINDS.get(exc.type, exc.type)}"
    return type(exc).__name__


def _generic(name: str) -> Callable:
    """The decoder of any call's reply: its success value, or raise what the server raised."""
    result_cls = getattr(Hbase, f"{name}_result")
    return functools.partial(_decode_generic, name=name, result_cls=result_cls)


def _decode_generic(decoder: Any, body: bytes, name: str, result_cls: type) -> Any:
    return decoder.result(body, name, result_cls)


_SCAN_OPEN, _SCAN_GET, _SCAN_CLOSE = (_generic("scannerOpenWithScan"), _generic("scannerGetList"),
                                      _generic("scannerClose"))
_MUTATE_ROWS = _generic("mutateRows")


class HBaseBinding(Binding):
    """YCSB's hbase2 binding over Thrift; see the module docstring."""

    name = "hbase"

    def __init__(self, spec: Any, properties: dict[str, str], context: dict[str, Any]) -> None:
        super().__init__(spec, properties, context)
        self.options = parse_options(spec, properties, context)
        self.pool: Any = None
        self._errors: dict[str, int] = {}
        self._prefix = f"{self.options.family}:".encode()
        self._cut = len(self._prefix)
        self._family = [self.options.family.encode()]
        self._wal = self.options.wal
        self._buffering = self.options.clientbuffering
        self._buffer: dict[str, list] = {}
        self._buffered_bytes = 0
        self._encoders: dict[str, Encoder] = {}

    # -- set-up and tear-down ------------------------------------------------------------------

    def _checked_connection(self) -> Any:
        """A happybase connection that has answered one request, or a BindingError saying why."""
        options = self.options
        try:
            conn = connect(options, min(options.timeout_ms, 5000))
            conn.client.getTableNames()
        except Exception as exc:
            raise BindingError(f"cannot talk to the {options.describe()}: {error_kind(exc)}: {exc}",
                               MISMATCH_HINT) from None
        return conn

    async def prepare(self) -> None:
        def work() -> None:
            conn = self._checked_connection()
            # the gateway answered at once; a table made, disabled or dropped takes it longer (a
            # contract test's table, under two busy loops, took more than 5 s)
            conn.socket.set_timeout(max(self.options.timeout_ms, DDL_TIMEOUT_MS))
            try:
                ensure_table(conn, self.options, self.spec, self.context.get("phase", "load"),
                             self.spec.table)
            finally:
                conn.close()

        await asyncio.to_thread(work)

    async def nothing_loaded(self, table: str) -> str | None:
        def look() -> str | None:
            conn = self._checked_connection()
            try:
                if table.encode() not in conn.tables():
                    return f"HBase table {table!r} does not exist"
                if next(iter(conn.table(table).scan(limit=1, filter="FirstKeyOnlyFilter()")), None) is None:
                    return f"HBase table {table!r} is empty"
                return None
            finally:
                conn.close()

        return await asyncio.to_thread(look)

    async def init(self) -> None:
        await asyncio.to_thread(lambda: self._checked_connection().close())
        o = self.options
        self.pool = ConnectionPool(o.host, o.port, o.transport == "framed", o.timeout_ms, o.pool)

    async def cleanup(self) -> None:
        if self.pool is None:
            return
        status = await self._flush() if self._buffer else Status.OK
        await self._close_pool()
        self.pool = None
        if not status.is_ok:
            raise BindingError("the last flush of the client write buffer failed",
                               f"failed operations by kind: {self._errors}")

    async def _close_pool(self) -> None:
        self.pool.close()

    def notes(self) -> list[str]:
        out = []
        if self._buffering:
            out.append(BUFFER_NOTE.format(size=self.options.writebuffersize))
        if not self._wal:
            out.append("durability=SKIP_WAL: writes skip HBase's write-ahead log; acknowledged "
                       "writes are lost if the RegionServer crashes before a flush")
        return out

    def error_kinds(self) -> dict[str, int]:
        return dict(self._errors)

    def _failed(self, exc: BaseException) -> Status:
        kind = error_kind(exc)
        self._errors[kind] = self._errors.get(kind, 0) + 1
        return Status.ERROR

    def _encoder(self, table: str) -> Encoder:
        encoder = self._encoders.get(table)
        if encoder is None:
            encoder = self._encoders[table] = Encoder(table.encode())
        return encoder

    def _columns(self, fields: Sequence[str] | None) -> list[bytes]:
        return self._family if fields is None else [self._prefix + f.encode() for f in fields]

    # -- operations ----------------------------------------------------------------------------

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        request = (self._encoder(table).get(key.encode(), self._columns(fields)), decode_get)
        try:
            rows = await self.pool.call(request)
        except Exception as exc:
            return self._failed(exc), None
        return (Status.OK, cells(rows[0].columns, self._cut)) if rows else (Status.NOT_FOUND, None)

    async def sequence(self, table: str, steps: Sequence[Step], more: Callable[[], bool]) -> list[Outcome]:
        """Reads and puts as one chain on one connection: each answer sends the next request.
        With client-side buffering, puts go to the buffer one by one instead."""
        if self._buffering:
            return await super().sequence(table, steps, more)
        encoder, prefix, wal, family = self._encoder(table), self._prefix, self._wal, self._family
        get, put = encoder.get, encoder.put

        def make(step: Step) -> tuple:
            op, key, arg = step
            if op == READ:
                columns = family if arg is None else [prefix + f.encode() for f in arg]
                return get(key.encode(), columns), decode_get
            return put(key.encode(), [(prefix + f.encode(), v.encode()) for f, v in arg.items()],
                       wal), decode_put

        answers = await self.pool.run(steps, make, more)
        out: list[Outcome] = []
        cut = self._cut
        for (op, _, _), (ok, answer, t0, t1) in zip(steps, answers, strict=False):  # answers: a prefix
            if not ok:
                out.append((self._failed(answer), t0, t1, None))
            elif op != READ:
                out.append((Status.OK, t0, t1, None))
            elif answer:
                out.append((Status.OK, t0, t1, cells(answer[0].columns, cut)))
            else:
                out.append((Status.NOT_FOUND, t0, t1, None))
        return out

    async def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None):
        columns, tname = self._columns(fields), table.encode()
        open_scan = encode_call("scannerOpenWithScan", Hbase.scannerOpenWithScan_args(
            tableName=tname, scan=TScan(startRow=start_key.encode(), columns=columns, caching=count),
            attributes={}))
        try:
            conn = await self.pool.acquire()
        except Exception as exc:
            return self._failed(exc), []
        try:
            scanner = await self._one(conn, (open_scan, _SCAN_OPEN))
            try:
                rows = await self._one(conn, (encode_call("scannerGetList", Hbase.scannerGetList_args(
                    id=scanner, nbRows=count)), _SCAN_GET))
            finally:
                if conn.broken is None:
                    await self._one(conn, (encode_call("scannerClose", Hbase.scannerClose_args(
                        id=scanner)), _SCAN_CLOSE))
        except Exception as exc:
            return self._failed(exc), []
        finally:
            self.pool.release(conn)
        cut = self._cut
        return Status.OK, [(r.row.decode(), cells(r.columns, cut)) for r in rows]

    @staticmethod
    async def _one(conn: Any, request: tuple) -> Any:
        ok, value, _, _ = (await conn.run([request]))[0]
        if not ok:
            raise value
        return value

    async def update(self, table: str, key: str, values: Row) -> Status:
        return await self._put(table, key, values)

    async def insert(self, table: str, key: str, values: Row) -> Status:
        return await self._put(table, key, values)

    async def delete(self, table: str, key: str) -> Status:
        request = encode_call("mutateRow", Hbase.mutateRow_args(
            tableName=table.encode(), row=key.encode(),
            mutations=[Mutation(isDelete=True, column=self._family[0], writeToWAL=self._wal)],
            attributes={}))
        try:
            await self.pool.call((request, decode_put))
        except Exception as exc:
            return self._failed(exc)
        return Status.OK

    async def _put(self, table: str, key: str, values: Row) -> Status:
        prefix, row = self._prefix, key.encode()
        if self._buffering:
            mutations = [Mutation(column=prefix + f.encode(), value=v.encode(), writeToWAL=self._wal)
                         for f, v in values.items()]
            self._buffer.setdefault(table, []).append(BatchMutation(row=row, mutations=mutations))
            self._buffered_bytes += len(row) + sum(len(m.column) + len(m.value) for m in mutations)
            if self._buffered_bytes < self.options.writebuffersize:
                return Status.BATCHED_OK
            return await self._flush()
        request = self._encoder(table).put(
            row, [(prefix + f.encode(), v.encode()) for f, v in values.items()], self._wal)
        try:
            await self.pool.call((request, decode_put))
        except Exception as exc:
            return self._failed(exc)
        return Status.OK

    async def _flush(self) -> Status:
        buffers, self._buffer, self._buffered_bytes = self._buffer, {}, 0
        for table, batch in buffers.items():
            try:
                await self._mutate_rows(table, batch)
            except Exception as exc:
                self._errors["buffered rows lost"] = self._errors.get("buffered rows lost", 0) + len(batch)
                return self._failed(exc)
        return Status.OK

    async def _mutate_rows(self, table: str, batch: list) -> None:
        await self.pool.call((encode_call("mutateRows", Hbase.mutateRows_args(
            tableName=table.encode(), rowBatches=batch, attributes={})), _MUTATE_ROWS))
