"""The binding protocol: five async operations returning a Status, plus set-up and tear-down.

Reads and updates may also come in sequences (`sequence`), which a binding may run faster than
one operation at a time; the default runs them through `read` and `update`.

A binding gets the workload spec and its own properties in `__init__`, opens connections in
`init()` (once per worker process), creates the schema in `prepare()` when asked, and closes
everything in `cleanup()` (timed as YCSB's CLEANUP). Fields are str -> str (printable ASCII).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from time import perf_counter_ns
from typing import Any

from workbench.protocols.wire import FIRST_ROW

Row = dict[str, str]
# What a read returns: a Row, or a read-only mapping that decodes its values when first looked
# at (the native Cassandra and HBase clients: most runs never look at what they read).
ReadRow = Mapping[str, str]
READ = "READ"
UPDATE = "UPDATE"
# One step of a sequence: (READ, key, fields or None) or (UPDATE, key, values).
Step = tuple[str, str, Any]
# What a step did: (status, start, end in perf_counter_ns, the row a READ found or None).
Outcome = tuple["Status", int, int, "ReadRow | None"]


class Status(enum.Enum):
    """YCSB's status names."""

    OK = "OK"
    ERROR = "ERROR"
    NOT_FOUND = "NOT_FOUND"
    NOT_IMPLEMENTED = "NOT_IMPLEMENTED"
    UNEXPECTED_STATE = "UNEXPECTED_STATE"
    BAD_REQUEST = "BAD_REQUEST"
    FORBIDDEN = "FORBIDDEN"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    BATCHED_OK = "BATCHED_OK"

    @property
    def is_ok(self) -> bool:
        return self is Status.OK or self is Status.BATCHED_OK




def chain_outcomes(steps: Sequence[Step], answers: Sequence[tuple], read: str, ok: Status,
                   not_found: Status, failed: Callable[[Any], Status],
                   row_of: Callable[[Any], ReadRow | None] | str | None,
                   without_nulls: Callable[[ReadRow], ReadRow] | None) -> list[Outcome]:
    """A chain's answers (ok, value, t0, t1) as the outcomes of its steps (answers may be a
    prefix of them): a failure's status from failed(value), an update's `ok`, a read's row or
    `not_found`. The row of a read's value: the value itself (row_of None), the first of a list
    of rows (FIRST_ROW; None or an empty list: none), or row_of(value); a dict row goes through
    without_nulls where one is given. speedups.C.outcomes is this, compiled (the native clients'
    sequences use it; tests/unit/test_cassandra_native.py compares the two)."""
    out: list[Outcome] = []
    for (op, _, _), (answered, value, t0, t1) in zip(steps, answers, strict=False):
        if not answered:
            out.append((failed(value), t0, t1, None))
        elif op != read:
            out.append((ok, t0, t1, None))
        else:
            if row_of is None:
                row = value
            elif row_of == FIRST_ROW:
                row = value[0] if value else None
            else:
                row = row_of(value)  # type: ignore[operator]
            if row is None:
                out.append((not_found, t0, t1, None))
            elif without_nulls is not None and isinstance(row, dict):
                out.append((ok, t0, t1, without_nulls(row)))
            else:
                out.append((ok, t0, t1, row))
    return out


class Binding:
    """Base class for database bindings. Subclasses override the five operations."""

    name = "base"

    def __init__(self, spec: Any, properties: dict[str, str], context: dict[str, Any]) -> None:
        self.spec = spec
        self.properties = properties
        # worker index, worker count, phase and anything else the engine hands over
        self.context = context

    async def init(self) -> None:
        """Connect. Called once per worker before any operation."""

    async def prepare(self) -> None:
        """Create the schema the workload needs (called once per phase, before the workers)."""

    async def nothing_loaded(self, table: str) -> str | None:
        """Before a run phase that reads or changes existing records: why `table` holds none
        ("table X does not exist", "table X is empty"), or None when it holds records or the
        binding cannot tell. Called before prepare(), which may create the table."""
        return None

    async def cleanup(self) -> None:
        """Disconnect and flush. Timed and reported as CLEANUP."""

    async def read(self, table: str, key: str, fields: Sequence[str] | None) -> tuple[Status, ReadRow | None]:
        return Status.NOT_IMPLEMENTED, None

    async def scan(
        self, table: str, start_key: str, count: int, fields: Sequence[str] | None
    ) -> tuple[Status, list[tuple[str, Row]]]:
        return Status.NOT_IMPLEMENTED, []

    async def update(self, table: str, key: str, values: Row) -> Status:
        return Status.NOT_IMPLEMENTED

    async def insert(self, table: str, key: str, values: Row) -> Status:
        return Status.NOT_IMPLEMENTED

    async def delete(self, table: str, key: str) -> Status:
        return Status.NOT_IMPLEMENTED

    async def sequence(self, table: str, steps: Sequence[Step], more: Callable[[], bool]) -> list[Outcome]:
        """Run reads and updates one after another, as one lane would: one request in flight.

        Before each step after the first, `more()` says whether to go on; when it says no, the
        outcomes so far are returned (the lane runs the rest later, or the run is stopping).
        Each step is timed from just before its request to just after its answer.

        Lanes hand over up to 64 chosen steps at a time when the run is not paced. This
        default awaits the operations above one by one; a binding may override it to run the
        whole sequence inside its driver, with no hand-off to the lane between steps (for
        cassandra-driver: a chain of callbacks on the driver's own thread)."""
        out: list[Outcome] = []
        append = out.append
        read, update = self.read, self.update
        for op, key, arg in steps:
            if out and not more():
                break
            t0 = perf_counter_ns()
            if op == READ:
                status, row = await read(table, key, arg)
            else:
                status, row = await update(table, key, arg), None
            append((status, t0, perf_counter_ns(), row))
        return out

    def notes(self) -> list[str]:
        """Remarks for the report (e.g. 'write latency measures a client-side buffer').

        Asked of the instance that ran prepare(), so they may depend on configuration only."""
        return []

    def node_counts(self) -> dict[str, tuple[int, int]]:
        """Requests sent to each node (coordinator, RegionServer, server) and the errors among
        their answers, since init(): {"127.0.0.1:9042": (requests, errors)}. Read once a tick
        by the engine, which records the differences per interval; {} where the client does
        not count them (the run then has no per-node figures)."""
        return {}

    def region_counts(self) -> dict[str, tuple[int, int]]:
        """As node_counts, per region of the tables (HBase's native client: requests it sent to
        each region, by the region's name), read and recorded the same way; {} where the client
        does not count them."""
        return {}

    def down_nodes(self) -> frozenset[str]:
        """The nodes of node_counts (same names) that the client knows are disconnected now (a
        lost connection it has not got back), read once a tick; empty where it cannot say."""
        return frozenset()

    def client_counts(self) -> dict[str, int]:
        """What the client did on its own since init() that is not an operation's outcome, by
        name (HBase's native client: {"region lookups after a move": 2, "requests retried after
        a move": 9}). Summed over workers at the end of the phase, kept in the run's environment
        (client_counts) and shown beside its figures; {} when there is nothing to say."""
        return {}

    def error_kinds(self) -> dict[str, int]:
        """Failed operations by driver error kind (e.g. {"ReadTimeout": 3}) since init().

        YCSB's statuses are coarse (a timeout and an unavailable replica are both ERROR); the
        report shows these counts beside them. Read once a tick by the engine (the Run screen's
        live kinds) and summed over workers at the end of the phase."""
        return {}
