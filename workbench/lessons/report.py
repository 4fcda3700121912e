"""A student's lab report and a class's table, from the progress kept in the run store.

`lab_report()` gathers one student's lesson (each step's text, figures, verdicts, answers) into a
plain dict, written as JSON beside a self-contained HTML page (inline SVG and CSS, nothing
fetched) made with the experiment report's page and tables. `class_table()` combines the JSON
files of a whole class: every student's figures per step, their spread across the class, and
who has not finished which step, as HTML and a tidy CSV.
"""

from __future__ import annotations

import csv
import html
import json
import re
import statistics
import time
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.experiments.charts import COLOURS, FRAME, chart_open, esc, num
from workbench.experiments.page import PAGE, html_table
from workbench.lessons.model import Lesson
from workbench.lessons.progress import lesson_steps
from workbench.lessons.runner import show_value, verdict_lines
from workbench.results.store import RunStore

FORMAT = "workbench-lab-report/1"
# The figures a report shows per measured step, when the step has them.
SHOWN = ("throughput", "errors", "read.p50", "read.p99", "read.service.p99", "update.p50", "update.p99",
         "insert.p99", "in_flight", "keys.hottest_1pct")


def lab_report(lesson: Lesson, student: str, store: object = None) -> dict:
    """The student's lesson as a JSON-ready dict (FORMAT)."""
    with RunStore(store if store not in (None, False) else None) as s:
        done = {d.step: d for d in lesson_steps(s, lesson.name, student)}
        where = {d.run_id: _where(s, d.run_id) for d in done.values() if d.run_id is not None}
    steps = []
    for step in lesson.steps:
        record = done.get(step.id)
        steps.append({
            "id": step.id, "title": step.title, "text": step.text, "action": step.action,
            "measures": step.measures, "done": record is not None,
            "run_id": record.run_id if record else None,
            # as the server answered, and the client that measured the run
            "server": where.get(record.run_id, ("", ""))[0] if record else "",
            "client": where.get(record.run_id, ("", ""))[1] if record else "",
            "figures": {k: v for k, v in (record.figures if record else {}).items()
                        if not isinstance(v, list)},  # a repeated step's means, not each run's
            "checks": record.checks if record else [],
            "questions": [_answer(q, number, record) for number, q in enumerate(step.questions, 1)],
        })
    return {"format": FORMAT, "lesson": lesson.name, "title": lesson.title, "goal": lesson.goal,
            "student": student, "made_at": time.strftime("%Y-%m-%d %H:%M:%S"), "steps": steps,
            "done": sum(s["done"] for s in steps), "of": len(steps)}


def _where(store: RunStore, run_id: int) -> tuple[str, str]:
    """The run's server and client as it recorded them."""
    try:
        result = store.result(run_id)
    except WorkbenchError:  # a run removed from the store since: the report still shows its figures
        return "", ""
    return result.server, result.client


def _answer(question, number: int, record) -> dict:
    given = record.answers.get(str(number)) if record else None
    right = None if given is None or question.free else int(given) == question.answer
    return {"ask": question.ask, "choices": list(question.choices), "answer": question.answer,
            "given": given, "right": right}


