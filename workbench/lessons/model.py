"""A lesson file: TOML for the steps, Markdown for the text; read and checked here.

    title = "Key distributions"
    goal = "See where uniform, zipfian, latest and hotspot keys send the requests."
    minutes = 6                       # expected duration at the default scale
    text = "key-distributions.md"     # default: the TOML's name with .md
    [[clusters]]                      # the clusters the lesson starts (none: memory binding)
    preset = "cassandra-3"
    memory = "3G"                     # what they need, told to the student before anything starts
    cpus = 0.5                        # optional: each node capped at half a core (clusters/cgroups.py)
    [properties]                      # -p properties of every load and run
    recordcount = 10000

    [[steps]]
    id = "zipfian"                    # the Markdown section "## Some title {#zipfian}"
    action = "run"                    # none start stop load run set pause kill resume restart settle
    workload = "workloadc"            # a workload name or a file beside the lesson
    properties = { requestdistribution = "zipfian" }
    during = [{ at_s = 5, do = "pause", node = "node2" }, { at_s = 10, do = "resume", node = "node2" }]
    # add_node, remove_node, restart: end_after_s = 30 ends the run 30 s after the change is done
    [[steps.checks]]
    expect = "zipfian.keys.hottest_1pct > 10 * uniform.keys.hottest_1pct"
    pass = "Why it passed, in words."
    fail = "What it means that it did not."
    [[steps.questions]]
    ask = "Which distribution..."
    choices = ["uniform", "zipfian"]  # multiple choice, checked; without choices: free text
    answer = 2                        # 1-based; never in a lab report: graded from this file
    attempts = 2                      # answers allowed before it locks (default 1; free text: 1)

Every mistake is a `Problem` with the file's line: `load()` raises LessonError listing all of
them, so `workbench lesson show FILE` prints one line per mistake.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.databases import databases, find, in_process
from workbench.errors import WorkbenchError
from workbench.lessons import checks
from workbench.lessons.during import NODE_ACTIONS, During, parse_during

ACTIONS = ("none", "start", "stop", "load", "run", "set", "pause", "kill", "resume", "restart", "settle")
MEASURED = ("load", "run")
_SIZE = re.compile(r"^\d+(\.\d+)?[MG]$")
_SECTION = re.compile(r"^##\s+(?P<title>.*?)\s*\{#(?P<id>[A-Za-z0-9_-]+)\}\s*$")
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

LESSON_KEYS = {"title", "goal", "minutes", "text", "clusters", "properties", "steps", "db"}
STEP_KEYS = {"id", "action", "workload", "properties", "during", "checks", "questions", "cluster",
             "node", "db", "rate", "rate_of", "repeat"}
CHECK_KEYS = {"expect", "pass", "fail"}
QUESTION_KEYS = {"ask", "choices", "answer", "attempts"}


@dataclass(frozen=True)
class Problem:
    line: int
    what: str
    fix: str

    def show(self, path: Path) -> str:
        return f"{path}:{self.line}: {self.what} ({self.fix})"


class LessonError(WorkbenchError):
    """A lesson file with mistakes; `problems` has one per mistake, with its line."""

    def __init__(self, path: Path, problems: list[Problem]) -> None:
        self.path, self.problems = path, problems
        first = problems[0].show(path)
        more = f" (and {len(problems) - 1} more: workbench lesson show {path})" if len(problems) > 1 else ""
        super().__init__(first + more)

    def lines(self) -> list[str]:
        return [p.show(self.path) for p in self.problems]


@dataclass(frozen=True)
class Check:
    expect: checks.Expression
    passed: str
    failed: str
    line: int


@dataclass(frozen=True)
class Question:
    ask: str
    choices: tuple[str, ...]
    answer: int | None  # 1-based index of the right choice; None: free text
    line: int
    attempts: int = 1  # answers allowed before it locks (answers.py)

    @property
    def free(self) -> bool:
        return not self.choices


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    text: str
    action: str = "none"
    workload: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    during: tuple[During, ...] = ()
    checks: tuple[Check, ...] = ()
    questions: tuple[Question, ...] = ()
    cluster: str | None = None  # start: the preset; others: the lesson's cluster it acts on
    node: str | None = None
    db: str | None = None  # "memory" to run on the memory binding while a cluster is up
    rate: float | None = None  # offered rate as a share of rate_of's throughput (0.5 = 50%)
    rate_of: str | None = None  # an earlier measured step (an unthrottled run)
    repeat: int = 1  # runs of the step; its figures are their means, welch_p compares them
    line: int = 0

    @property
    def measures(self) -> bool:
        return self.action in MEASURED

    @property
    def kind(self) -> str:
        """What the step is: its action, or for one without: "question" or "text"."""
        return self.action if self.action != "none" else "question" if self.questions else "text"


@dataclass(frozen=True)
class ClusterNeed:
    preset: str
    memory: str
    cpus: float = 0.0  # each node's cap in cores (clusters/cgroups.py; 0: the preset's own)

    def describe(self) -> str:
        capped = f", each node capped at {self.cpus:g} of a core" if self.cpus else ""
        return f"{self.preset} (needs {self.memory} of memory{capped})"


@dataclass(frozen=True)
class Lesson:
    name: str
    path: Path
    title: str
    goal: str
    minutes: float
    intro: str
    clusters: tuple[ClusterNeed, ...]
    properties: dict[str, str]
    steps: tuple[Step, ...]

    def step(self, step_id: str) -> Step:
        return next(s for s in self.steps if s.id == step_id)


class _Lines:
    """Where things are in the TOML text, since tomllib keeps no positions."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.steps = [i + 1 for i, line in enumerate(self.lines) if line.strip() == "[[steps]]"]

    def key(self, name: str, start: int = 1, end: int | None = None) -> int:
        """The line of `name = ...` between lines start and end (1-based), else start."""
        pattern = re.compile(rf"^\s*{re.escape(name)}\s*=")
        for number in range(start, (end or len(self.lines)) + 1):
            if number - 1 < len(self.lines) and pattern.match(self.lines[number - 1]):
                return number
        return start

    def step(self, index: int) -> tuple[int, int]:
        """First and last line of the index-th [[steps]] table."""
        if index >= len(self.steps):  # steps written as an inline array: the key's line
            line = self.key("steps")
            return line, line
        start = self.steps[index]
        nxt = self.steps[index + 1] - 1 if index + 1 < len(self.steps) else len(self.lines)
        return start, nxt

    def table(self, header: str, start: int, end: int, index: int) -> int:
        """The line of the index-th `[[header]]` between start and end."""
        found = [n for n in range(start, end + 1) if self.lines[n - 1].strip() == f"[[{header}]]"]
        return found[index] if index < len(found) else start


