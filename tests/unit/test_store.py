"""The run store on a real SQLite file: schema, refusal of foreign files, recording, history."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from dataclasses import replace

import pytest
from engine_helpers import cleanup_store, make_spec, run_phase

from workbench.errors import WorkbenchError
from workbench.lessons.progress import lesson_steps
from workbench.results import store as store_module
from workbench.results.from_run import to_run_result
from workbench.results.jsonfile import to_json_dict
from workbench.results.model import Event
from workbench.results.store import APPLICATION_ID, SCHEMA_VERSION, RunStore


def a_result(*overrides: str):
    spec, props = make_spec("recordcount=100", "operationcount=2000", *overrides)
    outcome, _ = run_phase(spec)
    cleanup_store(spec)
    return spec, props.as_dict(), to_run_result(outcome, props.as_dict())


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_new_store_is_wal_versioned_and_marked(tmp_path):
    path = tmp_path / "deep" / "runs.db"
    with RunStore(path) as store:
        c = store.conn
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert c.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    with RunStore(path) as again:  # opening it again changes nothing
        assert again.list() == []


def test_foreign_files_are_refused_and_left_as_they_were(tmp_path):
    other = tmp_path / "other.db"
    c = sqlite3.connect(other)
    c.execute("CREATE TABLE notes (x)")
    c.commit()
    c.close()
    text = tmp_path / "notes.txt"
    text.write_text("hello, not a database at all\n" * 100)
    for path, says in ((other, "not a workbench run store"), (text, "not a workbench run store")):
        before = path.read_bytes()
        with pytest.raises(WorkbenchError, match=says):
            RunStore(path)
        assert path.read_bytes() == before


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "runs.db"
    RunStore(path).close()
    c = sqlite3.connect(path)
    c.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    c.commit()
    c.close()
    with pytest.raises(WorkbenchError, match="newer than this workbench knows"):
        RunStore(path)


def test_an_older_schema_is_migrated_forward_keeping_its_runs(tmp_path, monkeypatch):
    path = tmp_path / "runs.db"
    _, _, result = a_result()
    with RunStore(path) as store:
        run_id = store.add(result, source="test")
    monkeypatch.setattr(store_module, "MIGRATIONS",
                        (*store_module.MIGRATIONS, "ALTER TABLE runs ADD COLUMN note TEXT DEFAULT 'x'"))
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with RunStore(path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
        assert store.conn.execute("SELECT note FROM runs WHERE id = ?", (run_id,)).fetchone() == ("x",)
        assert store.result(run_id) == result


def test_a_finished_run_reads_back_equal(tmp_path):
    _, _, result = a_result("target=4000", "measurement.interval=both")
    with RunStore(tmp_path / "runs.db") as store:
        run_id = store.add(result, source="test", workload="workloada")
        assert store.result(run_id) == result
        assert to_json_dict(store.result(run_id)) == to_json_dict(result)
        row = store.row(run_id)
        assert (row.status, row.workload, row.operations) == ("completed", "workloada", 2000)


def test_events_learnt_after_a_run_ended_follow_its_own(tmp_path):
    _, _, result = a_result()
    with RunStore(tmp_path / "runs.db") as store:
        run_id = store.add(result, source="test", workload="workloada")
        late = [Event(9.5, "cluster", "node4 received 1,234 bytes in 0.5 s of streaming")]
        store.add_events(run_id, late)
        assert store.result(run_id).events == [*result.events, *late]
        bare = store.add(replace(result, events=[]), source="test", workload="workloada")
        store.add_events(bare, late)
        assert store.result(bare).events == late


def test_a_run_whose_process_died_is_incomplete_with_what_its_intervals_hold(tmp_path):
    spec, props, result = a_result()
    with RunStore(tmp_path / "runs.db") as store:
        run_id = store.begin(phase="run", db="memory", workload="w", label="", source="run",
                             properties=props, environment={})
        for seq, interval in enumerate(result.intervals):
            store.add_interval(run_id, seq, interval)
        assert store.mark_incomplete() == []  # its process (this one) is alive: still running
        assert store.row(run_id).status == "running"
        store.conn.execute("UPDATE runs SET pid = ? WHERE id = ?", (dead_pid(), run_id))
        assert store.mark_incomplete() == [run_id]
        partial = store.result(run_id)
    assert partial.outcome == "incomplete"
    assert partial.operations == result.operations
    # Every interval is there, so the merged interval histograms are the whole run's.
    assert [m.name for m in partial.measurements] == [m.name for m in result.measurements]
    for got, want in zip(partial.measurements, result.measurements, strict=True):
        assert (got.name, got.operations, got.percentiles, got.max_us, got.returns) == \
            (want.name, want.operations, want.percentiles, want.max_us, want.returns)


def test_list_filters_newest_first_and_delete_is_all_or_none(tmp_path):
    _, _, result = a_result()
    with RunStore(tmp_path / "runs.db") as store:
        ids = []
        for i, (db, workload, label) in enumerate((("memory", "workloada", "first"),
                                                   ("cassandra", "workloadc", "second"),
                                                   ("memory", "workloadc", "Third"))):
            result.db, result.label, result.started_at = db, label, 1_700_000_000 + i * 86400
            ids.append(store.add(result, source="test", workload=workload))
        assert [r.id for r in store.list()] == ids[::-1]
        assert [r.id for r in store.list(db="memory")] == [ids[2], ids[0]]
        assert [r.id for r in store.list(workload="loadc")] == [ids[2], ids[1]]
        assert [r.id for r in store.list(label="third")] == [ids[2]]
        assert [r.id for r in store.list(since=1_700_000_000 + 86400)] == [ids[2], ids[1]]
        assert [r.id for r in store.list(until=1_700_000_000 + 86400)] == [ids[0]]
        assert [r.id for r in store.list(limit=1)] == [ids[2]]
        with pytest.raises(WorkbenchError, match="no run 999"):
            store.delete([ids[0], 999])
        assert len(store.list()) == 3
        store.delete([ids[0], ids[1]])
        assert [r.id for r in store.list()] == [ids[2]]
        left = store.conn.execute("SELECT count(DISTINCT run_id) FROM intervals").fetchone()[0]
        assert left == 1  # a deleted run's intervals go with it


def test_a_store_of_schema_1_gains_the_experiment_columns(tmp_path):
    path = tmp_path / "v1.db"
    c = sqlite3.connect(path)
    for statement in store_module.MIGRATIONS[0].split(";"):
        if statement.strip():
            c.execute(statement)
    c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    c.execute("PRAGMA user_version = 1")
    c.execute("INSERT INTO runs (phase, db, status, source, started_at) VALUES ('run', 'memory', "
              "'completed', 'run', 1.0)")
    c.commit()
    c.close()
    with RunStore(path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        rows = store.conn.execute("SELECT db, experiment, step FROM runs").fetchall()
        assert rows == [("memory", None, None)]
        assert store.experiment_runs("anything", "full") == []
        assert lesson_steps(store, "anything", "someone") == []  # version 3: lessons


def test_a_store_of_schema_4_gains_the_manifest_column_its_runs_an_empty_one(tmp_path):
    path = tmp_path / "v4.db"
    _, _, result = a_result()
    result.manifest = {}
    c = sqlite3.connect(path)
    for migration in store_module.MIGRATIONS[:4]:
        for statement in migration.split(";"):
            if statement.strip():
                c.execute(statement)
    c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    c.execute("PRAGMA user_version = 4")
    c.execute("INSERT INTO runs (phase, db, status, source, started_at, result) VALUES ('run', 'memory', "
              "'completed', 'run', 1.0, ?)", (store_module.json_text(to_json_dict(result, intervals=False)),))
    c.execute("INSERT INTO runs (phase, db, status, source, started_at) VALUES ('run', 'memory', "
              "'incomplete', 'run', 2.0)")  # one that never finished: rebuilt from its intervals
    c.commit()
    c.close()
    with RunStore(path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        assert store.conn.execute("SELECT manifest FROM runs").fetchall() == [("{}",), ("{}",)]
        assert store.result(1).manifest == {} and store.result(1).operations == result.operations
        assert store.result(2).manifest == {}


def test_a_store_of_schema_6_reads_its_intervals_with_behind_unknown(tmp_path):
    path = tmp_path / "v6.db"
    c = sqlite3.connect(path)
    for migration in store_module.MIGRATIONS[:6]:
        for statement in migration.split(";"):
            if statement.strip():
                c.execute(statement)
    c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    c.execute("PRAGMA user_version = 6")
    c.execute("INSERT INTO runs (phase, db, status, source, started_at) VALUES ('run', 'memory', "
              "'incomplete', 'run', 2.0)")
    c.execute("INSERT INTO intervals (run_id, seq, elapsed_s, data) VALUES (1, 0, 1.0, ?)",
              ('{"elapsed_s":1.0,"duration_s":1.0,"operations":5,"total_operations":5,"target":5.0}',))
    c.commit()
    c.close()
    with RunStore(path) as store:  # version 7 knows `behind`: one recorded before reads as None
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        (interval,) = store.result(1).intervals
        assert interval.target == 5.0 and interval.behind is None


def test_the_manifest_is_stored_from_the_start_and_with_the_result(tmp_path):
    spec, props, result = a_result()
    made = {"format": 1, "phase": "run", "host": {"cpus": 4, "load_average": [0.5, 0.25, 0.0]},
            "workload": {"files": [], "overrides": ["db=memory"], "seed": None}}
    with RunStore(tmp_path / "runs.db") as store:
        run_id = store.begin(phase="run", db="memory", workload="", label="", source="test",
                             properties=props, environment={}, manifest=made)
        assert store.result(run_id).manifest == made  # running: from its row
        store.finish(run_id, replace(result, manifest={**made, "client": {"name": "memory"}}))
        assert store.result(run_id).manifest == {**made, "client": {"name": "memory"}}
        column = store.conn.execute("SELECT manifest FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
        assert json.loads(column) == {**made, "client": {"name": "memory"}}  # the column, too
        added = store.add(replace(result, manifest=made), source="test")
        assert store.result(added) == replace(result, manifest=made)


def _open_new_store(path: str) -> str:
    try:
        with RunStore(path):
            return "ok"
    except WorkbenchError as exc:
        return str(exc)


def test_processes_creating_one_new_store_at_once_all_open_it(tmp_path):
    """Two runs started together on a store that does not exist yet: SQLite refuses the switch
    to WAL at once ("database is locked") while the other has the file open, and a store read
    between the other's statements looked half made ("not a workbench run store"). Before the
    fix about 1 pair in 5 failed; 30 pairs of 2 processes each."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        for i in range(30):
            path = str(tmp_path / f"runs-{i}.db")
            assert pool.map(_open_new_store, [path, path]) == ["ok", "ok"], i
