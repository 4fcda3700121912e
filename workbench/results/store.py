"""The run store: every run, from every command and from the app, as rows of one SQLite file.

Where: ${WORKBENCH_STORE:-${XDG_DATA_HOME:-~/.local/share}/workbench/runs.db}, or `--store FILE`.
The file is in WAL mode (readers never wait for the writer; a run's intervals are committed one
by one while other processes read or record) with a busy timeout for two writers at once. Its
schema version is `PRAGMA user_version`, migrated forward on open; `PRAGMA application_id`
marks the file as a workbench store, so another SQLite file is refused rather than written into.

A run row is written when the phase starts (status `running`, with the recording process's PID
and start time), every interval as it is published (histograms in HdrHistogram's compressed
form), and the final result when the phase ends. A `running` row whose process is gone (a
SIGKILL, a closed laptop) is marked `incomplete` the next time the store is opened; what its
intervals hold is still shown, compared and exported.

Tables (schema 6; store_schema.py has them version by version):
    runs       one row per phase: what was run (properties, environment, manifest), where, when,
               outcome, summary figures, and the final RunResult as workbench JSON without its
               intervals and events, which have their own tables
    intervals  (run_id, seq): one Interval of the result model as JSON
    events     (run_id, seq): one Event of the result model
    server_events (run_id, seq): one ServerEventRecord (a GC pause, compaction, flush on a node)
    lesson_steps, lesson_restarts: the lessons' (workbench.lessons.progress), through this store's
               connection and `transaction()`
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from workbench.errors import WorkbenchError
from workbench.results.jsonfile import _plain, _restore, from_json_dict, to_json_dict
from workbench.results.masking import masked
from workbench.results.model import Event, Interval, IntervalMeasurement, RunResult, ServerEventRecord
from workbench.results.store_schema import MIGRATIONS, SCHEMA_VERSION
from workbench.results.unfinished import result_from_intervals

ENV = "WORKBENCH_STORE"
APPLICATION_ID = 0x57424E43  # "WBNC"
BUSY_TIMEOUT_MS = 30_000
STATUSES = ("running", "completed", "stopped", "interrupted", "failed", "incomplete")


def default_path() -> Path:
    """${WORKBENCH_STORE}, else ${XDG_DATA_HOME:-~/.local/share}/workbench/runs.db."""
    override = os.environ.get(ENV)
    if override:
        return Path(override).expanduser()
    data = os.environ.get("XDG_DATA_HOME")
    root = Path(data) if data and os.path.isabs(data) else Path.home() / ".local" / "share"
    return root / "workbench" / "runs.db"


@dataclass(frozen=True)
class ExperimentTag:
    """Which run of which experiment a run is (`workbench experiment run`)."""

    experiment: str | None
    step: str | None  # the step's key, e.g. cassandra/workloada/operationcount=100000
    repetition: int | None
    scale: str | None


@dataclass(frozen=True)
class RunRow:
    """What `runs list` shows of a run (the row without its result)."""

    id: int
    phase: str
    db: str
    workload: str
    label: str
    status: str
    source: str
    started_at: float
    ended_at: float | None
    runtime_ms: int | None
    operations: int | None
    throughput: float | None

    @property
    def started(self) -> str:
        return datetime.fromtimestamp(self.started_at).strftime("%Y-%m-%d %H:%M")


_ROW_COLUMNS = ("id, phase, db, workload, label, status, source, started_at, ended_at, "
                "runtime_ms, operations, throughput")


def _why(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return "it is read-only"
    if "disk is full" in text or "disk I/O" in text:
        return f"the disk is full or failing ({text})"
    if "unable to open" in text:
        return "it cannot be opened (is its directory writable?)"
    if "locked" in text or "busy" in text:
        return f"another process holds it locked for too long ({text})"
    return text


def store_error(path: Path, exc: BaseException, doing: str) -> WorkbenchError:
    reason = _why(exc) if isinstance(exc, sqlite3.Error) else (getattr(exc, "strerror", None) or str(exc))
    return WorkbenchError(f"the run store {path} cannot {doing}: {reason}",
                          f"free some space or fix its permissions, use --store FILE (or {ENV}) for "
                          "another file, or --no-store to run without recording")


def _read_only_fs(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def process_started(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (tells a PID apart from its reuse)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[19])


def _alive(pid: int | None, started: int | None) -> bool:
    if pid is None:
        return False
    now = process_started(pid)
    return now is not None and (started is None or now == started)


class RunStore:
    """One open store. Used by one thread at a time (a recording hands it from the thread that
    opened it to its writer thread)."""

    def __init__(self, path: str | Path | None = None, *, create: bool = True, write: bool = True) -> None:
        """create: make the store if there is none. write: False to only read it, which also
        works on a read-only file system (a store on a DVD, or a copy in a read-only mount)."""
        self.path = Path(path) if path is not None else default_path()
        if not create and not self.path.exists():
            raise WorkbenchError(f"no run store at {self.path}",
                                 "record a run first (load, run or demo), or point --store at one")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise store_error(self.path, exc, "be created") from None
        self.read_only = _read_only_fs(self.path.parent)
        if self.read_only and (write or not self.path.exists()):
            raise WorkbenchError(f"the run store {self.path} cannot be written: it is on a read-only "
                                 "file system", f"use --store FILE (or {ENV}) for a writable place, "
                                 "or --no-store to run without recording")
        try:
            if self.read_only:  # nothing can change it: read it as it is, without a lock file
                self.conn = self._connect_immutable()
            else:
                self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                            isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise store_error(self.path, exc, "be opened") from None
        try:
            self._prepare()
        except sqlite3.OperationalError as exc:
            self.conn.close()
            if write or not self._can_read_as_is(exc):
                raise store_error(self.path, exc, "be opened") from None
            # A full disk cannot take SQLite's shared-memory file: a store whose log was folded
            # in when it was last closed still reads as it is.
            self.read_only = True
            self.conn = self._connect_immutable()
            try:
                self._prepare()
            except sqlite3.Error as again:
                self.conn.close()
                raise store_error(self.path, again, "be opened") from None
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            if "not a database" in str(exc) or "malformed" in str(exc):
                raise WorkbenchError(f"{self.path} is not a workbench run store ({exc})",
                                     f"point --store (or {ENV}) at a store, or move that file away") from None
            raise store_error(self.path, exc, "be opened") from None
        except WorkbenchError:
            self.conn.close()
            raise

    # -- opening -------------------------------------------------------------------------------

    def _connect_immutable(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{quote(str(self.path.resolve()))}?immutable=1", uri=True,
                               isolation_level=None, check_same_thread=False)

    def _can_read_as_is(self, exc: sqlite3.Error) -> bool:
        wal = self.path.with_name(self.path.name + "-wal")
        return "disk" in str(exc) and (not wal.exists() or wal.stat().st_size == 0)

    def _prepare(self) -> None:
        c = self.conn
        c.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        c.execute("BEGIN")  # one snapshot: another process may be creating the store right now
        try:
            app = c.execute("PRAGMA application_id").fetchone()[0]
            version = c.execute("PRAGMA user_version").fetchone()[0]
            tables = c.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        finally:
            if c.in_transaction:  # an error (a full disk) may have ended it already
                c.execute("COMMIT")
        if app != APPLICATION_ID and (tables or version):
            raise WorkbenchError(f"{self.path} is an SQLite file but not a workbench run store",
                                 f"point --store (or {ENV}) at a store, or move that file away")
        if version > SCHEMA_VERSION:
            raise WorkbenchError(f"the run store {self.path} has schema version {version}, newer "
                                 f"than this workbench knows ({SCHEMA_VERSION})",
                                 "upgrade workbench, or use --store FILE for another store")
        if self.read_only:
            if version < SCHEMA_VERSION:
                raise WorkbenchError(f"the run store {self.path} has schema version {version} and "
                                     "is read-only, so it cannot be brought up to date",
                                     "copy it somewhere writable and point --store at the copy")
            return
        self._wal()
        c.execute("PRAGMA synchronous = NORMAL")  # WAL: a crash keeps every committed interval
        c.execute("PRAGMA foreign_keys = ON")
        if version < SCHEMA_VERSION:
            self._migrate(version)

    def _wal(self) -> None:
        """Put the store in WAL mode. The switch needs the file to itself and SQLite answers
        "database is locked" at once, without its busy handler, while another process has it
        open (two runs starting on a new store together did this 1 time in 5): retry until the
        other is done or has switched it, up to the busy timeout."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        pause = 0.005
        while self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            try:
                self.conn.execute("PRAGMA journal_mode = WAL")
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)

    def _migrate(self, version: int) -> None:
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while this one waited for the lock.
            version = c.execute("PRAGMA user_version").fetchone()[0]
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step].split(";"):
                    if statement.strip():
                        c.execute(statement)
            c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- recording a live run ------------------------------------------------------------------

    def begin(self, *, phase: str, db: str, workload: str, label: str, source: str,
              properties: dict[str, str], environment: dict[str, Any],
              experiment: ExperimentTag | None = None, manifest: dict[str, Any] | None = None) -> int:
        """A `running` row for a phase about to start; its ID."""
        pid = os.getpid()
        tag = experiment or ExperimentTag(None, None, None, None)
        cur = self.conn.execute(
            "INSERT INTO runs (phase, db, workload, label, status, source, started_at, host, pid, "
            "pid_started, properties, environment, experiment, step, repetition, scale, manifest) "
            "VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (phase, db, workload, label, source, time.time(), socket.gethostname(), pid,
             process_started(pid), json_text(_masked(properties)), json_text(environment),
             tag.experiment, tag.step, tag.repetition, tag.scale, json_text(manifest or {})),
        )
        return int(cur.lastrowid)

    def experiment_runs(self, experiment: str, scale: str) -> list[tuple[int, str, int, str]]:
        """(id, step, repetition, status) of the experiment's runs at this scale, oldest first."""
        return self.conn.execute(
            "SELECT id, step, repetition, status FROM runs WHERE experiment = ? AND scale = ? "
            "ORDER BY id", (experiment, scale)).fetchall()

    def add_interval(self, run_id: int, seq: int, interval: Interval,
                     events: Iterable[tuple[int, Event]] = (),
                     server_events: Iterable[tuple[int, ServerEventRecord]] = ()) -> None:
        """One interval (and the events and server events since the last), committed at once."""
        with self.transaction():
            self._insert_interval(run_id, seq, interval)
            for n, event in events:
                self._insert_event(run_id, n, event)
            for n, record in server_events:
                self._insert_server_event(run_id, n, record)

    def finish(self, run_id: int, result: RunResult, recorded: int = 0) -> None:
        """The final result; its events replace those recorded live, and so do its intervals,
        unless all `recorded` of them were recorded live already (the same records: an hour at
        four ticks a second is 14,400 of them, minutes to write again on a busy machine)."""
        keep = recorded > 0 and recorded == len(result.intervals)
        with self.transaction():
            if not keep:
                self.conn.execute("DELETE FROM intervals WHERE run_id = ?", (run_id,))
            self.conn.execute("DELETE FROM events WHERE run_id = ?", (run_id,))
            self.conn.execute("DELETE FROM server_events WHERE run_id = ?", (run_id,))
            self._write_result(run_id, result, intervals=not keep)

    def add_events(self, run_id: int, events: Sequence[Event]) -> None:
        """Events of a finished run learnt after it ended (what a node's join streamed, written a
        moment after the run's last read of the cluster's journal), after those it has."""
        with self.transaction():
            last = self.conn.execute("SELECT max(seq) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
            for seq, event in enumerate(events, start=0 if last is None else last + 1):
                self._insert_event(run_id, seq, event)

    def fail(self, run_id: int, error: str) -> None:
        """A phase that ended without a result (it could not start): `failed`, with the reason."""
        with self.transaction():
            env = self.conn.execute("SELECT environment FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
            environment = {**json.loads(env), "error": error}
            last = self.conn.execute("SELECT max(elapsed_s) FROM intervals WHERE run_id = ?",
                                     (run_id,)).fetchone()[0] or 0
            self.conn.execute("UPDATE runs SET status = 'failed', environment = ?, runtime_ms = ?, "
                              "ended_at = ? WHERE id = ?",
                              (json_text(environment), int(last * 1000), time.time(), run_id))

    def add(self, result: RunResult, *, source: str, workload: str = "") -> int:
        """A finished run in one go (an import); its ID."""
        with self.transaction():
            return self._add(result, source=source, workload=workload)

    def add_many(self, results: Sequence[tuple[RunResult, str, str]]) -> list[int]:
        """(result, source, workload) each, all or none."""
        with self.transaction():
            return [self._add(r, source=s, workload=w) for r, s, w in results]

    def _add(self, result: RunResult, *, source: str, workload: str) -> int:
        cur = self.conn.execute(
            "INSERT INTO runs (phase, db, workload, label, status, source, started_at) "
            "VALUES (?, ?, ?, ?, 'running', ?, ?)",
            (result.phase, result.db, workload, result.label, source,
             result.started_at if result.started_at is not None else time.time()),
        )
        run_id = int(cur.lastrowid)
        self._write_result(run_id, result)
        return run_id

    def _write_result(self, run_id: int, result: RunResult, intervals: bool = True) -> None:
        for seq, interval in enumerate(result.intervals if intervals else ()):
            self._insert_interval(run_id, seq, interval)
        for seq, event in enumerate(result.events):
            self._insert_event(run_id, seq, event)
        for seq, record in enumerate(result.server_events):
            self._insert_server_event(run_id, seq, record)
        doc = to_json_dict(result, intervals=False)
        doc["run"]["events"] = doc["run"]["server_events"] = []
        ended = (result.started_at or time.time()) + result.warmup_s + result.runtime_ms / 1000
        self.conn.execute(
            "UPDATE runs SET status = ?, label = ?, started_at = coalesce(?, started_at), "
            "ended_at = ?, runtime_ms = ?, operations = ?, throughput = ?, properties = ?, "
            "environment = ?, result = ?, manifest = ? WHERE id = ?",
            (result.outcome if result.outcome in STATUSES else "completed", result.label,
             result.started_at, ended, result.runtime_ms, result.operations, result.throughput,
             json_text(result.properties), json_text(result.environment), json_text(doc),
             json_text(result.manifest), run_id),
        )

    def _insert_interval(self, run_id: int, seq: int, interval: Interval) -> None:
        self.conn.execute("INSERT INTO intervals (run_id, seq, elapsed_s, data) VALUES (?, ?, ?, ?)",
                          (run_id, seq, interval.elapsed_s, json_text(asdict(interval))))

    def _insert_event(self, run_id: int, seq: int, event: Event) -> None:
        self.conn.execute("INSERT INTO events (run_id, seq, elapsed_s, kind, value) VALUES (?, ?, ?, ?, ?)",
                          (run_id, seq, event.elapsed_s, event.kind, json_text(event.value)))

    def _insert_server_event(self, run_id: int, seq: int, e: ServerEventRecord) -> None:
        self.conn.execute("INSERT INTO server_events (run_id, seq, elapsed_s, node, kind, seconds, "
                          "detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
                          (run_id, seq, e.elapsed_s, e.node, e.kind, e.seconds, e.detail))

    def transaction(self) -> _Transaction:
        """`with store.transaction():` the statements inside are committed together, or none of
        them (BEGIN IMMEDIATE: the store's one writer until the end of the block)."""
        return _Transaction(self.conn)

    # -- reading -------------------------------------------------------------------------------

    def mark_incomplete(self) -> list[int]:
        """`running` rows of this machine whose recording process is gone become `incomplete`."""
        if self.read_only:
            return []
        host = socket.gethostname()
        rows = self.conn.execute(
            "SELECT id, pid, pid_started FROM runs WHERE status = 'running' AND host = ?", (host,)
        ).fetchall()
        gone = [run_id for run_id, pid, started in rows if not _alive(pid, started)]
        if gone:
            with self.transaction():
                for run_id in gone:
                    last = self.conn.execute(
                        "SELECT max(elapsed_s) FROM intervals WHERE run_id = ?", (run_id,)
                    ).fetchone()[0]
                    self.conn.execute(
                        "UPDATE runs SET status = 'incomplete', runtime_ms = ?, ended_at = "
                        "started_at + ? WHERE id = ? AND status = 'running'",
                        (int((last or 0) * 1000), last or 0, run_id),
                    )
        return gone

    def list(self, *, db: str | None = None, workload: str | None = None, label: str | None = None,
             since: float | None = None, until: float | None = None, status: str | None = None,
             limit: int | None = None) -> list[RunRow]:
        """Newest first. `workload` and `label` match a part of the name, case-insensitively."""
        where, args = [], []
        for column, value in (("db", db), ("status", status)):
            if value:
                where.append(f"{column} = ?")
                args.append(value)
        for column, value in (("workload", workload), ("label", label)):
            if value:
                where.append(f"instr(lower({column}), lower(?)) > 0")
                args.append(value)
        if since is not None:
            where.append("started_at >= ?")
            args.append(since)
        if until is not None:
            where.append("started_at < ?")
            args.append(until)
        sql = f"SELECT {_ROW_COLUMNS} FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY started_at DESC, id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [RunRow(*row) for row in self.conn.execute(sql, args)]

    def row(self, run_id: int) -> RunRow:
        found = self.conn.execute(f"SELECT {_ROW_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if found is None:
            raise WorkbenchError(f"no run {run_id} in {self.path}", "see `workbench runs list` for the IDs")
        return RunRow(*found)

    def check_ids(self, ids: Iterable[int]) -> None:
        for run_id in ids:
            self.row(run_id)

    def result(self, run_id: int) -> RunResult:
        """The run as the result model: the final result, or for a run that did not end (running,
        incomplete) what its intervals add up to."""
        row = self.row(run_id)
        intervals = [_interval(json.loads(data)) for (data,) in self.conn.execute(
            "SELECT data FROM intervals WHERE run_id = ? ORDER BY seq", (run_id,))]
        events = [Event(t, kind, _restore(json.loads(value)) if value is not None else None)
                  for t, kind, value in self.conn.execute(
                      "SELECT elapsed_s, kind, value FROM events WHERE run_id = ? ORDER BY seq", (run_id,))]
        server_events = [ServerEventRecord(*row) for row in self.conn.execute(
            "SELECT elapsed_s, node, kind, seconds, detail FROM server_events WHERE run_id = ? "
            "ORDER BY seq", (run_id,))]
        stored = self.conn.execute("SELECT result, properties, environment, manifest FROM runs "
                                   "WHERE id = ?", (run_id,)).fetchone()
        if stored[0] is not None:
            result = from_json_dict(json.loads(stored[0]), f"run {run_id}")
            result.intervals, result.events, result.server_events = intervals, events, server_events
            return result
        properties = _restore(json.loads(stored[1]))
        environment = _restore(json.loads(stored[2]))
        result = result_from_intervals(intervals, events, properties, environment, phase=row.phase,
                                       db=row.db, label=row.label, started_at=row.started_at,
                                       outcome=row.status)
        result.manifest = json.loads(stored[3])
        result.server_events = server_events
        return result

    def delete(self, ids: Sequence[int]) -> None:
        """All or none: an unknown ID deletes nothing."""
        self.check_ids(ids)
        with self.transaction():
            for run_id in ids:
                self.conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
                return
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        self.conn.execute("ROLLBACK")


def json_text(value: Any) -> str:
    """A value as the store keeps it in a TEXT column: compact JSON, tuples and non-string keys
    tagged (results.jsonfile) so that reading it back restores them."""
    return json.dumps(_plain(value), separators=(",", ":"))


def _masked(properties: dict[str, str]) -> dict[str, str]:
    return masked(properties)


def _interval(data: dict[str, Any]) -> Interval:
    data = _restore(data)
    data["measurements"] = {k: IntervalMeasurement(**m) for k, m in data.get("measurements", {}).items()}
    return Interval(**data)
