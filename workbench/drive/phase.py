"""One phase, run and recorded: the one way every front end runs a phase.

`Phase` owns the Controller of one phase and its Recording in the run store: `open()` writes the
`running` row (a store that cannot take the run is refused before anything runs), `run()` runs
the phase on the caller's event loop and gives back a `PhaseRun` (the result, its run ID, and
why the recording is incomplete if the store failed during the run), also when the run was
stopped; a phase that cannot go on still has its recording finished before the error goes up.

    done = execute_phase(spec, props, "run")          # the command line, experiments, the demo
    run = BackgroundRun(spec, props, "run").start()   # the app: the same Phase on a thread

`execute_phase` runs it in the foreground with YCSB's status lines (StatusPrinter) and Ctrl-C
stopping the phase cleanly; `BackgroundRun` (background.py) runs it on a thread of its own for
a viewer that must never block.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from workbench.config.spec import WorkloadSpec
from workbench.core import loops
from workbench.core.controller import Controller
from workbench.drive.cluster_watch import ClusterWatch
from workbench.drive.server_sampler import ServerSampler, sources_for
from workbench.errors import WorkbenchError
from workbench.metrics.histograms import merge_into, new_histogram
from workbench.metrics.snapshot import IntervalSnapshot, OpStats
from workbench.results.from_run import to_run_result, view
from workbench.results.manifest import build_manifest
from workbench.results.model import IntervalMeasurement, RunResult
from workbench.results.recording import Recording
from workbench.results.store import ExperimentTag
from workbench.results.ycsb_status import format_status_line

if TYPE_CHECKING:
    from workbench.clusters.base import Cluster
    from workbench.drive.metrics_endpoint import MetricsEndpoint

# None: the default store; a path: that store; False: do not record.
StoreChoice = str | Path | bool | None


@dataclass
class PhaseRun:
    """A phase that ran: its result and, when it was recorded, its ID in the run store (and why
    the recording is incomplete, if the store failed during the run)."""

    result: RunResult
    run_id: int | None = None
    store_error: str | None = None


class Phase:
    """One phase of `spec`, recorded in the run store unless `store` is False."""

    def __init__(self, spec: WorkloadSpec, props: dict[str, str], phase: str, *,
                 store: StoreChoice = None, source: str = "", workload: str = "",
                 cluster: Cluster | None = None, experiment: ExperimentTag | None = None,
                 controller: Controller | None = None, files: Sequence[str | Path] = (),
                 manifest: dict[str, Any] | None = None) -> None:
        """files: the -P files `props` came from (their digests go into the manifest); manifest:
        one made already (a rerun's), else open() makes it."""
        self.spec, self.props, self.phase = spec, props, phase
        self.store, self.source, self.workload = store, source or phase, workload
        self.cluster, self.experiment = cluster, experiment
        self.files, self.manifest = tuple(files), manifest
        self.controller = controller or Controller(spec, phase)
        self.recording: Recording | None = None
        self.ended = False  # the recording was finished (with a result or an error)
        self.store_error: str | None = None  # the store failed to take the end of the run

    @property
    def run_id(self) -> int | None:
        return self.recording.run_id if self.recording else None

    def open(self) -> Phase:
        """Write the run's `running` row and record every tick from now on; a store that cannot
        take the run raises a WorkbenchError here, before anything runs. The run's manifest is
        made here, once (results/manifest.py), recorded or not."""
        if self.manifest is None:
            self.manifest = build_manifest(self.spec, self.props, self.phase, files=self.files,
                                           cluster=self.cluster)
        if self.store is not False and self.recording is None:
            self.recording = Recording.open(self.store, self.spec, self.props, phase=self.phase,
                                            source=self.source, workload=self.workload,
                                            cluster=self.cluster, experiment=self.experiment,
                                            manifest=self.manifest)
            self.recording.attach(self.controller)
        return self

    async def run(self) -> PhaseRun:
        """Run the phase (open() first if it was not); the outcome as a PhaseRun. A phase that
        cannot go on raises, after its recording was finished with the error."""
        self.open()
        watch = ClusterWatch.start(self.cluster, self.controller)  # nodes added or removed meanwhile
        sampler = ServerSampler(sources_for(self.cluster, self.spec.db))  # the servers' side
        self.controller.attach_server(sampler)
        try:
            outcome = await self.controller.run()
        except BaseException as exc:
            sampler.stop()
            self.fail(failure_line(exc))
            raise
        finally:
            if watch is not None:
                await watch.stop()
        result = to_run_result(outcome, self.props, self.cluster, self.manifest)
        result.server_notes = sampler.stop()
        return self.finish(result)

    def finish(self, result: RunResult) -> PhaseRun:
        """Store the phase's result; the PhaseRun says if the store could not take it."""
        self._end(result, None)
        return PhaseRun(result, self.run_id, self.store_error)

    def fail(self, error: str) -> None:
        """Finish the recording of a phase that could not go on (store_error: if that failed)."""
        self._end(None, error)

    def _end(self, result: RunResult | None, error: str | None) -> None:
        if self.recording is not None and not self.ended:
            try:
                self.recording.finish(result, error)
            except WorkbenchError as exc:
                self.store_error = str(exc)
        self.ended = True


def execute_phase(spec: WorkloadSpec, props: dict[str, str], phase: str, *, layout: str = "0.17",
                  status: bool = True, stream: TextIO = sys.stderr, store: StoreChoice = None,
                  source: str = "", workload: str = "", cluster: Cluster | None = None,
                  experiment: ExperimentTag | None = None, files: Sequence[str | Path] = (),
                  manifest: dict[str, Any] | None = None,
                  metrics: MetricsEndpoint | None = None, processes: bool = False) -> PhaseRun:
    """Run one phase in the foreground with status lines on `stream`, recorded in the run store
    unless `store` is False; the result even when it was stopped or failed. A store that cannot
    take the run is refused before the phase starts. metrics: a --metrics endpoint to serve it;
    processes: the lanes in a worker process even for one worker (the controller's ticks never
    wait for a lane that is behind its schedule)."""
    run = Phase(spec, props, phase, store=store, source=source, workload=workload, cluster=cluster,
                experiment=experiment, files=files, manifest=manifest,
                controller=Controller(spec, phase, processes=True) if processes else None).open()
    if metrics is not None:
        metrics.attach(run.controller, run.run_id)
    if run.recording is not None and status:  # -q: nothing on stderr but errors (`runs list` shows the ID)
        print(f"workbench: recording run {run.run_id} in {run.recording.store.path}", file=stream)
    printer = StatusPrinter(spec, stream, layout, spec.phase_operation_count(phase)) if status else None
    try:
        return loops.run(_foreground(run, printer), spec.eventloop)
    except BaseException as exc:
        run.fail(failure_line(exc))  # (a no-op when run() has finished it already)
        if run.store_error:
            print(f"workbench: error: {run.store_error}", file=stream)
        raise


def failure_line(exc: BaseException) -> str:
    """What the run store says of a phase that could not go on: a user's error as its one line, a
    bug by its kind too."""
    if isinstance(exc, WorkbenchError):
        return str(exc)
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return what if isinstance(exc, KeyboardInterrupt) else f"internal error: {what}"


async def _foreground(run: Phase, printer: StatusPrinter | None) -> PhaseRun:
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)
    loop.add_signal_handler(signal.SIGINT, run.controller.stop, "interrupted")
    try:
        if printer is not None:
            printer.first_line()
            run.controller.subscribe(printer)
        return await run.run()
    finally:
        loop.remove_signal_handler(signal.SIGINT)  # (which sets Python's default handler)
        if callable(previous):  # the one before this run: asyncio.run's, the demo's (interrupts.py)
            signal.signal(signal.SIGINT, previous)


