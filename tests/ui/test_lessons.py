"""The Lessons screen (5): the list, a step's text beside its live run, n / b / a, answers locked
and graded from the lesson file, progress in the run store, resuming where the student stopped;
snapshots at 80x24 (the answer dialog too) and 160x48, of a lesson made for the tests
(tests/data/lessons/grading.toml) so that a shipped lesson's new text does not move them."""

from __future__ import annotations

import threading
from pathlib import Path

from textual.widgets import Footer, Input, OptionList, Static

from tests.ui.test_compare import until
from workbench.drive.session import Session
from workbench.lessons.model import load
from workbench.lessons.progress import LessonStep, lesson_steps, save_lesson_step
from workbench.lessons.runner import LessonRunner, judge
from workbench.results.store import RunStore
from workbench.ui.app import WorkbenchApp
from workbench.ui.screens.answer import AnswerPrompt
from workbench.ui.screens.lessons import LessonsScreen

GRADING = Path(__file__).resolve().parents[1] / "data" / "lessons" / "grading.toml"


def grading():
    return load(GRADING)


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


async def answer(pilot, app, value: str) -> None:
    await pilot.press("a")
    await until(pilot, lambda: isinstance(app.screen, AnswerPrompt), what="the answer dialog")
    app.screen.query_one("#answer-input").value = value
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, LessonsScreen), what="the dialog closed")


async def test_answers_lock_show_the_key_only_once_locked_are_kept_and_it_resumes(session, tmp_path):
    store = tmp_path / "runs.db"
    session.store = store
    app = WorkbenchApp(session, lesson=(grading(), "dee", {}))
    async with app.run_test(size=(120, 40)) as pilot:
        assert isinstance(app.screen, LessonsScreen)
        await until(pilot, lambda: "[1/3] The first run" in head(app), what="the first step")
        await pilot.press("a")  # nothing to answer before the step is done
        assert isinstance(app.screen, LessonsScreen)
        await pilot.press("n")
        await until(pilot, lambda: "n: next step" in verdicts(app), what="step 1 done")
        assert "✓ first.throughput > 0" in verdicts(app)
        assert session.current is not None and session.current.result.operations == 2000  # the live run
        assert "(a: answer it; 2 attempts)" in verdicts(app)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AnswerPrompt), what="the answer dialog")
        await pilot.press("5", "enter")  # not a choice: refused in the dialog
        assert "give the number of a choice, 1 to 3" in str(app.screen.query_one("#answer-error").content)
        await pilot.press("escape")
        await answer(pilot, app, "1")  # wrong, one attempt left: the key is not shown
        await until(pilot, lambda: "your answer: 1 ✗" in verdicts(app), what="the first attempt")
        assert "not right: 1 attempt left (a)" in verdicts(app) and "the answer is" not in verdicts(app)
        await answer(pilot, app, "2")
        await until(pilot, lambda: "your answers: 1 ✗, 2 ✓" in verdicts(app), what="the second attempt")
        assert "right: locked" in verdicts(app)
        await pilot.press("a")  # locked: no dialog, and a "2" cannot turn anything around
        assert isinstance(app.screen, LessonsScreen)
        await pilot.press("n")
        await until(pilot, lambda: "[2/3] Think about it" in head(app), what="step 2")
        assert "n: next step (this one only asks)" in verdicts(app)
        await pilot.press("n")  # it runs nothing
        await until(pilot, lambda: "(a: answer it)" in verdicts(app), what="step 2 done")
        await answer(pilot, app, "1")
        await until(pilot, lambda: "locked; the answer is 2: workloadc" in verdicts(app), what="locked")
        await answer(pilot, app, "a shop's best sellers")  # `a` goes on to the free-text question
        await until(pilot, lambda: "your answer: a shop's best sellers" in verdicts(app), what="the text")
        await pilot.press("a")
        assert isinstance(app.screen, LessonsScreen)
        await pilot.press("b")
        await until(pilot, lambda: "[1/3] The first run" in head(app), what="back at step 1")
        assert "right: locked" in verdicts(app)
    with RunStore(store) as s:
        done = {d.step: d for d in lesson_steps(s, "grading", "dee")}
    assert list(done) == ["first", "think"]
    assert [a["given"] for a in done["first"].answers["1"]] == [1, 2]
    assert [[a["given"] for a in done["think"].answers[n]] for n in "12"] == [[1], ["a shop's best sellers"]]
    assert all(a["at"] > 0 for d in done.values() for attempts in d.answers.values() for a in attempts)

    again = WorkbenchApp(Session(state_dir=session.state_dir, store=store), lesson=(grading(), "dee", {}))
    async with again.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "[3/3] The second run" in head(again), what="the resumed step")
        await pilot.press("n")
        await until(pilot, lambda: "The lesson is done." in verdicts(again), what="step 3 done")
        shown = verdicts(again)
        assert "✓ second.throughput > 0" in shown and "✗ second.read.p99 < 0" in shown
        assert "? second.update.p99 < 1000" in shown


