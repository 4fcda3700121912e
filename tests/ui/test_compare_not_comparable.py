"""The Compare screen says "not comparable" out loud: two runs from the store whose manifests differ
in the client's cores get a line naming the field and both values, above the figures, as
`runs compare` prints it; two runs with the same manifest get none (issue 55, 4)."""

from __future__ import annotations

import time

from textual.widgets import SelectionList

from workbench.drive.check import CheckPlan
from workbench.drive.session import Session
from workbench.results.model import RunResult
from workbench.results.store import RunStore
from workbench.ui.app import WorkbenchApp


async def until(pilot, condition, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def shown(app) -> str:
    """The figures area as text, each run of spaces as one (the lines wrap at the screen's width)."""
    from rich.console import Console

    console = Console(width=200, record=True, color_system=None)
    console.print(app.screen.query_one("#table").content)
    return " ".join(console.export_text().split())


def stored(store, cores: tuple[int, int]) -> list[int]:
    """Two runs in the store, the same but for the cores their manifests say the client had."""
    manifest = CheckPlan((), ("db=memory",)).manifest()
    ids = []
    with RunStore(store) as runs:
        for n in cores:
            result = RunResult("run", "memory", 1000, 100, 100.0, properties={"recordcount": "10"},
                               manifest={**manifest, "host": {**manifest["host"], "cpus_usable": n}})
            ids.append(runs.add(result, source="test", workload="workloada"))
    return ids


async def compared_from_the_store(tmp_path, monkeypatch, cores: tuple[int, int]) -> tuple[str, list[int]]:
    store = tmp_path / "runs.db"
    ids = stored(store, cores)
    monkeypatch.setenv("WORKBENCH_STORE", str(store))
    monkeypatch.setenv("WORKBENCH_STATE_DIR", str(tmp_path / "state"))
    app = WorkbenchApp(Session(state_dir=tmp_path / "state"), mode="compare")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("h")  # the store's runs; a first look at two selects both
        await until(pilot, lambda: app.screen.query_one("#runs", SelectionList).option_count == 2,
                    what="the store's two runs")
        await until(pilot, lambda: "(baseline)" in shown(app), what="the comparison")
        return shown(app), ids


async def test_runs_whose_cores_differ_are_said_not_comparable(tmp_path, monkeypatch):
    text, (first, second) = await compared_from_the_store(tmp_path, monkeypatch, (8, 2))
    assert (f"not comparable: cores differs: 8 (1. #{first} memory workloada run, baseline), "
            f"2 (2. #{second} memory workloada run)") in text, text
    assert text.index("not comparable") < text.index("throughput ops/s")  # above the figures
    assert text.count("not comparable") == 1  # the only field that differs


async def test_runs_with_the_same_manifest_are_not_said_to_differ(tmp_path, monkeypatch):
    text, _ = await compared_from_the_store(tmp_path, monkeypatch, (8, 8))
    assert "throughput ops/s" in text and "not comparable" not in text