def _sections(markdown: str) -> tuple[str, dict[str, tuple[str, str, int]]]:
    """The intro (before the first step section) and id -> (title, text, line)."""
    intro: list[str] = []
    sections: dict[str, tuple[str, list[str], int]] = {}
    current: list[str] = intro
    for number, line in enumerate(markdown.splitlines(), 1):
        match = _SECTION.match(line)
        if match:
            current = []
            sections.setdefault(match["id"], (match["title"], current, number))
        elif line.startswith("# ") and current is intro and not intro:
            continue  # the document's own title: the lesson's title is in the TOML
        else:
            current.append(line)
    return "\n".join(intro).strip(), {k: (t, "\n".join(body).strip(), n) for k,
                     (t, body, n) in sections.items()}


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _properties(raw: Any) -> dict[str, str] | None:
    if not isinstance(raw, dict):
        return None
    out = {}
    for key, value in raw.items():
        if isinstance(value, dict | list):
            return None
        out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


def load(path: str | Path) -> Lesson:
    """Read and check a lesson file; LessonError lists every mistake with its line."""
    path = Path(path)
    try:
        source = path.read_text()
    except OSError as exc:
        raise WorkbenchError(f"cannot read lesson {path}: {exc.strerror}",
                             "give a lesson name (workbench lesson list) or a .toml file") from None
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise LessonError(path, [Problem(int(match[1]) if match else 1, f"not valid TOML: {exc}",
                                         "fix the syntax at that line")]) from None
    lines = _Lines(source)
    problems: list[Problem] = []

    def problem(line: int, what: str, fix: str) -> None:
        problems.append(Problem(line, what, fix))

    for key in sorted(set(data) - LESSON_KEYS):
        problem(lines.key(key), f"unknown key {key!r}",
                f"the lesson keys are {', '.join(sorted(LESSON_KEYS))}")
    title = _text(data.get("title"))
    goal = _text(data.get("goal"))
    if title is None:
        problem(1, "the lesson has no title", 'add title = "..." at the top')
    if goal is None:
        problem(lines.key("goal"), "the lesson has no goal", 'add goal = "what students will see and why"')
    minutes = data.get("minutes")
    if not isinstance(minutes, int | float) or isinstance(minutes, bool) or not 0 < minutes <= 15:
        problem(lines.key("minutes"), f"minutes = {minutes!r}: the expected duration must be 1 to 15 minutes",
                "a lesson fits a class slot: split a longer one in two")
        minutes = 15

    clusters: list[ClusterNeed] = []
    raw_clusters = data.get("clusters", [])
    if not isinstance(raw_clusters, list):
        problem(lines.key("clusters"), "clusters must be [[clusters]] tables",
                'write [[clusters]] preset = "..."')
        raw_clusters = []
    for i, raw in enumerate(raw_clusters):
        line = lines.table("clusters", 1, len(lines.lines), i)
        if not isinstance(raw, dict) or not isinstance(raw.get("preset"), str):
            problem(line, "a [[clusters]] entry without a preset",
                    'add preset = "cassandra-single" (workbench cluster presets)')
            continue
        memory = raw.get("memory")
        if not isinstance(memory, str) or not _SIZE.match(memory):
            problem(lines.key("memory", line), f"cluster {raw['preset']}: memory = {memory!r}",
                    'declare what it needs, like memory = "3G", so a student knows before it starts')
            memory = "?"
        from workbench.config import catalog

        if raw["preset"] not in catalog.available("clusters"):
            problem(line, f"unknown cluster preset {raw['preset']!r}", "see workbench cluster presets")
        for key in sorted(set(raw) - {"preset", "memory", "cpus"}):
            problem(lines.key(key, line), f"cluster {raw['preset']}: unknown key {key!r}",
                    "a [[clusters]] entry has preset, memory and cpus")
        cpus = raw.get("cpus", 0.0)
        if not isinstance(cpus, int | float) or isinstance(cpus, bool) or not 0 <= cpus <= 64:
            problem(lines.key("cpus", line), f"cluster {raw['preset']}: cpus = {cpus!r}",
                    "cpus caps each node's cores, like cpus = 0.5 (0: no cap)")
            cpus = 0.0
        clusters.append(ClusterNeed(raw["preset"], memory, float(cpus)))

    common = _properties(data.get("properties", {}))
    if common is None:
        problem(lines.key("properties"), "[properties] must map names to plain values",
                "write key = value lines")
        common = {}

    text_name = data.get("text", path.with_suffix(".md").name)
    text_path = path.parent / str(text_name)
    try:
        intro, sections = _sections(text_path.read_text())
    except OSError:
        problem(lines.key("text"), f"the lesson's text {text_path.name} cannot be read",
                f"write {text_path.name} beside {path.name}: a ## Title {{#step-id}} section per step")
        intro, sections = "", {}

    steps: list[Step] = []
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        problem(lines.key("steps"), "the lesson has no steps", "add [[steps]] tables")
        raw_steps = []
    seen: dict[str, Step] = {}
    broken: set[str] = set()  # steps refused whole (an unknown action): no second error for them
    declared = {c.preset for c in clusters}
    started = False
    for index, raw in enumerate(raw_steps):
        start, end = lines.step(index)
        if not isinstance(raw, dict):
            problem(start, "a step must be a table", "write [[steps]]")
            continue
        step = _step(raw, index, start, end, lines, seen, sections, declared, started, problem, path,
                     broken)
        if step is None:
            continue
        started = started or step.action == "start"
        seen[step.id] = step
        steps.append(step)
    for step_id, (_, _, line) in sections.items():
        if step_id not in seen and not any(p.what.startswith(f"step {step_id!r}") for p in problems):
            problems.append(Problem(line, f"{text_path.name}: section {{#{step_id}}} has no step",
                                    f"add a [[steps]] with id = \"{step_id}\" to {path.name}, or remove it"))
    if problems:
        problems.sort(key=lambda p: p.line)
        raise LessonError(path, problems)
    return Lesson(path.stem, path, title or "", goal or "", float(minutes), intro, tuple(clusters), common,
                  tuple(steps))


