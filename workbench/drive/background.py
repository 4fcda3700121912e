"""One phase run in the background, for a caller that must never block (the terminal app).

A `BackgroundRun` owns a Controller on its own thread and event loop; the lanes run in worker
processes (even for one worker), so the caller's process only merges ticks and renders. Every
tick the controller's thread publishes an immutable `LiveState` by replacing one attribute:
the caller reads `run.state` at whatever pace it likes and only ever sees the newest, and never
reads the Controller itself (its attributes change on its own thread: the state carries the
controls, paced, paused, target and lanes, as the controller's loop saw them). Live commands
(pause, resume, stop, set_target, set_lanes, mark) cross to the controller's loop through
`Controller.threadsafe`; once one has run there the state is published again with its effect.

    run = BackgroundRun(spec, props, "run").start()
    run.state.snapshot.total_operations      # newest tick (None before the first)
    run.command("set_target", 2000)
    run.finished.wait(); run.result          # the RunResult, also when stopped or failed
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.config.spec import WorkloadSpec
from workbench.core import loops
from workbench.core.controller import Controller
from workbench.drive.phase import Phase, failure_line
from workbench.errors import WorkbenchError
from workbench.metrics.server import ServerEvent
from workbench.metrics.snapshot import IntervalSnapshot
from workbench.results.model import RunResult

if TYPE_CHECKING:
    from workbench.clusters.base import Cluster

HISTORY = 600  # ticks of throughput kept for the sparkline (10 minutes at 1 s)
SERVER_EVENTS = 1000  # the newest server events kept for the timeline
COMMANDS = ("pause", "resume", "stop", "set_target", "set_lanes", "mark")


@dataclass(frozen=True)
class LiveState:
    """What a viewer needs of a running phase at one tick; never mutated once published."""

    seq: int  # increases with every publication: a viewer redraws only when it changed
    snapshot: IntervalSnapshot
    throughput: tuple[float, ...]  # ops/s per tick, oldest first (at most HISTORY)
    targets: tuple[float, ...]  # the target rate at each of those ticks (0: none)
    events: tuple[tuple[float, str, object], ...]  # (elapsed s, kind, value)
    returns: dict[str, dict[str, int]]  # since the start: operation -> status -> count (a copy)
    # The controls now (the snapshot's are the tick's), read on the controller's loop:
    paced: bool = False  # a target was set at some time of the phase: response times exist
    paused: bool = False
    target: float = 0.0  # ops/s, 0: no limit
    lanes: int = 1
    # the servers' side (issue 54): each tick's figures by node, oldest first (at most HISTORY;
    # the snapshot's `server` is the newest), and the server events so far, (elapsed s, event)
    server: tuple[dict[str, dict[str, float]], ...] = ()
    server_events: tuple[tuple[float, ServerEvent], ...] = ()


class BackgroundRun:
    """Runs one phase of `spec` on a thread of its own; see the module docstring."""

    def __init__(self, spec: WorkloadSpec, props: dict[str, str], phase: str,
                 title: str = "", *, store: object = False, source: str = "app", workload: str = "",
                 cluster: Cluster | None = None, files: tuple[str, ...] = ()) -> None:
        """store: the run store to record into (None: the default one; False: none); files: the
        -P files of the run's manifest."""
        self.spec, self.props, self.phase = spec, props, phase
        # the one phase runner (phase.py), with a controller whose lanes run in worker processes
        self.run = Phase(spec, props, phase, store=store, source=source, workload=workload,
                         cluster=cluster, files=files,
                         controller=Controller(spec, phase, cumulative_stats=True, processes=True))
        self.controller = self.run.controller
        self.store_error: str | None = None  # the store failed during the run (the run went on)
        self.title = title or f"{phase} on {spec.db}"
        self.state: LiveState | None = None
        self.result: RunResult | None = None
        self.error: str | None = None  # a run that could not start (bad binding, no server)
        self.traceback: str | None = None  # with an internal error: where it came from
        self.finished = threading.Event()
        self._throughput: list[float] = []
        self._targets: list[float] = []
        self._server: list[dict[str, dict[str, float]]] = []
        self._server_events: list[tuple[float, ServerEvent]] = []
        self._returns: dict[str, dict[str, int]] = {}
        self._thread = threading.Thread(target=self._main, name=f"workbench-{phase}", daemon=True)
        self._started = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None  # the controller's

    @property
    def run_id(self) -> int | None:
        """The run's ID in the run store, when it is recorded."""
        return self.run.run_id

    def start(self) -> BackgroundRun:
        """Start the phase. A run store that cannot take the run raises a WorkbenchError here,
        before anything runs."""
        self.run.open()
        self._thread.start()
        self._started.wait()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self.finished.is_set()

    def command(self, name: str, *args: object) -> None:
        """A live command, from any thread; ignored once the phase has ended."""
        if name not in COMMANDS:
            raise ValueError(f"unknown live command {name!r}")
        if self.finished.is_set():
            return
        try:
            self.controller.threadsafe(name, *args)
            if self._loop is not None:  # after the command, on the same loop: its effect
                self._loop.call_soon_threadsafe(self._republish)
        except RuntimeError:  # the loop has just closed: the phase is over
            pass

    def wait(self, timeout: float | None = None) -> bool:
        return self.finished.wait(timeout)

    # -- the controller's thread ---------------------------------------------------------------

    def _main(self) -> None:
        try:
            loops.run(self._run(), self.controller.spec.eventloop)
        finally:
            self.finished.set()

    async def _run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.controller.subscribe(self._publish)
        task = asyncio.ensure_future(self.run.run())
        await asyncio.sleep(0)  # run() has taken its loop: live commands can cross from now on
        self._started.set()
        try:
            done = await task
        except WorkbenchError as exc:
            self.error = failure_line(exc)
        except Exception as exc:  # noqa: BLE001 - a bug: the viewer shows it, a thread cannot raise
            self.error = failure_line(exc)  # (as the run store has it)
            self.traceback = traceback.format_exc()
        else:
            self.result = done.result
        self.store_error = self.run.store_error

    def _publish(self, snap: IntervalSnapshot) -> None:
        self._throughput.append(snap.throughput)
        self._targets.append(snap.target)
        del self._throughput[:-HISTORY], self._targets[:-HISTORY]
        for op, counts in snap.returns.items():
            into = self._returns.setdefault(op, {})
            for status, n in counts.items():
                into[status] = into.get(status, 0) + n
        self._server.append({node: dict(f) for node, f in snap.server.items()})
        self._server_events.extend(snap.server_events)
        del self._server[:-HISTORY], self._server_events[:-SERVER_EVENTS]
        seq = self.state.seq + 1 if self.state else 1
        self.state = LiveState(seq, snap, tuple(self._throughput), tuple(self._targets),
                               tuple(self.controller.events()),
                               {op: dict(c) for op, c in self._returns.items()}, **self._controls(),
                               server=tuple(self._server), server_events=tuple(self._server_events))

    def _controls(self) -> dict[str, object]:
        c = self.controller
        return {"paced": c.paced, "paused": c.paused, "target": c.target, "lanes": c.lanes}

    def _republish(self) -> None:
        """The newest state again, with the controls and events a live command just changed."""
        state = self.state
        if state is not None:
            self.state = dataclasses.replace(state, seq=state.seq + 1, events=tuple(self.controller.events()),
                                             **self._controls())
