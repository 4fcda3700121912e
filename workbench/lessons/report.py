"""A student's lab report, from the progress kept in the run store.

`lab_report()` gathers one student's lesson (each step's text, figures, verdicts, every attempt at
its questions with its time) into a plain dict, written as JSON beside a self-contained HTML page
(inline SVG and CSS, nothing fetched) made with the experiment report's page and tables. The JSON
holds no answer key: `workbench lesson class` (grades.py) grades the attempts from the lesson
file. Its `digest` is the SHA-256 of the canonical JSON (sorted keys, no spaces, UTF-8) of
`digested()`: the lesson, the student, the run IDs, the restarts and each step's run ID, figures,
verdicts and attempts. A report edited by hand no longer matches it (one whose digest was recomputed too still
does: it is a check against edits, not a signature).

    {"format": "workbench-lab-report/2", "lesson", "title", "goal", "student", "made_at",
     "done", "of", "runs": [run IDs in step order],
     "restarts": [{"at": ISO time, "steps_done": how many steps were done then}],
     "steps": [{"id", "title", "text", "action", "measures", "done", "run_id", "server", "client",
                "figures": {name: value, "reps.<name>": [each run's value]},
                "timeline": the run over time, its servers' figures and spike lines, or null for a
                            run with no server figures (experiments/timeline.py's RunTimeline),
                "checks": [{"expect", "passed", "values", "sentence"}],
                "questions": [{"ask", "choices", "attempts_allowed",
                               "attempts": [{"given": choice number or text, "at": ISO time}]}]}],
     "digest": "sha256:<hex>"}

A step not done holds the attempts given before a restart (`lesson run --restart` keeps them);
they count once the step is done again.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import time
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.experiments.charts import COLOURS, FRAME, chart_open, esc, num
from workbench.experiments.page import PAGE, html_table
from workbench.experiments.timeline import RunTimeline, run_timeline
from workbench.experiments.timeline_chart import timeline_html
from workbench.lessons.answers import Attempt, Graded, attempts_of, grade, is_right, stamp
from workbench.lessons.model import Lesson
from workbench.lessons.progress import lesson_restarts, lesson_steps, lesson_students
from workbench.lessons.runner import show_value, verdict_lines
from workbench.results.store import RunStore

FORMAT = "workbench-lab-report/2"
# The figures a report shows per measured step, when the step has them.
SHOWN = ("throughput", "errors", "read.p50", "read.p99", "read.service.p99", "update.p50", "update.p99",
         "insert.p99", "in_flight", "keys.hottest_1pct")


def shown(lesson: Lesson, step_id: str) -> list[str]:
    """The figures shown of a step: SHOWN, then every other figure of it a check reads."""
    read = [path for s in lesson.steps for c in s.checks for ref, path in c.expect.references
            if ref == step_id]
    return list(dict.fromkeys([*SHOWN, *read]))


def lab_report(lesson: Lesson, student: str, store: object = None) -> dict:
    """The student's lesson as a JSON-ready dict (FORMAT); refused for a student with no progress
    in the lesson (an empty report would look like a hand-in)."""
    with RunStore(store if store not in (None, False) else None) as s:
        recorded = {d.step: d for d in lesson_steps(s, lesson.name, student, kept=True)}
        restarts = lesson_restarts(s, lesson.name, student)
        if not recorded and not restarts:
            others = lesson_students(s, lesson.name)
            raise WorkbenchError(f"no progress of student {student!r} in lesson {lesson.name}; students "
                                 f"with progress: {', '.join(others) if others else 'none'}",
                                 "give --student NAME as the lesson was run with it")
        where = {d.run_id: _where(s, d.run_id) for d in recorded.values() if d.run_id is not None}
    steps = []
    for step in lesson.steps:
        kept = recorded.get(step.id)
        answers = kept.answers if kept else {}
        record = kept if kept and kept.done else None
        steps.append({
            "id": step.id, "title": step.title, "text": step.text, "action": step.action,
            "measures": step.measures, "done": record is not None,
            "run_id": record.run_id if record else None,
            # as the server answered, and the client that measured the run
            "server": where.get(record.run_id, ("", "", None))[0] if record else "",
            "client": where.get(record.run_id, ("", "", None))[1] if record else "",
            # the run over time, client and servers, with its spikes (None: no server figures)
            "timeline": where.get(record.run_id, ("", "", None))[2] if record else None,
            "figures": dict(record.figures) if record else {},
            "checks": record.checks if record else [],
            "questions": [{"ask": q.ask, "choices": list(q.choices), "attempts_allowed": q.attempts,
                           "attempts": [{"given": a.given, "at": stamp(a.at)}
                                        for a in grade(q, attempts_of(answers.get(str(n)))).attempts]}
                          for n, q in enumerate(step.questions, 1)],
        })
    report = {"format": FORMAT, "lesson": lesson.name, "title": lesson.title, "goal": lesson.goal,
              "student": student, "made_at": time.strftime("%Y-%m-%d %H:%M:%S"),
              "done": sum(s["done"] for s in steps), "of": len(steps),
              "runs": [s["run_id"] for s in steps if s["run_id"] is not None],
              "restarts": [{"at": stamp(r.at), "steps_done": r.steps_done} for r in restarts], "steps": steps}
    report["digest"] = digest(report)
    return report


def digested(report: dict) -> dict:
    """What a report's digest covers."""
    return {"lesson": report.get("lesson"), "student": report.get("student"), "runs": report.get("runs"),
            "restarts": report.get("restarts"),
            "steps": [{"id": s.get("id"), "done": s.get("done"), "run_id": s.get("run_id"),
                       "figures": s.get("figures"), "checks": s.get("checks"),
                       "attempts": [q.get("attempts") for q in s.get("questions", [])]}
                      for s in report.get("steps", [])]}


