"""`workbench lesson answer`, `lesson report` (a student's lab report: HTML + JSON, no answer key)
and `lesson class` (graded from the lesson file: grades CSV, class page, figures CSV), on a small
lesson on the memory binding (tests/data/lessons/grading.toml); the pages in headless Chromium."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.inprocess import workbench  # the reports' commands in this process
from workbench.config import catalog
from workbench.drive.session import Session
from workbench.lessons.model import load
from workbench.lessons.report import FORMAT, digest, shown
from workbench.lessons.runner import LessonRunner

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "tests" / "data" / "lessons"
GRADING = LESSONS / "grading.toml"
CHROMIUM = shutil.which("chromium")


def chromium_flags(tmp_path: Path) -> list[str]:
    """Headless Chromium's flags for a page on disk: nothing fetched, its own profile."""
    return ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars"]


def answer(store, student: str, step: str, number: int, value: str):
    return workbench(store, "lesson", "answer", str(GRADING), step, str(number), value, "--student", student)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """ann and bo did the whole lesson, cy its first step; ann right at her second attempt, bo
    right at his first; their lab reports in one folder."""
    base = tmp_path_factory.mktemp("class")
    store, out = base / "runs.db", base / "reports"
    lesson = load(GRADING)
    for student, steps in (("ann", 3), ("bo", 3), ("cy", 1)):
        runner = LessonRunner(lesson, Session(store=store), student=student, say=lambda _: None)
        for position in range(steps):
            runner.do_step(position, lesson.steps[position])
    said = {}
    said["ann wrong"] = answer(store, "ann", "first", 1, "1")
    said["ann right"] = answer(store, "ann", "first", 1, "2")
    said["ann again"] = answer(store, "ann", "first", 1, "2")
    said["ann think"] = answer(store, "ann", "think", 1, "2")
    said["ann free"] = answer(store, "ann", "think", 2, "a shop's best sellers")
    said["ann free again"] = answer(store, "ann", "think", 2, "changed my mind")
    said["bo right"] = answer(store, "bo", "first", 1, "2")
    said["bo think"] = answer(store, "bo", "think", 1, "1")
    said["bo think again"] = answer(store, "bo", "think", 1, "2")
    said["not a choice"] = answer(store, "bo", "first", 1, "7")
    said["cy not done"] = answer(store, "cy", "think", 1, "2")
    for student in ("ann", "bo", "cy"):
        done = workbench(store, "lesson", "report", str(GRADING), "--student", student, "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert f"wrote {out / f'grading-{student}.html'}" in done.stdout
    return store, out, said


def test_an_answer_locks_and_the_right_one_is_shown_only_once_locked(classroom):
    _, _, said = classroom
    wrong = said["ann wrong"]
    assert wrong.returncode == 0, wrong.stderr
    assert "1 ✗" in wrong.stdout and "not right: 1 attempt left" in wrong.stdout
    assert "the answer is" not in wrong.stdout and "load the replicas" not in wrong.stdout
    right = said["ann right"].stdout
    assert "your answers: 1 ✗, 2 ✓" in right and "right: locked" in right
    for refused, why in (("ann again", "question 1 of step first is locked (it was answered right)"),
                         ("ann free again", "question 2 of step think is locked"),
                         ("bo think again", "question 1 of step think is locked (every attempt it allows "
                          "was used)"),
                         ("not a choice", "'7' is not a choice of question 1"),
                         ("cy not done", "step think is not done yet")):
        done = said[refused]
        assert done.returncode == 2 and done.stdout == "", (refused, done)
        assert done.stderr.count("\n") == 1 and why in done.stderr, (refused, done.stderr)
    assert "locked; the answer is 2: workloadc" in said["bo think"].stdout


def test_a_lab_report_holds_the_attempts_with_their_times_the_run_ids_and_a_digest_not_the_key(classroom):
    _, out, _ = classroom
    ann = json.loads((out / "grading-ann.json").read_text())
    assert ann["format"] == "workbench-lab-report/2" and (ann["done"], ann["of"]) == (3, 3)
    first, think, second = ann["steps"]
    assert ann["runs"] == [first["run_id"], second["run_id"]] and all(ann["runs"])
    assert ann["digest"].startswith("sha256:") and len(ann["digest"]) == 7 + 64
    assert first["questions"][0]["attempts_allowed"] == 2
    assert [a["given"] for a in first["questions"][0]["attempts"]] == [1, 2]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", a["at"])
               for a in first["questions"][0]["attempts"])
    given = [[a["given"] for a in q["attempts"]] for q in think["questions"]]
    assert given == [[2], ["a shop's best sellers"]]
    text = (out / "grading-ann.json").read_text()
    assert '"answer"' not in text and '"right"' not in text  # no key, no grade: graded from the lesson file
    assert first["figures"]["throughput"] > 0 and second["checks"][1]["passed"] is False
    page = (out / "grading-ann.html").read_text()
    assert "your answers: 1 ✗, 2 ✓" in page and "right: locked" in page
    assert "a shop&#x27;s best sellers" in page
    cy = (out / "grading-cy.html").read_text()
    assert "not done yet" in cy and "the answer is" not in cy
    # issue 52, 8: bo's wrong answer is marked, the right one is not named (the page goes round a class)
    bo = (out / "grading-bo.html").read_text()
    assert "<p>your answer: 1 ✗</p>\n<p>not right: locked (no attempt left)</p>" in bo
    assert "the answer is" not in bo


