"""`workbench lesson`: guided live experiments for a class (presets/lessons/*.toml + *.md).

A lesson is steps: text to read, an action (start a cluster, load, run with given properties,
change the target or lanes during a run, freeze or kill a node), checks that read the figures the
student measured and say what they mean, and questions. `show` checks a lesson file (one line
per mistake, with its line number) and prints its steps; `run` runs it, keeping each student's
progress, figures, verdicts and answers in the run store, so running it again resumes where it
stopped. `figures` lists what a check can read.
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
    p.add_argument("--restart", action="store_true", help="start over (your earlier runs stay in the store)")
    p.add_argument("-p", dest="props", action="append", default=[], metavar="KEY=VALUE",
                   help="a property over the lesson's [properties] (a step's own settings still win; "
                   "e.g. maxexecutiontime=3 "
                   "for a shorter class); STEP:KEY=VALUE sets it for one step, over the step's own "
                   "(e.g. c_warm:maxexecutiontime=5 in cassandra-vs-hbase)")
    p.add_argument("--no-tui", action="store_true", help="print the steps, figures and checks instead of "
                   "opening the app (questions stay unanswered)")
    add_store_arguments(p, recording=False)
    p.set_defaults(func=run_command)
    p = sub.add_parser("report", help="a student's lab report: self-contained HTML and JSON")
    p.add_argument("lesson", help="a lesson's name or a .toml file")
    p.add_argument("--student", help="whose report (default: your user name)")
    p.add_argument("--out", default="results", help="folder for the report (default results/)")
    add_store_arguments(p, recording=False)
    p.set_defaults(func=report_command)
    p = sub.add_parser("class", help="a class's table from the students' JSON lab reports")
    p.add_argument("folder", help="the folder holding the students' <lesson>-<student>.json files")
    p.add_argument("--out", help="folder for class-<lesson>.html and .csv (default: the same folder)")
    p.set_defaults(func=class_command)
    p = sub.add_parser("figures", help="the figures a check can read")
    p.set_defaults(func=figures_command)


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
        print(f"starts {need.preset} (needs {need.memory} of memory)")
    for number, step in enumerate(lesson.steps, 1):
        what = step.action if step.action != "none" else "read"
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
            print(f"      question ({kind}): {question.ask}")
    return 0


def run_command(args: argparse.Namespace) -> int:
    lesson = find(args.lesson)
    if not args.no_tui and sys.stdout.isatty() and sys.stdin.isatty():
        from workbench.ui.launch import open_lesson

        if args.restart:
            from workbench.drive.session import Session
            from workbench.lessons.runner import LessonRunner

            LessonRunner(lesson, Session(store=args.store), student=args.student).forget()
        session = open_lesson(lesson, args.student, _overrides(args.props), store=args.store)
        if session.error:
            print(f"workbench: error: {session.error}", file=sys.stderr)
            return 2
        return 0
    from workbench.drive.session import Session
    from workbench.lessons.runner import LessonRunner

    session = Session(store=args.store)
    runner = LessonRunner(lesson, session, student=args.student, overrides=_overrides(args.props),
                          say=lambda line: print(line, flush=True))
    if args.restart:
        runner.forget()
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


def report_command(args: argparse.Namespace) -> int:
    from workbench.lessons.report import lab_report, write_lab_report
    from workbench.lessons.runner import default_student

    lesson = find(args.lesson)
    report = lab_report(lesson, args.student or default_student(), args.store)
    html_path, json_path = write_lab_report(report, Path(args.out))
    print(f"{lesson.name}: {report['done']} of {report['of']} steps done by {report['student']}")
    print(f"wrote {html_path} and {json_path}")
    return 0


def class_command(args: argparse.Namespace) -> int:
    from workbench.lessons.report import class_table, read_reports

    folder = Path(args.folder)
    if not folder.is_dir():
        raise WorkbenchError(f"{folder} is not a folder", "give the folder of the students' lab reports")
    reports = read_reports(folder)
    if not reports:
        raise WorkbenchError(f"no lab report in {folder}",
                             "each student writes one with `workbench lesson report NAME` (the .json file)")
    for html_path, csv_path in class_table(reports, Path(args.out or folder)):
        print(f"wrote {html_path} and {csv_path}")
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
