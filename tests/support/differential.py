"""Differential runs: one seeded YCSB operation stream through two clients of one database.

`stream(overrides, workload, seed)` drives a binding the way a lane does (core/workload.py's
LaneWorkload: the load's inserts, then the run's transactions, READ/UPDATE runs as one binding
sequence as unpaced lanes hand them over), through a proxy that logs every operation and what
came back: (operation, key, status, row or scanned keys and rows). The same seed gives the same
stream whatever the client, so two clients' logs must be equal, entry for entry; then
`read_back` reads every key of a table through any client, so each table can be read through
the other client too. Used by tests/integration/test_differential.py against real servers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from workbench.bindings.registry import load_binding_class
from workbench.config.spec import spec_from_args
from workbench.core.workload import LaneWorkload, WorkerKeys
from workbench.metrics.recorder import Recorder


def plain(row: Any) -> dict[str, str] | None:
    """A read's row as a plain dict (the native clients' rows decode when looked at)."""
    return None if row is None else {str(k): v for k, v in dict(row).items() if v is not None}


class Logged:
    """A binding whose every operation is logged with its outcome, in the order they ran."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.log: list[tuple] = []

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        status, row = await self.db.read(table, key, fields)
        self.log.append(("READ", key, status.name, plain(row) if status.is_ok else None))
        return status, row

    async def scan(self, table: str, start: str, count: int, fields: Sequence[str] | None):
        status, rows = await self.db.scan(table, start, count, fields)
        self.log.append(("SCAN", start, count, status.name, [(k, plain(r)) for k, r in rows]))
        return status, rows

    async def update(self, table: str, key: str, values: dict[str, str]):
        status = await self.db.update(table, key, values)
        self.log.append(("UPDATE", key, status.name))
        return status

    async def insert(self, table: str, key: str, values: dict[str, str]):
        status = await self.db.insert(table, key, values)
        self.log.append(("INSERT", key, status.name))
        return status

    async def delete(self, table: str, key: str):
        status = await self.db.delete(table, key)
        self.log.append(("DELETE", key, status.name))
        return status

    async def sequence(self, table: str, steps, more):
        outcomes = await self.db.sequence(table, steps, more)
        for (op, key, _), (status, _, _, row) in zip(steps, outcomes, strict=False):
            self.log.append((op, key, status.name, plain(row) if op == "READ" and status.is_ok else None)
                            if op == "READ" else (op, key, status.name))
        return outcomes


def _spec(workload: str, overrides: list[str], phase: str):
    spec, _ = spec_from_args([workload], overrides, phase)
    return spec


async def open_binding(workload: str, overrides: list[str], phase: str) -> Any:
    """The binding of these properties, its schema made (a load drops the table where the
    properties say so) and its connections open."""
    spec = _spec(workload, overrides, phase)
    db = load_binding_class(spec.db, dict(spec.binding_properties))(spec, dict(spec.binding_properties),
                                     {"phase": phase, "worker": 0, "workers": 1})
    await db.prepare()
    await db.init()
    return db


async def stream(workload: str, overrides: list[str], seed: int) -> tuple[list[tuple], list[str], dict]:
    """Load, then run the workload's transactions through one lane: (the log, every key the
    stream touched or loaded, VERIFY's status counts). dataintegrity is the caller's to set."""
    load_spec = _spec(workload, overrides, "load")
    db = await open_binding(workload, overrides, "load")
    try:
        logged = Logged(db)
        recorder = Recorder()
        lane = LaneWorkload(load_spec, logged, recorder, WorkerKeys(load_spec), random.Random(seed))
        for keynum in range(load_spec.recordcount):
            await lane.insert_load(keynum, 0)
        spec = _spec(workload, overrides, "run")
        lane = LaneWorkload(spec, logged, recorder, WorkerKeys(spec), random.Random(seed + 1))
        done = 0
        while done < spec.operationcount:
            chosen = lane.choose(min(lane.batch, spec.operationcount - done))
            i = 0
            while i < len(chosen):
                n = lane.sequence_length(chosen, i)
                if n:
                    ran = await lane.run_sequence([args for _, args in chosen[i:i + n]], lambda: True)
                    assert ran == n, f"a sequence of {n} ran {ran}"
                    i += n
                else:
                    execute, arg = chosen[i]
                    await execute(0, arg)
                    i += 1
            done += len(chosen)
        verify = recorder.meters.get("VERIFY")
        verdicts = {"OK": verify.n_ok, **{s.name: n for s, n in verify.returns.items()}} if verify else {}
        keys = sorted({entry[1] for entry in logged.log})
        return logged.log, keys, verdicts
    finally:
        await db.cleanup()


async def read_back(workload: str, overrides: list[str], keys: Sequence[str]) -> dict[str, Any]:
    """Every key's row (None: NOT_FOUND) through the client these properties choose."""
    db = await open_binding(workload, overrides, "run")
    try:
        spec = db.spec
        out: dict[str, Any] = {}
        for key in keys:
            status, row = await db.read(spec.table, key, None)
            assert status.name in ("OK", "NOT_FOUND"), (key, status)
            out[key] = plain(row) if status.is_ok else None
        return out
    finally:
        await db.cleanup()


async def scan_back(workload: str, overrides: list[str], starts: Sequence[str], count: int) -> list:
    """The keys and rows of a scan from each start key, through the client these properties choose."""
    db = await open_binding(workload, overrides, "run")
    try:
        out = []
        for start in starts:
            status, rows = await db.scan(db.spec.table, start, count, None)
            out.append((start, status.name, [(k, plain(r)) for k, r in rows]))
        return out
    finally:
        await db.cleanup()