def write_lab_report(report: dict, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{report['lesson']}-{_safe(report['student'])}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    stem.with_suffix(".html").write_text(render_lab_report(report))
    return stem.with_suffix(".html"), stem.with_suffix(".json")


def render_lab_report(report: dict) -> str:
    h = esc
    body = [f"<h1>{h(report['title'])}</h1>",
            f"<p class=meta>lab report of {h(report['student'])} · lesson {h(report['lesson'])} · "
            f"{report['done']} of {report['of']} steps done · {h(report['made_at'])}</p>",
            f"<p>{h(report['goal'])}</p>"]
    measured = [s for s in report["steps"] if s["measures"] and s["done"]]
    if measured:
        labels = [s["id"] for s in measured]
        body.append('<div class=pair>')
        body.append(_bars("throughput", "throughput of each run (ops/s)", labels,
                          [s["figures"].get("throughput") for s in measured], "ops/s"))
        op = next((o for o in ("read", "update", "insert", "scan") if any(f"{o}.p99" in s["figures"]
                                                                           for s in measured)), None)
        if op:
            body.append(_bars(f"{op}-p99", f"{op} p99 response time of each run (ms)", labels,
                              [s["figures"].get(f"{op}.p99") for s in measured], "ms"))
        body.append("</div>")
    for number, step in enumerate(report["steps"], 1):
        body.append(f"<h2>{number}. {h(step['title'])}</h2>")
        body.append(markdown(step["text"]))
        if not step["done"]:
            body.append("<p class=noisy>not done yet</p>")
            continue
        if step["figures"]:
            rows = [[name, show_value(f"{step['id']}.{name}", value)]
                    for name, value in step["figures"].items() if name in SHOWN]
            on = f", on {step['server']}" if step.get("server") else ""
            on += f", measured by {step['client']}" if step.get("client") else ""
            run = f" (run {step['run_id']}{on})" if step["run_id"] is not None else ""
            body.append(html_table(["figure", "value"], rows, caption=f"measured{run}"))
        for check in step["checks"]:
            first, sentence = verdict_lines(check)
            css = {True: "pass", False: "fail", None: "unjudged"}[check["passed"]]
            body.append(f"<div class='check {css}'><p><b>{h(first)}</b></p>"
                        f"<p>{h(sentence.strip())}</p></div>")
        for i, q in enumerate(step["questions"], 1):
            body.append(f"<p><b>Question {i}:</b> {h(q['ask'])}</p>")
            if q["choices"]:
                body.append("<ol>" + "".join(f"<li>{h(c)}</li>" for c in q["choices"]) + "</ol>")
            if q["given"] is None:
                body.append("<p class=noisy>unanswered</p>")
            elif q["right"] is None:
                body.append(f"<p>answer: {h(q['given'])}</p>")
            else:
                mark = "✓ right" if q["right"] else f"✗ (the answer is {q['answer']})"
                body.append(f"<p>answer: {h(q['given'])} {mark}</p>")
    return PAGE.format(title=h(f"{report['title']}: {report['student']}"),
                             body="\n".join(body) + _STYLE)


_STYLE = """<style>
.check { border-left: 4px solid #999; padding: 0 0.8em; margin: 0.6em 0; }
.check.pass { border-color: #2ca02c; } .check.fail { border-color: #d62728; }
</style>"""


def markdown(text: str) -> str:
    """The lesson texts' Markdown: paragraphs, `code`, **strong**, *emphasis*, escaped."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        if not block.strip():
            continue
        if block.strip() == "---":
            out.append("<hr>")
            continue
        t = html.escape(" ".join(block.split()))
        t = re.sub(r"`([^`]+)`", r"<code>\1</code>", t)
        t = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", t)
        t = re.sub(r"\*([^*]+)\*", r"<em>\1</em>", t)
        out.append(f"<p>{t}</p>")
    return "\n".join(out)


def _bars(kind: str, caption: str, labels: list[str], values: list[float | None], unit: str) -> str:
    """Vertical bars, one per step, with their values on top."""
    width, height, left, right, top, bottom = FRAME
    plot_w, plot_h = width - left - right, height - top - bottom
    out = chart_open(kind, caption)
    known = [v for v in values if v is not None]
    peak = max(known) if known and max(known) > 0 else 1.0
    slot = plot_w / max(1, len(labels))
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        x = left + i * slot + slot * 0.15
        bar_h = 0 if value is None else plot_h * value / peak
        y = top + plot_h - bar_h
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" height="{bar_h:.1f}" '
                   f'fill="{COLOURS[0]}"/>')
        shown = "-" if value is None else num(value)
        out.append(f'<text x="{x + slot * 0.35:.1f}" y="{y - 4:.1f}" text-anchor="middle">{shown}</text>')
        out.append(f'<text x="{x + slot * 0.35:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                   f'{esc(label)}</text>')
    out.append(f'<text class=axis x="{left - 8}" y="{top - 10}" text-anchor="start">{esc(unit)}</text>')
    out.append("</svg></figure>")
    return "\n".join(out)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "student"


# -- the class ------------------------------------------------------------------------------

def read_reports(folder: Path) -> list[dict]:
    """Every lab report (JSON, FORMAT) in the folder, in name order; other JSON files are skipped."""
    reports = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("format") == FORMAT:
            reports.append(data)
    return reports


def class_table(reports: list[dict], out: Path) -> list[tuple[Path, Path]]:
    """Per lesson: class-<lesson>.csv (tidy: student, step, figure, value) and .html."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for lesson in sorted({r["lesson"] for r in reports}):
        mine = sorted((r for r in reports if r["lesson"] == lesson), key=lambda r: r["student"])
        csv_path, html_path = out / f"class-{lesson}.csv", out / f"class-{lesson}.html"
        with csv_path.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["student", "step", "figure", "value"])
            for r in mine:
                for step in r["steps"]:
                    for name, value in step["figures"].items():
                        w.writerow([r["student"], step["id"], name, value])
        html_path.write_text(_class_html(mine))
        written.append((html_path, csv_path))
    return written


def _class_html(reports: list[dict]) -> str:
    h = esc
    first = reports[0]
    body = [f"<h1>{h(first['title'])}: the class</h1>",
            f"<p class=meta>lesson {h(first['lesson'])} · {len(reports)} students</p>"]
    missing = [[r["student"], f"{r['done']} of {r['of']}",
                ", ".join(s["id"] for s in r["steps"] if not s["done"]) or "-"] for r in reports]
    body.append(html_table(["student", "steps done", "not done"], missing, caption="progress"))
    rows = [[r["student"], sum(c["passed"] is True for s in r["steps"] for c in s["checks"]),
             sum(c["passed"] is False for s in r["steps"] for c in s["checks"]),
             sum(q["right"] is True for s in r["steps"] for q in s["questions"]),
             sum(q["given"] is None for s in r["steps"] for q in s["questions"])] for r in reports]
    body.append(html_table(["student", "checks ✓", "checks ✗", "right answers", "unanswered"], rows,
                            caption="checks and answers"))
    for step in first["steps"]:
        if not step["measures"]:
            continue
        names = [n for n in SHOWN if any(n in _step(r, step["id"])["figures"] for r in reports)]
        if not names:
            continue
        rows = []
        for r in reports:
            figs = _step(r, step["id"])["figures"]
            rows.append([r["student"], *(show_value(f"x.{n}", figs[n]) if n in figs else "-" for n in names)])
        for label, fn in (("mean", statistics.fmean), ("sd", _sd), ("min", min), ("max", max)):
            cells = []
            for n in names:
                values = [_step(r, step["id"])["figures"][n] for r in reports
                          if n in _step(r, step["id"])["figures"]]
                value = fn(values) if values else None
                cells.append("-" if value is None else show_value(f"x.{n}", value))
            rows.append([f"class {label}", *cells])
        body.append(f"<h2>{h(step['title'])} ({h(step['id'])})</h2>")
        body.append(html_table(["student", *names], rows))
    return PAGE.format(title=h(f"{first['title']}: the class"), body="\n".join(body))


def _step(report: dict, step_id: str) -> dict:
    return next((s for s in report["steps"] if s["id"] == step_id), {"figures": {}})


def _sd(values: list[float]) -> float | None:
    return statistics.stdev(values) if len(values) > 1 else None
