"""Regenerate the README's screenshots of the app (docs/app-*.svg), exported by Textual.

The Run screen is a real run on the memory binding (target changed once with `+`, so the
timeline shows an event); Compare shows the real runs made before it; the other screens are as
a new user first sees them. Nothing is made up, so the figures differ from one regeneration to
the next.

    python scripts/app_screenshots.py [--size 100x32]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from workbench.drive.session import RunRequest, Session
from workbench.ui.app import WorkbenchApp

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")


async def until(pilot, condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        await pilot.pause(0.1)


async def shoot(size: tuple[int, int]) -> None:
    state = Path(tempfile.mkdtemp(prefix="workbench-shots-"))
    session = Session(state_dir=state, store=False)  # screenshots are not runs to keep
    app = WorkbenchApp(session)
    async with app.run_test(size=size) as pilot:
        await pilot.pause(1.0)
        app.save_screenshot(str(DOCS / "app-workload.svg"))
        await pilot.press("1")
        await pilot.pause(1.0)
        app.save_screenshot(str(DOCS / "app-clusters.svg"))
        # Two finished runs for Compare (selected on the first look): workload A at two lane counts.
        for lanes in (1, 8):
            request = RunRequest((WORKLOAD_A,), ("db=memory", "recordcount=10000", "operationcount=300000",
                                                 f"threadcount={lanes}"), ("run",), f"memory A x{lanes}")
            app.start_run(request)
            await until(pilot, lambda: not session.busy)
        # A live run with a target, raised once.
        app.start_run(RunRequest((WORKLOAD_A,), ("db=memory", "recordcount=10000", "operationcount=10000000",
                                                 "target=20000", "threadcount=8"), ("run",), "memory A"))
        await until(pilot, lambda: session.current and session.current.state
                    and session.current.state.snapshot.elapsed_s > 8)
        await pilot.press("plus")
        await until(pilot, lambda: session.current.state.snapshot.elapsed_s > 16)
        app.save_screenshot(str(DOCS / "app-run.svg"))
        await pilot.press("s")
        await until(pilot, lambda: not session.busy)
        await pilot.press("4")
        await pilot.pause(1.0)
        runs = app.screen.query_one("#runs")
        runs.deselect_all()
        runs.select(0)
        runs.select(1)  # 1 lane vs 8 lanes
        await pilot.pause(1.0)
        app.save_screenshot(str(DOCS / "app-compare.svg"))
        await pilot.press("question_mark")
        await pilot.pause(0.5)
        app.save_screenshot(str(DOCS / "app-help.svg"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="100x32")
    cols, rows = map(int, ap.parse_args().size.split("x"))
    asyncio.run(shoot((cols, rows)))
    print("wrote", ", ".join(sorted(p.name for p in DOCS.glob("app-*.svg"))))


if __name__ == "__main__":
    main()