def test_a_report_for_a_student_with_no_progress_is_refused_naming_who_has_some(classroom, tmp_path):
    store, _, _ = classroom
    done = workbench(store, "lesson", "report", str(GRADING), "--student", "nobody", "--out", str(tmp_path))
    assert done.returncode == 2 and list(tmp_path.iterdir()) == []
    assert done.stderr == ("workbench: error: no progress of student 'nobody' in lesson grading; students "
                           "with progress: ann, bo, cy (give --student NAME as the lesson was run with it)\n")


def test_students_whose_names_make_the_same_file_name_each_get_their_own_report(tmp_path):
    # issue 52, 9: "../evil" was written as grading-..json, "ann.b" as grading-ann.json (over ann's)
    store, out = tmp_path / "runs.db", tmp_path / "reports"
    lesson = load(GRADING)
    names = ["ann", "ann.b", "../evil", ".._evil", "a b", "a_b", ".."]
    for student in names:
        LessonRunner(lesson, Session(store=store), student=student, say=lambda _: None).do_step(
            1, lesson.steps[1])  # the step without a run
        done = workbench(store, "lesson", "report", str(GRADING), "--student", student, "--out", str(out))
        assert done.returncode == 0, done.stderr
    files = sorted(out.glob("*.json"))
    assert len(files) == len(names) == len(list(out.glob("*.html")))
    assert sorted(json.loads(f.read_text())["student"] for f in files) == sorted(names)
    assert {f.name for f in files} >= {"grading-ann.json", "grading-ann.b.json", "grading-a_b.json"}
    assert all(f.parent == out and f.name.startswith("grading-") for f in out.iterdir())
    # a file there that is another student's report is never overwritten
    (out / "grading-ann.json").rename(out / "grading-zed.json")
    (out / "grading-ann.html").unlink()
    LessonRunner(lesson, Session(store=store), student="zed", say=lambda _: None).do_step(1, lesson.steps[1])
    refused = workbench(store, "lesson", "report", str(GRADING), "--student", "zed", "--out", str(out))
    assert refused.returncode == 2 and refused.stdout == "" and refused.stderr.count("\n") == 1
    assert refused.stderr.startswith(f"workbench: error: {out / 'grading-zed.json'} is the lab report of "
                                     "'ann' in lesson 'grading': not overwritten")
    assert json.loads((out / "grading-zed.json").read_text())["student"] == "ann"


