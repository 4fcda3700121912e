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
from dataclasses import dataclass

from workbench.commands.bench import execute_phase
from workbench.config.spec import spec_from_args
from workbench.errors import WorkbenchError
from workbench.experiments.plan import Experiment, PlannedRun, Target
from workbench.results.store import ExperimentTag, RunStore

Say = Callable[[str], None]


@dataclass
class Progress:
    total: int
    done_before: int
    done_now: int = 0
    seconds_now: float = 0.0

    def eta_s(self) -> float | None:
        if not self.done_now:
            return None
        left = self.total - self.done_before - self.done_now
        return self.seconds_now / self.done_now * left


def remaining(experiment: Experiment, scale: str, store: object) -> tuple[list[PlannedRun], int]:
    """The runs still to make, in order, and how many completed before."""
    planned = experiment.runs()
    finished: set[tuple[str, int]] = set()
    if store is not False:
        try:
            with RunStore(store, create=False, write=False) as s:
                for _, step, rep, status in s.experiment_runs(experiment.name, scale):
                    if status == "completed":
                        finished.add((step, rep))
        except WorkbenchError as exc:
            if "no run store" not in str(exc):
                raise
    todo = [r for r in planned if (r.step.key, r.repetition) not in finished]
    return todo, len(planned) - len(todo)


def check(experiment: Experiment, scale: str) -> None:
    """Every run's workload and properties, checked before anything starts."""
    experiment.divisor(scale)
    for run in experiment.runs():
        for phase in ("load", "run"):
            spec_from_args([str(experiment.workload_file(run.step.workload))],
                           [f"db={run.step.target.db}", *experiment.overrides(run, scale)], phase)


def run_experiment(experiment: Experiment, scale: str, *, store: object = None, say: Say = print,
                   provider_factory: Callable[[], object] | None = None) -> int:
    """Make every remaining run; the exit status (0, or 1 when operations failed)."""
    check(experiment, scale)
    todo, before = remaining(experiment, scale, store)
    total = before + len(todo)
    if not todo:
        say(f"{experiment.name} ({scale}): all {total} runs are done already")
        return 0
    say(f"{experiment.name} ({scale}): {len(todo)} of {total} runs to make"
        + (f", {before} done already" if before else ""))
    progress = Progress(total, before)
    status = 0
    for target in dict.fromkeys(r.step.target for r in todo):
        runs = [r for r in todo if r.step.target == target]
        with _Cluster(target, say, provider_factory) as cluster:
            loaded: set[str] = set()
            for run in runs:
                overrides = [*cluster.overrides, *experiment.overrides(run, scale)]
                group = _load_group(run, overrides)
                if experiment.load == "every-step" or group not in loaded:
                    _load(experiment, run, overrides, cluster, scale, store, say)
                    loaded.add(group)
                if experiment.settle == "flush":
                    _settle(experiment, run, overrides, cluster, say)
                status = max(status, _one(experiment, run, overrides, cluster, scale, store, progress, say))
    return status


def _load_group(run: PlannedRun, overrides: list[str]) -> str:
    """Runs that can share one load: same workload fields and record count."""
    keep = ("recordcount", "fieldcount", "fieldlength", "insertstart", "table")
    return ",".join(sorted(o for o in overrides if o.split("=", 1)[0] in keep))


def _load(experiment: Experiment, run: PlannedRun, overrides: list[str], cluster: _Cluster,
          scale: str, store: object, say: Say) -> None:
    workload = experiment.workload_file(run.step.workload)
    drop = {"cassandra": ["cassandra.drop=true"], "hbase": ["hbase.drop=true"]}.get(run.step.target.db, [])
    spec, props = spec_from_args([str(workload)], [*overrides, *drop], "load")
    say(f"  load {spec.recordcount:,} records for {run.step.workload} on {run.step.target.name}")
    tag = ExperimentTag(experiment.name, f"load {run.step.target.name}/{run.step.workload}", 0, scale)
    done = execute_phase(spec, props.as_dict(), "load", status=False, store=store, source="experiment",
                         workload=run.step.workload, cluster=cluster.cluster, experiment=tag)
    if done.result.outcome != "completed":
        raise WorkbenchError(f"the load for {run.step.key} ended {done.result.outcome}: "
                             f"{done.result.environment.get('error', '')}".rstrip(": "),
                             "see the message above; running the experiment again resumes it")


