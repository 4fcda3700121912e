"""The Compare screen: runs of the session and imported YCSB files side by side, the baseline
named, each difference's interval and verdict, selection, export identical to the command line's,
a corrupt import refused in one line."""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import SelectionList

from workbench.drive.session import FinishedRun, RunRequest
from workbench.results.exporters import export
from workbench.results.importers import import_file
from workbench.ui.app import WorkbenchApp

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "ycsb-0.17.0"
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")


async def type_path(pilot, path) -> None:
    """A path into the prompt that has the focus, then enter (typed key by key, a long path
    costs seconds of the test harness's idle waits; the keys themselves are not under test)."""
    pilot.app.focused.value = str(path)
    await pilot.press("enter")


async def until(pilot, condition, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def imported(session) -> None:
    for name in ("cassandra-workloada-run.txt", "hbase-workloada-run.txt"):
        result = import_file(DATA / name)
        session.finished.append(FinishedRun(f"{name.split('-')[0]} workloada run", result, str(DATA / name)))


def shown(app) -> str:
    """The figures area as text (the rich table rendered at the screen's width)."""
    from rich.console import Console

    console = Console(width=100, record=True, color_system=None)
    console.print(app.screen.query_one("#table").content)
    return console.export_text()


async def test_two_memory_runs_and_an_imported_file_side_by_side(session, tmp_path):
    app = WorkbenchApp(session, mode="compare")
    async with app.run_test(size=(100, 40)) as pilot:
        assert "No runs yet" in shown(app)
        for count, lanes in ((1, 1), (2, 4)):
            session.start(RunRequest((WORKLOAD_A,), ("db=memory", "recordcount=300", "operationcount=3000",
                                                     f"threadcount={lanes}"), ("run",), f"memory {lanes}l"))
            await until(pilot, lambda n=count: not session.busy and len(session.finished) == n,
                        what="a memory run")
        await until(pilot, lambda: app.screen.query_one("#runs", SelectionList).option_count == 2,
                    what="both runs listed")
        # Two runs on a first look: both selected, the first is the baseline.
        await until(pilot, lambda: "Δ vs baseline" in shown(app), what="the comparison")
        assert "throughput ops/s" in shown(app) and "READ p99 µs" in shown(app)
        text = " ".join(shown(app).split())
        assert "threadcount: 1 / 4" in text and "figure 1. memory 1l run (baseline)" in text
        # under a second each: too few seconds for an interval, said rather than guessed
        assert "throughput ops/s (-10%)" in text and "too few seconds" in text
        assert "(baseline)" in str(app.screen.query_one("#overlay").content)

        await pilot.press("i")
        await pilot.pause()
        await type_path(pilot, DATA / "hbase-workloada-run.txt")
        await until(pilot, lambda: app.screen.query_one("#runs", SelectionList).option_count == 3,
                    what="the imported file")
        runs = app.screen.query_one("#runs", SelectionList)
        runs.deselect(1)
        runs.select(2)
        await until(pilot, lambda: "hbase-workloada-run" in shown(app), what="memory vs the imported run")
        assert "unknown (YCSB text), not compared" in " ".join(shown(app).split())

        out = tmp_path / "export"
        await pilot.press("e")
        await pilot.pause()
        await type_path(pilot, out)
        await until(pilot, lambda: (out / "comparison.csv").exists(), what="the export")
    files = sorted(p.name for p in out.iterdir())
    assert files == ["1-memory-1l-run.csv", "1-memory-1l-run.txt", "3-hbase-workloada-run.csv",
                     "3-hbase-workloada-run.txt", "comparison.csv"]
    # Byte for byte what the command line's exporter writes for the same result.
    expected = tmp_path / "expected.txt"
    export(session.finished[0].result, f"ycsb={expected}")
    assert (out / "1-memory-1l-run.txt").read_bytes() == expected.read_bytes()


async def test_a_corrupt_file_is_refused_in_one_line(session, tmp_path):
    bad = tmp_path / "garbage.txt"
    bad.write_text("this is not YCSB output\n\x00\x01")
    app = WorkbenchApp(session, mode="compare")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        await type_path(pilot, bad)
        await until(pilot, lambda: any("workbench: error:" in n.message for n in app._notifications),
                    what="the error")
        message = next(n.message for n in app._notifications if "workbench: error:" in n.message)
        assert "\n" not in message and "garbage.txt" in message
        assert session.finished == []


async def test_runs_of_the_app_are_recorded_and_h_brings_back_the_store_history(tmp_path, monkeypatch):
    from workbench.drive.session import Session
    from workbench.results.store import RunStore

    store = tmp_path / "runs.db"
    monkeypatch.setenv("WORKBENCH_STORE", str(store))
    with RunStore(store) as s:  # two runs of earlier sessions (here: imported YCSB output)
        earlier = [s.add(import_file(DATA / name), source=f"import:{name}", workload="workloada")
                   for name in ("cassandra-workloada-run.txt", "hbase-workloada-run.txt")]
    session = Session(state_dir=tmp_path / "state")
    app = WorkbenchApp(session, mode="compare")
    async with app.run_test(size=(100, 40)) as pilot:
        session.start(RunRequest((WORKLOAD_A,), ("db=memory", "recordcount=300", "operationcount=2000"),
                                 ("run",), "memory"))
        await until(pilot, lambda: not session.busy and len(session.finished) == 1, what="a memory run")
        made = session.finished[0].run_id
        assert made is not None and made not in earlier
        await pilot.press("h")
        runs = app.screen.query_one("#runs", SelectionList)
        await until(pilot, lambda: runs.option_count == 3, what="the store's two earlier runs")
        labels = [str(runs.get_option_at_index(i).prompt) for i in range(3)]
        assert [f"#{earlier[0]}" in labels[1], f"#{earlier[1]}" in labels[2]] == [True, True], labels
        await pilot.press("h")  # again: nothing new, nothing listed twice
        await pilot.pause(0.2)
        await until(pilot, lambda: not app.screen.workers, what="the second look at the store")
        assert runs.option_count == 3
    with RunStore(store) as s:
        row = s.row(made)
        assert (row.status, row.source, row.workload, row.operations) == \
            ("completed", "app", "workloada", 2000)
        assert s.result(made) == session.finished[0].result


async def compared(pilot) -> None:
    """The comparison is drawn by a thread worker: wait for it."""
    await until(pilot, lambda: "(baseline)" in shown(pilot.app), what="the comparison")


def test_compare_snapshot_80x24(session, snap_compare):
    imported(session)
    assert snap_compare(WorkbenchApp(session, mode="compare"), terminal_size=(80, 24), run_before=compared)


def test_compare_snapshot_160x48(session, snap_compare):
    imported(session)
    assert snap_compare(WorkbenchApp(session, mode="compare"), terminal_size=(160, 48), run_before=compared)
