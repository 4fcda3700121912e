"""The answer dialog of the Lessons screen: one question, its choices wrapped to the terminal's
width (scrolled when they are longer than it is high), the attempts made and how many are left.

It only reads the answer: the lesson runner records it, grades it from the lesson file and says
whether the question is locked (lessons/answers.py). Its own footer names its own keys, enter and
escape: the Lessons screen's keys (n, b, a, l) neither show nor act while it is open, and letters
go into the box. The box is the one widget that takes the focus (tab stays on it); page up and
page down scroll a question longer than the dialog.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, Static

from workbench.lessons.answers import Graded


class AnswerPrompt(ModalScreen[str | None]):
    """One question: a choice's number, or a free text; escape leaves it unanswered."""

    # priority: the box's own enter (not shown) would otherwise hide this one from the footer
    BINDINGS = [Binding("enter", "submit", "Submit", key_display="Enter", priority=True),
                Binding("escape", "dismiss", "Cancel", key_display="Esc"),
                Binding("pageup", "scroll('page_up')", "Scroll up", show=False),
                Binding("pagedown", "scroll('page_down')", "Scroll down", show=False)]

    def __init__(self, number: int, graded: Graded) -> None:
        super().__init__()
        self.number, self.graded = number, graded

    def compose(self) -> ComposeResult:
        q, graded = self.graded.question, self.graded
        if q.free:
            hint = "your answer, then enter (one attempt: it cannot be changed)"
        else:
            tries = graded.allowed - len(graded.attempts)
            left = ("one attempt: it locks" if graded.allowed == 1 else "the last attempt" if tries == 1
                    else f"{tries} attempts left")
            hint = f"your choice, 1-{len(q.choices)}, then enter ({left})"
        with Vertical(classes="dialog"):
            # not focusable: tab took the focus to it, where nothing showed it (page up/down scroll it)
            with VerticalScroll(id="answer-text", can_focus=False):
                yield Static(f"Question {self.number}: {q.ask}", id="answer-ask")
                for i, choice in enumerate(q.choices, 1):
                    yield Static(f"{i}. {choice}", classes="answer-choice")
                if graded.attempts:
                    yield Static("\n".join(line.strip() for line in graded.lines()), id="answer-before")
            yield Input(placeholder=hint, id="answer-input")
            yield Label("", id="answer-error")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#answer-input", Input).focus()

    async def action_submit(self) -> None:
        await self.query_one("#answer-input", Input).action_submit()

    def action_scroll(self, where: str) -> None:
        getattr(self.query_one("#answer-text", VerticalScroll), f"scroll_{where}")()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        choices = self.graded.question.choices
        if choices and value not in {str(i) for i in range(1, len(choices) + 1)}:
            self.query_one("#answer-error", Label).update(
                f"✗ {value!r}: give the number of a choice, 1 to {len(choices)}")
            return
        if not value:
            self.query_one("#answer-error", Label).update("✗ write an answer, or escape to leave it")
            return
        self.dismiss(value)
