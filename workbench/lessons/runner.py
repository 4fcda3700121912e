"""Running a lesson: each step's action through the headless layer (drive/), its figures, its
checks' verdicts, and the student's progress in the run store.

The same `LessonRunner` serves `workbench lesson run --no-tui` (say = print) and the app's Lessons
screen (one step at a time, on the session's thread). A step that was done is not done again:
its figures come back from the store, and only what later steps stand on is restored (a cluster
start, a load, a property set). Clusters the lesson started are taken down when it ends, however
it ends; the student's figures and answers stay.
"""

from __future__ import annotations

import dataclasses
import getpass
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from workbench import interrupts
from workbench.config import catalog
from workbench.config.spec import WorkloadSpec, spec_from_args
from workbench.databases import serving
from workbench.drive.session import RunRequest, Session
from workbench.errors import WorkbenchError
from workbench.lessons import checks as checks_module
from workbench.lessons.answers import Attempt, Graded, attempts_of, grade
from workbench.lessons.during import During
from workbench.lessons.figures import run_figures
from workbench.lessons.model import Check, Lesson, Step, workload_path
from workbench.lessons.progress import LessonStep, lesson_steps, restart_lesson, save_lesson_step
from workbench.results.store import RunStore

# Every lesson run records response time beside service time (checks read both).
ALWAYS = ("measurement.interval=both",)

DEFAULT_DB = WorkloadSpec.db  # a step without a cluster or a db of its own (memory)


def default_student() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "student"


@dataclass(frozen=True)
class Verdict:
    """A check's outcome: passed (True), failed (False) or could not be judged (None)."""

    expect: str
    passed: bool | None
    values: dict[str, float | None]
    sentence: str

    def as_dict(self) -> dict:
        return {"expect": self.expect, "passed": self.passed, "values": self.values,
                "sentence": self.sentence}


def judge(check: Check, figures: dict[str, dict[str, float]]) -> Verdict:
    values = check.expect.values(figures)
    try:
        passed: bool | None = check.expect.evaluate(figures)
    except checks_module.Unmeasured as exc:
        return Verdict(check.expect.text, None, values, f"Not judged: {exc}.")
    return Verdict(check.expect.text, passed, values, check.passed if passed else check.failed)


def show_value(path: str, value: float | None) -> str:
    if value is None:
        return "not measured"
    if path.startswith(checks_module.TESTS):
        return f"{value:.2g}" if value >= 0.001 else "< 0.001"
    figure = path.split(".", 1)[-1]
    if figure.startswith("keys.") or figure.startswith(("nodes.", "regions.")) and figure.endswith("_share"):
        return f"{value:.1%}"
    unit = checks_module.unit(path.split(".", 1)[-1])
    if unit == "ms":
        return f"{value:,.3g} ms" if value < 100 else f"{value:,.0f} ms"
    if unit in ("ops/s", ""):
        number = f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.2f}"
        return f"{number} {unit}".strip()
    return f"{value:,.1f} {unit}"


def run_line(figures: dict[str, float], error_kinds: dict[str, int] | None, run_id: int | None) -> str:
    """A run's line in the lesson's output: throughput, operations, errors (and what failed, as
    the client named it: a server's timeout is not a lost connection), the first p99, the run."""
    errors = f"{figures['errors']:,.0f} errors"
    if figures["errors"] and error_kinds:
        errors += " (" + ", ".join(f"{kind} {n:,}" for kind, n in
                                   sorted(error_kinds.items(), key=lambda kv: (-kv[1], kv[0]))) + ")"
    read = next((f"{op} p99 {show_value(op + '.p99', figures[op + '.p99'])}"
                 for op in checks_module.OPERATIONS if op + ".p99" in figures), "")
    recorded = f" (run {run_id})" if run_id is not None else ""
    return (f"{figures['throughput']:,.0f} ops/s, {figures['operations']:,.0f} operations, {errors}, "
            f"{read}{recorded}")


def _combined(runs: list[dict[str, float]]) -> dict:
    """One run's figures as they are; several runs' as their means (figures all runs have),
    each run's value kept under checks.REPS for welch_p."""
    if len(runs) == 1:
        return dict(runs[0])
    common = set.intersection(*(set(r) for r in runs))
    out: dict = {name: sum(r[name] for r in runs) / len(runs) for name in common}
    out.update({checks_module.REPS + name: [r[name] for r in runs] for name in common})
    return out