def _opened(session, tmp_path):
    session.store = tmp_path / "runs.db"
    return WorkbenchApp(session, lesson=(grading(), "snap", {}))


def test_lessons_snapshot_80x24(session, tmp_path, snap_compare):
    # the footer keeps 5, ? and q at 80 columns
    assert snap_compare(_opened(session, tmp_path), terminal_size=(80, 24))


def test_lessons_snapshot_160x48(session, tmp_path, snap_compare):
    assert snap_compare(_opened(session, tmp_path), terminal_size=(160, 48))


def test_answer_dialog_snapshot_80x24(session, tmp_path, snap_compare):
    """The long question and its choices wrapped, not cut, at 80x24 (issue 44, defect 7)."""
    store = tmp_path / "runs.db"
    lesson = grading()
    figures = {"first": {"throughput": 1500.0}}
    with RunStore(store) as s:  # step 1 done (fixed figures: a run's would move the snapshot)
        save_lesson_step(s, "grading", "snap", LessonStep(
            "first", 0, None, figures["first"],
            [judge(c, figures).as_dict() for c in lesson.steps[0].checks],
            {"1": [{"given": 1, "at": 1764000000.0}]}))

    async def dialog(pilot) -> None:
        await until(pilot, lambda: "[2/3] Think about it" in head(pilot.app), what="the resumed step")
        await pilot.press("b")
        await until(pilot, lambda: "not right: 1 attempt left" in verdicts(pilot.app), what="step 1")
        await pilot.press("a")
        await until(pilot, lambda: isinstance(pilot.app.screen, AnswerPrompt), what="the dialog")
        # the input's cursor blinks: drawn or not depends on when the picture is taken (on a loaded
        # machine it once was not), so it holds still for the snapshot
        pilot.app.screen.query_one("#answer-input").cursor_blink = False
        await pilot.pause()

    session.store = store
    app = WorkbenchApp(session, lesson=(lesson, "snap", {}))
    assert snap_compare(app, terminal_size=(80, 24), run_before=dialog)


