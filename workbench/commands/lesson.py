"""`workbench lesson`: guided live experiments for a class (presets/lessons/*.toml + *.md).

A lesson is steps: text to read, an action (start a cluster, load, run with given properties,
change the target or lanes during a run, freeze or kill a node), checks that read the figures the
student measured and say what they mean, and questions. `show` checks a lesson file (one line
per mistake, with its line number) and prints its steps; `run` runs it, keeping each student's
progress, figures, verdicts and answers in the run store, so running it again resumes where it
stopped (`--restart` does every step again and keeps every answer). `answer` answers a question
from the shell (the app's `a` does the same): a question takes one answer (or `attempts = N`),
every attempt is kept with its time, and the right answer is shown only once it is locked.
`report` writes a student's lab report (no answer key in it); `class` grades a class's lab
reports from the lesson file. `figures` lists what a check can read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench import interrupts
from workbench.commands.bench import add_store_arguments
from workbench.config import catalog
from workbench.errors import WorkbenchError
from workbench.lessons import checks
from workbench.lessons.model import Lesson, LessonError, load


def register(subparsers) -> None:
    top = subparsers.add_parser("lesson", help="guided lessons for a class: live runs, checks on "
                                "the student's own figures", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="lesson_command", metavar="ACTION", required=True)
    p = sub.add_parser("list", help="the lessons there are")
    p.set_defaults(func=list_command)
    p = sub.add_parser("show", help="check a lesson file and print its steps")
    p.add_argument("lesson", help="a lesson's name or a .toml file")
    p.set_defaults(func=show_command)
    p = sub.add_parser("run", help="run (or resume) a lesson")
    p.add_argument("lesson", help="a lesson's name or a .toml file")
    p.add_argument("--student", help="whose progress this is (default: your user name)")
    p.add_argument("--restart", action="store_true", help="start over: every step is done again (your "
                   "earlier runs stay in the store, and every answer you gave stays: a locked question "
                   "stays locked; the lab report lists the restart)")
    p.add_argument("-p", dest="props", action="append", default=[], metavar="KEY=VALUE",
                   help="a property over the lesson's [properties] (a step's own settings still win; "
                   "e.g. maxexecutiontime=3 "
                   "for a shorter class); STEP:KEY=VALUE sets it for one step, over the step's own "
                   "(e.g. c_warm:maxexecutiontime=5 in cassandra-vs-hbase)")
    p.add_argument("--no-tui", action="store_true", help="print the steps, figures and checks instead of "
                   "opening the app (answer the questions with `workbench lesson answer`)")
    add_store_arguments(p, recording=False)
    p.set_defaults(func=run_command)
    p = sub.add_parser("answer", help="answer a question of a step done (as `a` does in the app)",
                       description="Record an attempt at a question of a step done. A multiple-choice "
                       "question takes one answer (or as many as its attempts = N) and locks once "
                       "it is right or out of attempts; only then is the right answer shown. A "
                       "free-text question is answered once.")
    p.add_argument("lesson", help="a lesson's name or a .toml file")
    p.add_argument("step", help="the step's id (workbench lesson show NAME lists them)")
    p.add_argument("number", type=int, help="the question's number in the step, from 1")
    p.add_argument("answer", help="the number of your choice, or your text (quoted)")
    p.add_argument("--student", help="whose answer (default: your user name)")
    add_store_arguments(p, recording=False)
    p.set_defaults(func=answer_command)
    p = sub.add_parser("report", help="a student's lab report: self-contained HTML and JSON")
    p.add_argument("lesson", help="a lesson's name or a .toml file")
    p.add_argument("--student", help="whose report (default: your user name; refused if that "
                   "student has no progress in the lesson)")
    p.add_argument("--out", default="results", help="folder for the report (default results/)")
    add_store_arguments(p, recording=False)
    p.set_defaults(func=report_command)
    p = sub.add_parser("class", help="grade a class's JSON lab reports from the lesson file: the class "
                       "table and a grade CSV", description=CLASS_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", help="the folder holding the students' <lesson>-<student>.json files")
    p.add_argument("--out", help="folder for grades-<lesson>.csv, class-<lesson>.html and "
                   "class-<lesson>.csv (default: the same folder)")
    p.add_argument("--lesson", action="append", default=[], metavar="FILE",
                   help="the lesson file to grade with (a lesson of your own, or an edited copy: it "
                   "grades the reports of its lesson's name, else those with its steps; a file that "
                   "fits no report is refused; default: the lesson of the reports' name, as "
                   "`workbench lesson list` finds it)")
    p.set_defaults(func=class_command)
    p = sub.add_parser("figures", help="the figures a check can read")
    p.set_defaults(func=figures_command)


CLASS_HELP = """Grade the lab reports (JSON) a class handed in, from the lesson file itself (found
by the lesson's name in each report, or given with --lesson: a file given grades the reports of
its lesson's name, else those whose steps are its steps, and one that fits none is refused, exit
2): the checks are judged again on the report's figures, the attempts at each question against
the file's answers. The file that graded each lesson is printed, and named on the page and in
the grade CSV. Writes, per lesson:

  grades-<lesson>.csv   for a gradebook: one row per student x step, then a row "total" per
                        student: done, checks_passed, checks_failed, checks_unjudged,
                        answers_right, answers_wrong, unanswered, attempts, score, possible,
                        restarts, report, lesson_file
  class-<lesson>.html   the same table, who has not finished which step and when each
                        student started over, every answer (free texts too; the attempts
                        counted apart from the choices given), every student's figures per
                        step with the class's spread
  class-<lesson>.csv    every figure: student, step, figure, value

