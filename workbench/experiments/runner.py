"""Running an experiment: its clusters up one database at a time, its runs in order, each one
recorded in the run store with the experiment's name, step, repetition and scale.

Resumable by construction: before anything runs, the store is asked which runs of this
experiment at this scale already completed; those are skipped. A run that was cut short (Ctrl-C,
SIGKILL, a reboot) is not `completed`, so it is made again. The data a database needs is loaded
before its first remaining run (again after a resume: a cluster started anew may be empty).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from workbench import interrupts
from workbench.clusters.ports import require_free
from workbench.config.spec import spec_from_args
from workbench.databases import database, resolve, server
from workbench.drive.phase import execute_phase
from workbench.errors import ClusterError, ConfigError, WorkbenchError
from workbench.experiments.elastic import NodeAdder
from workbench.experiments.plan import SATURATED, UNTHROTTLED, Experiment, PlannedRun, Target
from workbench.results.store import ExperimentTag, RunStore

Say = Callable[[str], None]


@dataclass
class Progress:
    """Runs done and the time they took, everything included (cluster starts, loads, settling),
    so the estimate of the time left is the experiment's, not only its measured runs'."""

    total: int
    done_before: int
    done_now: int = 0
    started_at: float = field(default_factory=time.monotonic)

    def eta_s(self) -> float | None:
        if not self.done_now:
            return None
        left = self.total - self.done_before - self.done_now
        return (time.monotonic() - self.started_at) / self.done_now * left


def remaining(experiment: Experiment, scale: str, store: object) -> tuple[list[PlannedRun], int]:
    """The runs still to make, in order, and how many completed before."""
    planned = experiment.runs()
    finished = _finished(experiment, scale, store)
    todo = [r for r in planned if (r.step.key, r.repetition) not in finished]
    before = len(planned) - len(todo)
    if experiment.rates and finished:
        todo = _sweep_todo(experiment, planned, todo, finished, scale, store)
        keys = {r.step.key for r in planned}
        before += sum(1 for key, rep in finished if rep and key not in keys
                      and experiment.find_step(key) is not None)  # steps a sweep added
    return todo, before


def _finished(experiment: Experiment, scale: str, store: object) -> set[tuple[str, int]]:
    """(step, repetition) of the experiment's completed runs at this scale (none without a store)."""
    if store is False:
        return set()
    try:
        with RunStore(store, create=False, write=False) as s:
            return {(step, rep) for _, step, rep, status in s.experiment_runs(experiment.name, scale)
                    if status == "completed"}
    except WorkbenchError as exc:
        if "no run store" not in str(exc):
            raise
        return set()


def _sweep_todo(experiment: Experiment, planned: list[PlannedRun], todo: list[PlannedRun],
                finished: set[tuple[str, int]], scale: str, store: object) -> list[PlannedRun]:
    """The runs a rate sweep still needs: none at or past a step that ended its curve and,
    once every listed rate is done without one, the next added rate (what follows depends on
    how that one ends; the runner goes on from there)."""
    out = [r for r in todo if r.step.rate == UNTHROTTLED]
    ended: dict[str, str | None] = {}

    def ends(step) -> bool:
        if step.key not in ended:
            ended[step.key] = _ended_below(experiment, step, scale, store)
        return ended[step.key] is not None
    paced = [r for r in planned if r.step.rate != UNTHROTTLED]
    for curve in dict.fromkeys(r.step.curve for r in paced):
        template = next(r.step for r in paced if r.step.curve == curve)
        missing_listed = False
        for rate in experiment.rates:
            step = template.at_rate(rate)
            if ends(step):
                break
            missing = [r for r in todo if r.step == step]
            out += missing
            missing_listed = missing_listed or bool(missing)
        else:
            if not missing_listed:
                for rate in experiment.added_rates():
                    step = template.at_rate(rate)
                    if ends(step):
                        break
                    missing = [PlannedRun(step, rep) for rep in range(1, experiment.repetitions + 1)
                               if (step.key, rep) not in finished]
                    out += missing
                    if missing:
                        break
    return out


