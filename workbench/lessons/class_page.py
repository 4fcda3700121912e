"""A class's grades written out (`workbench lesson class DIR`), per lesson, by `class_table()`:

- grades-<lesson>.csv: one row per student x step, then a total per student (step "total"):
  done, checks passed / failed / not judged, multiple-choice answers right / wrong, questions
  unanswered, attempts, score, possible, restarts (how many times the student started the lesson
  over, keeping every answer), report ("ok" or "digest mismatch"), the lesson file that graded it;
- class-<lesson>.html: the same table, who has not finished which step and when each student
  started over, every answer (free texts
  included, the right choices named; each question's attempts counted apart from the choices
  given), every student's figures per step with the class's mean, sd, min and max (of the
  reports that match their digest: an edited report's figures are shown, and left out of them);
- class-<lesson>.csv: every figure, tidy (student, step, figure, value).

A text cell of either CSV that a spreadsheet would take for a formula (it starts with =, +, -, @,
a tab or a carriage return: a student's name is the student's to choose) is written with a single
quote before it, as OWASP's advice on CSV injection has it. A table of the page wider than the
page scrolls on its own; the page does not.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

from workbench.experiments.charts import esc
from workbench.experiments.page import PAGE, html_table
from workbench.lessons.answers import is_right
from workbench.lessons.grades import SCORE, Handed, StepGrade, grade_report, graded_with, total
from workbench.lessons.model import Lesson, Question
from workbench.lessons.report import shown
from workbench.lessons.runner import show_value

COLUMNS = ["student", "step", "done", "checks_passed", "checks_failed", "checks_unjudged", "answers_right",
           "answers_wrong", "unanswered", "attempts", "score", "possible", "restarts", "report",
           "lesson_file"]
FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula


def cell(value: object) -> object:
    """A CSV cell a spreadsheet reads as text, never as a formula."""
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA) else value


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows([cell(c) for c in row] for row in rows)


def class_table(reports: list[Handed], lessons: dict[str, Lesson], out: Path) -> list[tuple[Path, ...]]:
    """Per lesson (its name in the reports -> the file that grades it): grades-<lesson>.csv,
    class-<lesson>.html and class-<lesson>.csv."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, lesson in sorted(lessons.items()):
        mine = sorted((r for r in reports if r.data["lesson"] == name), key=lambda r: r.student)
        graded = {r.student: grade_report(lesson, r.data) for r in mine}
        grades_path, html_path, csv_path = (out / f"grades-{name}.csv", out / f"class-{name}.html",
                                            out / f"class-{name}.csv")
        rows = []
        for r in mine:
            mark = "ok" if r.intact else "digest mismatch"
            for g in [*graded[r.student], total(graded[r.student])]:
                rows.append([r.student, *g.row(), len(r.restarts), mark, graded_with(lesson)])
        _write_csv(grades_path, COLUMNS, rows)
        _write_csv(csv_path, ["student", "step", "figure", "value"],
                   [[r.student, step["id"], figure, value] for r in mine for step in r.data["steps"]
                    for figure, value in step["figures"].items()
                    if not isinstance(value, list)])  # a repeated step's runs: their mean is there
        html_path.write_text(_class_html(name, lesson, mine, graded), encoding="utf-8")
        written.append((html_path, grades_path, csv_path))
    return written


def _table(header: list[str], rows: list[list[object]], caption: str = "") -> str:
    """A table in a box of its own that scrolls sideways when the table is wider than the page."""
    return f"<div class=scroll>{html_table(header, rows, caption)}</div>"


_STYLE = """<style>
.scroll { overflow-x: auto; max-width: 100%; }
.answers td, .answers th { text-align: left; }
</style>"""


