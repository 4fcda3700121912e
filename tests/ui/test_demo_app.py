"""`workbench demo` in the app: the demo's steps run live on the Run screen, write the same
exports as the headless demo, leave their last word on the status line, and end on the Compare
screen with the runs side by side."""

from __future__ import annotations

import time

from workbench.drive.demo import demo_task
from workbench.ui.app import WorkbenchApp
from workbench.ui.widgets.run_status import RunStatus


async def test_demo_runs_every_step_in_the_app_and_ends_on_the_comparison(session, tmp_path):
    from textual.widgets import SelectionList

    out = tmp_path / "demo"
    out.mkdir()
    bound = ["operationcount=0", "maxexecutiontime=2"]  # --seconds 2
    app = WorkbenchApp(session, task=demo_task(["memory"], 500, bound, 2, out))
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.current_mode == "dashboard"
        deadline = time.monotonic() + 120
        while session.busy or app.current_mode != "compare":
            assert time.monotonic() < deadline, (session.activity, app.current_mode)
            await pilot.pause(0.05)
        runs = app.screen.query_one("#runs", SelectionList)
        while len(runs.selected) < 2:  # the last two runs, compared
            assert time.monotonic() < deadline, runs.selected
            await pilot.pause(0.05)
        assert runs.selected == [1, 2]
        await pilot.press("3")
        status = str(app.screen.query_one(RunStatus).content)
        assert "demo done" in status and str(out) in status
    assert [d.title for d in session.finished] == [
        "memory workloada load", "memory workloada run", "memory workloadc run"]
    assert all(d.result.outcome == "completed" for d in session.finished)
    assert session.finished[0].result.measurement("INSERT").operations == 500
    assert all(2000 <= d.result.runtime_ms < 10_000 for d in session.finished[1:])  # time-bounded
    assert sorted(p.name for p in out.iterdir()) == [
        "memory-workloada-load.csv", "memory-workloada-load.txt", "memory-workloada-run.csv",
        "memory-workloada-run.txt", "memory-workloadc-run.csv", "memory-workloadc-run.txt"]