def check(experiment: Experiment, scale: str, ports_too: bool = True) -> None:
    """Every run's workload and properties, every cluster's spec and (unless a caller places the
    clusters itself) the ports they will listen on, checked before anything starts (a paced step
    of a rate sweep is checked with a stand-in target rate)."""
    experiment.divisor(scale)
    for run in experiment.runs():
        for phase in ("load", "run"):
            spec_from_args([str(experiment.workload_file(run.step.workload))],
                           [f"db={run.step.target.db}", *experiment.overrides(run, scale, 1000.0)], phase)
    servers = {(r.step.target, r.step.cluster_values): r.step for r in experiment.runs()
               if r.step.target.preset is not None}
    java_needed = False
    for (target, shape), step in servers.items():
        try:
            spec = experiment.cluster_spec(step)
            java_needed = java_needed or server(spec.kind).needs_java
            if ports_too:
                for address, port, what in _listens_on(spec):
                    require_free(address, port, what)
        except ClusterError as exc:
            key = "sweep." + shape[-1][0] if shape else "databases"
            where = " ".join([target.name, *(f"{k}={v}" for k, v in shape)])
            raise ConfigError(f"{experiment.path}: key '{key}': {where}: {exc.message}", exc.hint) from None
    if java_needed:
        from workbench.clusters import java

        java.choose()  # no JDK (or only an unsupported one): one line now, not after the first database


def _listens_on(spec) -> list[tuple[str, int, str]]:
    """The client and peer ports a local cluster of this spec needs free (its server's)."""
    found = server(spec.kind)
    return resolve(found.listens_on)(spec) if found.listens_on else []


def run_experiment(experiment: Experiment, scale: str, *, store: object = None, say: Say = print,
                   provider_factory: Callable[[], object] | None = None,
                   adjust_spec: Callable[[object], object] | None = None) -> int:
    """Make every remaining run; the exit status (0, or 1 when operations failed).

    `provider_factory` and `adjust_spec` (a cluster spec -> the spec to start) let a caller put
    the clusters elsewhere, as the tests do (their own state directory, free addresses)."""
    check(experiment, scale, ports_too=adjust_spec is None)
    window = experiment.window_s(scale)
    if experiment.add_node_at_s is not None and experiment.add_node_at_s >= window:
        raise ConfigError(f"{experiment.path}: key 'add_node_at_s': {experiment.add_node_at_s:g} s is not "
                          f"within the measured window of a run at scale {scale} ({window:g} s)",
                          "add the node earlier, or measure longer (measure_s, min_measure_s)")
    todo, before = remaining(experiment, scale, store)
    total = before + len(todo)
    if not todo:
        say(f"{experiment.name} ({scale}): all {total} runs are done already")
        return 0
    say(f"{experiment.name} ({scale}): {len(todo)} of {total} runs to make"
        + (f", {before} done already" if before else ""))
    progress = Progress(total, before)
    status = 0
    for target, shape in dict.fromkeys((r.step.target, r.step.cluster_values) for r in todo):
        runs = [r for r in todo if r.step.target == target and r.step.cluster_values == shape]
        spec = None if target.preset is None else experiment.cluster_spec(runs[0].step)
        if spec is not None and adjust_spec is not None:
            spec = adjust_spec(spec)
        with _Cluster(target, spec, shape, say, provider_factory) as cluster:
            state = _Data()
            for run in _in_order(experiment, runs, scale, store, progress, say):
                interrupts.check()  # a Ctrl-C that a driver's clean-up swallowed
                status = max(status, _make(experiment, run, cluster, scale, store, progress, state, say))
    return status


@dataclass
class _Data:
    """What the table of a cluster holds now, and whether runs wrote to it since it settled."""

    loaded: tuple | None = None  # the load group of the last load (see _load_group)
    written: bool = False  # since the last settle step: a read-only run leaves nothing to settle
    warm: bool = False  # a run was made on the cluster (the first one has a longer warm-up)