def rows(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_the_class_is_graded_from_the_lesson_file_into_a_grade_csv_and_a_page(classroom, tmp_path):
    store, out, _ = classroom
    folder = tmp_path / "handed-in"
    shutil.copytree(out, folder)
    done = workbench(store, "lesson", "class", str(folder), "--lesson", str(GRADING))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert f"wrote {folder / 'grades-grading.csv'}" in done.stdout
    grades = rows(folder / "grades-grading.csv")
    assert list(grades[0]) == ["student", "step", "done", "checks_passed", "checks_failed", "checks_unjudged",
                               "answers_right", "answers_wrong", "unanswered", "attempts", "score",
                               "possible", "restarts", "report", "lesson_file"]
    table = {(r["student"], r["step"]): r for r in grades}
    assert [r["step"] for r in grades if r["student"] == "ann"] == ["first", "think", "second", "total"]
    ann_first = table["ann", "first"]
    assert (ann_first["checks_passed"], ann_first["answers_right"], ann_first["attempts"], ann_first["score"],
            ann_first["possible"]) == ("1", "1", "2", "1", "2")  # right at the second attempt: no point
    second = table["ann", "second"]
    assert (second["checks_passed"], second["checks_failed"], second["checks_unjudged"]) == ("1", "1", "1")
    assert (table["ann", "total"]["score"], table["ann", "total"]["possible"]) == ("3", "6")
    assert (table["bo", "total"]["score"], table["bo", "total"]["answers_wrong"]) == ("3", "1")
    assert (table["bo", "first"]["score"], table["bo", "think"]["score"]) == ("2", "0")
    cy = table["cy", "total"]
    assert (cy["done"], cy["score"], cy["possible"], cy["unanswered"]) == ("no", "1", "6", "3")
    assert {r["report"] for r in grades} == {"ok"}
    page = (folder / "class-grading.html").read_text()
    assert "<td>ann</td><td>3 of 3</td>" in page and "<td>3 of 6</td>" in page and "<td>1 of 6</td>" in page
    assert "a shop&#x27;s best sellers" in page  # the free-text answers (issue 44, 9)
    assert "the answer: 2. load the replicas" in page
    # issue 52, 9: how many attempts, and the choices given, apart ("2 ✓" read as two attempts)
    assert "<th>attempts</th><th>choices given</th><th>graded</th>" in page
    assert "<tr><td>ann</td><td>2</td><td>1 ✗, 2 ✓</td><td>✓</td></tr>" in page
    assert "<tr><td>bo</td><td>1</td><td>2 ✓</td><td>✓ first attempt</td></tr>" in page
    assert "<tr><td>cy</td><td>0</td><td>-</td><td></td></tr>" in page
    # every table scrolls on its own when it is wider than the page (issue 52, 9)
    assert page.count("<div class=scroll><table>") == page.count("<table>") == 7
    assert ".scroll { overflow-x: auto;" in page
    figures = rows(folder / "class-grading.csv")
    assert {(r["student"], r["step"]) for r in figures if r["figure"] == "throughput"} == {
        ("ann", "first"), ("ann", "second"), ("bo", "first"), ("bo", "second"), ("cy", "first")}


def test_a_lesson_file_given_grades_the_class_even_under_another_name_and_is_named(classroom, tmp_path,
                                                                                   monkeypatch):
    # issue 52, 7: --lesson FILE was ignored unless its name was the reports' lesson, and the shipped
    # lesson of that name graded the class without a word
    store, out, _ = classroom
    monkeypatch.setenv("WORKBENCH_PRESETS_DIR", str(LESSONS.parent))  # "grading" is found by its name too
    edited = tmp_path / "grading-edited.toml"  # the teacher's copy: think's question 1 answer is 1
    text = GRADING.read_text()
    assert text.count("answer = 2\n") == 2
    edited.write_text(text.replace('choices = ["workloada", "workloadc"]\nanswer = 2',
                                   'choices = ["workloada", "workloadc"]\nanswer = 1'))
    shutil.copy(GRADING.with_suffix(".md"), edited.with_suffix(".md"))
    done = workbench(store, "lesson", "class", str(out), "--lesson", str(edited), "--out",
                     str(tmp_path / "a"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.splitlines()[0] == f"grading: graded with {edited.resolve()}"
    grades = rows(tmp_path / "a" / "grades-grading.csv")
    table = {(r["student"], r["step"]): r for r in grades}
    assert (table["ann", "think"]["answers_wrong"], table["bo", "think"]["score"]) == ("1", "1")
    assert {r["lesson_file"] for r in grades} == {str(edited.resolve())}
    assert f"graded from {edited.resolve()}</p>" in (tmp_path / "a" / "class-grading.html").read_text()
    shipped = workbench(store, "lesson", "class", str(out), "--out", str(tmp_path / "b"))
    assert shipped.stdout.splitlines()[0] == f"grading: graded with {GRADING.resolve()}"
    assert {r["lesson_file"] for r in rows(tmp_path / "b" / "grades-grading.csv")} == {str(GRADING.resolve())}
    # a file whose lesson is not the reports' (neither its name nor its steps) is refused in one line
    other = tmp_path / "other.toml"
    other.write_text('title = "O"\ngoal = "g"\nminutes = 1\n[[steps]]\nid = "first"\n')
    (tmp_path / "other.md").write_text("## First {#first}\n")
    refused = workbench(store, "lesson", "class", str(out), "--lesson", str(other), "--out",
                        str(tmp_path / "c"))
    assert refused.returncode == 2 and refused.stdout == "" and not (tmp_path / "c").exists()
    assert refused.stderr == (f"workbench: error: --lesson {other}: lesson 'other' (steps first) has the "
                              "name or the steps of none of the reports' lessons: grading (steps first, "
                              "think, second) (give the lesson file the reports were written with, or "
                              "its copy with the same steps)\n")


def test_a_report_edited_by_hand_is_named_and_marked(classroom, tmp_path):
    store, out, _ = classroom
    folder = tmp_path / "handed-in"
    shutil.copytree(out, folder)
    path = folder / "grading-bo.json"
    bo = json.loads(path.read_text())
    bo["steps"][2]["figures"]["read.p99"] = -1.0  # makes the check that fails on purpose pass
    path.write_text(json.dumps(bo, indent=1))
    done = workbench(store, "lesson", "class", str(folder), "--lesson", str(GRADING))
    assert done.returncode == 0
    assert done.stderr == (f"workbench: {path}: its figures, verdicts or answers do not match its digest "
                           "(edited after `workbench lesson report` wrote it): graded, marked "
                           "\"digest mismatch\"\n")
    grades = rows(folder / "grades-grading.csv")
    assert {r["report"] for r in grades if r["student"] == "bo"} == {"digest mismatch"}
    assert {r["report"] for r in grades if r["student"] != "bo"} == {"ok"}
    page = (folder / "class-grading.html").read_text()
    assert "<td>digest mismatch</td>" in page
    # issue 52, 9: its figures are shown, marked, and left out of the class's mean, sd, min and max
    assert page.count("<td>-1 ms</td>") == 1 and "<tr><td>bo (digest mismatch)</td>" in page
    assert ("<p class=noisy>The class's mean, sd, min and max leave out the figures of bo: their reports "
            "do not match their digest.</p>") in page


def test_every_file_skipped_is_named_and_a_folder_of_none_usable_is_refused(classroom, tmp_path, monkeypatch):
    # 8: a truncated report and a foreign JSON were skipped silently
    store, out, _ = classroom
    folder = tmp_path / "handed-in"
    shutil.copytree(out, folder)
    text = (folder / "grading-bo.json").read_text()
    (folder / "grading-bo.json").write_text(text[: len(text) // 3])
    (folder / "notes.json").write_text('{"not": "a lab report"}')
    monkeypatch.setenv("WORKBENCH_PRESETS_DIR", str(LESSONS.parent))  # the lesson found by its name
    done = workbench(store, "lesson", "class", str(folder))
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"workbench: skipped {folder / 'grading-bo.json'}: not valid JSON")
    assert lines[1] == f'workbench: skipped {folder / "notes.json"}: not a lab report (no "format": ' \
                       '"workbench-lab-report/2")'
    assert {r["student"] for r in rows(folder / "grades-grading.csv")} == {"ann", "cy"}
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "cut.json").write_text(text[:100])
    (bad / "notes.json").write_text("[1, 2]")
    refused = workbench(store, "lesson", "class", str(bad))
    assert refused.returncode == 2
    lines = refused.stderr.splitlines()
    assert len(lines) == 3
    assert lines[-1].startswith(f"workbench: error: no usable lab report in {bad}; skipped cut.json, "
                                "notes.json (")
    assert workbench(store, "lesson", "class", str(tmp_path / "nowhere")).returncode == 2


def test_a_lesson_file_that_cannot_be_found_is_refused_clearly(classroom, tmp_path):
    store, out, _ = classroom
    done = workbench(store, "lesson", "class", str(out), "--out", str(tmp_path))
    assert done.returncode == 2 and list(tmp_path.iterdir()) == []
    assert done.stderr.startswith("workbench: error: cannot grade grading-ann.json, grading-bo.json, "
                                  "grading-cy.json: lesson 'grading': no lesson named 'grading' (")
    assert "give its file with --lesson FILE.toml" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_both_pages_render_in_headless_chromium(classroom, tmp_path):
    from PIL import Image

    store, out, _ = classroom
    folder = tmp_path / "handed-in"
    shutil.copytree(out, folder)
    assert workbench(store, "lesson", "class", str(folder), "--lesson", str(GRADING)).returncode == 0
    flags = chromium_flags(tmp_path)
    lab = (folder / "grading-ann.html").resolve().as_uri()
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", lab], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    charts = re.findall(r'<figure class="chart" data-chart="([^"]+)">(.*?)</figure>', dom.stdout, re.S)
    assert [name for name, _ in charts] == ["throughput", "read-p99"]
    assert all(body.count("<rect") == 3 for _, body in charts)  # the frame and one bar per run
    shot = tmp_path / "lab.png"
    done = subprocess.run([CHROMIUM, *flags, "--window-size=1150,1600", f"--screenshot={shot}", lab],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    assert (0x1F, 0x77, 0xB4) in {c for _, c in Image.open(shot).convert("RGB").getcolors(1 << 20)}
    klass = (folder / "class-grading.html").resolve().as_uri()
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", klass], capture_output=True, text=True, timeout=120)
    # grades, progress, three questions' answers, two steps' figures
    assert dom.returncode == 0 and dom.stdout.count("<table>") == 7, dom.stderr[-2000:]


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_the_class_page_is_no_wider_than_a_1280_pixel_window(tmp_path):
    # issue 52, 9: key-distributions' zipfian figures made the page wider than 1280 px; a wide table
    # scrolls in its own box
    lesson = load(catalog.available("lessons")["key-distributions"])
    folder = tmp_path / "handed-in"
    folder.mkdir()
    for student in ("ann", "bo"):
        steps = [{"id": step.id, "title": step.title, "text": "", "action": step.action,
                  "measures": step.measures, "done": True, "run_id": None, "server": "", "client": "",
                  "figures": {name: 12345.678 if name in ("throughput", "in_flight", "errors") else
                              0.456 if name.startswith("keys.") else 123.4 for name in shown(lesson, step.id)}
                  if step.measures else {},
                  "checks": [], "questions": []} for step in lesson.steps]
        data = {"format": FORMAT, "lesson": lesson.name, "title": lesson.title, "goal": lesson.goal,
                "student": student, "made_at": "2026-11-29 10:00:00", "done": len(steps), "of": len(steps),
                "runs": [], "restarts": [], "steps": steps}
        data["digest"] = digest(data)
        (folder / f"{lesson.name}-{student}.json").write_text(json.dumps(data))
    done = workbench(tmp_path / "runs.db", "lesson", "class", str(folder))
    assert done.returncode == 0, done.stderr
    page = (folder / f"class-{lesson.name}.html").read_text()
    probe = tmp_path / "probe.html"  # the page, and a script that writes down how wide it is
    probe.write_text(page.replace("</body>", '<script>document.body.setAttribute("data-width", '
                                  "document.documentElement.scrollWidth)</script></body>"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars", "--window-size=1280,900"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", probe.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert int(re.search(r'data-width="(\d+)"', dom.stdout).group(1)) <= 1280


class _Node:
    """A server node at 2 cores with a 30-ms GC pause every second (a fake source: the memory
    binding has no server)."""

    name = "fake"

    def sample(self, now: float):
        from workbench.metrics.server import NodeSample, ServerEvent

        return [NodeSample("127.0.0.2", {"cpu": 2.0}, (ServerEvent("127.0.0.2", now - 0.05, "gc", 0.030),))]

    def close(self) -> None:
        pass


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_a_steps_run_with_server_figures_has_them_under_the_clients_in_the_lab_report(tmp_path, monkeypatch):
    from workbench.drive import phase as phase_module

    monkeypatch.setattr(phase_module, "sources_for", lambda cluster, db: [_Node()])
    store, out, paced = tmp_path / "runs.db", tmp_path / "reports", tmp_path / "grading.toml"
    # three seconds paced at 1,000 ops/s: a second sampled at least
    paced.write_text(GRADING.read_text().replace("operationcount = 2000",
                                                 "operationcount = 3000\ntarget = 1000"))
    shutil.copy(GRADING.with_suffix(".md"), paced.with_suffix(".md"))
    lesson = load(paced)
    LessonRunner(lesson, Session(store=store), student="di", say=lambda _: None).do_step(0, lesson.steps[0])
    done = workbench(store, "lesson", "report", str(paced), "--student", "di", "--out", str(out))
    assert done.returncode == 0, done.stderr
    step = json.loads((out / "grading-di.json").read_text())["steps"][0]
    assert step["timeline"]["nodes"]["127.0.0.2"]["cpu"][0] == 2.0
    # each second's longest pause: the fake's 30 ms, or none in a second whose answer came late or
    # was not asked (a loaded machine wakes the sampler's thread late: CI once saw both)
    longest = step["timeline"]["nodes"]["127.0.0.2"]["gc_ms_max"]
    assert 30.0 in longest and set(longest) <= {0.0, 30.0}, longest
    flags = chromium_flags(tmp_path)
    lab = (out / "grading-di.html").resolve().as_uri()
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", lab], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    charts = dict(re.findall(r'<figure class="chart" data-chart="([^"]+)">(.*?)</figure>', dom.stdout, re.S))
    assert list(charts) == ["throughput", "read-p99", "run-client", "run-servers"]
    assert 'data-series="127.0.0.2 CPU cores"' in charts["run-servers"]
    assert 'data-series="127.0.0.2 GC pause ms, top 30"' in charts["run-servers"]
    assert re.search(r'<p class="spikes">(no spike|Spikes) \(a second whose p99', dom.stdout)
