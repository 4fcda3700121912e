"""workbench._speedups (csrc/) gives exactly what the Python it replaces gives, and a run
says which of the two it used."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from workbench import speedups
from workbench.config.keys import build_key_name, fnvhash64_python, key_builder

ROOT = Path(__file__).resolve().parents[2]

def test_the_extension_is_built_where_a_compiler_and_pythons_headers_exist():
    """pip install builds it where it can; where it can, a test run must use it (not fall back quietly)."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    can_build = shutil.which(cc) is not None and Path(sysconfig.get_paths()["include"], "Python.h").exists()
    if not can_build:
        pytest.skip(f"no C compiler ({cc}) or no Python.h here: the Python fallback is what runs")
    assert os.environ.get(speedups.ENV, "") == "", f"{speedups.ENV} is set for the test run"
    assert speedups.C is not None, ("a C compiler and Python's headers are here but workbench._speedups is "
                                    "not built: pip install -e . again")
    assert speedups.describe() == "C"


needs_c = pytest.mark.skipif(speedups.C is None, reason="workbench._speedups is not built here")


@needs_c
def test_fnvhash64_is_the_python_one_on_edges_and_many_random_inputs():
    fast = speedups.C.fnvhash64
    edges = [0, 1, 255, 256, 2**32 - 1, 2**40 - 1, 2**40, 2**40 + 1, 10**10, 2**63 - 1, 2**63, 2**64 - 1]
    rng = random.Random(27)
    values = edges + [rng.randrange(2**k) for k in (8, 16, 40, 41, 63, 64) for _ in range(20000)]
    for value in values:
        assert fast(value) == fnvhash64_python(value), value


@needs_c
def test_fnvhash64_refuses_what_is_not_a_key_number():
    with pytest.raises(ValueError, match="between 0 and 2"):
        speedups.C.fnvhash64(-1)
    with pytest.raises(ValueError, match="between 0 and 2"):
        speedups.C.fnvhash64(2**64)
    with pytest.raises(TypeError, match="must be an int"):
        speedups.C.fnvhash64(1.0)


@needs_c
@pytest.mark.parametrize("zeropadding", [-3, 0, 1, 3, 19, 20, 25, 300])
@pytest.mark.parametrize("ordered", [False, True])
def test_the_compiled_key_namer_builds_ycsbs_names(zeropadding, ordered):
    name = speedups.C.KeyNamer(zeropadding, ordered)
    rng = random.Random(zeropadding)
    edges = [0, 1, 9, 10, 999, 10**6, 2**31 - 1, 10**12, 2**63 - 1]
    for keynum in edges + [rng.randrange(10**7) for _ in range(500)]:
        assert name(keynum) == build_key_name(keynum, zeropadding, ordered), keynum
    assert name(42).isascii()


def _lane(props: list[str], seed: int = 3, worker: int = 0, workers: int = 1):
    from workbench.config.spec import spec_from_args
    from workbench.core.workload import LaneWorkload, WorkerKeys
    from workbench.metrics.recorder import Recorder

    spec, _ = spec_from_args([str(ROOT / "workbench" / "workloads" / props[0])], props[1:], "run")
    keys = WorkerKeys(spec, worker, workers)
    return LaneWorkload(spec, None, Recorder(), keys, random.Random(seed))


@needs_c
@pytest.mark.parametrize("props", [
    ["workloadc", "recordcount=5000"],
    ["workloada", "recordcount=100000", "zeropadding=25"],
    ["workloada", "recordcount=3000", "insertorder=ordered", "zeropadding=8"],
    ["workloadb", "recordcount=1000", "zipfian.constant=0.5"],
    ["workloadb", "recordcount=10", "insertstart=7"],
])
@pytest.mark.parametrize("worker,workers", [(0, 1), (1, 3)])
def test_compiled_and_python_key_sources_draw_the_same_keys(monkeypatch, props, worker, workers):
    compiled = _lane(props, worker=worker, workers=workers)
    assert type(compiled.next_key).__name__ == "ZipfianKeys"
    monkeypatch.setattr(speedups, "C", None)
    python = _lane(props, worker=worker, workers=workers)
    assert python.next_key.__name__ == "next_key"
    assert [compiled.next_key() for _ in range(30000)] == [python.next_key() for _ in range(30000)]