def _make(experiment: Experiment, run: PlannedRun, cluster: _Cluster, scale: str, store: object,
          progress: Progress, state: _Data, say: Say) -> int:
    """One run, after the load and settle steps it needs."""
    unthrottled = None
    if run.step.rate not in (None, UNTHROTTLED):
        unthrottled = _unthrottled(experiment, run, scale, store)
    first = cluster.cluster is not None and not state.warm
    overrides = [*cluster.overrides, *experiment.overrides(run, scale, unthrottled, first=first)]
    group = _load_group(experiment, run, overrides)
    if experiment.load == "every-step" or group != state.loaded:
        _load(experiment, run, overrides, cluster, scale, store, say)
        state.loaded, state.written = group, True
    if experiment.settle == "flush" and state.written:
        _settle(experiment, run, overrides, cluster, say)
        state.written = False
    if first and experiment.first_warmup_s > experiment.warmup_s:
        say(f"  the first run on {cluster.cluster.name} warms up for {experiment.first_warmup_s:g} s "
            "(its JVMs compile the hot code first)")
    status = _one(experiment, run, overrides, cluster, scale, store, progress, say)
    state.warm = True
    state.written = state.written or _writes(experiment, run, overrides)
    return status


def _in_order(experiment: Experiment, runs: list[PlannedRun], scale: str, store: object,
              progress: Progress, say: Say):
    """The runs to make, in order. A rate sweep's paced steps go up until one is saturated
    (what is left of the curve is not made), and on past the listed rates while none is; the
    decision is read from the store, so a resumed sweep continues where it stood."""
    if not experiment.rates:
        yield from runs
        return
    yield from (r for r in runs if r.step.rate == UNTHROTTLED)
    paced = [r for r in runs if r.step.rate != UNTHROTTLED]
    for curve in dict.fromkeys(r.step.curve for r in paced):
        mine = [r for r in paced if r.step.curve == curve]
        template = mine[0].step
        steps = [template.at_rate(rate) for rate in experiment.rates]
        for step in steps:
            why = _ended_below(experiment, step, scale, store)
            if why is not None:
                skipped = [r for r in mine if float(r.step.rate) >= float(step.rate)]
                if skipped:
                    progress.total -= len(skipped)
                    say(f"  {template.target.name} {template.workload}: {why}; the sweep ends there "
                        f"({len(skipped)} planned runs not needed)")
                break
            yield from (r for r in mine if r.step == step)
        else:
            for rate in experiment.added_rates():
                step = template.at_rate(rate)
                why = _ended_below(experiment, step, scale, store)
                if why is not None:
                    say(f"  {template.target.name} {template.workload}: {why}; the sweep ends there")
                    break
                done = _finished(experiment, scale, store)
                more = [PlannedRun(step, rep) for rep in range(1, experiment.repetitions + 1)
                        if (step.key, rep) not in done]
                if more:
                    say(f"  {template.target.name} {template.workload}: not saturated at "
                        f"{experiment.rates[-1]}% or above yet; the sweep goes on at {rate}%")
                    progress.total += len([r for r in more if r not in runs])  # not counted yet
                yield from more


def _step_ends_sweep(experiment: Experiment, step, scale: str, store: object) -> str | None:
    """Why a paced step ends its rate sweep (its completed runs, on average, achieved under
    SATURATED of the offered rate), or None: it does not, or has no completed run yet."""
    try:
        unthrottled = _unthrottled(experiment, PlannedRun(step, 1), scale, store)
    except WorkbenchError:
        return None
    with RunStore(store, create=False, write=False) as s:
        achieved = [s.row(run_id).throughput or 0.0
                    for run_id, key, rep, status in s.experiment_runs(experiment.name, scale)
                    if key == step.key and rep and status == "completed"]
    if not achieved:
        return None
    offered = max(1, round(unthrottled * float(step.rate) / 100))
    mean = sum(achieved) / len(achieved)
    if mean < SATURATED * offered:
        return f"saturated at {step.rate}%: achieved {mean:,.0f} of {offered:,} ops/s offered"
    return None


