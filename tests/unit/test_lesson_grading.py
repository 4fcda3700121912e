"""Answers locked and graded from the lesson file, a lab report's digest, the class's grades, and
the lesson file's defects found by trying it as a teacher (issue 44: 9a, 9c, 9d)."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest

from workbench.drive.session import Session
from workbench.errors import WorkbenchError
from workbench.lessons.answers import Attempt, grade
from workbench.lessons.class_page import class_table
from workbench.lessons.grades import grade_report, read_reports, total
from workbench.lessons.model import LessonError, Question, Step, load
from workbench.lessons.report import FORMAT, digest, render_lab_report
from workbench.lessons.runner import LessonRunner, check_overrides

GRADING = Path(__file__).resolve().parents[1] / "data" / "lessons" / "grading.toml"
CHOICE = Question("Which?", ("a", "b", "c"), 2, 1)
TWICE = Question("Which?", ("a", "b", "c"), 2, 1, attempts=2)
FREE = Question("Why?", (), None, 1)


def tries(*given) -> list[Attempt]:
    return [Attempt(g, 100.0 + i) for i, g in enumerate(given)]


def test_a_question_locks_after_its_one_attempt_and_only_then_shows_the_answer():
    graded = grade(CHOICE, tries(1))
    assert (graded.right, graded.locked, graded.first_right, graded.left) == (False, True, False, 0)
    assert graded.lines() == ["  your answer: 1 ✗", "  locked; the answer is 2: b"]
    # a later attempt (a report edited by hand, say) does not count
    assert grade(CHOICE, tries(1, 2)).attempts == grade(CHOICE, tries(1)).attempts


def test_attempts_n_allows_n_answers_and_hides_the_answer_until_the_last():
    one = grade(TWICE, tries(1))
    assert (one.right, one.locked, one.left) == (False, False, 1)
    assert "the answer is" not in "\n".join(one.lines()) and "1 attempt left" in one.lines()[-1]
    two = grade(TWICE, tries(1, 2))
    assert (two.right, two.locked, two.first_right) == (True, True, False)
    assert two.lines() == ["  your answers: 1 ✗, 2 ✓", "  right: locked"]
    wrong = grade(TWICE, tries(3, 1))
    assert wrong.locked and wrong.lines()[-1] == "  locked; the answer is 2: b"
    assert grade(TWICE, tries(2, 1)).attempts == tuple(tries(2))  # nothing after a right answer counts


def test_a_free_text_is_answered_once_and_never_graded():
    graded = grade(FREE, tries("a news site", "changed my mind"))
    assert (graded.right, graded.locked, len(graded.attempts)) == (None, True, 1)
    assert graded.lines() == ["  your answer: a news site"]


def test_the_lesson_file_says_how_many_attempts_and_refuses_a_number_that_gives_the_answer_away(tmp_path):
    lesson = load(GRADING)
    assert [[q.attempts for q in s.questions] for s in lesson.steps] == [[2], [1, 1], []]
    text = GRADING.read_text()
    for change, says in ((("attempts = 2", "attempts = 3"), "attempts = 3 (the answers allowed before the "
                          "question locks, 1 to 2)"),
                         (('ask = "Name a real', 'attempts = 2\nask = "Name a real'),
                          "a free-text question is answered once")):
        path = tmp_path / "grading.toml"
        path.write_text(text.replace(*change))
        (tmp_path / "grading.md").write_text(GRADING.with_suffix(".md").read_text())
        with pytest.raises(LessonError) as caught:
            load(path)
        assert len(caught.value.problems) == 1 and says in caught.value.lines()[0], caught.value.lines()


def test_a_step_with_an_unknown_action_is_one_error_not_a_second_about_its_checks(tmp_path):
    # 9a: a later check reading it said "check reads 'uni', a later step"
    path = tmp_path / "mine.toml"
    path.write_text('title = "T"\ngoal = "G"\nminutes = 1\n'
                    '[[steps]]\nid = "uni"\naction = "runn"\nworkload = "workloadc"\n'
                    '[[steps]]\nid = "zip"\naction = "run"\nworkload = "workloadc"\nrate = 0.5\n'
                    'rate_of = "uni"\n'
                    '[[steps.checks]]\nexpect = "zip.throughput > uni.throughput"\npass = "y"\nfail = "n"\n')
    (tmp_path / "mine.md").write_text("## U {#uni}\n\n## Z {#zip}\n")
    with pytest.raises(LessonError) as caught:
        load(path)
    assert caught.value.lines() == [f"{path}:6: step 'uni': unknown action 'runn' (actions are none, start, "
                                    "stop, load, run, set, pause, kill, resume, restart, settle)"]


def test_a_step_without_an_action_is_a_question_or_a_text():
    # 9d: `lesson show` called both "read"
    lesson = load(GRADING)
    assert [s.kind for s in lesson.steps] == ["run", "question", "run"]
    assert Step("read", "Read", "Only text.").kind == "text"


def test_a_bad_p_is_refused_naming_the_step_before_anything_runs():
    # 9c: -p maxexecutiontime=abc failed only once step 1 ran
    lesson = load(GRADING)
    with pytest.raises(WorkbenchError, match=r"^-p maxexecutiontime=abc: step first would refuse it: "
                       r"maxexecutiontime='abc' is not"):
        check_overrides(lesson, {"maxexecutiontime": "abc"})
    with pytest.raises(WorkbenchError, match=r"^-p second:requestdistribution=sideways: step second"):
        check_overrides(lesson, {"second:requestdistribution": "sideways"})
    with pytest.raises(WorkbenchError, match="has no step 'third'"):
        LessonRunner(lesson, Session(store=False), student="t", overrides={"third:threadcount": "1"})
    forced, steps = check_overrides(lesson, {"operationcount": "500", "first:threadcount": "1"})
    assert forced == {"operationcount": "500"} and steps == {"first": {"threadcount": "1"}}


def report(**changes) -> dict:
    """A lab report of the grading lesson as `lesson report` writes it (two steps done)."""
    steps = [
        {"id": "first", "title": "The first run", "text": "", "action": "run", "measures": True, "done": True,
         "run_id": 7, "server": "", "client": "", "figures": {"throughput": 1500.0, "read.p99": 0.2},
         "checks": [], "questions": [{"ask": "?", "choices": ["a", "b", "c"], "attempts_allowed": 2,
                                      "attempts": [{"given": 1, "at": "2026-11-27T10:00:00+00:00"},
                                                   {"given": 2, "at": "2026-11-27T10:01:00+00:00"}]}]},
        {"id": "think", "title": "Think", "text": "", "action": "none", "measures": False, "done": True,
         "run_id": None, "server": "", "client": "", "figures": {}, "checks": [],
         "questions": [{"ask": "?", "choices": ["workloada", "workloadc"], "attempts_allowed": 1,
                        "attempts": [{"given": 2, "at": "2026-11-27T10:02:00+00:00"}]},
                       {"ask": "?", "choices": [], "attempts_allowed": 1,
                        "attempts": [{"given": "a shop's best sellers",
                                      "at": "2026-11-27T10:03:00+00:00"}]}]},
        {"id": "second", "title": "The second run", "text": "", "action": "run", "measures": True,
         "done": False, "run_id": None, "server": "", "client": "", "figures": {}, "checks": [],
         "questions": []},
    ]
    data = {"format": FORMAT, "lesson": "grading", "title": "T", "goal": "G", "student": "ann",
            "made_at": "2026-11-27 10:05:00", "done": 2, "of": 3, "runs": [7], "restarts": [], "steps": steps,
            **changes}
    data["digest"] = digest(data)
    return data


def test_a_report_is_graded_from_the_lesson_file_checks_judged_again_and_scored():
    lesson = load(GRADING)
    first, think, second = grade_report(lesson, report())
    assert (first.passed, first.right, first.wrong, first.attempts, first.score, first.possible) == (
        1, 1, 0, 2, 1, 2)  # the check passes again on the figures; right at the second attempt: no point
    assert (think.right, think.wrong, think.unanswered, think.attempts, think.score, think.possible) == (
        1, 0, 0, 2, 1, 1)  # the free text is not scored
    assert (second.done, second.unjudged, second.score, second.possible) == (False, 3, 0, 3)
    whole = total([first, think, second])
    assert (whole.score, whole.possible, whole.passed, whole.unjudged) == (2, 6, 1, 3)
    # a verdict edited in the report does not count: the checks are judged again from the figures
    flipped = report()
    flipped["steps"][0]["figures"]["throughput"] = 0.0
    assert grade_report(lesson, flipped)[0].failed == 1


def test_attempts_recorded_on_a_step_not_done_count_for_nothing():
    # issue 52, 4: a report whose step is not done but holds attempts at its questions (answered
    # before a restart, or written in by hand) scores 0 on that step, and its attempts are not counted
    lesson = load(GRADING)
    data = report()
    data["steps"][1]["done"] = False
    _, think, _ = grade_report(lesson, data)
    assert (think.done, think.right, think.wrong, think.attempts, think.unanswered, think.score) == (
        False, 0, 0, 0, 2, 0)
    assert [g.answered for g in think.questions] == [False, False]


def test_the_lab_report_page_marks_the_attempts_and_never_shows_the_right_answer():
    # issue 52, 8: the page said "the answer is 2: workloadc" under a question answered wrong, and a
    # report goes round a class; 10: its goal showed a code span's backticks as they are
    data = report(goal="Two runs of `workloadc` on the **memory** binding.")
    data["steps"][1]["questions"][0]["attempts"] = [{"given": 1, "at": "2026-11-27T10:02:00+00:00"}]
    data["steps"][0]["questions"][0]["attempts"].pop()  # one wrong attempt of two allowed
    page = render_lab_report(data, load(GRADING))
    assert "the answer is" not in page and "the answer" not in page
    assert "<p>your answer: 1 ✗</p>\n<p>not right: locked (no attempt left)</p>" in page
    assert "<p>your answer: 1 ✗</p>\n<p>not right: 1 of 2 attempts left</p>" in page
    assert "(a)" not in page  # the app's key means nothing on a page
    assert "<p>Two runs of <code>workloadc</code> on the <strong>memory</strong> binding.</p>" in page
    assert "`" not in page


def test_the_folder_names_every_file_it_skips_and_which_reports_were_edited(tmp_path):
    good = report()
    (tmp_path / "a-ann.json").write_text(json.dumps(good))
    text = json.dumps(report(student="bo"), indent=1)
    (tmp_path / "b-bo.json").write_text(text[: len(text) // 2])  # cut short
    (tmp_path / "c-notes.json").write_text('{"not": "a lab report"}')
    (tmp_path / "d-old.json").write_text(json.dumps({**good, "format": "workbench-lab-report/1"}))
    (tmp_path / "e-ann-again.json").write_text(json.dumps(good))
    edited = copy.deepcopy(report(student="cy"))
    edited["steps"][0]["figures"]["throughput"] = 9e9
    (tmp_path / "f-cy.json").write_text(json.dumps(edited))
    reports, skipped = read_reports(tmp_path)
    assert [(r.path.name, r.intact) for r in reports] == [("a-ann.json", True), ("f-cy.json", False)]
    why = {path.name: reason for path, reason in skipped}
    assert list(why) == ["b-bo.json", "c-notes.json", "d-old.json", "e-ann-again.json"]
    assert why["b-bo.json"].startswith("not valid JSON (") and "cut short" in why["b-bo.json"]
    assert why["c-notes.json"] == f'not a lab report (no "format": "{FORMAT}")'
    assert "another format (workbench-lab-report/1" in why["d-old.json"]
    assert why["e-ann-again.json"] == "the same report of ann in grading as a-ann.json (which is used)"


def test_of_a_students_two_reports_the_newer_counts_whatever_the_files_names(tmp_path):
    # issue 52, 9: the first file by name counted
    older, newer = report(made_at="2026-11-27 10:05:00"), report(made_at="2026-11-27 11:30:00")
    newer["steps"][1]["questions"][0]["attempts"][0]["given"] = 1
    newer["digest"] = digest(newer)
    for first, second in ((older, newer), (newer, older)):
        folder = tmp_path / first["made_at"][11:13]
        folder.mkdir()
        (folder / "a.json").write_text(json.dumps(first))
        (folder / "b.json").write_text(json.dumps(second))
        reports, skipped = read_reports(folder)
        assert [r.data["made_at"] for r in reports] == ["2026-11-27 11:30:00"]
        used, old = ("b.json", "a.json") if first is older else ("a.json", "b.json")
        assert [(p.name, why) for p, why in skipped] == [
            (old, f"an older report of ann in grading (made 2026-11-27 10:05:00; {used}, made "
                  "2026-11-27 11:30:00, is used)")]
    # two different reports of the same second: which one counts cannot be told
    (tmp_path / "10" / "c.json").write_text(json.dumps({**newer, "runs": [7, 7]}))
    reports, skipped = read_reports(tmp_path / "10")
    assert reports == [] and [(p.name, why) for p, why in skipped] == [
        ("a.json", "an older report of ann in grading (made 2026-11-27 10:05:00; newer: b.json, c.json, "
                   "made at 2026-11-27 11:30:00)"),
        ("b.json", "one of 2 different reports of ann in grading made at 2026-11-27 11:30:00 (and c.json): "
                   "none of them is graded (ask for one)"),
        ("c.json", "one of 2 different reports of ann in grading made at 2026-11-27 11:30:00 (and b.json): "
                   "none of them is graded (ask for one)")]


def test_a_name_a_spreadsheet_would_take_for_a_formula_is_written_as_text(tmp_path):
    # issue 52, 9: OWASP's CSV injection: a cell starting with = + - @ (or a tab, a carriage return)
    names = ["=HYPERLINK(\"http://x\",\"ann\")", "+1+1", "-2+3", "@SUM(A1)", "\tcy", "dee"]
    for i, name in enumerate(names):
        (tmp_path / f"r{i}.json").write_text(json.dumps(report(student=name)))
    reports, skipped = read_reports(tmp_path)
    assert skipped == [] and len(reports) == len(names)
    (_, grades_path, csv_path), = class_table(reports, {"grading": load(GRADING)}, tmp_path / "out")
    for path in (grades_path, csv_path):
        with path.open(newline="") as f:
            students = {row["student"] for row in csv.DictReader(f)}
        assert students == {"'" + n for n in names[:-1]} | {"dee"}, path.name
    with grades_path.open(newline="") as f:
        assert {row["step"] for row in csv.DictReader(f)} == {"first", "think", "second", "total"}


def test_the_digest_covers_figures_run_ids_verdicts_and_attempts():
    base = report()
    for edit in (lambda r: r["runs"].append(8), lambda r: r["steps"][0].update(run_id=9),
                 lambda r: r["steps"][0]["checks"].append({"passed": True}),
                 lambda r: r["steps"][0]["questions"][0]["attempts"].pop(0),
                 lambda r: r.update(student="zed"),
                 lambda r: r["restarts"].append({"at": "2026-11-27T10:04:00+00:00", "steps_done": 2})):
        changed = copy.deepcopy(base)
        edit(changed)
        assert digest(changed) != base["digest"]
    assert digest(json.loads(json.dumps(base))) == base["digest"]  # written and read back: the same


def test_an_answer_kept_by_an_earlier_version_is_one_attempt_at_the_records_time(tmp_path):
    from workbench.lessons.progress import LessonStep, lesson_steps, save_lesson_step
    from workbench.results.store import RunStore

    with RunStore(tmp_path / "runs.db") as store:
        save_lesson_step(store, "grading", "ann", LessonStep("think", 1, None, {}, [], {"1": 2, "2": None}))
        (step,) = lesson_steps(store, "grading", "ann")
    assert step.answers == {"1": [{"given": 2, "at": step.updated_at}]} and step.updated_at > 0
    assert grade(load(GRADING).step("think").questions[0], [Attempt(2, 0.0)]).right is True


def test_a_store_of_schema_3_keeps_its_students_steps_done_and_can_start_a_lesson_over(tmp_path):
    import sqlite3

    from workbench.lessons.progress import lesson_restarts, lesson_steps, restart_lesson
    from workbench.results import store as store_module
    from workbench.results.store import RunStore

    path = tmp_path / "v3.db"
    c = sqlite3.connect(path)
    for migration in store_module.MIGRATIONS[:3]:
        for statement in migration.split(";"):
            if statement.strip():
                c.execute(statement)
    c.execute(f"PRAGMA application_id = {store_module.APPLICATION_ID}")
    c.execute("PRAGMA user_version = 3")
    c.execute("INSERT INTO lesson_steps (lesson, student, step, position, figures, checks, answers, "
              "updated_at) VALUES ('grading', 'ann', 'think', 1, '{}', '[]', ?, 5.0)",
              ('{"1": [{"given": 1, "at": 5.0}]}',))
    c.commit()
    c.close()
    with RunStore(path) as store:
        (think,) = lesson_steps(store, "grading", "ann")
        assert think.done and think.answers == {"1": [{"given": 1, "at": 5.0}]}
        assert restart_lesson(store, "grading", "ann") == 1
        assert lesson_steps(store, "grading", "ann") == []
        (kept,) = lesson_steps(store, "grading", "ann", kept=True)
        assert not kept.done and kept.answers == think.answers
        assert [r.steps_done for r in lesson_restarts(store, "grading", "ann")] == [1]