@needs_c
def test_compiled_draws_respect_the_acknowledged_insert_limit_and_map_workers_keys(monkeypatch):
    """Workload D-like runs insert while reading: draws above the limit are drawn again, and a
    worker's inserted keys (virtual numbers past recordcount) map to its real key numbers."""
    props = ["workloada", "recordcount=100", "insertproportion=0.5", "readproportion=0.5",
             "updateproportion=0", "operationcount=100000"]
    lanes = {}
    for kind in ("C", "Python"):
        if kind == "Python":
            monkeypatch.setattr(speedups, "C", None)
        lane = _lane(props, worker=2, workers=3)
        lane.keys.inserts.limit = 60  # only keys 0..60 acknowledged so far
        # (1,000 draws: below so low a limit each takes many draws of the zipfian over 100,000 keys)
        first = [lane.next_key() for _ in range(1000)]
        lane.keys.inserts.limit = 400  # inserts of this run acknowledged: virtual keys past 100
        lanes[kind] = first + [lane.next_key() for _ in range(5000)]
    assert lanes["C"] == lanes["Python"]
    allowed = {build_key_name(k) for k in range(61)}
    assert set(lanes["C"][:1000]) <= allowed
    later = set(lanes["C"][1000:])
    real = {build_key_name(k) for k in range(100)} | {build_key_name(100 + v * 3 + 2) for v in range(301)}
    assert later <= real and later - {build_key_name(k) for k in range(100)}


@needs_c
def test_the_compiled_key_source_holds_no_references_it_does_not_give_back():
    lane = _lane(["workloadc", "recordcount=1000"])
    source = lane.next_key
    inserts = lane.keys.inserts
    before = (sys.getrefcount(inserts), sys.getrefcount(lane.key_name))
    names = [source() for _ in range(20000)]
    assert (sys.getrefcount(inserts), sys.getrefcount(lane.key_name)) == before
    assert len(set(names)) > 100
    with pytest.raises(TypeError, match="no arguments"):
        source(1)


def test_key_builder_falls_back_to_python_with_its_bounded_cache(monkeypatch):
    monkeypatch.setattr(speedups, "C", None)
    cache: dict[int, str] = {}
    name = key_builder(1, False, cache, cache_limit=50)
    assert name(7) == build_key_name(7) and cache == {7: build_key_name(7)}