def _ended_below(experiment: Experiment, step, scale: str, store: object) -> str | None:
    """Why a step of this curve at a lower rate ended the sweep (so this one is not needed)."""
    for rate in (*experiment.rates, *experiment.added_rates()):
        if float(rate) >= float(step.rate):
            break
        why = _step_ends_sweep(experiment, step.at_rate(rate), scale, store)
        if why is not None:
            return why
    return None


def _drop(db: str, value: str) -> list[str]:
    """A database's drop property (its descriptor's): a load starts from an empty table (true),
    a run keeps the load's (false)."""
    drop = database(db).drop
    return [f"{drop}={value}"] if drop else []


def _load_group(experiment: Experiment, run: PlannedRun, overrides: list[str]) -> tuple:
    """What a load leaves in the table: runs with the same group can follow one load (a load
    drops the table first, so another group's load replaces the data)."""
    spec, _ = spec_from_args([str(experiment.workload_file(run.step.workload))], overrides, "load")
    return (spec.table, spec.record_total, spec.insertstart, spec.fieldcount, spec.fieldlength,
            spec.fieldlengthdistribution, spec.fieldnameprefix)


def _load(experiment: Experiment, run: PlannedRun, overrides: list[str], cluster: _Cluster,
          scale: str, store: object, say: Say) -> None:
    workload = experiment.workload_file(run.step.workload)
    drop = _drop(run.step.target.db, "true")
    spec, props = spec_from_args([str(workload)], [*overrides, *drop], "load")
    say(f"  load {spec.recordcount:,} records for {run.step.workload} on {run.step.target.name}")
    tag = ExperimentTag(experiment.name, f"load {run.step.target.name}/{run.step.workload}", 0, scale)
    done = execute_phase(spec, props.as_dict(), "load", status=False, store=store, source="experiment",
                         workload=run.step.workload, cluster=cluster.cluster, experiment=tag,
                         files=[str(workload)])
    if done.result.outcome != "completed":
        raise WorkbenchError(f"the load for {run.step.key} ended {done.result.outcome}: "
                             f"{done.result.environment.get('error', '')}".rstrip(": "),
                             "see the message above; running the experiment again resumes it")


def _writes(experiment: Experiment, run: PlannedRun, overrides: list[str]) -> bool:
    spec, _ = spec_from_args([str(experiment.workload_file(run.step.workload))], overrides, "run")
    return any(p > 0 for p in (spec.updateproportion, spec.insertproportion,
                               spec.readmodifywriteproportion, spec.deleteproportion))


def _settle(experiment: Experiment, run: PlannedRun, overrides: list[str], cluster: _Cluster,
            say: Say) -> None:
    """Flush what the load or the previous runs wrote and wait out compactions (not timed);
    skipped after read-only runs, which leave nothing to flush or compact."""
    if cluster.cluster is None:  # the memory binding keeps nothing to flush
        return
    from workbench.clusters.settle import settle

    spec, _ = spec_from_args([str(experiment.workload_file(run.step.workload))], overrides, "run")
    settle(cluster.cluster, properties=spec.binding_properties, table=spec.table, say=say)