def digest(report: dict) -> str:
    canonical = json.dumps(digested(report), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _where(store: RunStore, run_id: int) -> tuple[str, str, dict | None]:
    """The run's server and client as it recorded them, and its timeline (experiments/timeline.py)
    when it has server figures."""
    try:
        result = store.result(run_id)
    except WorkbenchError:  # a run removed from the store since: the report still shows its figures
        return "", "", None
    timeline = run_timeline(result)
    return result.server, result.client, None if timeline is None else timeline.as_dict()


def report_attempts(question: dict) -> list[Attempt]:
    """A report's attempts at one question (their times as written: not needed to grade)."""
    raw = question.get("attempts") if isinstance(question, dict) else None
    return [Attempt(a["given"], 0.0) for a in raw or [] if isinstance(a, dict) and "given" in a]


def write_lab_report(report: dict, lesson: Lesson, out: Path) -> tuple[Path, Path]:
    """<lesson>-<student>.html and .json in `out` (report_name()); a file there that is the lab
    report of another student or lesson is refused, not overwritten."""
    out.mkdir(parents=True, exist_ok=True)
    name = report_name(report["lesson"], report["student"])
    html_path, json_path = out / f"{name}.html", out / f"{name}.json"
    try:
        there = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        there = None
    if isinstance(there, dict) and (there.get("lesson"), there.get("student")) != (report["lesson"],
                                                                                   report["student"]):
        raise WorkbenchError(f"{json_path} is the lab report of {there.get('student')!r} in lesson "
                             f"{there.get('lesson')!r}: not overwritten with {report['student']!r}'s",
                             "write it into another folder with --out DIR")
    json_path.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    html_path.write_text(render_lab_report(report, lesson))
    return html_path, json_path


def report_name(lesson: str, student: str) -> str:
    """A lab report's file name, without its suffix: <lesson>-<student>, the name kept to letters,
    digits, _, . and -; a name that had to change gets 8 hex digits of its SHA-256 too, so that no
    two students share a file ("a b" and "a_b", "../evil" and ".._evil")."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", student)
    if safe != student or not safe.strip("."):
        safe += "-" + hashlib.sha256(student.encode()).hexdigest()[:8]
    return f"{lesson}-{safe}"


def render_lab_report(report: dict, lesson: Lesson) -> str:
    """The page; its attempts marked right or wrong from the lesson file, the right answer never
    shown (answer_lines)."""
    h = esc
    body = [f"<h1>{h(report['title'])}</h1>",
            f"<p class=meta>lab report of {h(report['student'])} · lesson {h(report['lesson'])} · "
            f"{report['done']} of {report['of']} steps done · {h(report['made_at'])}</p>",
            markdown(report["goal"])]
    if restarts := restarts_line(report):
        body.append(f"<p class=noisy>{h(restarts)}</p>")
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
        body += _step_html(step, lesson)
    return PAGE.format(title=h(f"{report['title']}: {report['student']}"),
                       body="\n".join(body) + _STYLE)


def restarts_line(report: dict) -> str:
    """The report's restarts in a sentence ("" for none)."""
    restarts = report.get("restarts") or []
    if not restarts:
        return ""
    each = ", ".join(f"{r['at']} ({r['steps_done']} step{'s' if r['steps_done'] != 1 else ''} done then)"
                     for r in restarts)
    return (f"Started over {len(restarts)} time{'s' if len(restarts) > 1 else ''}: {each}; every answer "
            "given before was kept.")


def _step_html(step: dict, lesson: Lesson) -> list[str]:
    """A step's figures, verdicts and answers; of a step not done, the answers given before a
    restart, if any."""
    h, body = esc, []
    lesson_step = next((s for s in lesson.steps if s.id == step["id"]), None)
    questions = lesson_step.questions if lesson_step else ()
    entries = [step["questions"][i] if i < len(step["questions"]) else {} for i in range(len(questions))]
    if not step["done"]:
        body.append("<p class=noisy>not done yet</p>")
        if not any(report_attempts(e) for e in entries):
            return body
        body.append("<p class=meta>answered before the lesson was started over (they count once the "
                    "step is done again):</p>")
    if step["figures"]:
        names = shown(lesson, step["id"]) if lesson_step else SHOWN
        rows = [[name, show_value(f"{step['id']}.{name}", step["figures"][name])]
                for name in names if name in step["figures"]]
        on = f", on {step['server']}" if step.get("server") else ""
        on += f", measured by {step['client']}" if step.get("client") else ""
        run = f" (run {step['run_id']}{on})" if step["run_id"] is not None else ""
        body.append(html_table(["figure", "value"], rows, caption=f"measured{run}"))
    if step.get("timeline"):
        body += timeline_html(RunTimeline.from_dict(step["timeline"]), f"run {step['run_id']}")
    for check in step["checks"]:
        first, sentence = verdict_lines(check)
        css = {True: "pass", False: "fail", None: "unjudged"}[check["passed"]]
        body.append(f"<div class='check {css}'><p><b>{h(first)}</b></p>"
                    f"<p>{h(sentence.strip())}</p></div>")
    for i, (q, entry) in enumerate(zip(questions, entries, strict=True), 1):
        body.append(f"<p><b>Question {i}:</b> {h(q.ask)}</p>")
        if q.choices:
            body.append("<ol>" + "".join(f"<li>{h(c)}</li>" for c in q.choices) + "</ol>")
        graded = grade(q, report_attempts(entry))
        css = "" if graded.answered else " class=noisy"
        body += [f"<p{css}>{h(line)}</p>" for line in answer_lines(graded)]
    return body


def answer_lines(graded: Graded) -> list[str]:
    """A question's attempts as the lab report shows them: each with its mark, and whether the
    question is locked; never the right answer (a report goes round a class: the key is the app's
    and `workbench lesson answer`'s, once a question is locked)."""
    q = graded.question
    if not graded.answered:
        return ["unanswered"]
    if q.free:
        return [f"your answer: {graded.attempts[0].given}"]
    marks = ", ".join(f"{a.given} {'✓' if is_right(q, a.given) else '✗'}" for a in graded.attempts)
    state = ("right: locked" if graded.right else "not right: locked (no attempt left)" if graded.locked
             else f"not right: {graded.left} of {graded.allowed} attempts left")
    return [f"your answer{'s' if len(graded.attempts) > 1 else ''}: {marks}", state]


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
