"""`workbench demo` in the app: the demo's steps run live on the Run screen, write the same
exports as the headless demo, and leave their last word on the status line."""

from __future__ import annotations

import time

from workbench.ui.app import WorkbenchApp
from workbench.ui.demo import demo_task
from workbench.ui.widgets.run_status import RunStatus


async def test_demo_runs_every_step_in_the_app(session, tmp_path):
    out = tmp_path / "demo"
    out.mkdir()
    app = WorkbenchApp(session, task=demo_task(["memory"], 500, 3000, 2, out))
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.current_mode == "dashboard"
        deadline = time.monotonic() + 120

        def status() -> str:
            return str(app.screen.query_one(RunStatus).content)

        while session.busy or "demo done" not in status():
            assert time.monotonic() < deadline, (session.activity, status())
            await pilot.pause(0.05)
        assert str(out) in status()
    assert [d.title for d in session.finished] == [
        "memory workloada load", "memory workloada run", "memory workloadc run"]
    assert all(d.result.outcome == "completed" for d in session.finished)
    assert session.finished[0].result.measurement("INSERT").operations == 500
    assert sorted(p.name for p in out.iterdir()) == [
        "memory-workloada-load.csv", "memory-workloada-load.txt", "memory-workloada-run.csv",
        "memory-workloada-run.txt", "memory-workloadc-run.csv", "memory-workloadc-run.txt"]