def _one(experiment: Experiment, run: PlannedRun, overrides: list[str], cluster: _Cluster,
         scale: str, store: object, progress: Progress, say: Say) -> int:
    workload = experiment.workload_file(run.step.workload)
    keep = _drop(run.step.target.db, "false")
    spec, props = spec_from_args([str(workload)], [*overrides, *keep,
                                                   f"label={experiment.name}"], "run")
    n = progress.done_before + progress.done_now + 1
    eta = progress.eta_s()
    done_share = (n - 1) / progress.total
    bar = "█" * round(done_share * 12)
    say(f"[{n}/{progress.total}] {run.step.key} repetition {run.repetition}/{experiment.repetitions} "
        f"▕{bar:░<12}▏ {done_share:.0%} done" + (f" · about {_minutes(eta)} left" if eta is not None else ""))
    tag = ExperimentTag(experiment.name, run.step.key, run.repetition, scale)
    adder = None
    if experiment.add_node_at_s is not None and cluster.cluster is not None and run.step.rate != UNTHROTTLED:
        # elastic speedup: a node joins this far into the measured window (elastic.py)
        at_s = spec.warmup_s + experiment.add_node_at_s
        adder = NodeAdder(cluster.provider, cluster.cluster.name, at_s, say, cluster.cluster.run_dir)
        say(f"    a node joins {experiment.add_node_at_s:g} s into the measured window")
        adder.start()
    try:
        done = execute_phase(spec, props.as_dict(), "run", status=False, store=store,
                             source="experiment", workload=run.step.workload, cluster=cluster.cluster,
                             experiment=tag, files=[str(workload)])
    finally:
        if adder is not None:
            adder.finish()
    if done.store_error:
        raise WorkbenchError(done.store_error)
    late = adder.late_events(done.result) if adder is not None and done.run_id is not None else []
    if late:  # what the join streamed, written after the run's last read of the journal
        with RunStore(store) as s:
            s.add_events(done.run_id, late)
        done.result.events.extend(late)
    progress.done_now += 1
    result = done.result
    read = result.measurement("READ") or result.measurement("UPDATE") or result.measurement("INSERT")
    p99 = f", {read.name} p99 {read.percentiles.get(99.0, 0):,} us" if read and read.operations else ""
    failed = result.error_count()
    kinds = result.environment.get("error_kinds") or {}
    said = (f", {failed:,} failed" + (f" ({', '.join(f'{k} {n:,}' for k, n in sorted(kinds.items()))})"
                                      if kinds else "")) if failed else ""
    # the experiment's exit status is 1 when operations failed: the run's line says which
    say(f"    run {done.run_id}: {result.throughput:,.0f} ops/s{p99}{said} ({result.outcome})")
    if result.outcome != "completed":
        raise WorkbenchError(f"run {done.run_id} ({run.step.key}) ended {result.outcome}"
                             + (f": {result.environment['error']}" if result.environment.get("error")
                                else ""),
                             "running the experiment again makes it anew")
    return 1 if failed else 0


def _unthrottled(experiment: Experiment, run: PlannedRun, scale: str, store: object) -> float:
    """Mean throughput of the completed unthrottled runs that calibrate this paced step."""
    key = run.step.calibration().key
    with RunStore(store, create=False, write=False) as s:
        values = [s.row(run_id).throughput or 0.0
                  for run_id, step, rep, status in s.experiment_runs(experiment.name, scale)
                  if step == key and rep and status == "completed"]
    if not values:
        raise WorkbenchError(f"{run.step.key} is paced at a share of {key}'s throughput, and no run of "
                             "that step completed", "running the experiment again makes it first")
    return sum(values) / len(values)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


class _Cluster:
    """The target's cluster up for the length of its runs (nothing for memory)."""

    def __init__(self, target: Target, spec, shape: tuple, say: Say, provider_factory) -> None:
        self.target, self.spec, self.shape = target, spec, shape
        self.say, self.provider_factory = say, provider_factory
        self.cluster = None
        self.provider = None
        self.overrides: list[str] = []

    def __enter__(self) -> _Cluster:
        if self.spec is None:
            self.overrides = [f"db={self.target.db}"]
            return self
        from workbench.clusters.local import LocalProvider
        from workbench.drive.targets import binding_overrides

        self.provider = self.provider_factory() if self.provider_factory else LocalProvider()
        shape = "".join(f", {k} {v}" for k, v in self.shape)
        self.say(f"starting {self.target.preset}{shape} (jars are fetched the first time)")
        self.cluster = self.provider.up(self.spec)
        self.overrides = binding_overrides(self.cluster)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.cluster is not None:
            self.say(f"stopping {self.cluster.name}")
            self.provider.down(self.cluster.name)