class StatusPrinter:
    """Prints a YCSB status line every status.interval from the controller's snapshots."""

    def __init__(self, spec: WorkloadSpec, stream: TextIO, layout: str, todo: int) -> None:
        self.spec = spec
        self.stream = stream
        self.layout = layout
        self.todo = todo
        self.window: dict = {}
        self.window_ops = 0
        self.window_start = 0.0
        self.next_due = spec.status_interval

    def first_line(self) -> None:
        self._print(0.0, 0, self.todo)

    def __call__(self, snap: IntervalSnapshot) -> None:
        for name, h in snap.histograms.items():
            target = self.window.get(name)
            if target is None:
                target = self.window[name] = new_histogram()
            merge_into(target, h)
        self.window_ops += snap.operations
        if snap.final or snap.elapsed_s >= self.next_due:
            self._print(snap.elapsed_s, snap.total_operations, snap.todo_operations)
            while self.next_due <= snap.elapsed_s:
                self.next_due += self.spec.status_interval

    def _print(self, elapsed_s: float, total: int, todo: int) -> None:
        brackets = []
        for name, h in view(self.window, self.spec.measurement_interval).items():
            s = OpStats.of(h)
            brackets.append((name, IntervalMeasurement(s.count, s.mean, s.min, s.max, dict(s.percentiles))))
        line = format_status_line(
            datetime.now(),
            int(elapsed_s * 1000),
            total,
            self.window_ops,
            max(int((elapsed_s - self.window_start) * 1000), 1),
            todo,
            brackets,
            layout=self.layout,
            label=self.spec.label,
        )
        print(line, file=self.stream, flush=True)
        self.window = {}
        self.window_ops = 0
        self.window_start = elapsed_s
