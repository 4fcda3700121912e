"""What every binding must do, with YCSB's semantics (run against real servers for real bindings)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import SCAN_ORDER

from workbench.bindings.base import READ, UPDATE, Status
from workbench.config.keys import build_key_name
from workbench.config.spec import spec_from_args
from workbench.core import loops
from workbench.core.controller import Controller
from workbench.core.workers import binding_factory

WORKLOADS = Path(__file__).resolve().parents[2] / "workbench" / "workloads"
FIELDS = [f"field{i}" for i in range(10)]


def row_for(key: str) -> dict[str, str]:
    return {f: f"{key}-{f}-" + "x" * 20 for f in FIELDS}


async def open_binding(overrides: list[str]):
    spec, _ = spec_from_args([], overrides, "run")
    make = binding_factory(spec)
    await make({"phase": "load", "worker": -1, "workers": 1}).prepare()
    db = make({"phase": "run", "worker": 0, "workers": 1})
    await db.init()
    return spec, db


@pytest.fixture
async def opened(target):
    """(binding name, spec, an initialised binding), cleaned up after the test."""
    name, overrides = target
    spec, db = await open_binding(overrides)
    yield name, spec, db
    await db.cleanup()


async def test_insert_then_read_every_field(opened):
    name, spec, db = opened
    key = build_key_name(1)
    assert await db.insert(spec.table, key, row_for(key)) is Status.OK
    status, row = await db.read(spec.table, key, None)
    assert status is Status.OK
    assert row == row_for(key)


async def test_update_one_field_and_read_named_fields(opened):
    name, spec, db = opened
    key = build_key_name(2)
    await db.insert(spec.table, key, row_for(key))
    assert await db.update(spec.table, key, {"field3": "changed"}) is Status.OK
    status, row = await db.read(spec.table, key, ["field3", "field7"])
    assert status is Status.OK
    assert row == {"field3": "changed", "field7": row_for(key)["field7"]}
    status, full = await db.read(spec.table, key, None)
    assert full == {**row_for(key), "field3": "changed"}


async def test_missing_key_is_not_found(opened):
    name, spec, db = opened
    status, row = await db.read(spec.table, "user-no-such-key", None)
    assert status is Status.NOT_FOUND
    assert not row


async def test_scan_starts_at_the_key_respects_limits_and_order(opened):
    name, spec, db = opened
    keys = [build_key_name(k) for k in range(100, 160)]
    await asyncio.gather(*(db.insert(spec.table, k, row_for(k)) for k in keys))
    start = keys[7]
    status, rows = await db.scan(spec.table, start, 10, None)
    assert status is Status.OK
    assert len(rows) == 10
    got = [k for k, _ in rows]
    assert got[0] == start and len(set(got)) == 10 and set(got) <= set(keys)
    assert all(r == row_for(k) for k, r in rows)
    if SCAN_ORDER[name] == "key":
        assert got == sorted(got)
    status, few = await db.scan(spec.table, start, 3, ["field1"])
    assert [k for k, _ in few] == got[:3]
    assert all(r == {"field1": row_for(k)["field1"]} for k, r in few)


async def test_delete(opened):
    name, spec, db = opened
    key = build_key_name(3)
    await db.insert(spec.table, key, row_for(key))
    assert await db.delete(spec.table, key) is Status.OK
    status, _ = await db.read(spec.table, key, None)
    assert status is Status.NOT_FOUND


async def test_a_sequence_runs_its_steps_in_order_one_at_a_time(opened):
    name, spec, db = opened
    k1, k2 = build_key_name(4), build_key_name(5)
    await db.insert(spec.table, k1, row_for(k1))
    await db.insert(spec.table, k2, row_for(k2))
    steps = [
        (READ, k1, None),
        (UPDATE, k1, {"field3": "first"}),
        (READ, k1, ["field3"]),  # sees the update before it
        (READ, "user-no-such-key", None),
        (UPDATE, k2, {"field0": "a", "field9": "b"}),
        (READ, k2, ["field0", "field1", "field9"]),
    ]
    out = await db.sequence(spec.table, steps, lambda: True)
    assert [status for status, *_ in out] == [
        Status.OK, Status.OK, Status.OK, Status.NOT_FOUND, Status.OK, Status.OK]
    assert [row for *_, row in out] == [
        row_for(k1), None, {"field3": "first"}, None, None,
        {"field0": "a", "field1": row_for(k2)["field1"], "field9": "b"}]
    for (_, t0, t1, _), (_, next_t0, _, _) in zip(out, out[1:], strict=False):
        assert t0 <= t1 <= next_t0  # one request in flight: each starts after the last answer
    asked = []

    def more() -> bool:  # asked before every step after the first; no after the second
        asked.append(1)
        return len(asked) < 2

    cut = await db.sequence(spec.table, [(READ, k1, None)] * 5, more)
    assert [status for status, *_ in cut] == [Status.OK, Status.OK] and len(asked) == 2


def run(phase: str, files: list[str], overrides: list[str]):
    """One phase on the loop its spec asks for (eventloop=auto: uvloop, which the suite installs)."""
    spec, _ = spec_from_args(files, overrides, phase)
    return loops.run(Controller(spec, phase).run(), spec.eventloop)


def errors(outcome) -> dict[str, dict[str, int]]:
    return {op: {s: n for s, n in counts.items() if s != "OK"}
            for op, counts in outcome.returns.items() if set(counts) - {"OK"}}


def test_dataintegrity_load_and_run(target):
    name, overrides = target
    # on asyncio's own loop, the fallback where uvloop is not installed (the other tests: uvloop)
    common = [*overrides, "recordcount=300", "operationcount=1500", "dataintegrity=true",
              "threadcount=4", "writeallfields=true", "eventloop=asyncio"]
    load = run("load", [str(WORKLOADS / "workloada")], common)
    assert load.outcome == "completed" and errors(load) == {}
    result = run("run", [str(WORKLOADS / "workloada")], common)
    assert result.outcome == "completed", result.error
    assert load.event_loop == result.event_loop == "asyncio"
    assert errors(result) == {}
    assert result.returns["VERIFY"] == {"OK": sum(result.returns["READ"].values())}


def test_workloads_a_to_f_run_without_errors(target):
    name, overrides = target
    # FerretDB answers in milliseconds what the JVMs answer in a tenth of one (it translates every
    # request to SQL on PostgreSQL): 400 operations a workload say as much about its binding
    operations = 400 if name == "mongodb" else 1000
    common = [*overrides, "recordcount=500", f"operationcount={operations}", "threadcount=8",
              "maxscanlength=20"]
    load = run("load", [str(WORKLOADS / "workloada")], common)
    assert load.operations == 500 and errors(load) == {}
    for letter in "abcdef":
        result = run("run", [str(WORKLOADS / f"workload{letter}")], common)
        assert result.event_loop.startswith("uvloop "), result.event_loop
        assert result.outcome == "completed", (letter, result.error)
        assert result.operations == operations, letter
        assert errors(result) == {}, (letter, errors(result))
