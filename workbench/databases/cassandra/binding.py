"""The Cassandra binding: YCSB's cassandra-cql semantics on the workbench's own CQL client
(default) or cassandra-driver (the reference it is held to; acsylla was retired).

Properties are in options.py, CQL and schema creation in schema.py, the two
load drivers in databases/cassandra/protocol/session.py and python_driver.py. Both offer the
same small interface: `prepare(cql, consistency) -> bind` (params -> request),
`execute(request) -> awaitable result`, `row(result)` (the first row, a mapping by column name)
/ `rows(result)` (dicts, nulls as None),
`errors` (what execute may raise), `close()`; the operations below call them directly, without a
coroutine layer of their own. Sequences of reads and updates go to the driver's
`chain(pending, more)`, which binds and sends them one after another inside the driver (native:
in the answers' callbacks on the loop; cassandra-driver: on its own thread) and hands back every
answer at once. A request is bound just before it is sent: a sequence that ends early
(deadline, pause) has bound nothing it did not send.

Every operation shape (read all or named fields, update one or all fields, insert, delete,
token-range scan with a limit) is a prepared statement, made on first use and cached per worker.
Driver errors never escape an operation: they become Status.ERROR and are counted by kind
(ReadTimeout, WriteTimeout, Unavailable, OperationTimedOut, NoHostAvailable, ...) for the report;
a missing row is NOT_FOUND.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from workbench import speedups
from workbench.bindings.base import READ, Binding, Outcome, ReadRow, Row, Status, Step, chain_outcomes
from workbench.databases.cassandra.errors import QueryFailed, kind_of
from workbench.databases.cassandra.options import CassandraOptions, parse_options
from workbench.databases.cassandra.schema import KEY, Cql, ensure_schema

_ERROR = Status.ERROR
_OK = Status.OK
_NOT_FOUND = Status.NOT_FOUND

__all__ = ["CassandraBinding", "QueryFailed", "kind_of"]  # the errors live in errors.py

def _without_nulls(row: ReadRow) -> ReadRow:
    """A read's row without the columns that are null (never written), as YCSB's result map
    has none; a LazyMapping (the native driver's) leaves them out itself."""
    if isinstance(row, dict) and None in row.values():
        return {f: v for f, v in row.items() if v is not None}
    return row


_outcomes = speedups.C.outcomes if speedups.C is not None else chain_outcomes
_pending = speedups.C.pending if speedups.C is not None else None


async def unreachable_nodes(opts: CassandraOptions) -> list[str]:
    """A note for each node the native client discovers but cannot reach (the workers' sessions
    skip it and try it again in the background): asked once, before the workers connect."""
    from workbench.databases.cassandra.protocol.session import NativeSession

    session = await NativeSession.connect(opts.cql_settings(), KEY)
    try:
        return [f"node {where} was discovered but not reached at the start: requests went to the other "
                "nodes until it answered" for where in session.unreachable]
    finally:
        await session.close()


class CassandraBinding(Binding):
    name = "cassandra"

    def __init__(self, spec: Any, properties: dict[str, str], context: dict[str, Any]) -> None:
        super().__init__(spec, properties, context)
        self.options = parse_options(properties)
        self.fields = tuple(spec.field_names)
        self.cql = Cql(self.options.keyspace, spec.table)
        self.db: Any = None
        self._execute: Any = None
        self._row: Any = None
        self._row_of: Any = None
        self._rows: Any = None
        self._errors: tuple[type[BaseException], ...] = (QueryFailed,)
        self.errors: dict[str, int] = {}
        self._closed_counts: dict[str, tuple[int, int]] = {}
        self._notes: list[str] = []
        self._cache: dict[tuple, Any] = {}
        self._read_every: Any = None
        self._updates: dict[tuple[str, ...], Any] = {}

    # -- set-up ----------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Create keyspace and table (drop the table first on a load with cassandra.drop=true)."""
        from workbench.databases.cassandra.python_driver import make_cluster

        opts = self.options
        drop = opts.drop and self.context.get("phase") == "load"
        if opts.drop and not drop:
            self._notes.append("cassandra.drop=true applies to the load phase: the run kept the table")
        self._notes += await asyncio.to_thread(
            ensure_schema, make_cluster(opts), opts.keyspace, self.spec.table, self.fields,
            opts.replication, drop)
        if opts.driver == "native":
            self._notes += await unreachable_nodes(opts)

    async def nothing_loaded(self, table: str) -> str | None:
        from workbench.databases.cassandra.python_driver import make_cluster
        from workbench.databases.cassandra.schema import nothing_loaded

        return await asyncio.to_thread(nothing_loaded, make_cluster(self.options), self.options.keyspace,
                                       table)

    async def init(self) -> None:
        """Open this worker's session and prepare the all-fields shapes up front."""
        if self.options.driver == "python":
            from workbench.databases.cassandra.python_driver import PythonSession

            self.db = db = await PythonSession.connect(self.options)
        else:
            from workbench.databases.cassandra.protocol.session import NativeSession

            self.db = db = await NativeSession.connect(self.options.cql_settings(), KEY)
        self._execute, self._row, self._rows, self._errors = db.execute, db.row, db.rows, db.errors
        self._row_of = getattr(db, "row_of", db.row)  # a sequence's reads' rows (see chain_outcomes)
        every = self.fields
        await asyncio.gather(self._prepare("read", every), self._prepare("insert", every),
                             self._prepare("update", every), return_exceptions=True)
        # The shapes every workload uses, without building and hashing a (op, shape) tuple
        # per operation: reads of all fields, and updates keyed by their field names alone.
        self._read_every = self._cache.get(("read", every))
        self._updates = {shape: stmt for (op, shape), stmt in self._cache.items() if op == "update"}

    async def cleanup(self) -> None:
        if self.db is not None:
            db, self.db = self.db, None
            await db.close()
            counts = getattr(db, "node_counts", None)
            self._closed_counts = counts() if counts is not None else {}  # (the last tick reads them)

    def notes(self) -> list[str]:
        return list(self._notes)

    def error_kinds(self) -> dict[str, int]:
        return dict(self.errors)

    def node_counts(self) -> dict[str, tuple[int, int]]:
        """Requests per coordinator, where the client counts them (the native one does)."""
        counts = getattr(self.db, "node_counts", None)
        return counts() if counts is not None else self._closed_counts

    def down_nodes(self) -> frozenset[str]:
        down = getattr(self.db, "down_nodes", None)
        return down() if down is not None else frozenset()

    # -- statements --------------------------------------------------------------------------

    async def _prepare(self, op: str, shape: tuple[str, ...]) -> Any:
        key = (op, shape)
        stmt = self._cache.get(key)
        if stmt is None:
            opts = self.options
            if op in ("read", "scan"):
                cql, cl = getattr(self.cql, op)(shape), opts.read_consistency
            else:
                cql, cl = (self.cql.delete() if op == "delete" else getattr(self.cql, op)(shape),
                           opts.write_consistency)
            stmt = self._cache[key] = await self.db.prepare(cql, cl)
        return stmt

    def _failed(self, exc: BaseException) -> Status:
        kind = exc.kind if isinstance(exc, QueryFailed) else kind_of(exc)
        self.errors[kind] = self.errors.get(kind, 0) + 1
        return _ERROR

    # -- operations (hot path: the driver's calls are bound in init) ------------------------

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        try:
            if fields is None and self._read_every is not None:
                bind = self._read_every
            else:
                shape = self.fields if fields is None else tuple(fields)
                bind = self._cache.get(("read", shape)) or await self._prepare("read", shape)
            row = self._row(await self._execute(bind((key,))))
        except self._errors as exc:
            return self._failed(exc), None
        if row is None:
            return Status.NOT_FOUND, None
        return _OK, _without_nulls(row)

    async def _statements(self, steps: Sequence[Step]) -> list[tuple]:
        """Each step's prepared statement and values, preparing those not prepared yet."""
        pending = []
        append = pending.append
        read_every, updates, cache = self._read_every, self._updates, self._cache
        for op, key, arg in steps:
            if op == READ:
                if arg is None and read_every is not None:
                    bind = read_every
                else:
                    shape = self.fields if arg is None else tuple(arg)
                    bind = cache.get(("read", shape)) or await self._prepare("read", shape)
                append((bind, (key,)))
            else:
                shape = tuple(arg)
                bind = updates.get(shape)
                if bind is None:
                    bind = updates[shape] = await self._prepare("update", shape)
                append((bind, (*arg.values(), key)))
        return pending

    async def sequence(self, table: str, steps: Sequence[Step], more: Callable[[], bool]) -> list[Outcome]:
        """Reads and updates as one chain of requests in the driver (see Binding.sequence)."""
        # (bind, params): bound by the chain as each is sent. Compiled where every statement is
        # prepared already (None where one is not: _statements prepares it).
        pending = _pending(steps, READ, self._read_every, self._updates) if _pending is not None else None
        if pending is None:
            try:
                pending = await self._statements(steps)
            except self._errors:  # a shape that cannot be prepared: each step reports it
                return await super().sequence(table, steps, more)
        answers = await self.db.chain(pending, more)
        return _outcomes(steps, answers, READ, _OK, _NOT_FOUND, self._failed, self._row_of, _without_nulls)

    async def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None):
        shape = self.fields if fields is None else tuple(fields)
        try:
            bind = self._cache.get(("scan", shape)) or await self._prepare("scan", shape)
            rows = self._rows(await self._execute(bind((start_key, count))))
        except self._errors as exc:
            return self._failed(exc), []
        return _OK, [(r.pop(KEY), {f: v for f, v in r.items() if v is not None}) for r in rows]

    async def update(self, table: str, key: str, values: Row) -> Status:
        try:
            shape = tuple(values)
            bind = self._updates.get(shape)
            if bind is None:
                bind = self._updates[shape] = await self._prepare("update", shape)
            await self._execute(bind((*values.values(), key)))
        except self._errors as exc:
            return self._failed(exc)
        return _OK

    async def insert(self, table: str, key: str, values: Row) -> Status:
        try:
            bind = self._cache.get(("insert", tuple(values))) or await self._prepare("insert", tuple(values))
            await self._execute(bind((key, *values.values())))
        except self._errors as exc:
            return self._failed(exc)
        return _OK

    async def delete(self, table: str, key: str) -> Status:
        try:
            bind = self._cache.get(("delete", ())) or await self._prepare("delete", ())
            await self._execute(bind((key,)))
        except self._errors as exc:
            return self._failed(exc)
        return _OK
