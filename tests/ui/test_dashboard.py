"""The Run screen: live commands on a real memory-binding run, and how it looks (snapshots)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.ui.livedata import FixedRun, live_state
from workbench.drive.session import RunRequest
from workbench.ui.app import WorkbenchApp
from workbench.ui.widgets.run_status import RunStatus

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")


async def until(pilot, condition, timeout: float = 60.0, what: str = "condition") -> None:
    """Poll `condition` while the app runs; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def status_text(app) -> str:
    return str(app.screen.query_one(RunStatus).content)


def endless_load(target: int = 4000) -> RunRequest:
    # Load phase: every operation succeeds on the memory binding; the count is never reached.
    return RunRequest((WORKLOAD_A,), ("db=memory", "recordcount=100000000", f"target={target}",
                                      "threadcount=2", "maxexecutiontime=300"), ("load",), "memory A")


async def test_live_commands_change_the_running_phase_and_are_recorded(session):
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.start_run(endless_load(4000))
        await until(pilot, lambda: session.current and session.current.state, what="first tick")
        run = session.current
        assert app.screen.id == "_default" or app.current_mode == "dashboard"
        await until(pilot, lambda: "running" in status_text(app), what="running status")

        # The screen reads the published state (never the controller): a command's effect is
        # published as soon as it has run on the controller's loop, not a tick later.
        await pilot.press("plus")
        await until(pilot, lambda: run.state.target == 4400, what="target +10%")
        await pilot.press("minus")
        await until(pilot, lambda: run.state.target == 3960, what="target -10%")
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: run.state.lanes == 3, what="a third lane")
        assert (run.controller.target, run.controller.lanes, run.state.paced) == (3960, 3, True)
        await pilot.press("p")
        await until(pilot, lambda: run.state.snapshot.paused, what="paused tick")
        await until(pilot, lambda: "paused" in status_text(app), what="paused status")
        await pilot.press("p")
        await until(pilot, lambda: not run.state.snapshot.paused, what="resumed tick")
        await pilot.press("t")
        await pilot.press(*"2500", "enter")
        await until(pilot, lambda: run.state.target == 2500, what="typed target")
        await until(pilot, lambda: "target 2,500" in status_text(app), what="target on screen")
        await pilot.press("s")
        await until(pilot, lambda: session.finished, what="the stopped phase")

    result = session.finished[-1].result
    kinds = [e.kind for e in result.events]
    assert kinds[:6] == ["target", "target", "lanes", "pause", "resume", "target"]
    assert [e.value for e in result.events if e.kind == "target"] == [4400, 3960, 2500]
    assert "stop" in kinds
    assert result.outcome in ("stopped", "interrupted", "completed")
    assert result.measurement("INSERT").operations > 0


async def test_a_finished_runs_headline_is_its_own_throughput_not_the_last_ticks(session):
    from workbench.ui.widgets.throughput import ThroughputChart

    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        # A paced start then no limit: the last tick's rate is far from the run's own.
        assert app.start_run(RunRequest((WORKLOAD_A,), ("db=memory", "recordcount=1000",
                                                        "operationcount=6000", "target=2000",
                                                        "threadcount=1", "status.interval=1"),
                                        ("run",), "memory A"))
        await until(pilot, lambda: session.current and session.current.state, what="first tick")
        session.current.controller.threadsafe("set_target", 0.0)
        await until(pilot, lambda: not session.busy and session.finished, what="the run's end")
        result = session.finished[-1].result
        headline = f"throughput mean {result.throughput:,.0f} ops/s over the run"
        chart = app.screen.query_one(ThroughputChart)
        await until(pilot, lambda: headline in str(chart.content), what=headline)


async def test_while_it_runs_the_headline_says_which_throughput_is_the_last_ticks(session):
    """Issue 44, defect 6: the header said 19,503 ops/s (the last tick) where the run's result was
    656,271; it names both while the phase runs, and the run's mean once it is over."""
    from dataclasses import replace

    from workbench.ui.widgets.throughput import ThroughputChart

    state = live_state(ticks=10)
    slow_last = replace(state.snapshot, operations=19_503, interval_s=1.0, elapsed_s=10.0,
                        total_operations=6_562_710)
    session.current = FixedRun(replace(state, snapshot=slow_last))
    app = WorkbenchApp(session, mode="dashboard")
    async with app.run_test(size=(80, 24)) as pilot:
        chart = app.screen.query_one(ThroughputChart)
        await until(pilot, lambda: "now 19,503 ops/s · mean 656,271" in str(chart.content), what="both")
        chart.show(replace(state, snapshot=replace(slow_last, final=True)))
        assert "throughput mean 656,271 ops/s over the run" in str(chart.content)
        assert "now" not in str(chart.content).splitlines()[0]


