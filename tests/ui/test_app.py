"""The app as a whole: screens on keys 1-4, help on ?, NO_COLOR, and quitting ends a run."""

from __future__ import annotations

import time

from tests.ui.test_dashboard import WORKLOAD_A
from workbench.drive.session import RunRequest
from workbench.ui.app import WorkbenchApp
from workbench.ui.screens.help import HelpScreen


async def test_number_keys_switch_screens_and_question_mark_opens_help(session):
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.current_mode == "composer"  # the first screen: compose a workload
        for key, mode in (("1", "clusters"), ("3", "dashboard"), ("4", "compare"), ("2", "composer")):
            await pilot.press(key)
            await pilot.pause()
            assert app.current_mode == mode
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "coordinated omission" in " ".join(app.screen.query_one("Markdown").source.split())
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_no_color_draws_in_monochrome(session, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)):
        assert app.no_color
        assert any(type(f).__name__ == "Monochrome" for f in app._filters)


async def test_quitting_stops_the_run_and_its_worker_process(session):
    request = RunRequest((WORKLOAD_A,), ("db=memory", "recordcount=1000", "operationcount=100000000",
                                         "target=2000", "maxexecutiontime=300"), ("run",))
    app = WorkbenchApp(session, request=request)
    async with app.run_test(size=(80, 24)) as pilot:
        deadline = time.monotonic() + 60
        while not (session.current and session.current.state):
            assert time.monotonic() < deadline
            await pilot.pause(0.05)
        workers = list(session.current.controller._executor.procs)
        assert workers and all(p.is_alive() for p in workers)
        await pilot.press("q")
    assert session.wait(30)
    assert session.finished and session.finished[-1].result.outcome == "stopped"
    for proc in workers:
        proc.join(30)
        assert not proc.is_alive()


def test_an_app_that_crashed_leaves_its_traceback_in_a_file_and_a_non_zero_status(tmp_path):
    from types import SimpleNamespace

    from workbench.ui.launch import CRASH_LOG, AppCrashed, _crashed

    try:
        {}[5]
    except KeyError as exc:
        error = exc
    crashed = _crashed(SimpleNamespace(_exception=error, return_code=1), tmp_path)
    assert isinstance(crashed, AppCrashed) and crashed.exit_status == 1
    assert str(tmp_path / CRASH_LOG) in str(crashed) and "KeyError: 5" in str(crashed)
    assert "Traceback" in (tmp_path / CRASH_LOG).read_text() and "{}[5]" in (tmp_path / CRASH_LOG).read_text()
    assert _crashed(SimpleNamespace(_exception=None, return_code=0), tmp_path) is None  # a normal quit