def _settle(experiment: Experiment, run: PlannedRun, overrides: list[str], cluster: _Cluster,
            say: Say) -> None:
    """Flush what the load or the previous run wrote and wait out compactions (not timed)."""
    if cluster.cluster is None:  # the memory binding keeps nothing to flush
        return
    from workbench.clusters.settle import settle

    spec, props = spec_from_args([str(experiment.workload_file(run.step.workload))], overrides, "run")
    settle(cluster.cluster, keyspace=props.as_dict().get("cassandra.keyspace", "ycsb"), table=spec.table,
           say=say)


def _one(experiment: Experiment, run: PlannedRun, overrides: list[str], cluster: _Cluster,
         scale: str, store: object, progress: Progress, say: Say) -> int:
    workload = experiment.workload_file(run.step.workload)
    keep = {"cassandra": ["cassandra.drop=false"], "hbase": ["hbase.drop=false"]}.get(run.step.target.db, [])
    spec, props = spec_from_args([str(workload)], [*overrides, *keep,
                                                   f"label={experiment.name}"], "run")
    n = progress.done_before + progress.done_now + 1
    eta = progress.eta_s()
    say(f"[{n}/{progress.total}] {run.step.key} repetition {run.repetition}/{experiment.repetitions}"
        + (f" · about {_minutes(eta)} left" if eta is not None else ""))
    started = time.monotonic()
    tag = ExperimentTag(experiment.name, run.step.key, run.repetition, scale)
    done = execute_phase(spec, props.as_dict(), "run", status=False, store=store,
                         source="experiment", workload=run.step.workload, cluster=cluster.cluster,
                         experiment=tag)
    if done.store_error:
        raise WorkbenchError(done.store_error)
    progress.done_now += 1
    progress.seconds_now += time.monotonic() - started
    result = done.result
    read = result.measurement("READ") or result.measurement("UPDATE") or result.measurement("INSERT")
    p99 = f", {read.name} p99 {read.percentiles.get(99.0, 0):,} us" if read and read.operations else ""
    say(f"    run {done.run_id}: {result.throughput:,.0f} ops/s{p99} ({result.outcome})")
    if result.outcome != "completed":
        raise WorkbenchError(f"run {done.run_id} ({run.step.key}) ended {result.outcome}"
                             + (f": {result.environment['error']}" if result.environment.get("error")
                                else ""),
                             "running the experiment again makes it anew")
    return 1 if result.error_count() else 0


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


class _Cluster:
    """The target's cluster up for the length of its runs (nothing for memory)."""

    def __init__(self, target: Target, say: Say, provider_factory) -> None:
        self.target, self.say, self.provider_factory = target, say, provider_factory
        self.cluster = None
        self.provider = None
        self.overrides: list[str] = []

    def __enter__(self) -> _Cluster:
        if self.target.preset is None:
            self.overrides = [f"db={self.target.db}"]
            return self
        from workbench.clusters import presets
        from workbench.clusters.local import LocalProvider
        from workbench.commands.targets import binding_overrides

        self.provider = self.provider_factory() if self.provider_factory else LocalProvider()
        self.say(f"starting {self.target.preset} (jars are fetched the first time)")
        self.cluster = self.provider.up(presets.load(self.target.preset))
        self.overrides = binding_overrides(self.cluster)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.cluster is not None:
            self.say(f"stopping {self.cluster.name}")
            self.provider.down(self.cluster.name)