def _step(raw: dict, index: int, start: int, end: int, lines: _Lines, seen: dict[str, Step],
          sections: dict, declared: set[str], started: bool, problem, path: Path,
          broken: set[str]) -> Step | None:
    def at(key: str) -> int:
        return lines.key(key, start, end)

    step_id = raw.get("id")
    if not isinstance(step_id, str) or not _ID.match(step_id):
        problem(at("id"), f"step {index + 1} has no usable id ({step_id!r})",
                'give it id = "a_name" (letters, digits, _): checks refer to it as a_name.throughput')
        return None
    if step_id in seen:
        problem(at("id"), f"step {step_id!r} is defined twice", "give each step its own id")
        return None
    for key in sorted(set(raw) - STEP_KEYS):
        problem(at(key), f"step {step_id!r}: unknown key {key!r}",
                f"step keys are {', '.join(sorted(STEP_KEYS))}")
    action = raw.get("action", "none")
    if action not in ACTIONS:
        problem(at("action"), f"step {step_id!r}: unknown action {action!r}",
                f"actions are {', '.join(ACTIONS)}")
        broken.add(step_id)
        return None  # what else is wrong with it depends on the action it was meant to have
    if step_id not in sections:
        problem(start, f"step {step_id!r} has no text",
                f"add a section '## Its title {{#{step_id}}}' to {path.with_suffix('.md').name}")
        title, text = step_id, ""
    else:
        title, text, _ = sections[step_id]
    workload = raw.get("workload")
    if action in MEASURED:
        if not isinstance(workload, str):
            problem(at("action"), f"step {step_id!r}: a {action} needs a workload",
                    'add workload = "workloada"')
        elif _workload_path(workload, path) is None:
            problem(at("workload"), f"step {step_id!r}: workload {workload!r} not found",
                    "name a shipped workload (workloada...workloadf) or a file beside the lesson")
    elif workload is not None:
        problem(at("workload"), f"step {step_id!r}: a workload only goes with a load or a run",
                'set action = "run" or remove the workload')
    props = _properties(raw.get("properties", {}))
    if props is None:
        problem(at("properties"), f"step {step_id!r}: properties must map names to plain values",
                "write properties = { key = value }")
        props = {}
    cluster = raw.get("cluster")
    if action == "start":
        if cluster not in declared:
            problem(at("cluster") if cluster else at("action"),
                    f"step {step_id!r}: starts {cluster!r}, which the lesson does not declare",
                    'list it under [[clusters]] with its memory, and name it here: cluster = "..."')
    elif cluster is not None:
        problem(at("cluster"), f"step {step_id!r}: cluster only goes with action = \"start\"",
                "the other actions act on the cluster the lesson started")
    node = raw.get("node")
    if action in NODE_ACTIONS:
        if not isinstance(node, str):
            problem(at("action"), f"step {step_id!r}: {action} needs a node", 'add node = "node2"')
        if not started:
            problem(at("action"), f"step {step_id!r}: {action} before any cluster was started",
                    'add a step with action = "start" before it')
    elif action == "settle" and not started:  # flush, then wait out the compactions (clusters/settle.py)
        problem(at("action"), f"step {step_id!r}: settle before any cluster was started",
                'add a step with action = "start" before it')
    elif node is not None:
        problem(at("node"), f"step {step_id!r}: node only goes with pause, kill, resume, restart",
                "remove it, or use a during = [...] entry inside a run")
    db = raw.get("db")
    if db is not None and not (isinstance(db, str) and find(db) is not None and in_process(db)):
        local = " or ".join(f'"{d.name}"' for d in databases() if d.in_process)
        problem(at("db"), f"step {step_id!r}: db = {db!r}", f"the only db a step can name is {local}, "
                "in-process (the others come from the cluster the lesson started)")
    during = parse_during(raw.get("during", []), step_id, action, started, at, problem)
    repeat = raw.get("repeat", 1)
    if not isinstance(repeat, int) or isinstance(repeat, bool) or not 1 <= repeat <= 10:
        problem(at("repeat"), f"step {step_id!r}: repeat = {repeat!r}", "the number of runs, 1 to 10")
        repeat = 1
    elif repeat > 1 and action != "run":
        problem(at("repeat"), f"step {step_id!r}: repeat only goes with a run", 'set action = "run"')
    rate, rate_of = raw.get("rate"), raw.get("rate_of")
    if rate is not None or rate_of is not None:
        if action != "run":
            problem(at("rate") if rate is not None else at("rate_of"),
                    f"step {step_id!r}: rate and rate_of only go with a run", 'set action = "run"')
        elif not isinstance(rate, int | float) or isinstance(rate, bool) or rate <= 0:
            problem(at("rate"), f"step {step_id!r}: rate = {rate!r}",
                    "the offered rate as a share of rate_of's throughput, e.g. rate = 0.5")
        elif rate_of not in broken and (rate_of not in seen or not seen[rate_of].measures):
            problem(at("rate_of"), f"step {step_id!r}: rate_of = {rate_of!r} is not an earlier load or run",
                    'name the unthrottled run the rate is a share of, e.g. rate_of = "max"')
        elif "target" in raw.get("properties", {}):
            problem(at("properties"), f"step {step_id!r}: both a target and a rate",
                    "give one: target (ops/s) or rate + rate_of")
    step_checks = []
    for i, rc in enumerate(raw.get("checks", []) if isinstance(raw.get("checks", []), list) else []):
        line = lines.table("steps.checks", start, end, i)
        if not isinstance(rc, dict):
            problem(line, f"step {step_id!r}: a check must be a table", "write [[steps.checks]]")
            continue
        for key in sorted(set(rc) - CHECK_KEYS):
            problem(lines.key(key, line, end), f"step {step_id!r}: unknown check key {key!r}",
                    "checks have expect, pass and fail")
        expect_line = lines.key("expect", line, end)
        try:
            expression = checks.parse(str(rc.get("expect", "")))
        except checks.CheckSyntaxError as exc:
            problem(expect_line, f"step {step_id!r}: check {rc.get('expect', '')!r}: {exc}",
                    "see the figures in workbench lesson figures")
            continue
        for ref_step, _ in expression.references:
            if ref_step in broken:
                continue  # its own error says what is wrong with it
            if ref_step == step_id:
                if action not in MEASURED:
                    problem(expect_line, f"step {step_id!r}: check reads its own step, which measures "
                            "nothing", "read a step whose action is load or run")
                continue
            if ref_step not in seen:
                later = "a later step" if ref_step in sections else "no step"
                problem(expect_line, f"step {step_id!r}: check reads {ref_step!r}, {later}",
                        "a check reads figures of this step or earlier ones")
            elif not seen[ref_step].measures:
                problem(expect_line, f"step {step_id!r}: check reads {ref_step!r}, which measures nothing",
                        "read a step whose action is load or run")
        for tested in sorted(expression.tested_steps()):
            runs = repeat if tested == step_id else seen[tested].repeat if tested in seen else 2
            if runs < 2:
                problem(expect_line, f"step {step_id!r}: welch_p compares repetitions, and step {tested!r} "
                        "runs once", f"add repeat = 3 to step {tested!r}")
        passed, failed = _text(rc.get("pass")), _text(rc.get("fail"))
        if passed is None or failed is None:
            problem(line, f"step {step_id!r}: a check needs both pass and fail sentences",
                    "say what the result means either way: a student reads it")
            continue
        step_checks.append(Check(expression, passed, failed, line))
    questions = []
    for i, rq in enumerate(raw.get("questions", []) if isinstance(raw.get("questions", []), list) else []):
        line = lines.table("steps.questions", start, end, i)
        question = _question(rq, step_id, line, lines, end, problem)
        if question is not None:
            questions.append(question)
    return Step(step_id, title, text, action, workload if isinstance(workload, str) else None, props,
                during, tuple(step_checks), tuple(questions), cluster, node, db,
                float(rate) if isinstance(rate, int | float) else None,
                rate_of if isinstance(rate_of, str) else None, repeat, start)


