"""A class's lab reports, graded from the lesson file: `workbench lesson class DIR`.

`read_reports()` reads every JSON file of a folder and says why it skips each one that is not a
usable lab report (not JSON, cut short, another format, a field missing, a second report of the
same student) and which reports no longer match their digest (edited by hand: they are graded,
and marked). `grade_report()` grades one report from the lesson file itself: the checks judged
again over the report's figures, the attempts at each question against the file's answers. Per
lesson, `class_table()` writes

- grades-<lesson>.csv: one row per student x step, then a total per student (step "total"):
  done, checks passed / failed / not judged, multiple-choice answers right / wrong, questions
  unanswered, attempts, score, possible, report ("ok" or "digest mismatch"), the lesson file that
  graded it (`lessons_of()`: one given with --lesson, else found by the lesson's name);
- class-<lesson>.html: the same table, who has not finished which step, every answer (free texts
  included, the right choices named), every student's figures per step with the class's spread;
- class-<lesson>.csv: every figure, tidy (student, step, figure, value).

SCORE says how the score is counted.
"""

from __future__ import annotations

import csv
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.experiments.charts import esc
from workbench.experiments.page import PAGE, html_table
from workbench.lessons.answers import Graded, grade, is_right
from workbench.lessons.model import Lesson
from workbench.lessons.report import FORMAT, digest, report_attempts, shown
from workbench.lessons.runner import judge, show_value

SCORE = ("score = checks passed + multiple-choice questions answered right on the first attempt; "
         "possible = the lesson's checks + its multiple-choice questions (a step not done scores 0; "
         "free-text answers are not scored: they are on the class page for the teacher to read)")
COLUMNS = ["student", "step", "done", "checks_passed", "checks_failed", "checks_unjudged", "answers_right",
           "answers_wrong", "unanswered", "attempts", "score", "possible", "report", "lesson_file"]


@dataclass(frozen=True)
class Handed:
    """A usable lab report from the folder."""

    path: Path
    data: dict
    intact: bool  # its digest matches what it holds

    @property
    def student(self) -> str:
        return self.data["student"]


@dataclass
class StepGrade:
    step: str
    done: bool
    passed: int = 0
    failed: int = 0
    unjudged: int = 0
    right: int = 0
    wrong: int = 0
    unanswered: int = 0
    attempts: int = 0
    score: int = 0
    possible: int = 0
    questions: list[Graded] = field(default_factory=list)

    def row(self, student: str, report: str, lesson_file: str) -> list[object]:
        return [student, self.step, "yes" if self.done else "no", self.passed, self.failed, self.unjudged,
                self.right, self.wrong, self.unanswered, self.attempts, self.score, self.possible, report,
                lesson_file]


def _problem(data: object) -> str | None:
    """Why a JSON document is not a usable lab report, or None."""
    if not isinstance(data, dict) or not str(data.get("format", "")).startswith("workbench-lab-report/"):
        return f'not a lab report (no "format": "{FORMAT}")'
    if data["format"] != FORMAT:
        return (f"a lab report of another format ({data['format']}; this workbench reads {FORMAT}): "
                "write it again with `workbench lesson report`")
    for key, kind in (("lesson", str), ("student", str), ("steps", list), ("digest", str), ("runs", list)):
        if not isinstance(data.get(key), kind):
            return f"a lab report without a usable {key!r}"
    for step in data["steps"]:
        if not isinstance(step, dict) or not isinstance(step.get("id"), str):
            return "a lab report with a step without an id"
        for key, kind in (("figures", dict), ("checks", list), ("questions", list)):
            if not isinstance(step.get(key), kind):
                return f"a lab report whose step {step['id']!r} has no usable {key!r}"
    return None


