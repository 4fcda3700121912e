"""Each student's progress through a lesson, kept in the run store beside the runs it measured.

One row of the store's `lesson_steps` table per lesson x student x step done: its place in the
lesson, the run it measured, its figures, the verdicts of its checks and the answers given, so
that a lesson closed halfway resumes where it stopped and its lab report can be written later.
The table is part of the store's schema (version 3, made by the store's migrations when it opens
an older file); what is in it is this module's business: the store only lends its connection and
its transactions.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from workbench.results.store import RunStore, json_text


@dataclass(frozen=True)
class LessonStep:
    """One step of a lesson as a student did it (`workbench lesson run`)."""

    step: str
    position: int  # its place in the lesson, from 0
    run_id: int | None  # the run it measured, when it measured one
    figures: dict[str, float]  # checks.py's names -> values
    checks: list[dict[str, Any]]  # per check: expect, verdict (true/false/null), values, sentence
    answers: dict[str, Any]  # question number (from 1) -> the choice number or the text
    updated_at: float = 0.0


def lesson_steps(store: RunStore, lesson: str, student: str) -> list[LessonStep]:
    """The steps of a lesson this student has done, in lesson order."""
    rows = store.conn.execute(
        "SELECT step, position, run_id, figures, checks, answers, updated_at FROM lesson_steps "
        "WHERE lesson = ? AND student = ? ORDER BY position", (lesson, student)).fetchall()
    return [LessonStep(step, position, run_id, json.loads(figures), json.loads(checks),
                       json.loads(answers), updated)
            for step, position, run_id, figures, checks, answers, updated in rows]


def save_lesson_step(store: RunStore, lesson: str, student: str, done: LessonStep) -> None:
    """Record a step done (or its answers since), replacing what was recorded of it before."""
    with store.transaction():
        store.conn.execute(
            "INSERT OR REPLACE INTO lesson_steps (lesson, student, step, position, run_id, figures, "
            "checks, answers, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (lesson, student, done.step, done.position, done.run_id, json_text(done.figures),
             json_text(done.checks), json_text(done.answers), time.time()))


def forget_lesson(store: RunStore, lesson: str, student: str) -> int:
    """Start the lesson over for this student (their runs stay in the store): how many steps
    were forgotten."""
    with store.transaction():
        return store.conn.execute("DELETE FROM lesson_steps WHERE lesson = ? AND student = ?",
                                  (lesson, student)).rowcount
