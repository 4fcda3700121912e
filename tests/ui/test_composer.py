"""The Workload screen: the preview follows the distribution, a refused value shows the command
line's message at its field and blocks the run, a composed run runs, a saved file is valid."""

from __future__ import annotations

import time

from textual.widgets import Input, Select

from workbench.config.spec import spec_from_args
from workbench.ui.app import WorkbenchApp
from workbench.ui.widgets.field_row import FieldRow
from workbench.ui.widgets.key_preview import KeyPreview


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


def preview(app) -> str:
    return str(app.screen.query_one(KeyPreview).content)


def set_field(app, key: str, value: str) -> None:
    app.screen.query_one(f"#{key.replace('.', '-')}", Input).value = value


async def test_the_key_preview_follows_the_distribution(session):
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "hottest" in preview(app), what="first preview")
        assert "where zipfian requests land" in preview(app)
        zipfian = preview(app)
        app.screen.query_one("#requestdistribution", Select).value = "uniform"
        await until(pilot, lambda: "where uniform requests land" in preview(app), what="uniform preview")
        assert preview(app) != zipfian
        # The zipfian constant's field is shown only for zipfian (and latest).
        assert not app.screen.query_one("#row-zipfian-constant").display
        app.screen.query_one("#requestdistribution", Select).value = "hotspot"
        await until(pilot, lambda: "where hotspot" in preview(app), what="hotspot preview")
        assert app.screen.query_one("#row-hotspotdatafraction").display


async def test_at_80x24_every_label_is_whole_and_apart_from_its_value(session):
    from textual.widgets import Label

    from workbench.config.compose import LOAD, MIX, PARAMS, SIZES

    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "hottest" in preview(app), what="first preview")
        checked = set()
        for distribution in ("zipfian", "hotspot", "exponential"):  # each shows its own fields
            app.screen.query_one("#requestdistribution", Select).value = distribution
            await until(pilot, lambda d=distribution: f"where {d}" in preview(app), what=distribution)
            await pilot.pause()
            for row in app.screen.query(FieldRow):
                if not row.display:
                    continue
                label, value = row.query_one(Label), row.query_one(Input)
                # The marker, the label and at least one blank column before the value.
                assert label.size.width >= len(f"▸ {row.label}") + 1, row.label
                assert value.virtual_region.x >= label.virtual_region.right, row.label
                assert value.size.width >= 8, row.label  # room left for the value itself
                checked.add(row.key)
        assert checked >= {k for k, _ in MIX + SIZES + LOAD + PARAMS}


async def test_a_refused_value_is_shown_at_its_field_and_blocks_the_run(session):
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        app.screen.query_one("#recordcount", Input).focus()
        await pilot.pause()
        await pilot.press(*"12x")  # typed over the selected value, as a user would
        row = app.screen.query_one("#row-recordcount", FieldRow)
        # checked in a thread worker once the typing settles
        await until(pilot, lambda: row.has_class("-invalid"), what="the refused value")
        assert "recordcount='12x' is not a whole number" in str(row.query_one(".field-error").content)
        assert "✗ workbench: error:" in str(app.screen.query_one("#verdict").content)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: any("recordcount='12x'" in n.message for n in app._notifications),
                    what="the refusal of the run")
        assert not session.busy and app.current_mode == "composer"
        await pilot.press("backspace")
        await until(pilot, lambda: not row.has_class("-invalid"), what="the valid value")
        assert "✓ valid: 12 records" in str(app.screen.query_one("#verdict").content)


async def test_changes_are_checked_off_the_ui_thread_and_the_newest_wins(session, monkeypatch):
    import threading

    from workbench.config.compose import Composition

    threads = []
    check = Composition.check

    def spy(self, *args, **kwargs):
        threads.append(threading.current_thread())
        return check(self, *args, **kwargs)

    monkeypatch.setattr(Composition, "check", spy)
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "hottest" in preview(app), what="first preview")
        for value in ("1x", "12x", "123"):  # a burst of changes: the last one is shown
            set_field(app, "recordcount", value)
        await until(pilot, lambda: "✓ valid: 123 records" in str(app.screen.query_one("#verdict").content),
                    what="the newest value's verdict")
        assert not app.screen.query_one("#row-recordcount", FieldRow).has_class("-invalid")
    assert threads and threading.main_thread() not in threads


def test_a_cluster_that_does_not_exist_is_named_in_the_check():
    from workbench.config.compose import Composition
    from workbench.ui.screens.composer import checked

    c = Composition()
    c.cluster = "no-such-cluster"
    spec, message, _, overrides = checked(c)
    assert spec is None and "no-such-cluster" in message and overrides == []


async def test_a_composed_run_loads_and_runs_on_the_memory_binding(session):
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        set_field(app, "recordcount", "300")
        set_field(app, "operationcount", "2000")
        set_field(app, "threadcount", "2")
        # the command line is redrawn after the fields' changes are handled: waited for, as one
        # pause was not always enough on a loaded machine
        await until(pilot, lambda: "-p recordcount=300 -p operationcount=2000 -p threadcount=2" in str(
            app.screen.query_one("#cmdline").content), what="the command line of the three fields")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: app.current_mode == "dashboard", what="the Run screen")
        await until(pilot, lambda: len(session.finished) == 2 and not session.busy, what="both phases")
    load, run = (d.result for d in session.finished)
    assert load.measurement("INSERT").operations == 300
    assert run.measurement("READ").operations + run.measurement("UPDATE").operations == 2000


async def test_save_as_writes_a_workload_file_the_command_line_accepts(session, tmp_path):
    target = tmp_path / "composed"
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        app.screen.query_one("#requestdistribution", Select).value = "uniform"
        set_field(app, "readproportion", "0.95")
        set_field(app, "updateproportion", "0.05")
        await pilot.press("ctrl+s")
        await pilot.pause()
        await type_path(pilot, target)
        await until(pilot, target.exists, what="the saved file")
    spec, _ = spec_from_args([str(target)], [], "run")
    assert (spec.readproportion, spec.updateproportion, spec.requestdistribution) == (0.95, 0.05, "uniform")


async def _preview_ready(pilot) -> None:
    await until(pilot, lambda: "hottest" in preview(pilot.app), what="preview")


def test_composer_snapshot_80x24(session, snap_compare):
    assert snap_compare(WorkbenchApp(session), terminal_size=(80, 24), run_before=_preview_ready)


def test_composer_snapshot_160x48(session, snap_compare):
    assert snap_compare(WorkbenchApp(session), terminal_size=(160, 48), run_before=_preview_ready)