def _question(rq: Any, step_id: str, line: int, lines: _Lines, end: int, problem) -> Question | None:
    if not isinstance(rq, dict):
        problem(line, f"step {step_id!r}: a question must be a table", "write [[steps.questions]]")
        return None
    for key in sorted(set(rq) - QUESTION_KEYS):
        problem(lines.key(key, line, end), f"step {step_id!r}: unknown question key {key!r}",
                "questions have ask, choices, answer and attempts")
    ask = _text(rq.get("ask"))
    if ask is None:
        problem(line, f"step {step_id!r}: a question without ask", 'add ask = "..."')
        return None
    choices = rq.get("choices", [])
    answer = rq.get("answer")
    if not isinstance(choices, list) or not all(isinstance(c, str) and c.strip() for c in choices) \
            or len(choices) == 1:
        problem(lines.key("choices", line, end), f"step {step_id!r}: choices must be two or more texts",
                "or leave choices out for a free-text question")
        return None
    numbered = isinstance(answer, int) and not isinstance(answer, bool)
    if choices and (not numbered or not 1 <= answer <= len(choices)):
        problem(lines.key("answer", line, end), f"step {step_id!r}: answer = {answer!r}",
                f"the number of the right choice, 1 to {len(choices)}")
        return None
    if not choices and answer is not None:
        problem(lines.key("answer", line, end), f"step {step_id!r}: a free-text question has no answer",
                "remove answer, or add choices")
        return None
    attempts = rq.get("attempts", 1)
    if not choices and "attempts" in rq:
        problem(lines.key("attempts", line, end), f"step {step_id!r}: a free-text question is answered "
                "once", "remove attempts, or add choices")
        return None
    if choices and (not isinstance(attempts, int) or isinstance(attempts, bool)
                    or not 1 <= attempts < len(choices)):
        problem(lines.key("attempts", line, end), f"step {step_id!r}: attempts = {attempts!r}",
                f"the answers allowed before the question locks, 1 to {len(choices) - 1}")
        return None
    return Question(ask, tuple(c.strip() for c in choices), answer if choices else None, line, attempts)


def _workload_path(workload: str, lesson: Path) -> Path | None:
    beside = lesson.parent / workload
    if beside.is_file():
        return beside
    from workbench.config import catalog

    found = catalog.workload_file(workload)
    return found if found.is_file() else None


def workload_path(step: Step, lesson: Lesson) -> Path:
    found = _workload_path(step.workload or "", lesson.path)
    assert found is not None  # load() checked it
    return found
