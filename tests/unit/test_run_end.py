"""A phase ends after its stop even when its binding does not: past the controller's
END_GRACE_S its workers are ended by force, and the phase fails with one line naming what held
it up, keeping what it recorded (the CLI's exit status 2 comes from the failed outcome)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest
from engine_helpers import cleanup_store, make_spec, register_hang_binding, run_phase

from workbench.core import controller, runner


@pytest.fixture(autouse=True)
def _short_graces(monkeypatch):
    monkeypatch.setattr(controller, "END_GRACE_S", 1.0)
    monkeypatch.setattr(runner, "STOP_GRACE_S", 0.2)  # in this process only: workers keep 5 s
    register_hang_binding()


def _hanging_run(at: str, *more: str):
    spec, _ = make_spec("db=hang", f"hang.at={at}", "recordcount=100", "operationcount=0",
                        "maxexecutiontime=1", "status.interval=0.25", "threadcount=2", *more)
    t0, ended = time.monotonic(), []
    # on a thread of its own, so that an engine that never ends fails this test instead of hanging it
    phase = threading.Thread(target=lambda: ended.append(run_phase(spec)[0]), daemon=True)
    phase.start()
    phase.join(timeout=45)
    cleanup_store(spec)
    assert ended, "the phase did not end 45 s after it started (its stop came after 1 s)"
    return ended[0], time.monotonic() - t0


def test_a_cleanup_that_never_returns_is_ended_and_named():
    outcome, took = _hanging_run("cleanup")
    assert outcome.outcome == "failed"
    assert "had not ended 1 s after its stop and was ended by force" in outcome.error
    assert "worker 0's _Hang.cleanup()" in outcome.error, outcome.error
    assert outcome.operations > 0 and outcome.intervals  # what it measured is kept
    assert took < 30


def test_a_request_that_ignores_its_cancellation_is_ended_and_where_it_waits_is_named():
    outcome, took = _hanging_run("read")
    assert outcome.outcome == "failed"
    # one lane hangs in its 50th read; the other lane ended when the run stopped
    assert "still going: 1 lane of worker 0, one waiting in stuck (tests/unit/engine_helpers.py:" \
        in outcome.error, outcome.error
    assert outcome.operations > 0
    assert took < 30


def test_a_worker_process_whose_cleanup_hangs_is_killed_and_named():
    outcome, took = _hanging_run("cleanup", "workers=2")
    assert outcome.outcome == "failed"
    # each worker process said, at its last drain after the stop, what it waited for
    assert "worker 0's _Hang.cleanup()" in outcome.error and "worker 1's _Hang.cleanup()" in outcome.error, \
        outcome.error
    assert outcome.operations > 0
    assert took < 60


def test_a_lane_whose_cancellation_raises_fails_the_phase_in_one_line_and_keeps_what_it_measured(
        tmp_path, monkeypatch, capsys):
    """A client call that raises when the stop cancels it (pymongo's lock, rehearsal 70) ends its
    lane with an exception the lane did not expect: in worker processes that was always a failed
    phase in one line; in the controller's own loop it escaped as a traceback, exit status 1, no
    YCSB text and no run in the store."""
    outcome, took = _hanging_run("read-raise")
    said = ("worker 0: RuntimeError: Lock is not acquired., raised in raises (tests/unit/engine_helpers.py:"
            f"{raises_line()}) (the results recorded so far are kept)")  # where, to tell whose the bug is
    assert outcome.outcome == "failed" and outcome.error == said
    assert outcome.operations > 0 and outcome.intervals and took < 30

    from workbench.cli import main
    from workbench.results.store import RunStore

    store = tmp_path / "runs.db"
    monkeypatch.setenv("WORKBENCH_STORE", str(store))
    status = main(["run", "-db", "hang", "-p", "hang.at=read-raise", "-p", "memory.store=cli-raise",
                   "-p", "recordcount=100", "-p", "operationcount=0",
                   "-p", "maxexecutiontime=1", "-p", "status.interval=0.25", "-threads", "2", "-q"])
    out, err = capsys.readouterr()
    assert status == 2, err
    assert [line for line in err.splitlines() if "error" in line] == [f"workbench: error: {said}"], err
    assert "Traceback" not in err and "[OVERALL], RunTime(ms), " in out and "[READ], Return=OK, " in out
    runs = RunStore(store).list()
    assert len(runs) == 1 and runs[0].status == "failed" and runs[0].operations > 0, runs


def test_a_worker_process_whose_lane_raises_says_where_in_one_line(monkeypatch):
    monkeypatch.setattr(controller, "END_GRACE_S", 30.0)  # a worker process cancels its lanes after 5 s
    # paced: one operation at a time (unpaced, a lane's reads go as sequences, recorded when a
    # sequence returns: the 50th read hangs the first, within its 0.25 s)
    outcome, took = _hanging_run("read-raise", "workers=2", "target=2000")
    assert outcome.outcome == "failed" and outcome.operations > 0 and took < 45
    # each worker's last tick came with its error: both cleanups are counted
    assert outcome.histograms["CLEANUP"].get_total_count() == 2, outcome.returns
    place = rf"raises \(tests/unit/engine_helpers\.py:{raises_line()}\)"
    assert re.fullmatch(rf"worker [01]: RuntimeError: Lock is not acquired\., raised in {place} "
                        r"\(the results recorded so far are kept\)", outcome.error), outcome.error


def raises_line() -> int:
    """The line of engine_helpers' `raise RuntimeError(...)` in its read-raise hang."""
    import engine_helpers

    text = Path(engine_helpers.__file__).read_text().splitlines()
    return next(n for n, line in enumerate(text, 1) if 'raise RuntimeError("Lock is not acquired.")' in line)


def test_a_phase_that_ends_in_time_is_not_touched():
    spec, _ = make_spec("recordcount=100", "operationcount=0", "maxexecutiontime=1", "status.interval=0.25")
    try:
        outcome, _ = run_phase(spec)
    finally:
        cleanup_store(spec)
    assert outcome.outcome == "completed" and outcome.error is None


def test_the_command_line_says_it_in_one_line_exits_2_and_keeps_the_run(tmp_path, monkeypatch, capsys):
    from workbench.cli import main
    from workbench.results.store import RunStore

    store = tmp_path / "runs.db"
    monkeypatch.setenv("WORKBENCH_STORE", str(store))
    status = main(["run", "-db", "hang", "-p", "hang.at=cleanup", "-p", "memory.store=cli-hang",
                   "-p", "recordcount=100", "-p", "operationcount=0",
                   "-p", "maxexecutiontime=1", "-p", "status.interval=0.25", "-threads", "2", "-q"])
    err = capsys.readouterr().err
    assert status == 2, err
    lines = [line for line in err.splitlines() if "ended by force" in line]
    assert len(lines) == 1 and "worker 0's _Hang.cleanup()" in lines[0], err
    runs = RunStore(store).list()
    assert len(runs) == 1 and runs[0].status == "failed" and runs[0].operations > 0, runs