def verdict_lines(check: dict) -> list[str]:
    """A recorded verdict (Verdict.as_dict) as the terminal and the app show it: the mark, the
    expression and the figures it read, then the sentence that says what it means."""
    mark = {True: "✓", False: "✗", None: "?"}[check["passed"]]
    shown = ", ".join(f"{path} = {show_value(path, v)}" for path, v in check["values"].items())
    return [f"{mark} {check['expect']}   ({shown})", f"  {check['sentence']}"]


@dataclass
class _State:
    """What later steps stand on: the cluster under test and properties set by `set` steps."""

    provider: object = None
    cluster: object = None  # clusters.base.Cluster
    extra: dict[str, str] = field(default_factory=dict)
    started: list[tuple[object, str]] = field(default_factory=list)  # (provider, name) to take down


def _props(lesson: Lesson, step: Step, extra: dict[str, str], forced: dict[str, str],
           forced_steps: dict[str, dict[str, str]]) -> dict[str, str]:
    """A step's properties: the lesson's, a teacher's -p, earlier `set` steps', the step's own, a
    teacher's -p STEP:KEY, each over the ones before."""
    return {**lesson.properties, **forced, **extra, **step.properties, **forced_steps.get(step.id, {})}


def check_overrides(lesson: Lesson, overrides: dict[str, str]) -> tuple[dict, dict[str, dict]]:
    """A teacher's -p overrides, split into the lesson-wide ones and those for one step
    (STEP:KEY), and checked against every load and run of the lesson before anything runs: a
    value a step would refuse is refused now, naming the step (a step the lesson itself gets
    wrong is left to fail when it is reached, as without -p)."""
    forced: dict[str, str] = {}
    forced_steps: dict[str, dict[str, str]] = {}
    ids = [s.id for s in lesson.steps]
    for key, value in overrides.items():
        step_id, sep, name = key.partition(":")
        if not sep:
            forced[key] = value
            continue
        if step_id not in ids or not name:
            raise WorkbenchError(f"-p {key}={value}: lesson {lesson.name} has no step {step_id!r}",
                                 f"write -p STEP:KEY=VALUE, STEP one of {', '.join(ids)}")
        forced_steps.setdefault(step_id, {})[name] = value
    if not overrides:
        return forced, forced_steps
    extra: dict[str, str] = {}
    for step in lesson.steps:
        if step.action == "set":
            extra.update(step.properties)
        if not step.measures:
            continue
        files = [str(workload_path(step, lesson))]

        def spec(with_p: bool, step: Step = step, files: list[str] = files) -> None:
            props = _props(lesson, step, extra, forced if with_p else {},
                           forced_steps if with_p else {})
            if step.rate_of is not None:
                props["target"] = "1"  # a share of a run not made yet; any rate is checked alike
            spec_from_args(files, ["db=memory", *(f"{k}={v}" for k, v in props.items()), *ALWAYS],
                           step.action)

        try:
            spec(True)
        except WorkbenchError as exc:
            try:
                spec(False)
            except WorkbenchError:
                continue  # the lesson's own mistake, not the teacher's -p
            mine = {**{k: f"{k}={v}" for k, v in forced.items()},
                    **{k: f"{step.id}:{k}={v}" for k, v in forced_steps.get(step.id, {}).items()}}
            named = [shown for k, shown in mine.items() if k in exc.message] or list(mine.values())
            why = exc.message.removeprefix("-p: ")
            raise WorkbenchError(f"-p {' -p '.join(named)}: step {step.id} would refuse it: {why}",
                                 exc.hint) from None
    return forced, forced_steps


