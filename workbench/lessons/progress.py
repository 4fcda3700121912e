"""Each student's progress through a lesson, kept in the run store beside the runs it measured.

One row of the store's `lesson_steps` table per lesson x student x step done: its place in the
lesson, the run it measured, its figures, the verdicts of its checks and every attempt at its
questions (answers.py says which count and when a question locks), so
that a lesson closed halfway resumes where it stopped and its lab report can be written later.

A lesson started over (`restart_lesson()`) keeps every attempt: each step done is marked not done
(done = 0: its run, figures and verdicts dropped, its attempts kept, so that a locked question
stays locked when the step is done again), and the restart is a row of `lesson_restarts` (when,
and how many steps were done then) that the lab report lists. The tables are part of the store's
schema (versions 3 and 4, made by the store's migrations when it opens an older file); what is in
them is this module's business: the store only lends its connection and its transactions.
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
    done: bool = True  # False: done before a restart and not since, kept for its attempts


@dataclass(frozen=True)
class Restart:
    """A lesson started over: when, and how many of its steps were done then."""

    at: float  # seconds since the epoch
    steps_done: int


def lesson_steps(store: RunStore, lesson: str, student: str, *, kept: bool = False) -> list[LessonStep]:
    """The steps of a lesson this student has done, in lesson order; kept=True: with the steps
    done before a restart and not since (done False), for their attempts."""
    rows = store.conn.execute(
        "SELECT step, position, run_id, figures, checks, answers, updated_at, done FROM lesson_steps "
        "WHERE lesson = ? AND student = ? AND done >= ? ORDER BY position",
        (lesson, student, 0 if kept else 1)).fetchall()
    return [LessonStep(step, position, run_id, json.loads(figures), json.loads(checks),
                       _attempts(json.loads(answers), updated), updated, bool(done))
            for step, position, run_id, figures, checks, answers, updated, done in rows]


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
    """The students with progress in a lesson (a step done, an attempt kept or a restart), in name
    order."""
    return [row[0] for row in store.conn.execute(
        "SELECT student FROM lesson_steps WHERE lesson = ? UNION "
        "SELECT student FROM lesson_restarts WHERE lesson = ? ORDER BY student", (lesson, lesson))]


def save_lesson_step(store: RunStore, lesson: str, student: str, done: LessonStep) -> None:
    """Record a step done (or its answers since), replacing what was recorded of it before."""
    with store.transaction():
        store.conn.execute(
            "INSERT OR REPLACE INTO lesson_steps (lesson, student, step, position, run_id, figures, "
            "checks, answers, updated_at, done) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (lesson, student, done.step, done.position, done.run_id, json_text(done.figures),
             json_text(done.checks), json_text(done.answers), time.time(), int(done.done)))


def restart_lesson(store: RunStore, lesson: str, student: str) -> int:
    """Start the lesson over for this student: every step is to be done again, and every attempt
    at its questions is kept (their runs stay in the store too); the restart is recorded when a
    step had been done. Returns how many steps had been done."""
    with store.transaction():
        c = store.conn
        done = c.execute("SELECT count(*) FROM lesson_steps WHERE lesson = ? AND student = ? AND done = 1",
                         (lesson, student)).fetchone()[0]
        if not done:
            return 0
        c.execute("DELETE FROM lesson_steps WHERE lesson = ? AND student = ? AND answers = '{}'",
                  (lesson, student))  # nothing to keep
        c.execute("UPDATE lesson_steps SET done = 0, run_id = NULL, figures = '{}', checks = '[]', "
                  "updated_at = ? WHERE lesson = ? AND student = ?", (time.time(), lesson, student))
        c.execute("INSERT INTO lesson_restarts (lesson, student, at, steps_done) VALUES (?, ?, ?, ?)",
                  (lesson, student, time.time(), done))
    return done


def lesson_restarts(store: RunStore, lesson: str, student: str) -> list[Restart]:
    """Each time this student started the lesson over, oldest first."""
    return [Restart(at, steps) for at, steps in store.conn.execute(
        "SELECT at, steps_done FROM lesson_restarts WHERE lesson = ? AND student = ? ORDER BY at",
        (lesson, student))]