def read_reports(folder: Path) -> tuple[list[Handed], list[tuple[Path, str]]]:
    """The usable lab reports of a folder (in name order) and every JSON file skipped, with why."""
    reports: list[Handed] = []
    skipped: list[tuple[Path, str]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            skipped.append((path, f"cannot be read ({exc.strerror})"))
            continue
        except UnicodeDecodeError:
            skipped.append((path, "not a lab report (not UTF-8 text)"))
            continue
        except json.JSONDecodeError as exc:
            skipped.append((path, f"not valid JSON ({exc.msg} at line {exc.lineno}): cut short or not "
                                  "a lab report"))
            continue
        why = _problem(data)
        if why is None:
            first = next((r for r in reports if (r.data["lesson"], r.student) == (data["lesson"],
                                                                                    data["student"])), None)
            if first is not None:
                why = f"a second report of {data['student']} in {data['lesson']} ({first.path.name} is used)"
        if why is not None:
            skipped.append((path, why))
            continue
        reports.append(Handed(path, data, data["digest"] == digest(data)))
    return reports, skipped


def grade_report(lesson: Lesson, data: dict) -> list[StepGrade]:
    """Each step of the lesson file, graded on what the report holds."""
    entries = {s["id"]: s for s in data["steps"]}
    figures = {sid: s["figures"] for sid, s in entries.items() if s.get("done")}
    out = []
    for step in lesson.steps:
        entry = entries.get(step.id)
        done = bool(entry and entry.get("done"))
        graded = StepGrade(step.id, done)
        for check in step.checks:
            try:
                passed = judge(check, figures).passed if done else None
            except (TypeError, ValueError, ArithmeticError):  # a figure that is not a number
                passed = None
            graded.passed += passed is True
            graded.failed += passed is False
            graded.unjudged += passed is None
        given = entry["questions"] if entry else []
        for number, question in enumerate(step.questions):
            attempts = report_attempts(given[number]) if done and number < len(given) else []
            g = grade(question, attempts)
            graded.questions.append(g)
            graded.attempts += len(g.attempts)
            graded.unanswered += not g.answered
            if not question.free:
                graded.right += g.right is True
                graded.wrong += g.right is False
                graded.score += g.first_right
                graded.possible += 1
        graded.score += graded.passed
        graded.possible += len(step.checks)
        out.append(graded)
    return out


def total(grades: list[StepGrade]) -> StepGrade:
    out = StepGrade("total", all(g.done for g in grades))
    for name in ("passed", "failed", "unjudged", "right", "wrong", "unanswered", "attempts", "score",
                 "possible"):
        setattr(out, name, sum(getattr(g, name) for g in grades))
    return out


def lessons_of(reports: list[Handed], given: list[Lesson], find) -> dict[str, Lesson]:
    """The lesson file of every lesson the reports are of. A file given (--lesson) grades the
    reports of its lesson's name, else those whose steps are its steps (an edited copy under
    another name); a file that would grade no report, or the reports of two lessons, is refused,
    naming its lesson and the reports'. A lesson with no file given is found by its name, and
    refused, naming its reports, when it is not found."""
    names = sorted({r.data["lesson"] for r in reports})
    steps = {name: {tuple(s["id"] for s in r.data["steps"]) for r in reports if r.data["lesson"] == name}
             for name in names}
    out: dict[str, Lesson] = {}
    for lesson in given:
        if lesson.name in names and lesson.name not in out:
            out[lesson.name] = lesson
    for lesson in given:
        if out.get(lesson.name) is lesson:
            continue
        ids = tuple(s.id for s in lesson.steps)
        fits = [name for name in names if name not in out and ids in steps[name]]
        if len(fits) != 1:
            theirs = "; ".join(f"{name} (steps {', '.join(max(steps[name]))})" for name in names)
            why = "the steps of more than one" if fits else "the name or the steps of none"
            raise WorkbenchError(f"--lesson {lesson.path}: lesson {lesson.name!r} (steps {', '.join(ids)}) "
                                 f"has {why} of the reports' lessons: {theirs}",
                                 "give the lesson file the reports were written with, or its copy "
                                 "with the same steps")
        out[fits[0]] = lesson
    for name in names:
        if name in out:
            continue
        try:
            out[name] = find(name)
        except WorkbenchError as exc:
            which = ", ".join(r.path.name for r in reports if r.data["lesson"] == name)
            raise WorkbenchError(f"cannot grade {which}: lesson {name!r}: {exc.message}",
                                 "give its file with --lesson FILE.toml: the answers are graded from "
                                 "it") from None
    return out


def class_table(reports: list[Handed], lessons: dict[str, Lesson], out: Path) -> list[tuple[Path, ...]]:
    """Per lesson: grades-<lesson>.csv, class-<lesson>.html and class-<lesson>.csv."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, lesson in sorted(lessons.items()):
        mine = sorted((r for r in reports if r.data["lesson"] == name), key=lambda r: r.student)
        graded = {r.student: grade_report(lesson, r.data) for r in mine}
        grades_path, html_path, csv_path = (out / f"grades-{name}.csv", out / f"class-{name}.html",
                                            out / f"class-{name}.csv")
        with grades_path.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLUMNS)
            for r in mine:
                mark = "ok" if r.intact else "digest mismatch"
                for g in graded[r.student]:
                    w.writerow(g.row(r.student, mark, graded_with(lesson)))
                w.writerow(total(graded[r.student]).row(r.student, mark, graded_with(lesson)))
        with csv_path.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["student", "step", "figure", "value"])
            for r in mine:
                for step in r.data["steps"]:
                    for figure, value in step["figures"].items():
                        if not isinstance(value, list):  # a repeated step's runs: its mean is there
                            w.writerow([r.student, step["id"], figure, value])
        html_path.write_text(_class_html(name, lesson, mine, graded), encoding="utf-8")
        written.append((html_path, grades_path, csv_path))
    return written


def graded_with(lesson: Lesson) -> str:
    """The lesson file that graded a class, as the page, the grade CSV and the command name it."""
    return str(lesson.path.resolve())


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
                     f"{t.score} of {t.possible}", "ok" if r.intact else "digest mismatch"])
    body.append(html_table(["student", "steps done", "checks ✓", "checks ✗", "not judged", "answers ✓",
                            "answers ✗", "unanswered", "attempts", "score", "report"], rows,
                           caption="grades (grades-" + name + ".csv)"))
    body.append(f"<p class=meta>{h(SCORE)}.</p>")
    missing = [[r.student, f"{sum(g.done for g in graded[r.student])} of {len(lesson.steps)}",
                ", ".join(g.step for g in graded[r.student] if not g.done) or "-"] for r in reports]
    body.append(html_table(["student", "steps done", "not done"], missing, caption="progress"))
    body += _answers_html(lesson, reports, graded)
    body += _figures_html(lesson, reports)
    style = "<style>.answers td, .answers th { text-align: left; }</style>"
    return PAGE.format(title=h(f"{lesson.title}: the class"), body="\n".join(body) + style)


def _answers_html(lesson: Lesson, reports: list[Handed], graded: dict[str, list[StepGrade]]) -> list[str]:
    body = []
    for index, step in enumerate(lesson.steps):
        for number, question in enumerate(step.questions, 1):
            if number == 1:
                body.append(f"<h2>Answers: {esc(step.title)} ({esc(step.id)})</h2>")
            rows = []
            for r in reports:
                g = graded[r.student][index].questions[number - 1]
                given = [_given(question, a) for a in g.attempts] or ["-"]
                mark = ("" if question.free or not g.answered else
                        "✓ first attempt" if g.first_right else "✓" if g.right else "✗")
                rows.append([r.student, "; ".join(given)] + ([] if question.free else [mark]))
            key = "free text: not graded" if question.free else (
                f"the answer: {question.answer}. {question.choices[question.answer - 1]} · "  # type: ignore[operator,index]
                f"attempts allowed: {question.attempts}")
            body.append(f"<div class=answers><p><b>Question {number}:</b> {esc(question.ask)}<br>"
                        f"<span class=meta>{esc(key)}</span></p>")
            header = ["student", "answer"] if question.free else ["student", "attempts", "graded"]
            body.append(html_table(header, rows)
                        + "</div>")
    return body


def _given(question, attempt) -> str:
    if question.free:
        return str(attempt.given)
    mark = "✓" if is_right(question, attempt.given) else "✗"
    return f"{attempt.given} {mark}"


def _figures_html(lesson: Lesson, reports: list[Handed]) -> list[str]:
    body = []
    for step in lesson.steps:
        if not step.measures:
            continue
        figs = [_figures(r.data, step.id) for r in reports]
        names = [n for n in shown(lesson, step.id) if any(_number(f.get(n)) is not None for f in figs)]
        if not names:
            continue
        rows = [[r.student, *(show_value(f"x.{n}", f[n]) if _number(f.get(n)) is not None else "-"
                              for n in names)] for r, f in zip(reports, figs, strict=True)]
        for label, fn in (("mean", statistics.fmean), ("sd", _sd), ("min", min), ("max", max)):
            cells = []
            for n in names:
                values = [v for f in figs if (v := _number(f.get(n))) is not None]
                value = fn(values) if values else None
                cells.append("-" if value is None else show_value(f"x.{n}", value))
            rows.append([f"class {label}", *cells])
        body.append(f"<h2>{esc(step.title)} ({esc(step.id)})</h2>")
        body.append(html_table(["student", *names], rows))
    return body


def _figures(report: dict, step_id: str) -> dict:
    return next((s["figures"] for s in report["steps"] if s["id"] == step_id and s.get("done")), {})


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _sd(values: list[float]) -> float | None:
    return statistics.stdev(values) if len(values) > 1 else None