async def test_a_typed_target_that_is_not_a_number_is_refused(session):
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.start_run(endless_load(3000))
        await until(pilot, lambda: session.current and session.current.state, what="first tick")
        await pilot.press("t", *"fast", "enter")
        await pilot.pause()
        assert "is not a rate" in str(app.screen.query_one("#target-error").content)
        await pilot.press("escape", "s")
        await until(pilot, lambda: session.finished, what="the stopped phase")
    assert session.current.controller.target == 3000


async def test_commands_without_a_run_say_so(session):
    app = WorkbenchApp(session, mode="dashboard")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s", "plus", "k", "A", "D")
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("no run is going on" in m for m in messages)
        # kill, add a node and decommission one each need the run's cluster
        assert sum("no cluster under test" in m for m in messages) == 3, messages
        assert "No run yet" in status_text(app)


async def test_the_run_screen_keeps_a_killed_node_and_names_the_drivers_error_kinds(session):
    """Issue 54, 9: node2 killed; the per-node line stays with node2 "down", and the live
    errors are the driver's kinds, not "ERROR 46"."""
    from dataclasses import replace

    from workbench.ui.widgets.op_table import OpTable

    state = live_state(ticks=10)
    snap = replace(state.snapshot, nodes={"127.0.0.1:9042": (1010, 0), "127.0.0.2:9042": (0, 0),
                                          "127.0.0.3:9042": (990, 0)},
                   down=frozenset({"127.0.0.2:9042"}),
                   error_kinds={"ReadTimeout": 20, "Unavailable": 14, "ConnectionShutdown": 12})
    returns = {"READ": {"OK": 9970, "ERROR": 30}, "UPDATE": {"OK": 9984, "ERROR": 16}}
    session.current = FixedRun(replace(state, snapshot=snap, returns=returns))
    app = WorkbenchApp(session, mode="dashboard")
    async with app.run_test(size=(120, 30)) as pilot:
        line = "nodes 127.0.0.1 1,010/s · 127.0.0.2 down · 127.0.0.3 990/s"
        await until(pilot, lambda: line in status_text(app), what="the node line")
        table = app.screen.query_one(OpTable)
        await until(pilot, lambda: "ReadTimeout 20, Unavailable 14, ConnectionShutdown 12"
                    in _plain(table.content), what="the kinds")
        assert "ERROR" not in _plain(table.content)


def _plain(renderable) -> str:
    from rich.console import Console

    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_no_screen_reads_the_live_controller():
    """The UI reads immutable LiveStates; the Controller's attributes change on its own thread."""
    import workbench.ui

    ui = Path(workbench.ui.__file__).parent
    readers = [p.name for p in ui.rglob("*.py") if ".controller" in p.read_text()]
    assert readers == []


def frozen_app(session, **state_options) -> WorkbenchApp:
    session.current = FixedRun(live_state(**state_options))
    return WorkbenchApp(session, mode="dashboard")


EVENTS = [(8.2, "target", 2000.0), (21.4, "lanes", 24), (30.6, "fault", "node2 killed")]


def test_dashboard_snapshot_80x24(session, snap_compare):
    assert snap_compare(frozen_app(session, events=EVENTS, errors=12), terminal_size=(80, 24))


def test_dashboard_snapshot_160x48(session, snap_compare):
    assert snap_compare(frozen_app(session, events=EVENTS, errors=12), terminal_size=(160, 48))


def test_the_apps_title_names_what_it_benchmarks_and_fits_80_columns():
    title = f"{WorkbenchApp.TITLE} — {WorkbenchApp.SUB_TITLE}"
    assert all(name in title for name in ("Cassandra", "HBase", "MongoDB-protocol"))
    assert len(title) <= 62  # the header's room at 80 columns, between its icon and clock space


async def test_beside_a_lesson_the_chart_ends_on_the_runs_own_mean(session, tmp_path):
    """The Lessons screen's chart: the run's mean once it is over, the lab report's figure."""
    from workbench.lessons.model import load
    from workbench.ui.widgets.throughput import ThroughputChart

    session.store = tmp_path / "runs.db"
    lesson = load(ROOT / "tests" / "data" / "lessons" / "grading.toml")
    app = WorkbenchApp(session, lesson=(lesson, "chart", {}))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.screen.query(ThroughputChart), what="the Lessons screen")
        await pilot.press("n")
        await until(pilot, lambda: session.finished and not session.busy, what="the step's run")
        headline = f"mean {session.finished[-1].result.throughput:,.0f} ops/s over the run"
        chart = app.screen.query_one(ThroughputChart)
        await until(pilot, lambda: headline in str(chart.content), what=headline)