def _class_html(name: str, lesson: Lesson, reports: list[Handed], graded: dict[str, list[StepGrade]]) -> str:
    h = esc
    body = [f"<h1>{h(lesson.title)}: the class</h1>",
            f"<p class=meta>lesson {h(name)} · {len(reports)} students · graded from "
            f"{h(graded_with(lesson))}</p>"]
    edited = [r for r in reports if not r.intact]
    if edited:
        body.append("<p class=noisy>Do not match their digest (edited after `workbench lesson report` "
                    "wrote them): " + ", ".join(h(r.path.name) for r in edited) + "</p>")
    rows = []
    for r in reports:
        t = total(graded[r.student])
        rows.append([r.student, f"{sum(g.done for g in graded[r.student])} of {len(lesson.steps)}",
                     t.passed, t.failed, t.unjudged, t.right, t.wrong, t.unanswered, t.attempts,
                     f"{t.score} of {t.possible}", len(r.restarts), "ok" if r.intact else "digest mismatch"])
    body.append(_table(["student", "steps done", "checks ✓", "checks ✗", "not judged", "answers ✓",
                        "answers ✗", "unanswered", "attempts", "score", "restarts", "report"], rows,
                       caption="grades (grades-" + name + ".csv)"))
    body.append(f"<p class=meta>{h(SCORE)}.</p>")
    missing = [[r.student, f"{sum(g.done for g in graded[r.student])} of {len(lesson.steps)}",
                ", ".join(g.step for g in graded[r.student] if not g.done) or "-",
                ", ".join(r.restarts) or "-"] for r in reports]
    body.append(_table(["student", "steps done", "not done", "started over (answers kept)"], missing,
                       caption="progress"))
    body += _answers_html(lesson, reports, graded)
    body += _figures_html(lesson, reports)
    return PAGE.format(title=h(f"{lesson.title}: the class"), body="\n".join(body) + _STYLE)


def _answers_html(lesson: Lesson, reports: list[Handed], graded: dict[str, list[StepGrade]]) -> list[str]:
    body = []
    for index, step in enumerate(lesson.steps):
        for number, question in enumerate(step.questions, 1):
            if number == 1:
                body.append(f"<h2>Answers: {esc(step.title)} ({esc(step.id)})</h2>")
            rows: list[list[object]] = []
            for r in reports:
                g = graded[r.student][index].questions[number - 1]
                if question.free:
                    rows.append([r.student, str(g.attempts[0].given) if g.attempts else "-"])
                    continue
                mark = ("" if not g.answered else
                        "✓ first attempt" if g.first_right else "✓" if g.right else "✗")
                rows.append([r.student, len(g.attempts), _choices(question, g.attempts), mark])
            key = "free text: not graded" if question.free else (
                f"the answer: {question.answer}. {question.choices[question.answer - 1]} · "  # type: ignore[operator,index]
                f"attempts allowed: {question.attempts}")
            body.append(f"<div class=answers><p><b>Question {number}:</b> {esc(question.ask)}<br>"
                        f"<span class=meta>{esc(key)}</span></p>")
            header = ["student", "answer"] if question.free else ["student", "attempts", "choices given",
                                                                  "graded"]
            body.append(_table(header, rows) + "</div>")
    return body


def _choices(question: Question, attempts) -> str:
    """The choices given, in order, each marked: "1 ✗, 2 ✓"."""
    return ", ".join(f"{a.given} {'✓' if is_right(question, a.given) else '✗'}" for a in attempts) or "-"


def _figures_html(lesson: Lesson, reports: list[Handed]) -> list[str]:
    body = []
    for step in lesson.steps:
        if not step.measures:
            continue
        figs = [_figures(r.data, step.id) for r in reports]
        names = [n for n in shown(lesson, step.id) if any(_number(f.get(n)) is not None for f in figs)]
        if not names:
            continue
        rows: list[list[object]] = [
            [r.student + ("" if r.intact else " (digest mismatch)"),
             *(show_value(f"x.{n}", f[n]) if _number(f.get(n)) is not None else "-" for n in names)]
            for r, f in zip(reports, figs, strict=True)]
        counted = [f for r, f in zip(reports, figs, strict=True) if r.intact]
        for label, fn in (("mean", statistics.fmean), ("sd", _sd), ("min", min), ("max", max)):
            cells = []
            for n in names:
                values = [v for f in counted if (v := _number(f.get(n))) is not None]
                value = fn(values) if values else None
                cells.append("-" if value is None else show_value(f"x.{n}", value))
            rows.append([f"class {label}", *cells])
        body.append(f"<h2>{esc(step.title)} ({esc(step.id)})</h2>")
        body.append(_table(["student", *names], rows))
        left_out = [r.student for r, f in zip(reports, figs, strict=True) if f and not r.intact]
        if left_out:
            body.append(f"<p class=noisy>The class's mean, sd, min and max leave out the figures of "
                        f"{esc(', '.join(left_out))}: their reports do not match their digest.</p>")
    return body


def _figures(report: dict, step_id: str) -> dict:
    return next((s["figures"] for s in report["steps"] if s["id"] == step_id and s.get("done")), {})


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _sd(values: list[float]) -> float | None:
    return statistics.stdev(values) if len(values) > 1 else None