A cell a spreadsheet would take for a formula (a name starting with =, +, -, @) is written with
a ' before it.

score = checks passed + multiple-choice questions answered right on the first attempt;
possible = the lesson's checks + its multiple-choice questions (a step not done scores 0;
free-text answers are not scored: the teacher reads them on the page).

A JSON file that is not a usable lab report is named on stderr with why, one line each (exit 2
when none is usable). Of a student's two reports the newer (made_at) counts and the other is
named; two different ones made at the same second are both skipped. A report whose figures,
verdicts or answers no longer match its digest (edited after `workbench lesson report` wrote it)
is graded, named on stderr, and marked "digest mismatch" in the table and the CSV (report
column); its figures are shown, and left out of the class's mean, sd, min and max.
"""


def find(name: str) -> Lesson:
    """A lesson by name (the user's folders, then the shipped ones) or by file."""
    path = Path(name)
    if path.suffix == ".toml" or path.exists():
        return load(path)
    found = catalog.available("lessons").get(name)
    if found is None:
        names = ", ".join(catalog.available("lessons")) or "none"
        raise WorkbenchError(f"no lesson named {name!r}", f"lessons: {names}; or give a .toml file")
    return load(found)


def list_command(args: argparse.Namespace) -> int:
    for entry in catalog.entries("lessons"):
        try:
            lesson = load(entry.path)
        except LessonError as exc:
            print(f"{entry.name:<26} (broken: {exc.problems[0].what}; workbench lesson show {entry.path})")
            continue
        where = "" if entry.shipped else f"  [{entry.origin}]"
        needs = ", ".join(f"{c.preset} {c.memory}" for c in lesson.clusters) or "no server"
        print(f"{entry.name:<26} {lesson.minutes:>3g} min  {needs:<22} {lesson.title}{where}")
    return 0


def show_command(args: argparse.Namespace) -> int:
    try:
        lesson = find(args.lesson)
    except LessonError as exc:
        for line in exc.lines():
            print(line, file=sys.stderr)
        return 2
    print(f"{lesson.title} ({lesson.name}, about {lesson.minutes:g} minutes): {lesson.path}")
    print(f"goal: {lesson.goal}")
    for need in lesson.clusters:
        print(f"starts {need.describe()}")
    for number, step in enumerate(lesson.steps, 1):
        what = step.kind
        if step.measures:
            what += f" {step.workload} " + " ".join(f"{k}={v}" for k, v in step.properties.items())
        elif step.action == "start":
            what += f" {step.cluster}"
        elif step.node:
            what += f" {step.node}"
        print(f"{number:>2}. {step.id:<18} {step.title}: {what.strip()}")
        for during in step.during:
            print(f"      {during.describe()}")
        for check in step.checks:
            print(f"      check: {check.expect.text}")
        for question in step.questions:
            kind = f"{len(question.choices)} choices" if question.choices else "free text"
            if question.attempts > 1:
                kind += f", {question.attempts} attempts"
            print(f"      question ({kind}): {question.ask}")
    return 0


def run_command(args: argparse.Namespace) -> int:
    from workbench.lessons.runner import check_overrides

    lesson = find(args.lesson)
    overrides = _overrides(args.props)
    check_overrides(lesson, overrides)  # a bad -p is refused before anything runs or is shown
    if not args.no_tui and sys.stdout.isatty() and sys.stdin.isatty():
        from workbench.ui.launch import open_lesson

        if args.restart:
            from workbench.drive.session import Session
            from workbench.lessons.runner import LessonRunner

            LessonRunner(lesson, Session(store=args.store), student=args.student).restart()
        session = open_lesson(lesson, args.student, overrides, store=args.store)
        if session.error:
            print(f"workbench: error: {session.error}", file=sys.stderr)
            return 2
        return 0
    from workbench.drive.session import Session
    from workbench.lessons.runner import LessonRunner

    session = Session(store=args.store)
    runner = LessonRunner(lesson, session, student=args.student, overrides=overrides,
                          say=lambda line: print(line, flush=True))
    if args.restart and runner.restart():
        print(f"{runner.student} starts {lesson.name} over: every step is done again; every answer "
              "given is kept (a locked question stays locked) and the lab report lists the restart")
    interrupts.install()  # a Ctrl-C swallowed by a driver's clean-up still stops the lesson
    try:
        done = runner.run()
    except KeyboardInterrupt:
        print(f"workbench: lesson stopped; `workbench lesson run {args.lesson}` resumes it", file=sys.stderr)
        return 130
    verdicts = [c["passed"] for d in done for c in d.checks]
    print("")
    print(f"{lesson.name}: {len(done)} of {len(lesson.steps)} steps done; checks: "
          f"{verdicts.count(True)} passed, {verdicts.count(False)} failed, {verdicts.count(None)} not judged")
    return 0


def answer_command(args: argparse.Namespace) -> int:
    from workbench.drive.session import Session
    from workbench.lessons.runner import LessonRunner

    lesson = find(args.lesson)
    if args.step not in {s.id for s in lesson.steps}:
        raise WorkbenchError(f"lesson {lesson.name} has no step {args.step!r}",
                             f"its steps: {', '.join(s.id for s in lesson.steps)}")
    runner = LessonRunner(lesson, Session(store=args.store), student=args.student, say=lambda _: None)
    step = lesson.step(args.step)
    graded = runner.answer(step, args.number, args.answer)
    question = step.questions[args.number - 1]
    print(f"Question {args.number} of step {step.id}: {question.ask}")
    for line in graded.lines():
        print(line.strip())
    return 0


def report_command(args: argparse.Namespace) -> int:
    from workbench.lessons.report import lab_report, write_lab_report
    from workbench.lessons.runner import default_student

    lesson = find(args.lesson)
    report = lab_report(lesson, args.student or default_student(), args.store)
    html_path, json_path = write_lab_report(report, lesson, Path(args.out))
    print(f"{lesson.name}: {report['done']} of {report['of']} steps done by {report['student']}")
    print(f"wrote {html_path} and {json_path}")
    return 0


def class_command(args: argparse.Namespace) -> int:
    from workbench.lessons.class_page import class_table
    from workbench.lessons.grades import graded_with, lessons_of, read_reports

    folder = Path(args.folder)
    if not folder.is_dir():
        raise WorkbenchError(f"{folder} is not a folder", "give the folder of the students' lab reports")
    given = [find(file) for file in args.lesson]
    reports, skipped = read_reports(folder)
    for path, why in skipped:
        print(f"workbench: skipped {path}: {why}", file=sys.stderr)
    if not reports:
        named = f"; skipped {', '.join(p.name for p, _ in skipped)}" if skipped else ""
        raise WorkbenchError(f"no usable lab report in {folder}{named}",
                             "each student writes one with `workbench lesson report NAME` (the .json file)")
    lessons = lessons_of(reports, given, find)
    for report in reports:
        if not report.intact:
            print(f"workbench: {report.path}: its figures, verdicts or answers do not match its digest "
                  "(edited after `workbench lesson report` wrote it): graded, marked \"digest mismatch\"",
                  file=sys.stderr)
    for name, lesson in sorted(lessons.items()):
        print(f"{name}: graded with {graded_with(lesson)}")
    for html_path, grades_path, csv_path in class_table(reports, lessons, Path(args.out or folder)):
        print(f"wrote {grades_path}, {html_path} and {csv_path}")
    return 0


def _overrides(props: list[str]) -> dict[str, str]:
    out = {}
    for item in props:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise WorkbenchError(f"-p {item!r} is not KEY=VALUE", "write -p maxexecutiontime=3")
        out[key.strip()] = value.strip()
    return out


def figures_command(args: argparse.Namespace) -> int:
    print("A check reads STEP.FIGURE, STEP being the id of a load or run step. Latencies in ms;")
    print("read.p99 is response time (from the intended start), read.service.p99 from the send.")
    for path in checks.figure_paths():
        unit = checks.unit(path)
        print(f"  {path}" + (f"  ({unit})" if unit else ""))
    return 0