async def test_the_end_of_a_long_step_scrolls_into_view_at_80x24(session, tmp_path):
    """The text was measured before the pane's scrollbar took two columns from it, and its last
    lines could not be scrolled into view (issue 44, defect 7)."""
    app = _opened(session, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.screen.query_one("#lesson-pane")
        last = app.screen.query_one("#step-verdicts")
        await until(pilot, lambda: "n: run workloadc" in verdicts(app) and pane.max_scroll_y > 0,
                    what="the step's text, longer than the pane")
        pane.focus()
        await pilot.press("end")
        await until(pilot, lambda: pane.scroll_y == pane.max_scroll_y, what="the end")
        text = app.screen.query_one("#step-text")
        assert text.size.width == pane.scrollable_content_region.width  # measured at its shown width
        # The widgets' regions follow the scroll at the next refresh, which a loaded machine may not
        # have made yet (CI once read the region from before the scroll): wait for the last lines,
        # at the end of the pane's range. With the defect they were below the end, never in view.
        await until(pilot, lambda: pane.scroll_y == pane.max_scroll_y and last.region.height > 0
                    and last.region.bottom <= pane.content_region.bottom, timeout=30,
                    what="the step's last lines in view at the end of the pane")


def messages(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_n_again_while_a_step_runs_says_so_and_the_live_pane_does_not_repeat_its_text(
        session, tmp_path, monkeypatch):
    """Issue 52, 10: during a step, the pane under its text repeated the title and the text
    itself, as the raw Markdown source, and `n` again said it as an error."""
    go_on = threading.Event()
    act = LessonRunner._act

    def held(runner, step):  # the step's run waits for the test, however fast the machine
        assert go_on.wait(60)
        return act(runner, step)

    monkeypatch.setattr(LessonRunner, "_act", held)
    app = _opened(session, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "[1/3] The first run" in head(app), what="the first step")
        await pilot.press("n")
        await until(pilot, lambda: "this step is going on" in verdicts(app), what="the step going on")
        shown = verdicts(app)
        assert "The last line of the first step's text." not in shown and "The first run" not in shown
        await pilot.press("n")
        await until(pilot, lambda: messages(app), what="a notification")
        assert messages(app) == ["step 1 is still going on: its verdicts come when it ends "
                                 "(or stop it on the Run screen, 3)"]
        go_on.set()
        await until(pilot, lambda: "n: next step" in verdicts(app), what="step 1 done")
        assert "[1/3] The first run" in head(app)  # the second n moved nothing on


async def test_the_answer_dialog_has_its_own_keys_and_the_focus_stays_in_its_box(session, tmp_path):
    """Issue 52, 10: the dialog showed the Lessons screen's footer (n, b, a, l, which typed into
    the box), not enter and escape, and tab took the focus to a pane that did not show it."""
    app = WorkbenchApp(session, lesson=(grading(), "dee", {}))
    session.store = tmp_path / "runs.db"
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "[1/3] The first run" in head(app), what="the first step")
        await pilot.press("n")
        await until(pilot, lambda: "(a: answer it; 2 attempts)" in verdicts(app), what="step 1 done")
        lessons = app.screen
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AnswerPrompt), what="the answer dialog")
        dialog = app.screen
        assert dialog.query_one(Footer).display  # its own footer, over the Lessons screen's
        shown = {(b.binding.key_display, b.binding.description)
                 for b in dialog.active_bindings.values() if b.binding.show}  # what the footer names
        assert shown == {("Enter", "Submit"), ("Esc", "Cancel")}
        box = dialog.query_one("#answer-input", Input)
        await pilot.press("n", "b", "l", "a")  # the Lessons screen's keys: letters in the box
        assert box.value == "nbla" and app.screen is dialog and lessons.position == 0
        await pilot.press("pagedown", "pageup")  # scroll the question's text (when it is long)
        assert app.screen is dialog and box.value == "nbla"
        for key in ("tab", "tab", "shift+tab"):
            await pilot.press(key)
            assert app.focused is box, key
        await pilot.press("ctrl+u", "1", "enter")  # wrong: one attempt left
        await until(pilot, lambda: app.screen is lessons, what="the dialog closed")
        await until(pilot, lambda: "your answer: 1 ✗" in verdicts(app), what="the attempt")
        assert "not right: 1 attempt left (a)" in verdicts(app)  # the app's key, in the app


async def test_n_a_and_b_on_the_list_say_to_open_a_lesson_first(session, tmp_path):
    """Issue 52, 10: before a lesson is opened, n, a and b did nothing and said nothing."""
    session.store = tmp_path / "runs.db"
    app = WorkbenchApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("5")
        assert isinstance(app.screen, LessonsScreen) and app.screen.runner is None
        for key in "nab":
            app.clear_notifications()
            await pilot.press(key)
            await until(pilot, lambda: messages(app), what=f"what {key} says")
            assert messages(app) == ["open a lesson first: pick one in the list, then enter"], key
        assert app.screen.runner is None and app.screen.query_one("#lesson-list").display
