"""The Lessons screen (5): the list, a step's text beside its live run, n / b / a, answers and
progress in the run store, resuming where the student stopped; snapshots at 80x24 and 160x48."""

from __future__ import annotations

from textual.widgets import OptionList, Static

from tests.ui.test_compare import until
from workbench.config import catalog
from workbench.drive.session import Session
from workbench.lessons.model import load
from workbench.lessons.progress import lesson_steps
from workbench.results.store import RunStore
from workbench.ui.app import WorkbenchApp
from workbench.ui.screens.lessons import LessonsScreen

FEW = {"operationcount": "3000", "maxexecutiontime": "0"}  # short runs: the screen is under test


def key_distributions():
    return load(catalog.available("lessons")["key-distributions"])


def verdicts(app) -> str:
    return str(app.screen.query_one("#step-verdicts", Static).content)


def head(app) -> str:
    return str(app.screen.query_one("#step-head", Static).content)


async def test_five_opens_the_list_and_enter_opens_a_lesson_at_its_first_step(session, tmp_path):
    session.store = tmp_path / "runs.db"
    app = WorkbenchApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("5")
        assert isinstance(app.screen, LessonsScreen)
        options = app.screen.query_one("#lesson-list", OptionList)
        titles = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert any(t.startswith("Key distributions") and "no server" in t for t in titles)
        assert any(t.startswith("Coordinated omission") and "cassandra-single 1.5G" in t for t in titles)
        index = next(i for i, t in enumerate(titles) if t.startswith("Key distributions"))
        options.highlighted = index
        await pilot.press("enter")
        await until(pilot, lambda: "[1/5] Uniform keys" in head(app), what="the first step")
        assert "n: run workloadc requestdistribution=uniform" in verdicts(app)
        # the hidden list gave up the focus: PageDown scrolls the step's text (it crashed
        # Textual's OptionList, of height 0, with a KeyError and ended the app)
        assert app.focused is app.screen.query_one("#lesson-pane")
        await pilot.press("pagedown", "pagedown")
        assert app.return_code is None and isinstance(app.screen, LessonsScreen)


async def test_steps_run_beside_the_live_view_answers_are_checked_and_kept_and_it_resumes(session, tmp_path):
    store = tmp_path / "runs.db"
    session.store = store
    app = WorkbenchApp(session, lesson=(key_distributions(), "dee", FEW))
    async with app.run_test(size=(120, 40)) as pilot:
        assert isinstance(app.screen, LessonsScreen)
        await until(pilot, lambda: "[1/5] Uniform keys" in head(app), what="the first step")
        await pilot.press("a")  # nothing to answer before the step is done
        await pilot.press("n")
        await until(pilot, lambda: "n: next step" in verdicts(app), what="step 1 done")
        assert "✓ uniform.keys.hottest_1pct < 0.03" in verdicts(app)
        assert session.current is not None and session.current.result.operations == 3000  # the live run
        await pilot.press("n")  # to step 2
        await until(pilot, lambda: "[2/5] Zipfian keys" in head(app), what="step 2")
        assert "n: run workloadc" in verdicts(app)
        await pilot.press("n")  # do it
        await until(pilot, lambda: "n: next step" in verdicts(app), what="step 2 done")
        assert "✓ zipfian.keys.hottest_1pct" in verdicts(app)
        assert "(a: answer it)" in verdicts(app)
        await pilot.press("a")
        await pilot.press("5", "enter")  # not a choice: refused in the prompt
        assert str(app.screen.query_one("#answer-error").content)
        app.screen.query_one("#answer-input").value = "2"
        await pilot.press("enter")
        await until(pilot, lambda: "your answer: 2 ✓" in verdicts(app), what="the answer")
        await pilot.press("b")
        await until(pilot, lambda: "[1/5] Uniform keys" in head(app), what="back at step 1")
        assert "✓ uniform.keys.hottest_1pct" in verdicts(app)
    with RunStore(store) as s:
        done = lesson_steps(s, "key-distributions", "dee")
    assert [(d.step, d.answers) for d in done] == [("uniform", {}), ("zipfian", {"1": 2})]

    again = WorkbenchApp(Session(state_dir=session.state_dir, store=store),
                         lesson=(key_distributions(), "dee", FEW))
    async with again.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "[3/5] The latest records" in head(again), what="the resumed step")
        await pilot.press("n")
        await until(pilot, lambda: "n: next step" in verdicts(again), what="step 3 done")
        # its check reads step 2's figures, from the store
        assert "✓ latest.keys.hottest_1pct > zipfian.keys.hottest_1pct" in verdicts(again)


def _opened(session, tmp_path):
    session.store = tmp_path / "runs.db"
    return WorkbenchApp(session, lesson=(key_distributions(), "snap", FEW))


def test_lessons_snapshot_80x24(session, tmp_path, snap_compare):
    assert snap_compare(_opened(session, tmp_path), terminal_size=(80, 24))


def test_lessons_snapshot_160x48(session, tmp_path, snap_compare):
    assert snap_compare(_opened(session, tmp_path), terminal_size=(160, 48))