class LessonRunner:
    """Runs `lesson` for `student`; see the module docstring."""

    def __init__(self, lesson: Lesson, session: Session, *, student: str | None = None,
                 overrides: dict[str, str] | None = None, say: Callable[[str], None] = print) -> None:
        """overrides: -p properties over the lesson's [properties] (a teacher's shorter runs, say);
        what a step sets itself (its properties, a `set` step's) still wins: a load that must
        write every record keeps its maxexecutiontime = 0. A key `STEP:KEY` is for that step
        alone and wins over its own settings (`c_warm:maxexecutiontime=5`, a shorter warm-up)."""
        self.lesson, self.session, self.say = lesson, session, say
        self.forced, self.forced_steps = check_overrides(lesson, overrides or {})
        self.student = student or default_student()
        self.state = _State()
        self.figures: dict[str, dict[str, float]] = {}

    # -- progress -----------------------------------------------------------------------------

    def _store(self) -> RunStore:
        return RunStore(self.session.store if self.session.store not in (None, False) else None)

    def progress(self) -> list[LessonStep]:
        with self._store() as store:
            return lesson_steps(store, self.lesson.name, self.student)

    def restart(self) -> int:
        """Start over: every step to be done again, every attempt at a question kept (a locked
        question stays locked); returns how many steps had been done."""
        with self._store() as store:
            return restart_lesson(store, self.lesson.name, self.student)

    # -- running ------------------------------------------------------------------------------

    def run(self) -> list[LessonStep]:
        """Every step not yet done, in order; returns what this student has done by the end."""
        done = self.resume()
        self._introduce(done)
        try:
            for position, step in enumerate(self.lesson.steps):
                if step.id in done:
                    self.restore(step)
                else:
                    interrupts.check()  # a Ctrl-C that a driver's clean-up swallowed
                    self.do_step(position, step)
        finally:
            self.close()
        return self.progress()

    def resume(self) -> dict[str, LessonStep]:
        """What this student has done (step id -> record); its figures are read back for the
        checks of later steps."""
        done = {d.step: d for d in self.progress()}
        self.figures = {d.step: d.figures for d in done.values() if d.figures}
        return done

    def answer(self, step: Step, number: int, value: int | str) -> Graded:
        """Record an attempt at question `number` (from 1) of a done step: a choice's number for
        a multiple-choice question, a text for a free one; returns the question's state after it.
        A locked question (answered right, or out of attempts) takes no more."""
        if not 1 <= number <= len(step.questions):
            raise WorkbenchError(f"step {step.id} has no question {number}",
                                 f"its questions are 1 to {len(step.questions)}" if step.questions
                                 else "it asks no question")
        question = step.questions[number - 1]
        if question.free:
            value = str(value).strip()
            if not value:
                raise WorkbenchError("an empty answer", "write your answer")
        elif str(value).strip() not in {str(i) for i in range(1, len(question.choices) + 1)}:
            raise WorkbenchError(f"{value!r} is not a choice of question {number}",
                                 f"give the number of a choice, 1 to {len(question.choices)}")
        else:
            value = int(str(value).strip())
        with self._store() as store:
            records = lesson_steps(store, self.lesson.name, self.student)
            record = next((d for d in records if d.step == step.id), None)
            if record is None:
                raise WorkbenchError(f"step {step.id} is not done yet", "do the step first (n)")
            before = grade(question, attempts_of(record.answers.get(str(number))))
            if before.locked:
                raise WorkbenchError(f"question {number} of step {step.id} is locked",
                                     "it was answered right" if before.right else
                                     "every attempt it allows was used")
            attempts = [*before.attempts, Attempt(value, time.time())]
            answers = {**record.answers, str(number): [a.as_dict() for a in attempts]}
            save_lesson_step(store, self.lesson.name, self.student, LessonStep(
                record.step, record.position, record.run_id, record.figures, record.checks, answers))
        return grade(question, attempts)

    def questions(self, step: Step, record: LessonStep | None) -> list[Graded]:
        """Each question of a step, graded from the lesson file on the attempts recorded."""
        answers = record.answers if record else {}
        return [grade(q, attempts_of(answers.get(str(n)))) for n, q in enumerate(step.questions, 1)]

    def _introduce(self, done: dict) -> None:
        lesson = self.lesson
        self.say(f"Lesson: {lesson.title} ({lesson.name}, about {lesson.minutes:g} minutes)")
        self.say(f"Goal: {lesson.goal}")
        for need in lesson.clusters:
            self.say(f"It starts {need.describe()}.")
        if done:
            self.say(f"Resuming {self.student}'s lesson: {len(done)} of {len(lesson.steps)} steps "
                     f"done (workbench lesson run {lesson.name} --restart starts over).")
        if lesson.intro:
            self.say("")
            self.say(lesson.intro)

    def do_step(self, position: int, step: Step) -> LessonStep:
        """Do one step: its action, its figures, its checks; recorded in the store."""
        self.say("")
        self.say(f"[{position + 1}/{len(self.lesson.steps)}] {step.title}")
        if step.text:
            self.say(step.text)
        run_id = self._act(step)
        verdicts = [judge(check, self.figures) for check in step.checks]
        for verdict in verdicts:
            for line in verdict_lines(verdict.as_dict()):
                self.say(f"  {line}")
        for number, question in enumerate(step.questions, 1):
            self.say(f"  Question {number}: {question.ask}")
            for i, choice in enumerate(question.choices, 1):
                self.say(f"    {i}. {choice}")
            what = "CHOICE" if question.choices else '"YOUR ANSWER"'
            tries = f"{question.attempts} attempts" if question.attempts > 1 else "one attempt"
            self.say(f"    (answer it, {tries}: workbench lesson answer {self.reference} {step.id} "
                     f"{number} {what} --student {self.student}; or a on the app's Lessons screen)")
        with self._store() as store:
            before = next((d for d in lesson_steps(store, self.lesson.name, self.student, kept=True)
                           if d.step == step.id), None)  # done before a restart: its attempts stay
            record = LessonStep(step.id, position, run_id, self.figures.get(step.id, {}),
                                [v.as_dict() for v in verdicts], before.answers if before else {})
            save_lesson_step(store, self.lesson.name, self.student, record)
        return record

    def restore(self, step: Step) -> None:
        """A step done before: bring back what later steps stand on, measure nothing."""
        if step.action == "start":
            self.say(f"(restoring step {step.id})")
            self._start(step)
        elif step.action == "stop":
            self._stop()
        elif step.action == "set":
            self.state.extra.update(step.properties)
        elif step.action == "load":
            self.say(f"(restoring step {step.id}: loading again)")
            self._measure(step, restoring=True)

    def _act(self, step: Step) -> int | None:
        action = step.action
        if action == "start":
            self._start(step)
        elif action == "stop":
            self._stop()
        elif action == "set":
            self.state.extra.update(step.properties)
            self.say("  from now on: " + " ".join(f"{k}={v}" for k, v in step.properties.items()))
        elif action in ("pause", "kill", "resume", "restart"):
            cluster = self._cluster_name(step)
            self.say(f"  {action} {step.node} of {cluster}")
            self.session.fault(cluster, step.node or "", action)
        elif action == "settle":
            self._settle(step)
        elif action in ("load", "run"):
            return self._measure(step)
        return None

    def _settle(self, step: Step) -> None:
        """Flush the table the runs use and wait until no compaction of it runs (the settle step
        between an experiment's runs): the next run meets a cluster at rest."""
        from workbench.clusters.settle import settle

        props = _props(self.lesson, step, self.state.extra, self.forced, self.forced_steps)
        cluster = self.state.provider.status(self._cluster_name(step))
        self.say(f"  settling {cluster.name}: flush, then wait for the compactions ...")
        settle(cluster, properties={key: str(value) for key, value in props.items()},
               table=str(props.get("table", "usertable")), say=self.say)

    def _start(self, step: Step) -> None:
        """Start the step's cluster; one the lesson started before comes down first (a lesson has
        one cluster under test at a time, and the presets share addresses)."""
        from workbench.clusters import presets

        if self.state.cluster is not None and step.cluster != self.state.cluster.spec.name:
            self._stop()

        self.say(f"  starting {step.cluster} ...")
        provider = self.session.provider(progress=lambda e: setattr(self.session, "activity", e.message))
        spec = presets.load(step.cluster or "")
        need = next((c for c in self.lesson.clusters if c.preset == step.cluster), None)
        if need is not None and need.cpus:
            if not hasattr(spec, "cpus"):
                raise WorkbenchError(f"step {step.id}: {spec.name} has no per-node CPU cap",
                                     "cpus goes with a Cassandra or HBase preset: remove it")
            spec = dataclasses.replace(spec, cpus=need.cpus)
        if spec.name in provider.clusters() and all(
                n.status == "running" for n in provider.status(spec.name).nodes):
            cluster = provider.status(spec.name)  # the student started it already: leave it up
            running, wanted = getattr(cluster.spec, "cpus", 0.0), getattr(spec, "cpus", 0.0)
            if running != wanted:
                raise WorkbenchError(f"{spec.name} is already up with {_cap(running)}, and this lesson "
                                     f"needs it with {_cap(wanted)}",
                                     f"take it down first (workbench cluster down {spec.name}), then run "
                                     "the lesson again")
        else:
            cluster = provider.up(spec)
            self.state.started.append((provider, cluster.name))
        self.state.provider, self.state.cluster = provider, cluster

    def _stop(self) -> None:
        """Take down the cluster under test if the lesson started it (one the student had up
        already is left up)."""
        if self.state.cluster is None:
            return
        name = self.state.cluster.name
        if any(n == name for _, n in self.state.started):
            self.say(f"  stopping {name}")
            self.state.provider.down(name)
            self.state.started = [(p, n) for p, n in self.state.started if n != name]
        self.state.cluster = None

    def _cluster_name(self, step: Step) -> str:
        if self.state.cluster is None:
            raise WorkbenchError(f"step {step.id}: no cluster is up to {step.action} a node of",
                                 "the lesson's start step must come first")
        return self.state.cluster.name

    @property
    def reference(self) -> str:
        """How a command names this lesson: its name when that finds this file, else the file."""
        found = catalog.available("lessons").get(self.lesson.name)
        same = found is not None and Path(found).resolve() == self.lesson.path.resolve()
        return self.lesson.name if same else str(self.lesson.path)

    def overrides(self, step: Step) -> list[str]:
        """The -p overrides of a step's load or run."""
        from workbench.drive.targets import binding_overrides

        # a step that names a db names an in-process one (model.py): the lesson's cluster is not used
        cluster = None if step.db is not None else self.state.cluster
        where = binding_overrides(cluster) if cluster is not None else [f"db={step.db or DEFAULT_DB}"]
        drop = serving(cluster.kind)[0].drop if cluster is not None else ""
        if drop and step.action == "load":
            where.append(f"{drop}=true")
        props = _props(self.lesson, step, self.state.extra, self.forced, self.forced_steps)
        if step.rate_of is not None:  # a share of an earlier unthrottled run's throughput
            measured = self.figures.get(step.rate_of, {}).get("throughput")
            if not measured:
                raise WorkbenchError(f"step {step.id}: step {step.rate_of} measured no throughput to "
                                     "take a share of", "run the lesson again with --restart")
            props["target"] = str(max(1, round(measured * (step.rate or 0))))
        return [*where, *(f"{k}={v}" for k, v in props.items()), *ALWAYS]

    def _measure(self, step: Step, restoring: bool = False) -> int | None:
        files = (str(workload_path(step, self.lesson)),)
        overrides = self.overrides(step)
        spec, _ = spec_from_args(list(files), overrides, step.action)  # bad input: refused here
        cluster = None if step.db is not None or self.state.cluster is None else self.state.cluster.name
        where = cluster or step.db or DEFAULT_DB
        shown = {**self.state.extra, **step.properties, **self.forced_steps.get(step.id, {})}  # as run
        if step.rate_of is not None:
            target = next(o for o in overrides if o.startswith("target="))
            shown["target"] = f"{target.split('=', 1)[1]} ({step.rate:.0%} of {step.rate_of})"
        self.say(f"  {step.action} {step.workload} on {where}: "
                 + " ".join(f"{k}={v}" for k, v in shown.items()))
        repeat = 1 if restoring else step.repeat
        runs: list[tuple[int | None, dict[str, float]]] = []
        for rep in range(1, repeat + 1):
            label = f"lesson {self.lesson.name} {step.id}" + (f" #{rep}" if repeat > 1 else "")
            request = RunRequest(files, (*overrides, f"label={label}"), (step.action,),
                                 f"lesson {step.id}", cluster)
            done = self._one_run(step, request, cluster)
            if restoring:
                return done.run_id
            figures = run_figures(done.result)
            runs.append((done.run_id, figures))
            which = f"#{rep}: " if repeat > 1 else ""
            self.say(f"  {which}{run_line(figures, done.result.environment.get('error_kinds'), done.run_id)}")
        self.figures[step.id] = _combined([f for _, f in runs])  # keys.*: the runs' own counts
        if repeat > 1:
            mean = self.figures[step.id]["throughput"]
            self.say(f"  mean of {repeat} runs: {mean:,.0f} ops/s")
        return runs[-1][0]

    def _one_run(self, step: Step, request: RunRequest, cluster: str | None):
        watcher = _During(self.session, step.during, cluster, self.say) if step.during else None
        if watcher:
            watcher.start()
        try:
            done = self.session.run_phase(request, step.action, source="lesson")
        finally:
            if watcher:
                watcher.finish()
        if self.session.error:
            if self.session.traceback:  # a bug, not bad input: where it came from
                self.say(self.session.traceback)
            raise WorkbenchError(f"step {step.id}: {self.session.error}")
        if done is None or done.result.outcome != "completed":
            outcome = done.result.outcome if done else "not started"
            raise WorkbenchError(f"step {step.id}: the {step.action} ended {outcome}",
                                 f"run the lesson again to redo step {step.id}")
        if watcher and watcher.error:
            raise WorkbenchError(f"step {step.id}: {watcher.error}")
        return done

    def close(self) -> None:
        """Take down what the lesson started (its figures stay)."""
        while self.state.started:
            provider, name = self.state.started.pop()
            self.say(f"stopping {name}")
            try:
                provider.down(name)
            except WorkbenchError as exc:
                self.say(f"workbench: error: could not stop {name}: {exc}")
        self.state.cluster = None


