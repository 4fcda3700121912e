"""`workbench lesson` as a student and a teacher use it, on the memory binding: a whole lesson
headless, resuming where it stopped, a broken lesson file, a step that cannot run."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_runs_cli import workbench
from workbench.config import catalog
from workbench.drive.session import Session
from workbench.lessons.model import load
from workbench.lessons.progress import lesson_steps
from workbench.lessons.runner import LessonRunner
from workbench.results.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
GRADING = ROOT / "tests" / "data" / "lessons" / "grading.toml"
# 10,000 operations a run, not 5 s: the fewest the key-distributions checks are made for
FEW = {"operationcount": "10000", "maxexecutiontime": "0"}
SHORT = ("-p", "operationcount=10000", "-p", "maxexecutiontime=0")


def test_key_distributions_runs_headless_and_a_second_run_resumes_with_nothing_to_do(tmp_path):
    store = tmp_path / "runs.db"
    done = workbench(store, "lesson", "run", "key-distributions", "--no-tui", "--student", "ann", *SHORT,
                     "-p", "uniform:fieldcount=10")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[1/5] Uniform keys" in out and "[5/5] Hot keys on a real database" in out
    # each step says what it runs, a teacher's -p STEP:KEY included (not the lesson file's value)
    assert "  run workloadc on memory: requestdistribution=uniform fieldcount=10\n" in out
    assert "  run workloadc on memory: requestdistribution=zipfian\n" in out
    assert "✓ zipfian.keys.hottest_0_1pct > 5 * zipfian.keys.chance_0_1pct" in out
    assert out.count("\n  ✓ ") == 5 and "\n  ✗ " not in out and "\n  ? " not in out  # every check held
    assert " --student ann; or a on the app's Lessons screen)" in out  # how to answer from the shell
    assert "    (answer it, one attempt: workbench lesson answer key-distributions " in out
    assert "key-distributions: 5 of 5 steps done" in out
    with RunStore(store) as s:
        steps = lesson_steps(s, "key-distributions", "ann")
        runs = sorted(s.list(), key=lambda r: r.id)  # (list() shows the newest first)
    assert [d.step for d in steps] == ["uniform", "zipfian", "latest", "hotspot", "databases"]
    measured = ("uniform", "zipfian", "latest", "hotspot")
    assert [r.label for r in runs] == [f"lesson key-distributions {n}" for n in measured]
    assert {d.run_id for d in steps if d.run_id} == {r.id for r in runs}
    zipfian = steps[1]
    assert 0.1 < zipfian.figures["keys.hottest_1pct"] < 0.5 and zipfian.figures["read.count"] > 0
    # the run's own requests, counted by the engine: every read's key, exactly
    with RunStore(store) as s:
        counted = s.result(zipfian.run_id).keys
    assert counted["counted"] == "exactly" and counted["requests"] == zipfian.figures["read.count"] == 10000
    assert zipfian.checks[0]["passed"] is True and zipfian.answers == {}

    again = workbench(store, "lesson", "run", "key-distributions", "--no-tui", "--student", "ann", *SHORT)
    assert again.returncode == 0, again.stderr
    assert "Resuming ann's lesson: 5 of 5 steps done" in again.stdout and "[1/5]" not in again.stdout
    with RunStore(store) as s:
        assert len(s.list()) == 4  # nothing measured again


def test_a_lesson_closed_halfway_resumes_at_its_next_step_with_the_earlier_figures(tmp_path):
    store = tmp_path / "runs.db"
    lesson = load(catalog.available("lessons")["key-distributions"])
    said: list[str] = []
    first = LessonRunner(lesson, Session(store=store), student="bo", overrides=FEW,
                         say=said.append)
    for position in (0, 1):  # uniform and zipfian, then the student closes the lesson
        first.do_step(position, lesson.steps[position])
    first.close()
    said.clear()
    second = LessonRunner(lesson, Session(store=store), student="bo", overrides=FEW,
                          say=said.append)
    done = second.run()
    assert [d.step for d in done] == ["uniform", "zipfian", "latest", "hotspot", "databases"]
    text = "\n".join(said)
    assert "Resuming bo's lesson: 2 of 5 steps done" in text
    assert "[1/5]" not in text and "[2/5]" not in text and "[3/5] The latest records" in text
    # the figures of the steps done before the lesson was closed came back from the store
    assert second.figures["zipfian"]["keys.hottest_1pct"] > 0.1
    assert "✓ latest.keys.newest_1pct > 0.3" in text
    with RunStore(store) as s:
        assert len(s.list()) == 4


def test_a_broken_lesson_file_is_one_line_per_mistake_and_exit_2(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('title = "x"\nminutes = 99\n[[steps]]\nid = "a"\naction = "run"\n')
    (tmp_path / "broken.md").write_text("## A {#a}\ntext\n")
    shown = workbench(tmp_path / "runs.db", "lesson", "show", str(path))
    assert shown.returncode == 2
    lines = shown.stderr.strip().splitlines()
    assert lines == [f"{path}:1: the lesson has no goal (add goal = \"what students will see and why\")",
                     f"{path}:2: minutes = 99: the expected duration must be 1 to 15 minutes "
                     "(a lesson fits a class slot: split a longer one in two)",
                     f"{path}:5: step 'a': a run needs a workload (add workload = \"workloada\")"]
    ran = workbench(tmp_path / "runs.db", "lesson", "run", str(path), "--no-tui")
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1 and "and 2 more" in ran.stderr


def test_a_step_that_cannot_run_stops_the_lesson_in_one_line_keeping_the_steps_before(tmp_path):
    store = tmp_path / "runs.db"
    path = tmp_path / "two.toml"
    path.write_text('title = "Two"\ngoal = "g"\nminutes = 1\n[properties]\nrecordcount = 100\n'
                    'operationcount = 200\n'
                    '[[steps]]\nid = "ok"\naction = "run"\nworkload = "workloadc"\n'
                    '[[steps]]\nid = "bad"\naction = "run"\nworkload = "workloadc"\n'
                    'properties = { requestdistribution = "sideways" }\n')
    (tmp_path / "two.md").write_text("## Fine {#ok}\n\n## Not fine {#bad}\n")
    ran = workbench(store, "lesson", "run", str(path), "--no-tui", "--student", "cy")
    assert ran.returncode == 2
    assert ran.stderr.strip().count("\n") == 0 and "requestdistribution" in ran.stderr, ran.stderr
    with RunStore(store) as s:
        assert [d.step for d in lesson_steps(s, "two", "cy")] == ["ok"]


def test_an_answer_in_the_shell_names_no_key_of_the_app(tmp_path):
    """Issue 52, 10: `workbench lesson answer` said "1 attempt left (a)", `a` being the app's key."""
    store = tmp_path / "runs.db"
    grading = load(GRADING)
    runner = LessonRunner(grading, Session(store=store), student="di", say=lambda _: None)
    runner.do_step(0, grading.steps[0])
    runner.close()
    wrong = workbench(store, "lesson", "answer", str(GRADING), "first", "1", "1", "--student", "di")
    assert wrong.returncode == 0, wrong.stderr
    assert wrong.stdout.splitlines()[-2:] == ["your answer: 1 ✗", "not right: 1 attempt left"]
