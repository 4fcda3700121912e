"""The run store's tables, version by version: the migrations results/store.py applies forward
when it opens a store (`PRAGMA user_version` is the version a store is at).

Schema 1: runs (one row per phase), intervals and events. Schema 2 added the experiment, step,
repetition and scale of runs made by `workbench experiment`. Schema 3 added a table that other
packages read and write through the store's connection and `transaction()` (the store knows its
schema, not what is in it): `lesson_steps`, each student's progress through a lesson
(workbench.lessons.progress). Schema 4 added its `done` column and `lesson_restarts`: a lesson
started over keeps the answers given before. Schema 5 added each run's manifest (results/manifest.py).
Schema 6 added `server_events`: the servers' GC pauses, compactions and flushes during a run
(metrics/server.py), written live like its events. Schema 7 marks the intervals' `behind`
(how far a paced run was behind its schedule) with no table change.
"""

from __future__ import annotations

# Each entry brings the schema from version i to i + 1; never edit one that was released.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        phase        TEXT NOT NULL,
        db           TEXT NOT NULL,
        workload     TEXT NOT NULL DEFAULT '',
        label        TEXT NOT NULL DEFAULT '',
        status       TEXT NOT NULL,
        source       TEXT NOT NULL,
        started_at   REAL NOT NULL,
        ended_at     REAL,
        runtime_ms   INTEGER,
        operations   INTEGER,
        throughput   REAL,
        host         TEXT NOT NULL DEFAULT '',
        pid          INTEGER,
        pid_started  INTEGER,
        properties   TEXT NOT NULL DEFAULT '{}',
        environment  TEXT NOT NULL DEFAULT '{}',
        result       TEXT
    );
    CREATE INDEX runs_started ON runs (started_at);
    CREATE TABLE intervals (
        run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        seq       INTEGER NOT NULL,
        elapsed_s REAL NOT NULL,
        data      TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE events (
        run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        seq       INTEGER NOT NULL,
        elapsed_s REAL NOT NULL,
        kind      TEXT NOT NULL,
        value     TEXT,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;
    """,
    # 2: experiments (workbench experiment run): which experiment, step and repetition a run is,
    # at which scale, so that running the experiment again repeats no finished run.
    """
    ALTER TABLE runs ADD COLUMN experiment TEXT;
    ALTER TABLE runs ADD COLUMN step TEXT;
    ALTER TABLE runs ADD COLUMN repetition INTEGER;
    ALTER TABLE runs ADD COLUMN scale TEXT;
    CREATE INDEX runs_experiment ON runs (experiment, scale)
    """,
    # 3: lesson_steps, owned by workbench.lessons.progress (each student's progress through a
    # lesson, step by step, so that a lesson closed halfway resumes where it stopped).
    """
    CREATE TABLE lesson_steps (
        lesson     TEXT NOT NULL,
        student    TEXT NOT NULL,
        step       TEXT NOT NULL,
        position   INTEGER NOT NULL,
        run_id     INTEGER REFERENCES runs (id) ON DELETE SET NULL,
        figures    TEXT NOT NULL DEFAULT '{}',
        checks     TEXT NOT NULL DEFAULT '[]',
        answers    TEXT NOT NULL DEFAULT '{}',
        updated_at REAL NOT NULL,
        PRIMARY KEY (lesson, student, step)
    ) WITHOUT ROWID
    """,
    # 4: a lesson started over (`workbench lesson run --restart`) keeps every attempt at its
    # questions: a step done before the restart and not since keeps its row, done = 0; and each
    # restart is a row of lesson_restarts (when, and how many steps were done then).
    """
    ALTER TABLE lesson_steps ADD COLUMN done INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE lesson_restarts (
        lesson     TEXT NOT NULL,
        student    TEXT NOT NULL,
        at         REAL NOT NULL,
        steps_done INTEGER NOT NULL
    );
    CREATE INDEX lesson_restarts_student ON lesson_restarts (lesson, student)
    """,
    # 5: each run's manifest (results/manifest.py): versions, the server's settings, the host, the
    # workload files' digests and the command line, as JSON; '{}' for the runs recorded before.
    """
    ALTER TABLE runs ADD COLUMN manifest TEXT NOT NULL DEFAULT '{}'
    """,
    # 6: the servers' events during a run (drive/server_sampler.py): a GC pause, a compaction, a
    # flush on a node, when it began (seconds into the run) and how long it lasted; the servers'
    # figures of each second are in its interval's JSON (Interval.server).
    """
    CREATE TABLE server_events (
        run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        seq       INTEGER NOT NULL,
        elapsed_s REAL NOT NULL,
        node      TEXT NOT NULL,
        kind      TEXT NOT NULL,
        seconds   REAL NOT NULL DEFAULT 0,
        detail    TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID
    """,
    # 7: a paced interval's JSON holds `behind` (operations due by its end that no lane had
    # started: results/paced.py reads a window's schedule from it). No table changes: the version
    # makes a workbench that does not know the key refuse the store, with the fix, rather than
    # fail on its intervals; the intervals recorded before read as None (not recorded).
    """
    -- nothing to change in the tables
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
