"""`workbench lesson` as a teacher tries it (issue 44): a bad -p refused before anything runs,
`show` naming what an action-less step is, and the questions of a headless run answered from the
shell with the same locking as the app; on the memory binding (tests/data/lessons/grading.toml)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.support.inprocess import workbench
from workbench.drive.session import Session
from workbench.lessons.model import load
from workbench.lessons.progress import lesson_steps
from workbench.lessons.report import lab_report, render_lab_report
from workbench.lessons.runner import LessonRunner
from workbench.results.store import RunStore

GRADING = Path(__file__).resolve().parents[1] / "data" / "lessons" / "grading.toml"


def test_a_bad_p_is_refused_before_the_introduction_or_any_step(tmp_path):
    # 9c: `-p maxexecutiontime=abc` failed once the introduction and step 1 had been printed
    store = tmp_path / "runs.db"
    done = workbench(store, "lesson", "run", str(GRADING), "--no-tui", "--student", "t",
                     "-p", "maxexecutiontime=abc")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("workbench: error: -p maxexecutiontime=abc: step first would refuse it: "
                           "maxexecutiontime='abc' is not a whole number (write e.g. maxexecutiontime=0)\n")
    one_step = workbench(store, "lesson", "run", str(GRADING), "--no-tui", "-p", "second:threadcount=-1")
    assert one_step.returncode == 2 and one_step.stdout == ""
    assert one_step.stderr.startswith("workbench: error: -p second:threadcount=-1: step second would refuse")
    assert not store.exists() or not lesson_steps(RunStore(store), "grading", "t")


def test_show_says_what_a_step_without_an_action_is(tmp_path):
    # 9d: it was listed as "read"
    done = workbench(tmp_path / "runs.db", "lesson", "show", str(GRADING))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert " 2. think              Think about it: question" in lines
    assert ("      question (3 choices, 2 attempts): On a three-node Cassandra cluster, what can zipfian "
            "keys do that uniform keys do not, once the same hundred keys take a fifth of every "
            "request?") in lines
    assert ("      question (free text): Name a real application whose requests follow a zipfian "
            "distribution.") in lines


def test_a_headless_run_says_how_to_answer_and_the_answers_lock_as_in_the_app(tmp_path):
    store = tmp_path / "runs.db"
    done = workbench(store, "lesson", "run", str(GRADING), "--no-tui", "--student", "ann")
    assert done.returncode == 0, done.stderr
    assert (f"    (answer it, 2 attempts: workbench lesson answer {GRADING} first 1 CHOICE --student ann; "
            "or a on the app's Lessons screen)") in done.stdout
    assert f'workbench lesson answer {GRADING} think 2 "YOUR ANSWER" --student ann' in done.stdout
    assert "grading: 3 of 3 steps done; checks: 2 passed, 1 failed, 1 not judged" in done.stdout
    first = workbench(store, "lesson", "answer", str(GRADING), "think", "1", "1", "--student", "ann")
    assert first.returncode == 0 and first.stdout.splitlines() == [
        "Question 1 of step think: Which workload did the first step run?", "your answer: 1 ✗",
        "locked; the answer is 2: workloadc"]
    second = workbench(store, "lesson", "answer", str(GRADING), "think", "1", "2", "--student", "ann")
    assert second.returncode == 2 and "question 1 of step think is locked" in second.stderr
    with RunStore(store) as s:
        think = next(d for d in lesson_steps(s, "grading", "ann") if d.step == "think")
    assert [a["given"] for a in think.answers["1"]] == [1] and think.answers["1"][0]["at"] > 0


def test_a_restart_keeps_every_answer_and_the_report_and_the_class_page_show_it(tmp_path):
    # issue 52, 6: --restart erased the answers: a student shown the key restarted, answered again
    # and went from 5/8 to 8/8 with a valid digest and "ok" on the class page
    store, out = tmp_path / "runs.db", tmp_path / "reports"

    def lesson(*args):
        done = workbench(store, "lesson", *args)
        assert done.returncode == 0, done.stderr
        return done

    def answer(step, number, value):
        return workbench(store, "lesson", "answer", str(GRADING), step, str(number), value,
                         "--student", "dan")

    lesson("run", str(GRADING), "--no-tui", "--student", "dan")
    assert "locked; the answer is 2: workloadc" in answer("think", 1, "1").stdout  # shown the key
    assert answer("first", 1, "1").stdout.splitlines()[-1] == "not right: 1 attempt left"
    again = lesson("run", str(GRADING), "--no-tui", "--student", "dan", "--restart")
    assert again.stdout.splitlines()[0] == ("dan starts grading over: every step is done again; every "
                                            "answer given is kept (a locked question stays locked) and "
                                            "the lab report lists the restart")
    assert "[1/3]" in again.stdout and "grading: 3 of 3 steps done" in again.stdout
    locked = answer("think", 1, "2")
    assert locked.returncode == 2 and "question 1 of step think is locked" in locked.stderr
    assert answer("first", 1, "2").stdout.splitlines()[-2] == "your answers: 1 ✗, 2 ✓"  # its second attempt
    lesson("report", str(GRADING), "--student", "dan", "--out", str(out))
    report = json.loads((out / "grading-dan.json").read_text())
    assert [r["steps_done"] for r in report["restarts"]] == [3] and report["done"] == 3
    first, think, _ = report["steps"]
    assert [a["given"] for a in first["questions"][0]["attempts"]] == [1, 2]
    assert [a["given"] for a in think["questions"][0]["attempts"]] == [1]
    page = (out / "grading-dan.html").read_text()
    assert f"Started over 1 time: {report['restarts'][0]['at']} (3 steps done then)" in page
    lesson("class", str(out), "--lesson", str(GRADING))
    with (out / "grades-grading.csv").open() as f:
        grades = {row["step"]: row for row in csv.DictReader(f)}
    assert (grades["think"]["answers_wrong"], grades["think"]["score"], grades["total"]["restarts"],
            grades["total"]["report"]) == ("1", "0", "1", "ok")
    klass = (out / "class-grading.html").read_text()
    assert "<th>restarts</th>" in klass and f"<td>{report['restarts'][0]['at']}</td>" in klass


def test_a_lesson_started_over_and_not_done_again_keeps_its_answers_on_the_report(tmp_path):
    store = tmp_path / "runs.db"
    grading = load(GRADING)
    runner = LessonRunner(grading, Session(store=store), student="eve", say=lambda _: None)
    runner.do_step(1, grading.steps[1])
    runner.answer(grading.steps[1], 1, 1)
    assert runner.restart() == 1 and runner.restart() == 0  # nothing done since: no second restart
    assert runner.progress() == []
    refused = workbench(store, "lesson", "answer", str(GRADING), "think", "1", "2", "--student", "eve")
    assert refused.returncode == 2 and "step think is not done yet" in refused.stderr
    report = lab_report(grading, "eve", store)
    think = report["steps"][1]
    assert (report["done"], len(report["restarts"]), think["done"]) == (0, 1, False)
    assert [a["given"] for a in think["questions"][0]["attempts"]] == [1]
    page = render_lab_report(report, grading)
    assert "answered before the lesson was started over" in page and "<p>your answer: 1 ✗</p>" in page
    runner.do_step(1, grading.steps[1])  # done again: the attempt is still there, and still locks it
    (think,) = runner.progress()
    assert [a["given"] for a in think.answers["1"]] == [1]
    assert runner.questions(grading.steps[1], think)[0].locked
