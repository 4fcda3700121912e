"""The HBase binding with hbase.client=happybase: happybase connections in a pool of threads.

What the binding was before the asyncio client (hbase_thrift.py) became the default; it also
serves hbase.protocol=compact. Lanes share a pool of threads with one connection each
(hbase_pool.py); a lane's sequence of reads and updates is one job for one thread. Semantics,
options, set-up and buffering are HBaseBinding's (hbase.py); only the requests differ.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from time import perf_counter_ns
from typing import Any

from workbench.bindings.base import READ, Binding, Outcome, Row, Status, Step
from workbench.bindings.hbase import HBaseBinding
from workbench.bindings.hbase import cells as _cells
from workbench.bindings.hbase_idl import Mutation, TScan
from workbench.bindings.hbase_pool import ThriftPool, breaks_connection


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


class HappybaseBinding(HBaseBinding):
    """HBaseBinding whose requests go through happybase connections in pool threads."""

    async def init(self) -> None:
        await asyncio.to_thread(lambda: self._checked_connection().close())
        self.pool = ThriftPool(self.options, self.options.pool)

    async def _close_pool(self) -> None:
        await self.pool.close(self.options.timeout_ms / 1000 + 1)

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        try:
            row = await self.pool.call(_get_row, table.encode(), key.encode(), self._columns(fields),
                                       self._cut)
        except Exception as exc:
            return self._failed(exc), None
        return (Status.NOT_FOUND, None) if row is None else (Status.OK, row)

    async def sequence(self, table: str, steps: Sequence[Step], more: Callable[[], bool]) -> list[Outcome]:
        """Reads and puts as one job for one pool thread: one hand-off per sequence, not per step.
        With client-side buffering, puts go to the buffer one by one instead."""
        if self._buffering:
            return await Binding.sequence(self, table, steps, more)
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
        try:
            rows = await self.pool.call(_scan, table.encode(), start_key.encode(), count,
                                        self._columns(fields), self._cut)
        except Exception as exc:
            return self._failed(exc), []
        return Status.OK, rows

    async def delete(self, table: str, key: str) -> Status:
        mutation = [Mutation(isDelete=True, column=self._family[0], writeToWAL=self._wal)]
        try:
            await self.pool.call(_mutate_row, table.encode(), key.encode(), mutation)
        except Exception as exc:
            return self._failed(exc)
        return Status.OK

    async def _put(self, table: str, key: str, values: Row) -> Status:
        if self._buffering:
            return await super()._put(table, key, values)
        prefix, wal = self._prefix, self._wal
        mutations = [Mutation(column=prefix + f.encode(), value=v.encode(), writeToWAL=wal)
                     for f, v in values.items()]
        try:
            await self.pool.call(_mutate_row, table.encode(), key.encode(), mutations)
        except Exception as exc:
            return self._failed(exc)
        return Status.OK

    async def _mutate_rows(self, table: str, batch: list) -> None:
        await self.pool.call(_mutate_rows, table.encode(), batch)
