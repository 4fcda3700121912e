"""Each student's progress through a lesson, kept in the run store beside the runs it measured.

One row of the store's `lesson_steps` table per lesson x student x step done: its place in the
lesson, the run it measured, its figures, the verdicts of its checks and every attempt at its
questions (answers.py says which count and when a question locks), so
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
    # question number (from 1) -> its attempts, in order: [{"given": choice number or text,
    # "at": seconds since the epoch}]
    answers: dict[str, list[dict[str, Any]]]
    updated_at: float = 0.0


def lesson_steps(store: RunStore, lesson: str, student: str) -> list[LessonStep]:
    """The steps of a lesson this student has done, in lesson order."""
    rows = store.conn.execute(
        "SELECT step, position, run_id, figures, checks, answers, updated_at FROM lesson_steps "
        "WHERE lesson = ? AND student = ? ORDER BY position", (lesson, student)).fetchall()
    return [LessonStep(step, position, run_id, json.loads(figures), json.loads(checks),
                       _attempts(json.loads(answers), updated), updated)
            for step, position, run_id, figures, checks, answers, updated in rows]


def _attempts(answers: dict, updated: float) -> dict[str, list[dict[str, Any]]]:
    """Every question's attempts; a record of an earlier version kept one answer per question
    (the value, or None before it was answered): one attempt, at the record's time."""
    out = {}
    for number, value in answers.items():
        if isinstance(value, list):
            out[number] = value
        elif value is not None:
            out[number] = [{"given": value, "at": updated}]
    return out


def lesson_students(store: RunStore, lesson: str) -> list[str]:
    """The students with progress in a lesson, in name order."""
    return [row[0] for row in store.conn.execute(
        "SELECT DISTINCT student FROM lesson_steps WHERE lesson = ? ORDER BY student", (lesson,))]


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
