"""Apache HBase through its Thrift1 gateway (happybase's connection, thriftpy2's C codec).

YCSB's hbase2 semantics: one row per key in column family `columnfamily`, one column per field;
insert and update are puts, delete is blind (OK even if the row was absent), a read of a missing
row is NOT_FOUND, a scan returns up to `count` rows from the start key in key order. Lanes share
a pool of threads with one connection each (hbase_pool.py); a lane's sequence of reads and
updates is one job for one thread. The table is created, pre-split if asked, in prepare()
(hbase_schema.py). Properties: hbase_options.py and README's Bindings.

With clientbuffering=true, puts collect in this worker's buffer (BATCHED_OK) until it holds
`writebuffersize` bytes; the put that fills it waits for the flush (OK), as YCSB's
BufferedMutator does. cleanup() flushes the rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from time import perf_counter_ns
from typing import Any

import happybase  # noqa: F401  (loads the Thrift1 IDL as the Hbase_thrift module)
from Hbase_thrift import BatchMutation, Mutation, TScan
from thriftpy2.transport import TTransportException

from workbench.bindings.base import READ, Binding, Outcome, Row, Status, Step
from workbench.bindings.hbase_options import BUFFER_NOTE, parse_options
from workbench.bindings.hbase_pool import ThriftPool, breaks_connection, connect
from workbench.bindings.hbase_schema import ensure_table
from workbench.errors import BindingError

_TRANSPORT_KINDS = {0: "UNKNOWN", 1: "NOT_OPEN", 2: "ALREADY_OPEN", 3: "TIMED_OUT", 4: "END_OF_FILE"}
MISMATCH_HINT = (
    "is HBase's Thrift server running there, and do hbase.transport / hbase.protocol match it? "
    "The default -threadpool server speaks buffered/binary; -hsha and -nonblocking need framed. "
    "A mismatch shows as 'TSocket read 0 bytes' or as a wait until hbase.timeout"
)


def _cells(columns: dict, cut: int) -> Row:
    return {name[cut:].decode(): cell.value.decode() for name, cell in columns.items()}


def _get_row(client: Any, table: bytes, row: bytes, columns: list[bytes], cut: int) -> Row | None:
    rows = client.getRowWithColumns(table, row, columns, {})
    return _cells(rows[0].columns, cut) if rows else None


def _mutate_row(client: Any, table: bytes, row: bytes, mutations: list) -> None:
    client.mutateRow(table, row, mutations, {})


def _mutate_rows(client: Any, table: bytes, batch: list) -> None:
    client.mutateRows(table, batch, {})


def _scan(client: Any, table: bytes, start: bytes, count: int, columns: list[bytes], cut: int):
    scanner = client.scannerOpenWithScan(table, TScan(startRow=start, columns=columns,
                                                      caching=count), {})
    try:
        rows = client.scannerGetList(scanner, count)
    finally:
        client.scannerClose(scanner)
    return [(r.row.decode(), _cells(r.columns, cut)) for r in rows]


class _Broken(Exception):
    """A sequence that stopped on a failure that broke its connection; the pool thread
    replaces the connection, and `answers` holds what the sequence did up to then."""

    def __init__(self, answers: list) -> None:
        super().__init__("connection broken")
        self.answers = answers


def _run_steps(client: Any, table: bytes, jobs: list, cut: int, more: Callable[[], bool]) -> list:
    """Reads and puts one after another on one connection (a pool thread): (ok, row or None or
    exception, start ns, end ns) each. Before each job after the first, more() says go on."""
    out: list[tuple] = []
    append = out.append
    mutate = client.mutateRow
    for is_read, row, arg in jobs:
        if out and not more():
            break
        t0 = perf_counter_ns()
        try:
            answer = _get_row(client, table, row, arg, cut) if is_read else mutate(table, row, arg, {})
        except Exception as exc:
            append((False, exc, t0, perf_counter_ns()))
            if breaks_connection(exc):
                raise _Broken(out) from exc
            continue
        append((True, answer, t0, perf_counter_ns()))
    return out


def error_kind(exc: BaseException) -> str:
    """A short name for a failure: the class, and the reason for transport errors."""
    if isinstance(exc, TTransportException):
        return f"TTransportException.{_TRANSPORT_KINDS.get(exc.type, exc.type)}"
    return type(exc).__name__


class HBaseBinding(Binding):
    """YCSB's hbase2 binding over Thrift; see the module docstring."""

    name = "hbase"

    def __init__(self, spec: Any, properties: dict[str, str], context: dict[str, Any]) -> None:
        super().__init__(spec, properties, context)
        self.options = parse_options(spec, properties, context)
        self.pool: ThriftPool | None = None
        self._errors: dict[str, int] = {}
        self._prefix = f"{self.options.family}:".encode()
        self._cut = len(self._prefix)
        self._family = [self.options.family.encode()]
        self._wal = self.options.wal
        self._buffering = self.options.clientbuffering
        self._buffer: dict[str, list] = {}
        self._buffered_bytes = 0

    # -- set-up and tear-down ------------------------------------------------------------------

    def _checked_connection(self) -> Any:
        """A connection that has answered one request, or a BindingError saying why not."""
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
            try:
                ensure_table(conn, self.options, self.spec, self.context.get("phase", "load"),
                             self.spec.table)
            finally:
                conn.close()

        await asyncio.to_thread(work)

    async def init(self) -> None:
        await asyncio.to_thread(lambda: self._checked_connection().close())
        self.pool = ThriftPool(self.options, self.options.pool)

    async def cleanup(self) -> None:
        if self.pool is None:
            return
        status = await self._flush() if self._buffer else Status.OK
        await self.pool.close(self.options.timeout_ms / 1000 + 1)
        self.pool = None
        if not status.is_ok:
            raise BindingError("the last flush of the client write buffer failed",
                               f"failed operations by kind: {self._errors}")

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

    def _failed(self, exc: Exception) -> Status:
        kind = error_kind(exc)
        self._errors[kind] = self._errors.get(kind, 0) + 1
        return Status.ERROR

    # -- operations ----------------------------------------------------------------------------

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        columns = self._family if fields is None else [self._prefix + f.encode() for f in fields]
        try:
            row = await self.pool.call(_get_row, table.encode(), key.encode(), columns, self._cut)
        except Exception as exc:
            return self._failed(exc), None
        return (Status.NOT_FOUND, None) if row is None else (Status.OK, row)

    async def sequence(self, table: str, steps: Sequence[Step], more: Callable[[], bool]) -> list[Outcome]:
        """Reads and puts as one job for one pool thread: one hand-off per sequence, not per step.
        With client-side buffering, puts go to the buffer one by one instead (the default)."""
        if self._buffering:
            return await super().sequence(table, steps, more)
        prefix, wal, family = self._prefix, self._wal, self._family
        jobs = []
        for op, key, arg in steps:
            if op == READ:
                columns = family if arg is None else [prefix + f.encode() for f in arg]
                jobs.append((True, key.encode(), columns))
            else:
                jobs.append((False, key.encode(), [
                    Mutation(column=prefix + f.encode(), value=v.encode(), writeToWAL=wal)
                    for f, v in arg.items()]))
        try:
            answers = await self.pool.call(_run_steps, table.encode(), jobs, self._cut, more)
        except _Broken as broken:
            answers = broken.answers
        out: list[Outcome] = []
        for (op, _, _), (ok, answer, t0, t1) in zip(steps, answers, strict=False):  # answers: a prefix
            if not ok:
                out.append((self._failed(answer), t0, t1, None))
            elif op == READ and answer is None:
                out.append((Status.NOT_FOUND, t0, t1, None))
            else:
                out.append((Status.OK, t0, t1, answer if op == READ else None))
        return out

    async def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None):
        columns = self._family if fields is None else [self._prefix + f.encode() for f in fields]
        try:
            rows = await self.pool.call(_scan, table.encode(), start_key.encode(), count, columns,
                                        self._cut)
        except Exception as exc:
            return self._failed(exc), []
        return Status.OK, rows

    async def update(self, table: str, key: str, values: Row) -> Status:
        return await self._put(table, key, values)

    async def insert(self, table: str, key: str, values: Row) -> Status:
        return await self._put(table, key, values)

    async def delete(self, table: str, key: str) -> Status:
        mutation = [Mutation(isDelete=True, column=self._family[0], writeToWAL=self._wal)]
        try:
            await self.pool.call(_mutate_row, table.encode(), key.encode(), mutation)
        except Exception as exc:
            return self._failed(exc)
        return Status.OK

    async def _put(self, table: str, key: str, values: Row) -> Status:
        prefix, wal = self._prefix, self._wal
        mutations = [Mutation(column=prefix + f.encode(), value=v.encode(), writeToWAL=wal)
                     for f, v in values.items()]
        row = key.encode()
        if self._buffering:
            self._buffer.setdefault(table, []).append(BatchMutation(row=row, mutations=mutations))
            self._buffered_bytes += len(row) + sum(len(m.column) + len(m.value) for m in mutations)
            if self._buffered_bytes < self.options.writebuffersize:
                return Status.BATCHED_OK
            return await self._flush()
        try:
            await self.pool.call(_mutate_row, table.encode(), row, mutations)
        except Exception as exc:
            return self._failed(exc)
        return Status.OK

    async def _flush(self) -> Status:
        buffers, self._buffer, self._buffered_bytes = self._buffer, {}, 0
        for table, batch in buffers.items():
            try:
                await self.pool.call(_mutate_rows, table.encode(), batch)
            except Exception as exc:
                self._errors["buffered rows lost"] = self._errors.get("buffered rows lost", 0) + len(batch)
                return self._failed(exc)
        return Status.OK
