"""A class's lab reports, graded from the lesson file: `workbench lesson class DIR`.

`read_reports()` reads every JSON file of a folder and says why it skips each one that is not a
usable lab report (not JSON, cut short, another format, a field missing, an older report of the
same student than another one, two different ones of the same time) and which reports no longer
match their digest (edited by hand: they are graded, and marked). `lessons_of()` finds the lesson
file each lesson is graded from (one given with --lesson, else found by the lesson's name), and
`grade_report()` grades one report from it: the checks judged again over the report's figures,
the attempts at each question against the file's answers. class_page.py writes what it gives.

SCORE says how the score is counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.lessons.answers import Graded, grade
from workbench.lessons.model import Lesson
from workbench.lessons.report import FORMAT, digest, report_attempts
from workbench.lessons.runner import judge

SCORE = ("score = checks passed + multiple-choice questions answered right on the first attempt; "
         "possible = the lesson's checks + its multiple-choice questions (a step not done scores 0; "
         "free-text answers are not scored: they are on the class page for the teacher to read)")


@dataclass(frozen=True)
class Handed:
    """A usable lab report from the folder."""

    path: Path
    data: dict
    intact: bool  # its digest matches what it holds

    @property
    def student(self) -> str:
        return self.data["student"]

    @property
    def restarts(self) -> list[str]:
        """When the student started the lesson over (`lesson run --restart`), as the report says."""
        return [str(r.get("at", "?")) if isinstance(r, dict) else "?" for r in self.data["restarts"]]


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

    def row(self) -> list[object]:
        """Its cells of the grade CSV, from step to possible."""
        return [self.step, "yes" if self.done else "no", self.passed, self.failed, self.unjudged,
                self.right, self.wrong, self.unanswered, self.attempts, self.score, self.possible]


def _problem(data: object) -> str | None:
    """Why a JSON document is not a usable lab report, or None."""
    if not isinstance(data, dict) or not str(data.get("format", "")).startswith("workbench-lab-report/"):
        return f'not a lab report (no "format": "{FORMAT}")'
    if data["format"] != FORMAT:
        return (f"a lab report of another format ({data['format']}; this workbench reads {FORMAT}): "
                "write it again with `workbench lesson report`")
    for key, kind in (("lesson", str), ("student", str), ("made_at", str), ("steps", list), ("digest", str),
                      ("runs", list), ("restarts", list)):
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
    """The usable lab reports of a folder (in name order) and every JSON file skipped, with why
    (in name order). Of a student's reports of one lesson the newest (made_at) counts, whatever
    the files' names: the others are skipped naming it; two different reports made at the same
    second are both skipped (which counts cannot be told)."""
    usable: list[Handed] = []
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
        if why is not None:
            skipped.append((path, why))
            continue
        usable.append(Handed(path, data, data["digest"] == digest(data)))
    reports = []
    for r in usable:
        same = [o for o in usable if (o.data["lesson"], o.student) == (r.data["lesson"], r.student)]
        newest = max(o.data["made_at"] for o in same)
        kept = [o for o in same if o.data["made_at"] == newest]
        whose = f"{r.student} in {r.data['lesson']}"
        unclear = any(o.data != kept[0].data for o in kept)
        if r not in kept:
            used = (f"newer: {', '.join(o.path.name for o in kept)}, made at {newest}" if unclear else
                    f"{kept[0].path.name}, made {newest}, is used")
            why = f"an older report of {whose} (made {r.data['made_at']}; {used})"
        elif unclear:
            others = ", ".join(o.path.name for o in kept if o is not r)
            why = (f"one of {len(kept)} different reports of {whose} made at {newest} (and {others}): "
                   "none of them is graded (ask for one)")
        elif r is not kept[0]:
            why = f"the same report of {whose} as {kept[0].path.name} (which is used)"
        else:
            reports.append(r)
            continue
        skipped.append((r.path, why))
    return reports, sorted(skipped)


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


def graded_with(lesson: Lesson) -> str:
    """The lesson file that graded a class, as the page, the grade CSV and the command name it."""
    return str(lesson.path.resolve())
