"""`workbench lesson report` (a student's lab report: HTML + JSON) and `workbench lesson class`
(a class's table: HTML + CSV), on lessons made on the memory binding; both in headless Chromium."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.inprocess import workbench  # the reports' commands in this process
from workbench.config import catalog
from workbench.drive.session import Session
from workbench.lessons.model import load
from workbench.lessons.runner import LessonRunner

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium")
FEW = {"operationcount": "3000", "maxexecutiontime": "0"}


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """Two students who did the whole key-distributions lesson (one answered a question right,
    one wrong) and one who stopped after two steps; their lab reports in one folder."""
    base = tmp_path_factory.mktemp("class")
    store, out = base / "runs.db", base / "reports"
    lesson = load(catalog.available("lessons")["key-distributions"])
    for student, steps in (("ann", 5), ("bo", 5), ("cy", 2)):
        runner = LessonRunner(lesson, Session(store=store), student=student, overrides=FEW,
                              say=lambda _: None)
        for position in range(steps):
            runner.do_step(position, lesson.steps[position])
        if steps == 5:
            runner.answer(lesson.step("zipfian"), 1, 2 if student == "ann" else 1)
            runner.answer(lesson.step("latency"), 2, "a news site: latest")
        done = workbench(store, "lesson", "report", "key-distributions", "--student", student,
                         "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert f"wrote {out / f'key-distributions-{student}.html'}" in done.stdout
    return store, out


def test_a_lab_report_has_every_step_its_figures_verdicts_and_answers(classroom):
    _, out = classroom
    ann = json.loads((out / "key-distributions-ann.json").read_text())
    assert (ann["student"], ann["done"], ann["of"]) == ("ann", 5, 5)
    zipfian = next(s for s in ann["steps"] if s["id"] == "zipfian")
    assert 0.1 < zipfian["figures"]["keys.hottest_1pct"] < 0.5 and zipfian["run_id"] is not None
    assert zipfian["checks"][0]["passed"] is True
    assert zipfian["client"].startswith("memory (in-process) (hot path")  # the client that measured it
    assert zipfian["questions"][0] == {"ask": "With zipfian choices, what do the hottest 1% of the keys get?",
                                       "choices": zipfian["questions"][0]["choices"], "answer": 2, "given": 2,
                                       "right": True}
    latency = next(s for s in ann["steps"] if s["id"] == "latency")
    assert [q["given"] for q in latency["questions"]] == [None, "a news site: latest"]
    bo = json.loads((out / "key-distributions-bo.json").read_text())
    assert next(s for s in bo["steps"] if s["id"] == "zipfian")["questions"][0]["right"] is False
    page = (out / "key-distributions-ann.html").read_text()
    assert page.count("<h2>") == 5 and 'data-chart="throughput"' in page and "class='check pass'" in page
    assert "measured by memory (in-process)" in page
    assert "✓ right" in page and "unanswered" in page and "<code>requestdistribution=zipfian</code>" in page
    cy = json.loads((out / "key-distributions-cy.json").read_text())
    assert cy["done"] == 2 and "not done yet" in (out / "key-distributions-cy.html").read_text()


def test_the_class_table_spreads_every_figure_and_says_who_has_not_finished(classroom):
    store, out = classroom
    (out / "notes.json").write_text('{"not": "a lab report"}')  # other JSON in the folder is skipped
    done = workbench(store, "lesson", "class", str(out))
    assert done.returncode == 0, done.stderr
    with (out / "class-key-distributions.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {r["student"] for r in rows} == {"ann", "bo", "cy"}
    assert {r["step"] for r in rows if r["student"] == "cy"} == {"uniform", "zipfian"}
    shares = [float(r["value"]) for r in rows
              if r["step"] == "zipfian" and r["figure"] == "keys.hottest_1pct"]
    assert len(shares) == 3 and all(0.1 < s < 0.5 for s in shares)
    page = (out / "class-key-distributions.html").read_text()
    assert "<td>cy</td><td>2 of 5</td><td>latest, hotspot, latency</td>" in page
    assert page.count("<td>class mean</td>") == 4 and "<td>class sd</td>" in page
    assert workbench(store, "lesson", "class", str(out / "nowhere")).returncode == 2


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_both_pages_render_in_headless_chromium(classroom, tmp_path):
    from PIL import Image

    _, out = classroom
    workbench(classroom[0], "lesson", "class", str(out))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars"]
    lab = (out / "key-distributions-ann.html").resolve().as_uri()
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", lab], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    charts = re.findall(r'<figure class="chart" data-chart="([^"]+)">(.*?)</figure>', dom.stdout, re.S)
    assert [name for name, _ in charts] == ["throughput", "read-p99"]
    assert all(body.count("<rect") == 5 for _, body in charts)  # the frame and one bar per run
    shot = tmp_path / "lab.png"
    done = subprocess.run([CHROMIUM, *flags, "--window-size=1150,1600", f"--screenshot={shot}", lab],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    assert (0x1F, 0x77, 0xB4) in {c for _, c in Image.open(shot).convert("RGB").getcolors(1 << 20)}
    klass = (out / "class-key-distributions.html").resolve().as_uri()
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", klass], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0 and dom.stdout.count("<table>") == 6, dom.stderr[-2000:]