def _cap(cpus: float) -> str:
    return f"each node capped at {cpus:g} of a core" if cpus else "no CPU cap"


class _During(threading.Thread):
    """Does a run's timed changes (`during`) once the run has been going for at_s seconds, as
    its own clock counts them (the snapshots' elapsed time), not the wall clock."""

    def __init__(self, session: Session, events: tuple[During, ...], cluster: str | None,
                 say: Callable[[str], None]) -> None:
        super().__init__(name="workbench-lesson-during", daemon=True)
        self.session, self.events, self.cluster, self.say = session, events, cluster, say
        self.before = session.current
        self.error: str | None = None
        self._done = threading.Event()

    def finish(self) -> None:
        self._done.set()
        self.join()

    def run(self) -> None:
        run = None
        while run is None and not self._done.is_set():
            if self.session.current is not self.before:
                run = self.session.current
            else:
                self._done.wait(0.02)
        end_at = None  # the run's elapsed seconds at which an end_after_s ends it
        for event in self.events:
            if not self._until(run, event.at_s):
                return
            try:
                self._do(run, event)
            except WorkbenchError as exc:
                self.error = f"{event.describe()}: {exc}"
                run.command("stop", "stopped")
                return
            if event.end_after_s is not None:
                end_at = self._elapsed(run) + event.end_after_s
                self.say(f"    the run ends {event.end_after_s:g} s from now")
        if end_at is not None and self._until(run, end_at):
            run.command("stop", "planned")

    @staticmethod
    def _elapsed(run) -> float:
        state = run.state
        return -1.0 if state is None else state.snapshot.elapsed_s  # -1: before its first tick

    def _until(self, run, elapsed_s: float) -> bool:
        """Wait for the run's own clock to reach elapsed_s; False when the run ended first."""
        while not self._done.is_set() and not run.finished.is_set():
            if self._elapsed(run) >= elapsed_s:
                return True
            self._done.wait(0.02)
        return False

    def _do(self, run, event: During) -> None:
        self.say(f"  {event.describe()}")
        if event.do == "target":
            run.command("set_target", float(event.value or 0))
        elif event.do == "lanes":
            run.command("set_lanes", int(event.value or 1))
        else:
            if self.cluster is None:
                raise WorkbenchError("this run has no cluster to disturb")
            started = time.monotonic()
            if event.do in ("add_node", "remove_node"):  # the run marks it from the cluster's journal
                node = self.session.resize(self.cluster, event.do, event.node or "")
                done = "joined (Up/Normal)" if event.do == "add_node" else "left the ring and stopped"
                self.say(f"    {node} {done} in {time.monotonic() - started:.1f} s")
                return
            self.session.fault(self.cluster, event.node or "", event.do)
            if event.do == "restart":
                self.say(f"    restarted in {time.monotonic() - started:.1f} s")