@pytest.mark.parametrize("setting", ["", "off"])
def test_a_run_records_whether_its_key_choice_was_compiled(tmp_path, setting):
    out = tmp_path / "run.json"
    env = {**os.environ, speedups.ENV: setting}
    done = subprocess.run([sys.executable, "-m", "workbench", "run", "-db", "memory", "-P", "workloada",
                           "-p", "recordcount=300", "-p", "operationcount=2000", "-p", "seed=5", "--no-store",
                           "-q", "--export", f"json={out}"], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    run = json.loads(out.read_text())["run"]
    assert run["operations"] == 2000
    expected = "C" if (speedups.C is not None and not setting) else "Python"
    assert run["environment"]["speedups"].startswith(expected)
    if setting:
        assert run["environment"]["speedups"] == f"Python ({speedups.ENV}=off)"


@needs_c
def test_the_compiled_deadline_says_what_the_lanes_closure_says():
    from time import perf_counter_ns
    from types import SimpleNamespace

    engine = SimpleNamespace(_halt=False)
    more = speedups.C.Deadline(engine)
    assert more.deadline == 0 and more() is False  # no sequence started yet
    more.deadline = perf_counter_ns() + 60 * 10**9
    assert more() is True
    engine._halt = True  # paused or stopping
    assert more() is False
    engine._halt = False
    more.deadline = perf_counter_ns() - 1
    assert more() is False
    with pytest.raises(TypeError, match="no arguments"):
        more(1)
    del engine._halt
    with pytest.raises(AttributeError):
        more()


def _transactions(lane, rounds: int, n: int) -> list[tuple]:
    """What lane.choose gives over `rounds` calls, with execute as its name (lanes differ)."""
    return [(execute.__name__, args) for _ in range(rounds) for execute, args in lane.choose(n)]


@needs_c
@pytest.mark.parametrize("props", [
    ["workloada", "recordcount=5000"],
    ["workloadb", "recordcount=1000", "requestdistribution=uniform"],
    ["workloadc", "recordcount=200", "readallfields=false"],
    ["workloada", "recordcount=500", "readallfields=false", "fieldcount=3", "fieldlength=1"],
    ["workloada", "recordcount=500", "writeallfields=true"],
    ["workloada", "recordcount=500", "fieldlengthdistribution=uniform", "fieldlength=40"],
    ["workloada", "recordcount=500", "dataintegrity=true"],
    ["workloada", "recordcount=500", "fieldlength=2", "fieldcount=1"],
    ["workloadd", "recordcount=500"],
    ["workloade", "recordcount=500"],
    ["workloadf", "recordcount=500", "readallfields=false"],
    ["workloada", "recordcount=500", "readproportion=0.2", "updateproportion=0.3", "scanproportion=0.1",
     "insertproportion=0.15", "readmodifywriteproportion=0.25", "requestdistribution=hotspot"],
])
@pytest.mark.parametrize("python_keys", [False, True])
def test_the_compiled_choice_of_transactions_is_pythons_draw_for_draw(monkeypatch, props, python_keys):
    """speedups.C.choose gives the transactions LaneWorkload.choose gives in Python, in the same
    order from the same random stream, with the compiled key source and with Python's."""
    if python_keys:
        monkeypatch.setattr(speedups, "C", None)
    python, compiled = _lane(props), _lane(props)
    monkeypatch.undo()
    if python_keys:  # Python's key source, the compiled choice around it
        assert compiled._choose is None
        compiled._choose = compiled._compiled_choose(compiled._discrete)
    python._choose = None
    assert compiled._choose is not None
    want = _transactions(python, 40, 97)
    got = _transactions(compiled, 40, 97)
    assert got == want
    assert python.rng.random() == compiled.rng.random()  # nothing drawn more or less
    updates = [args for name, args in got if name == "update"]
    if updates and not any(p.startswith(("fieldlength=", "dataintegrity=")) for p in props):
        values = [v for _, _, row in updates for v in row.values()]
        assert all(v.isascii() and v.isprintable() for v in values) and len(set(values)) > len(values) // 2


def _meters(recorder) -> dict:
    return {name: (m.ok, m.failed, m.iok, m.ifailed, m.n_ok, {s.value: n for s, n in m.returns.items()})
            for name, m in recorder.meters.items()}


@needs_c
def test_the_compiled_recording_of_a_sequence_tallies_as_the_meters_record_does():
    """speedups.C.record is run_sequence's loop (Meter.record of READ's or UPDATE's meter per
    outcome): the same tallies, counts and statuses, for outcomes that are a prefix of the steps."""
    from workbench.bindings.base import READ, UPDATE, Status
    from workbench.metrics.recorder import Recorder

    rng = random.Random(27)
    statuses = [Status.OK] * 6 + [Status.NOT_FOUND, Status.ERROR, Status.BATCHED_OK, Status.UNEXPECTED_STATE]
    for trial in range(40):
        steps = [(rng.choice([READ, UPDATE]), f"user{i}", None) for i in range(rng.randint(0, 70))]
        outcomes = []
        for _ in range(rng.randint(0, len(steps))):
            t0 = rng.randint(0, 10**13)
            took = rng.choice([0, 1, 999, 1000, 1001, 123_456, 10**10, -1, -1000, -1001,
                               rng.randint(0, 10**7)])
            outcomes.append((rng.choice(statuses), t0, t0 + took, None))
        python, compiled = Recorder(), Recorder()
        for r in (python, compiled):  # (the lane makes both before it runs anything)
            r.meter("READ"), r.meter("UPDATE")
        for (op, _, _), (status, t0, t1, _) in zip(steps, outcomes, strict=False):
            python.meter("READ" if op == READ else "UPDATE").record(status, t0, t1, 0)
        if trial % 2:  # what a meter held before stays, and is added to
            for r in (python, compiled):
                r.meter("READ").record(Status.OK, 0, 5_000, 0)
                r.meter("UPDATE").record(Status.ERROR, 0, 7_000, 0)
        read, update = compiled.meter("READ"), compiled.meter("UPDATE")
        ran = speedups.C.record(steps, outcomes, read, update, READ, Status.OK)
        assert ran == len(outcomes)
        assert _meters(compiled) == _meters(python)


@needs_c
def test_the_compiled_recording_keeps_what_it_tallied_before_an_outcome_it_cannot_read():
    from workbench.bindings.base import READ, UPDATE, Status
    from workbench.metrics.recorder import Recorder

    recorder = Recorder()
    read, update = recorder.meter("READ"), recorder.meter("UPDATE")
    steps = [(READ, "a", None), (UPDATE, "b", {}), (READ, "c", None)]
    outcomes = [(Status.OK, 0, 2_000, None), (Status.OK, 0, 3_500, None), (Status.OK, 0)]
    with pytest.raises(TypeError, match="outcome"):
        speedups.C.record(steps, outcomes, read, update, READ, Status.OK)
    assert (read.ok, read.n_ok, update.ok, update.n_ok) == ({2: 1}, 1, {3: 1}, 1)


# What each *_setup reads at its slots' offsets (csrc/cql.c, hbase.c, conn.c), in the order it
# looks for them: every setup refuses a class without one of its slots, with the same error
# (csrc/speedups.c: wb_find_slots), and changes nothing of the classes in use.
_CQL_CHAIN = ("t0", "stmt", "body", "retried", "items", "more", "answers", "done", "route")
_CQL_ROW = ("_columns", "_layout", "_buf", "_i", "_row")
_HBASE_CHAIN = ("items", "make", "more", "answers", "decode", "t0")
_HBASE_CELLS = ("_body", "_row")
_WIRE = ("_n", "_in", "_view", "_receiving", "broken", "_inflight", "_out", "_timer", "loop", "transport")
_CONN = {"cql": _WIRE + ("_orphans", "_stream", "version", "sent"), "hbase": _WIRE + ("_call_id", "sent")}


def _slotted(name: str, slots: tuple[str, ...], missing: str | None = None, plain: bool = False) -> type:
    """A class of these slots but `missing` (or with `missing` a plain class attribute: no slot)."""
    kept = tuple(s for s in slots if s != missing)
    return type(name, (), {"__slots__": kept, **({missing: None} if plain and missing else {})})


def _setups() -> list[tuple[str, tuple[str, ...], object]]:
    """(setup, its slots, call(slot missing, plain) -> (the class lacking it, the setup's call))."""
    def cql(missing, plain):
        chain = _slotted("Chain", _CQL_CHAIN, missing if missing in _CQL_CHAIN else None, plain)
        row = _slotted("Row", _CQL_ROW, missing if missing in _CQL_ROW else None, plain)
        return (chain if missing in _CQL_CHAIN else row), lambda: speedups.C.cql_setup(chain, row, len)

    def hbase(missing, plain):
        chain = _slotted("Chain", _HBASE_CHAIN, missing if missing in _HBASE_CHAIN else None, plain)
        cells = _slotted("Cells", _HBASE_CELLS, missing if missing in _HBASE_CELLS else None, plain)
        call = lambda: speedups.C.hbase_setup(chain, len, {}, 0x3FFF, len, len, cells)  # noqa: E731
        return (chain if missing in _HBASE_CHAIN else cells), call

    def conn(kind):
        def setup(missing, plain):
            cls = _slotted("Connection", _CONN[kind], missing, plain)
            return cls, lambda: speedups.C.conn_setup(cls, kind)
        return setup

    return [("cql_setup", _CQL_CHAIN + _CQL_ROW, cql), ("hbase_setup", _HBASE_CHAIN + _HBASE_CELLS, hbase),
            ("conn_setup", _CONN["cql"], conn("cql")), ("conn_setup", _CONN["hbase"], conn("hbase"))]


@needs_c
@pytest.mark.parametrize("plain", [False, True], ids=["absent", "not-a-slot"])
@pytest.mark.parametrize("which", range(4), ids=["cql", "hbase", "conn-cql", "conn-hbase"])
def test_every_setup_refuses_a_class_without_one_of_its_slots_with_the_same_error(which, plain):
    """Each slot in turn missing (or a plain class attribute): refused, naming the class and that
    slot, so every slot before it was found. (conn_setup "hbase" is given no CQL-only slot, and
    "cql" no _call_id: each kind asks for its own class's slots only.)"""
    setup, slots, make = _setups()[which]
    for missing in slots:
        cls, call = make(missing, plain)
        with pytest.raises(TypeError) as refused:
            call()
        assert str(refused.value) == (f"{setup}: {cls.__module__}.{cls.__qualname__} has no writable slot "
                                      f"{missing!r}")
