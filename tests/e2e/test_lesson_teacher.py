"""`workbench lesson` as a teacher tries it (issue 44): a bad -p refused before anything runs,
`show` naming what an action-less step is, and the questions of a headless run answered from the
shell with the same locking as the app; on the memory binding (tests/data/lessons/grading.toml)."""

from __future__ import annotations

from pathlib import Path

from tests.inprocess import workbench
from workbench.lessons.progress import lesson_steps
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
