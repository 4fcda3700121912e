"""How the command line opens the app: `workbench`, `workbench demo` and `workbench run --tui`.

Each opener runs the app until the user quits, then finishes the command's job in the
terminal as the headless command would: a `--tui` run prints its YCSB text and writes its
exports, the demo prints where its exports went. Whatever was still going on when the user quit
(a run, a cluster start, the demo's servers) is stopped before the opener returns.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from workbench import __version__
from workbench.clusters.paths import state_dir
from workbench.drive.session import RunRequest, Session
from workbench.errors import WorkbenchError

# Worker processes inherit this: their stray prints go to a file, not over the screen.
WORKER_LOG = "worker.log"


def _session(store: object = None) -> Session:
    session = Session(store=store)
    log_dir = Path(session.state_dir or state_dir())
    log_dir.mkdir(parents=True, exist_ok=True)
    from workbench.core.workers import WORKER_LOG_ENV

    os.environ.setdefault(WORKER_LOG_ENV, str(log_dir / WORKER_LOG))
    return session


CRASH_LOG = "app-crash.log"


class AppCrashed(WorkbenchError):
    """The app stopped on an internal error (a bug): exit status 1, never 0."""

    exit_status = 1


def _crashed(app, log_dir: Path) -> AppCrashed | None:
    """The app's unhandled exception, its traceback appended to CRASH_LOG, as one line for
    the terminal (Textual has printed the traceback above it); None after a normal exit."""
    error = getattr(app, "_exception", None)
    if error is None and not app.return_code:
        return None
    log = log_dir / CRASH_LOG
    try:
        with log.open("a", encoding="utf-8") as f:
            f.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} workbench {__version__}\n")
            f.write("".join(traceback.format_exception(error)) if error is not None
                    else f"the app exited with status {app.return_code}\n")
    except OSError as exc:
        return AppCrashed(f"the app stopped on an internal error ({type(error).__name__}: {error}); "
                          f"its traceback is above (not saved: {exc})", "please report it")
    what = f"{type(error).__name__}: {error}" if error is not None else f"status {app.return_code}"
    return AppCrashed(f"the app stopped on an internal error ({what}); its traceback is in {log}",
                      "please report it with that file")


def _run_app(session: Session, **options) -> None:
    from workbench.ui.app import WorkbenchApp

    app = WorkbenchApp(session, **options)
    crash = None
    try:
        app.run()
        crash = _crashed(app, Path(session.state_dir or state_dir()))
    finally:
        # The app stops the session when the user quits; a crash of the app must not leave
        # worker processes or servers behind either.
        if session.busy:
            print("workbench: stopping what was still running ...", file=sys.stderr)
            session.stop()
            session.wait()
        if session.cleanups:
            print("workbench: stopping what the session started ...", file=sys.stderr)
            session.close()
        if session.traceback:  # a bug, not bad input: show where it came from
            print(session.traceback, file=sys.stderr)
    if crash is not None:
        raise crash


def open_app() -> int:
    """`workbench` with no arguments, in a terminal."""
    session = _session()
    _run_app(session)
    return 2 if session.error else 0


def open_run(request: RunRequest, store: object = None):
    """`workbench load|run ... --tui`: the run in the dashboard; returns its RunResult (None
    when it never started) once the user has quit the app."""
    session = _session(store)
    _run_app(session, request=request)
    if session.error and not session.finished:
        raise WorkbenchError(session.error)
    if not session.finished:
        return None
    last = session.finished[-1]
    if last.run_id is not None:
        print(f"workbench: recorded as run {last.run_id} (workbench runs show {last.run_id})",
              file=sys.stderr)
    return last.result


def open_demo(databases: list[str], records: int, bound: list[str], threads: int, out: Path,
              store: object = None) -> Session:
    """`workbench demo` in a terminal: the demo's steps, live in the app. Returns the session
    once the user has quit, for the command to print what it made (commands/demo.py)."""
    from workbench.drive.demo import demo_task

    session = _session(store)
    _run_app(session, task=demo_task(databases, records, bound, threads, out))
    return session


def open_lesson(lesson, student: str | None, overrides: dict[str, str], store: object = None) -> Session:
    """`workbench lesson run NAME` in a terminal: the lesson on the Lessons screen."""
    session = _session(store)
    _run_app(session, lesson=(lesson, student, overrides))
    return session
