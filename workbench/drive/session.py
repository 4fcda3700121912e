"""What the app keeps while it is open, free of any widget: runs made so far, the run going
on, and the cluster provider. Screens read it; nothing here imports textual.

A `RunRequest` is what the composer (or `workbench run --tui`, or the demo) asks for: the
same -P files and -p overrides as the command line, and the phases to run in order.
`Session.start(request)` runs those phases one after the other on a thread of its own, each as
a `BackgroundRun`; `Session.current` is the phase running now (or the last one).
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from workbench.config.spec import spec_from_args
from workbench.drive.background import BackgroundRun
from workbench.errors import WorkbenchError
from workbench.results.model import RunResult

# What a fault did to a node, as the run's events and the Run screen say it.


@dataclass(frozen=True)
class RunRequest:
    """One run as the command line would spell it: `workbench <phase> -P files -p overrides`."""

    files: tuple[str, ...]
    overrides: tuple[str, ...]
    phases: tuple[str, ...] = ("run",)
    title: str = ""
    cluster: str | None = None  # the cluster under test (for fault keys), when there is one


@dataclass
class FinishedRun:
    """A phase that ended (or an imported file): what Compare lists."""

    title: str
    result: RunResult
    source: str = "app"  # "app", "demo", "command line" or the imported file's path
    run_id: int | None = None  # its ID in the run store, when it was recorded


@dataclass
class Session:
    """State of one app session; see the module docstring."""

    state_dir: Path | None = None
    cache_dir: Path | None = None
    finished: list[FinishedRun] = field(default_factory=list)
    current: BackgroundRun | None = None
    request: RunRequest | None = None
    error: str | None = None  # why the last request could not start or go on
    activity: str = ""  # what a task is doing between runs ("starting cassandra-single ...")
    stopping: bool = False
    traceback: str | None = None  # with an internal error: where it came from
    store: object = None  # the run store every run is recorded in (None: default; False: none)
    # Called by close() when the app ends: what a task left up (a lesson's clusters) comes down.
    cleanups: list[Callable[[], None]] = field(default_factory=list)
    _thread: threading.Thread | None = None

    def provider(self, progress: object = False, kind: str = "local"):
        """A provider by name: local (JVMs), docker (containers) or external."""
        from workbench.clusters.base import get_provider

        return get_provider(kind, state_dir=self.state_dir, cache_dir=self.cache_dir, progress=progress)

    def providers(self) -> list:
        """Every provider, in lookup order; listing their clusters reads state files only."""
        from workbench.clusters.base import all_providers

        return all_providers(self.state_dir, cache_dir=self.cache_dir, progress=False)

    def provider_of(self, name: str, progress: object = False):
        """The provider that knows cluster `name` (local first); the local one if none does,
        whose calls then say which clusters exist."""
        for provider in self.providers():
            if name in provider.clusters():
                provider.progress = progress
                return provider
        return self.provider(progress)

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, request: RunRequest,
              on_finished: Callable[[FinishedRun | None, str | None], None] | None = None) -> None:
        """Run the request's phases in order, in the background. Bad input raises at once
        (a WorkbenchError, the command line's message); later failures land in `error`."""
        for phase in request.phases:  # refuse bad input before anything starts
            spec_from_args(list(request.files), list(request.overrides), phase)

        def phases(session: Session) -> None:
            for phase in request.phases:
                done = session.run_phase(request, phase)
                if on_finished is not None:
                    on_finished(done, session.error)
                if session.error or done is None or done.result.outcome != "completed":
                    break

        self.start_task(phases, request)

    def start_task(self, task: Callable[[Session], None], request: RunRequest | None = None,
                   on_done: Callable[[], None] | None = None) -> None:
        """Run `task(self)` on the session's thread (one at a time): a request's phases, or a
        script of cluster starts and runs such as the demo's. `on_done()` is called on that
        thread when the task has ended, however it ended."""
        if self.busy:
            raise WorkbenchError("a run is already going on", "stop it first (s on the Run screen)")
        self.request, self.error, self.stopping, self.activity = request, None, False, ""

        def main() -> None:
            try:
                task(self)
            except WorkbenchError as exc:
                self.error = str(exc)
            except Exception as exc:  # noqa: BLE001 - a bug: shown in the app, the thread cannot raise
                self.error = f"internal error: {type(exc).__name__}: {exc}"
                self.traceback = traceback.format_exc()
            finally:  # a task may leave a last word in `activity` ("demo done: ...")
                if self.error:
                    self.activity = f"workbench: error: {self.error}"
                if on_done is not None:
                    on_done()

        self._thread = threading.Thread(target=main, name="workbench-session", daemon=True)
        self._thread.start()

    def run_phase(self, request: RunRequest, phase: str, source: str = "app") -> FinishedRun | None:
        """Run one phase of `request` and wait for it (on the session's thread)."""
        if self.stopping:
            return None
        spec, props = spec_from_args(list(request.files), list(request.overrides), phase)
        self.request = request
        title = f"{request.title or spec.db} {phase}".strip()
        run = BackgroundRun(spec, props.as_dict(), phase, title=title, store=self.store,
                            source=source, workload=",".join(Path(f).name for f in request.files),
                            cluster=self._cluster(request.cluster), files=request.files)
        self.current = run.start()
        run.wait()
        if run.result is not None and run.result.database != spec.db and not request.title:
            title = f"{run.result.database} {phase}"  # mongodb (FerretDB) run
        done = FinishedRun(title, run.result, source, run.run_id) if run.result is not None else None
        if done is not None:
            self.finished.append(done)
        if run.error:
            self.error, self.traceback = run.error, run.traceback
        elif run.store_error:
            self.error = run.store_error
        return done

    def _cluster(self, name: str | None):
        """The cluster under test, for the run's record (None when it is not ours to know)."""
        if name is None:
            return None
        try:
            return self.provider_of(name).status(name)
        except WorkbenchError:
            return None

    def fault(self, cluster: str, node: str, what: str) -> None:
        """Disturb a node of a cluster (pause, resume, kill or restart). The Run screen's keys and
        lessons both come here. The provider writes it to the cluster's journal, and every run on
        that cluster marks it from there (drive/cluster_watch.py), in this process or another.
        Blocks for the provider call: call it from a worker thread, not from a screen's loop."""
        provider = self.provider_of(cluster)
        getattr(provider, what)(cluster, node)

    def resize(self, cluster: str, what: str, node: str = "") -> str:
        """Add a node to a running cluster (what = "add_node") or decommission one ("remove_node"),
        blocking until it has joined or left; the run going on meanwhile marks it from the
        cluster's journal (drive/cluster_watch.py). The node added or removed. Call it from a
        worker thread, not from a screen's loop."""
        provider = self.provider_of(cluster)
        if not hasattr(provider, what):
            raise WorkbenchError(f"cluster {cluster!r}: its provider cannot {what.replace('_', ' ')}",
                                 "nodes are added and removed on clusters the workbench started (local or "
                                 "Docker): Cassandra, and HBase with RegionServers of their own (hbase-3)")
        if what == "add_node":
            before = {n.name for n in provider.status(cluster).nodes}
            after = provider.add_node(cluster)
            return next((n.name for n in after.nodes if n.name not in before), "")
        provider.remove_node(cluster, node)
        return node

    def stop(self) -> None:
        """Stop the phase running now and skip the phases after it."""
        self.stopping = True
        if self.current is not None:
            self.current.command("stop", "stopped")

    def close(self) -> None:
        """Run the cleanups (newest first), once; a failing one does not stop the others."""
        while self.cleanups:
            cleanup = self.cleanups.pop()
            try:
                cleanup()
            except WorkbenchError as exc:
                self.error = str(exc)

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()
