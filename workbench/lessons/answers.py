"""A question's attempts: recorded with their time, locked, and graded from the lesson file.

A multiple-choice question takes `attempts` answers (1 unless the lesson file says
`attempts = N`); it is locked once it was answered right or its last attempt was used, and only
then is its right answer shown. A free-text question is answered once and never graded. The
student's progress and lab report keep the attempts, never the key: whoever grades them (the
app, `workbench lesson answer`, `workbench lesson class`) reads the key from the lesson file.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from workbench.lessons.model import Question


@dataclass(frozen=True)
class Attempt:
    given: int | str  # a choice's number (from 1), or a free text
    at: float  # when, seconds since the epoch

    def as_dict(self) -> dict:
        return {"given": self.given, "at": self.at}


def attempts_of(raw: Any, when: float = 0.0) -> list[Attempt]:
    """A question's attempts as the progress table keeps them: a list of {"given", "at"}; an
    older record's single answer (a value, or None for none) counts as one attempt at `when`."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [Attempt(raw, when)]
    return [Attempt(a["given"], float(a.get("at") or when)) for a in raw
            if isinstance(a, dict) and a.get("given") is not None]


def stamp(at: float) -> str:
    """An attempt's time as a lab report writes it: local time with its UTC offset."""
    return datetime.datetime.fromtimestamp(at).astimezone().isoformat(timespec="seconds")


def is_right(question: Question, given: Any) -> bool | None:
    """Whether `given` is the question's right choice; None for a free-text question."""
    if question.free:
        return None
    try:
        return int(given) == question.answer
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Graded:
    """A question's state after its attempts."""

    question: Question
    attempts: tuple[Attempt, ...]  # the ones that count: at most question.attempts

    @property
    def answered(self) -> bool:
        return bool(self.attempts)

    @property
    def right(self) -> bool | None:
        """Answered right (on any attempt); None: free text, or not answered yet."""
        if self.question.free or not self.attempts:
            return None
        return any(is_right(self.question, a.given) for a in self.attempts)

    @property
    def first_right(self) -> bool:
        """Right on the first attempt: what the score counts."""
        return bool(self.attempts) and is_right(self.question, self.attempts[0].given) is True

    @property
    def locked(self) -> bool:
        """No more attempts: answered right, or every allowed attempt used (a free text: one)."""
        return self.right is True or len(self.attempts) >= self.allowed

    @property
    def allowed(self) -> int:
        return 1 if self.question.free else self.question.attempts

    @property
    def left(self) -> int:
        return 0 if self.locked else self.allowed - len(self.attempts)

    def lines(self) -> list[str]:
        """What the student sees under the question: each attempt with its mark, then the right
        answer once the question is locked, or how many attempts are left."""
        q = self.question
        if not self.attempts:
            tries = f"; {q.attempts} attempts" if not q.free and q.attempts > 1 else ""
            return [f"  (a: answer it{tries})"]
        if q.free:
            return [f"  your answer: {self.attempts[0].given}"]
        marks = ", ".join(f"{a.given} {'✓' if is_right(q, a.given) else '✗'}" for a in self.attempts)
        lines = [f"  your answer{'s' if len(self.attempts) > 1 else ''}: {marks}"]
        if self.right:
            lines.append("  right: locked")
        elif self.locked:
            lines.append(f"  locked; the answer is {q.answer}: {q.choices[q.answer - 1]}")  # type: ignore[operator,index]
        else:
            lines.append(f"  not right: {self.left} attempt{'s' if self.left > 1 else ''} left")
        return lines


def grade(question: Question, attempts: list[Attempt]) -> Graded:
    """The attempts that count (the first question.attempts of them; a free text: the first)."""
    allowed = 1 if question.free else question.attempts
    counted: list[Attempt] = []
    for attempt in attempts[:allowed]:
        counted.append(attempt)
        if is_right(question, attempt.given):
            break  # locked: nothing after a right answer counts
    return Graded(question, tuple(counted))
