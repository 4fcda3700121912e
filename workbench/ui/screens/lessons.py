"""The Lessons screen (5): a lesson's step text beside the live run it makes.

Pick a lesson from the list (enter). `n` does the step shown (its action runs on the session's
thread through the lesson runner, the same code as `workbench lesson run --no-tui`), then its
checks' verdicts appear under the text; `n` again moves to the next step. `b` goes back a step
(its text and recorded verdicts; nothing runs). `a` answers the step's next open question (the
dialog is screens/answer.py): graded from the lesson file, locked once right or out of attempts,
and only then is the right answer shown. Progress and every attempt are in the run store:
leaving and coming back resumes where the student stopped (the clusters and loads of the steps
done before are restored first).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from workbench.config import catalog
from workbench.errors import WorkbenchError
from workbench.lessons.model import Lesson, LessonError, Step, load
from workbench.lessons.runner import LessonRunner, verdict_lines
from workbench.ui.screens.answer import AnswerPrompt
from workbench.ui.widgets.op_table import OpTable
from workbench.ui.widgets.run_status import RunStatus
from workbench.ui.widgets.throughput import ThroughputChart

REFRESH_S = 0.25


# The app's screen keys, in one footer group here, and no ^p in this footer: at 80 columns it
# then still shows 5, ? and q beside the lesson's own keys (the help, ?, names every screen).
_SCREENS = Binding.Group("Screens", compact=True)


class LessonsScreen(Screen):
    BINDINGS = [
        Binding("n", "next", "Do step/next"),
        Binding("b", "back", "Back"),
        Binding("a", "answer", "Answer"),
        Binding("l", "list", "List"),
        *(Binding(str(number), f"app.switch_mode('{mode}')", mode, group=_SCREENS) for number, mode in
          enumerate(("clusters", "composer", "dashboard", "compare", "lessons"), 1)),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.runner: LessonRunner | None = None
        self.position = 0
        self.done: dict = {}
        self.said: list[str] = []  # what the runner said during the step going on
        self._busy_step: int | None = None
        self._shown: tuple | None = None
        self._seq = 0
        self._final: float | None = None  # the finished run's own throughput, once drawn
        self._scroll_to_verdicts = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="lesson-side"):
                yield OptionList(id="lesson-list")
                with VerticalScroll(id="lesson-pane"):
                    yield Static("", id="step-head")
                    yield Markdown("", id="step-text")
                    yield Static("", id="step-verdicts")
            with Vertical(id="lesson-live"):
                yield RunStatus("", id="lesson-status")
                yield ThroughputChart(id="lesson-throughput")
                yield OpTable(id="lesson-ops", compact=True)
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#lesson-live").border_title = "live run"
        self._fill_list()
        self.set_interval(REFRESH_S, self.refresh_view)
        wanted = getattr(self.app, "first_lesson", None)
        if wanted is not None and self.runner is None:
            self.open_lesson(*wanted)
        self._show_mode()

    # -- choosing a lesson --------------------------------------------------------------------

    def _fill_list(self) -> None:
        options = []
        for entry in catalog.entries("lessons"):
            try:
                lesson = load(entry.path)
            except LessonError as exc:
                options.append(Option(f"{entry.name}: broken ({exc.problems[0].what})", id=entry.name,
                                      disabled=True))
                continue
            needs = ", ".join(f"{c.preset} {c.memory}" for c in lesson.clusters) or "no server"
            options.append(Option(f"{lesson.title}\n  {lesson.minutes:g} min · {needs}", id=str(entry.path)))
        lessons = self.query_one("#lesson-list", OptionList)
        lessons.clear_options()
        lessons.add_options(options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if self.app.session.busy:
            self.app.show_error("something is still running (stop it on the Run screen, 3)")
            return
        try:
            self.open_lesson(load(event.option.id or ""))
        except WorkbenchError as exc:
            self.app.show_error(exc)

    def open_lesson(self, lesson: Lesson, student: str | None = None,
                    overrides: dict[str, str] | None = None) -> None:
        """Show `lesson` at the student's first step not done; restore what the steps done
        before left behind (a cluster, a load) on the session's thread."""
        session = self.app.session
        if self.runner is not None:
            self.runner.close()
        self.runner = LessonRunner(lesson, session, student=student, overrides=overrides,
                                   say=self._hear)
        session.cleanups.append(self.runner.close)
        self.done = self.runner.resume()
        first = next((i for i, s in enumerate(lesson.steps) if s.id not in self.done), len(lesson.steps) - 1)
        self.position = first
        self.said.clear()
        before = [s for s in lesson.steps[:first]
                  if s.id in self.done and s.action in ("start", "load", "set")]
        if before and any(s.action != "set" for s in before):
            runner = self.runner

            def restore(_session) -> None:
                for step in lesson.steps[:first]:
                    if step.id in self.done:
                        _session.activity = f"restoring step {step.id} ..."
                        runner.restore(step)
                _session.activity = f"restored: step {first + 1} of {len(lesson.steps)} is next (n)"

            session.start_task(restore)
        else:
            for step in before:
                self.runner.restore(step)
        self._shown = None
        self._show_mode()

    def _hear(self, line: str) -> None:
        """What the runner says, on the session's thread: during a step, less its title and its
        text, which the pane shows above (the text as Markdown; said, it was the raw source)."""
        runner, busy = self.runner, self._busy_step
        if runner is not None and busy is not None:
            step = runner.lesson.steps[busy]
            if line in ("", step.text, f"[{busy + 1}/{len(runner.lesson.steps)}] {step.title}"):
                return
        self.said.append(line)

    def _show_mode(self) -> None:
        picking = self.runner is None
        self.query_one("#lesson-list").display = picking
        self.query_one("#lesson-pane").display = not picking
        # The shown one has the focus: a hidden list (height 0) kept it, and PageDown on it
        # crashed Textual's OptionList (KeyError in _move_page); the pane scrolls the step's text.
        self.query_one("#lesson-list" if picking else "#lesson-pane").focus()

    # -- drawing ------------------------------------------------------------------------------

    def refresh_view(self) -> None:
        session = self.app.session
        run = session.current
        status = self.query_one(RunStatus)
        if run is None:
            status.update(session.activity or "no run yet: n does the step shown")
        else:
            status.show(run, None, session.activity if run.finished.is_set() else "")
            state = run.state
            # once over, the chart's headline is the run's own mean, the lab report's figure
            final = run.result.throughput if run.finished.is_set() and run.result is not None else None
            if state is not None and (state.seq != self._seq or final != self._final):
                self._seq, self._final = state.seq, final
                self.query_one(ThroughputChart).show(state, overall=final)
                self.query_one(OpTable).show(state, state.paced)
        if self._busy_step is not None and not session.busy:
            self._step_finished()
        self._draw_step()

    def _draw_step(self) -> None:
        runner = self.runner
        if runner is None:
            return
        lesson, step = runner.lesson, runner.lesson.steps[self.position]
        record = self.done.get(step.id)
        key = (self.position, record, len(self.said), self._busy_step)
        if key == self._shown:
            return
        self._shown = key
        head = f"{lesson.title}\n[{self.position + 1}/{len(lesson.steps)}] {step.title}"
        if self.position == 0 and lesson.intro:
            head += "\n"
        self.query_one("#step-head", Static).update(head)
        text = step.text
        if self.position == 0 and lesson.intro:
            text = f"{lesson.intro}\n\n---\n\n{step.text}"
        self.query_one("#step-text", Markdown).update(text)
        self.query_one("#step-verdicts", Static).update("\n".join(self._verdicts(step, record)))
        if self._scroll_to_verdicts:  # a step just done: its verdicts, under a long text, in view
            self._scroll_to_verdicts = False
            self.call_after_refresh(self.query_one("#lesson-pane").scroll_end, animate=False)

    def _verdicts(self, step: Step, record) -> list[str]:
        if self._busy_step == self.position:
            return ["… this step is going on:", *self.said[-8:]]
        if record is None:
            return [f"n: {_what(step)}"]
        lines = []
        for check in record.checks:
            lines += verdict_lines(check)
        for number, graded in enumerate(self.runner.questions(step, record) if self.runner else [], 1):
            lines.append(f"Question {number}: {graded.question.ask}")
            lines += [f"  {i}. {choice}" for i, choice in enumerate(graded.question.choices, 1)]
            lines += graded.lines()
            if graded.attempts and not graded.locked:  # "not right: 1 attempt left": the app's key
                lines[-1] += " (a)"
        last = self.position == len(self.runner.lesson.steps) - 1 if self.runner else True
        lines.append("")
        lines.append("The lesson is done." if last else "n: next step")
        return lines

    # -- keys ---------------------------------------------------------------------------------

    def _opened(self) -> LessonRunner | None:
        """The lesson open; on the list, before one is opened, n, b and a say how to open one."""
        if self.runner is None:
            self.notify("open a lesson first: pick one in the list, then enter", severity="warning")
        return self.runner

    def _still_going_on(self) -> bool:
        """Says so while the session is busy (a step, or the steps done before being restored)."""
        if not self.app.session.busy:
            return False
        if self._busy_step is not None:
            self.notify(f"step {self._busy_step + 1} is still going on: its verdicts come when it ends "
                        "(or stop it on the Run screen, 3)")
        else:
            self.notify("still going on: " + (self.app.session.activity or "a task of the session")
                        + " (wait for it, or stop it on the Run screen, 3)")
        return True

    def action_next(self) -> None:
        runner = self._opened()
        if runner is None or self._still_going_on():
            return
        step = runner.lesson.steps[self.position]
        if step.id in self.done:
            if self.position + 1 < len(runner.lesson.steps):
                self.position += 1
            return
        position = self.position
        self.said.clear()
        self._busy_step = position

        def do(_session) -> None:
            _session.activity = f"step {position + 1}: {step.title}"
            runner.do_step(position, step)
            _session.activity = f"step {position + 1} done"

        self.app.session.start_task(do)

    def _step_finished(self) -> None:
        self._busy_step = None
        self._scroll_to_verdicts = True
        self.done = self.runner.resume() if self.runner else {}
        if self.app.session.error:
            self.app.show_error(self.app.session.error)

    def action_back(self) -> None:
        if self._opened() is not None and self.position > 0:
            self.position -= 1

    def action_list(self) -> None:
        if self.app.session.busy:
            self.app.show_error("the step is still going on (wait for it, or stop it on the Run screen, 3)")
            return
        if self.runner is not None:
            runner = self.runner
            self.runner = None
            self.app.session.start_task(lambda _session: runner.close())
        self._show_mode()

    def action_answer(self) -> None:
        runner = self._opened()
        if runner is None:
            return
        step = runner.lesson.steps[self.position]
        record = self.done.get(step.id)
        if not step.questions:
            self.app.show_error("this step asks no question")
            return
        if record is None:
            self.app.show_error("do the step first (n), then answer")
            return
        graded = runner.questions(step, record)
        number = next((n for n, g in enumerate(graded, 1) if not g.locked), None)
        if number is None:
            self.app.show_error("every question of this step is answered and locked")
            return

        def answered(value: str | None) -> None:
            if value is None:
                return
            try:
                after = runner.answer(step, number, value)
            except WorkbenchError as exc:
                self.app.show_error(exc)
                return
            self.done = runner.resume()
            question = after.question
            if after.right is True:
                self.notify(f"✓ right (question {number} is locked)")
            elif after.right is False and after.locked:
                self.notify(f"✗ locked; the answer is {question.answer}: "
                            f"{question.choices[question.answer - 1]}", severity="warning")  # type: ignore[operator,index]
            elif after.right is False:
                self.notify(f"✗ not right: {after.left} attempt{'s' if after.left > 1 else ''} left (a)",
                            severity="warning")
            else:
                self.notify(f"answer to question {number} recorded")

        self.app.push_screen(AnswerPrompt(number, graded[number - 1]), answered)


def _what(step: Step) -> str:
    if step.action == "none":
        return "next step (this one only asks)" if step.questions else "next step (this one only reads)"
    if step.measures:
        props = " ".join(f"{k}={v}" for k, v in step.properties.items())
        return f"{step.action} {step.workload} {props}".strip()
    if step.action == "start":
        return f"start {step.cluster}"
    if step.node:
        return f"{step.action} {step.node}"
    return step.action
