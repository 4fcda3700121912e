"""The controller: runs one phase, merges every worker's ticks, publishes snapshots, takes live
commands. The CLI and the TUI drive the engine only through this API.

Live commands (pause, resume, stop, set_target, set_lanes) are called on the controller's
event loop; from another thread use `controller.threadsafe(name, *args)`. Every command is
recorded as an event of the run.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from hdrh.histogram import HdrHistogram

from workbench.config.spec import WorkloadSpec
from workbench.core import heap, loops
from workbench.core.spill import SpillList
from workbench.core.workers import InProcessExecutor, ProcessExecutor, binding_factory
from workbench.errors import BindingError, WorkbenchError
from workbench.metrics.histograms import encode, merge_into, new_histogram
from workbench.metrics.keycounts import KeyTally
from workbench.metrics.keycounts import merge as merge_keys
from workbench.metrics.server import CLIENT, ServerEvent
from workbench.metrics.snapshot import IntervalSnapshot, OpStats

Listener = Callable[[IntervalSnapshot], None]
T = TypeVar("T")
# Called after every tick with what the run's record keeps of it and the events since the last.
RecordListener = Callable[["StoredInterval", list[tuple[float, str, object]]], None]
# Node -> figure -> value (metrics/server.py names the figures).
ServerFigures = dict[str, dict[str, float]]


class ServerFeed(Protocol):
    """The servers' side of a run, sampled off the engine (drive/server_sampler.py): started when
    the run's clock starts; each tick takes, without waiting, what was sampled for it."""

    def start(self, wall0: float) -> None: ...

    def take(self, elapsed_s: float) -> tuple[ServerFigures, list[tuple[float, ServerEvent]]]: ...


@dataclass
class StoredInterval:
    """What is kept of each snapshot for the run's record (histograms compressed)."""

    elapsed_s: float
    interval_s: float
    operations: int
    total_operations: int
    lanes: int
    target: float
    paused: bool
    stats: dict[str, OpStats]
    returns: dict[str, dict[str, int]]
    histograms: dict[str, str]
    in_flight: float = 0.0  # operations in the system, mean of the workers' samples (summed)
    warmup: bool = False  # a warm-up interval: done, not measured
    nodes: dict[str, tuple[int, int]] = field(default_factory=dict)  # (requests, errors) per node
    regions: dict[str, tuple[int, int]] = field(default_factory=dict)  # the same per region (HBase)
    behind: int = 0  # paced: operations due by the tick's end no lane had taken (summed over workers)
    # the servers' figures sampled for this interval (node -> figures) and the server events
    # begun in it, (elapsed_s, event): a ServerFeed's (metrics/server.py)
    server: ServerFigures = field(default_factory=dict)
    server_events: tuple[tuple[float, ServerEvent], ...] = ()


@dataclass
class PhaseOutcome:
    """Everything a finished (or stopped) phase produced; results/ turns it into a RunResult."""

    spec: WorkloadSpec
    phase: str
    started_at: float
    runtime_ms: int
    operations: int
    histograms: dict[str, HdrHistogram]
    returns: dict[str, dict[str, int]]
    intervals: Sequence[StoredInterval] = field(default_factory=list)  # a SpillList from a run
    events: list[tuple[float, str, object]] = field(default_factory=list)
    outcome: str = "completed"
    error: str | None = None
    paced: bool = False
    error_kinds: dict[str, int] = field(default_factory=dict)  # summed over workers
    client_counts: dict[str, int] = field(default_factory=dict)  # summed over workers
    notes: list[str] = field(default_factory=list)  # the binding's remarks for the report
    warmup_s: float = 0.0  # seconds from the start to the measured window (not measured)
    ray: dict | None = None  # a Ray run: the cluster's address and where each worker ran
    event_loop: str = ""  # the loop the lanes ran on (core/loops.py): "uvloop 0.23.0", "asyncio"
    keys: KeyTally | None = None  # measurement.keys: the keys the requests chose, all workers'
    server_events: list[tuple[float, ServerEvent]] = field(default_factory=list)  # ServerFeed's


STABLE_WINDOW_S = 2.0  # measurement.stable compares the throughput of 3 windows this long
STABLE_WINDOWS = 3
# After a stop, a phase's workers get this long to end: their lanes are cancelled after the
# runner's STOP_GRACE_S, then each binding's cleanup runs. A worker still going then (a request or
# a cleanup that ignores cancellation, a loop blocked in a call) is ended by force, and the phase
# fails with one line naming what held it up; what it recorded until then is kept.
END_GRACE_S = 60.0
# Stop reasons of a run that ended as planned: its time was up, its measurement was steady, or
# the plan that drives it ended it ("planned": a lesson's run once its window after a change is over).
COMPLETED = (None, "maxexecutiontime", "measured", "planned")


def stable(ticks: Sequence[tuple[float, int]], pct: float) -> bool:
    """Do the last STABLE_WINDOWS windows of STABLE_WINDOW_S seconds (consecutive ticks, newest
    last) have throughputs within `pct` percent of their mean (highest minus lowest)?"""
    rates: list[float] = []
    seconds, ops = 0.0, 0
    for interval_s, n in reversed(ticks):
        seconds += interval_s
        ops += n
        if seconds >= STABLE_WINDOW_S:
            rates.append(ops / seconds)
            seconds, ops = 0.0, 0
            if len(rates) == STABLE_WINDOWS:
                break
    if len(rates) < STABLE_WINDOWS:
        return False
    mean = sum(rates) / len(rates)
    return mean > 0 and (max(rates) - min(rates)) <= mean * pct / 100


def client_figures(ticks: Sequence[object]) -> dict[str, float]:
    """The workbench's own figures of a tick, the longest over its workers (metrics/server.py):
    loop_lag_ms, how late the lanes' event loops woke up; start_gap_ms (paced only), how late an
    operation started after its intended time."""
    own: dict[str, float] = {}
    for name in ("loop_lag_ms", "start_gap_ms"):
        values = [v for t in ticks if (v := getattr(t, name, None)) is not None]
        if values:
            own[name] = round(max(values), 3)
    return own


class Controller:
    def __init__(self, spec: WorkloadSpec, phase: str, cumulative_stats: bool = False,
                 processes: bool = False) -> None:
        """cumulative_stats: also summarise the since-start histograms in every snapshot
        (a few ms per measurement per tick; the TUI wants them, the CLI does not).
        processes: run the lanes in worker processes even for one worker (the TUI: its own
        process only renders)."""
        if phase not in ("load", "run"):
            raise ValueError(phase)
        self.cumulative_stats = cumulative_stats
        self.processes = processes
        self.spec = spec
        self.phase = phase
        self.lanes = spec.threadcount
        self.target = spec.target
        self.workers = spec.workers
        self.paused = False
        self._listeners: list[Listener] = []
        self._record_listeners: list[RecordListener] = []
        self._events_recorded = 0  # events already handed to the record listeners
        self._events: list[tuple[float, str, object]] = []
        self._executor = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._t0 = 0.0
        self._wall0 = 0.0  # time.time() when _t0 was taken
        self._stop_reason: str | None = None
        self._stopped_at: float | None = None  # perf_counter() at the stop (END_GRACE_S counts from it)
        self._notes: list[str] = []
        self._before_final: list[Callable[[], None]] = []
        self._server_feed: ServerFeed | None = None
        self._server_events: list[tuple[float, ServerEvent]] = []
        # what the phase accumulates, tick by tick (a Controller runs one phase)
        self._cumulative: dict[str, HdrHistogram] = {}
        self._returns: dict[str, dict[str, int]] = {}
        # one record per tick for the exports; only the newest stay in memory (a flat footprint
        # for runs of hours), the run store has its own copy
        self._intervals: SpillList[StoredInterval] = SpillList()
        self._total_ops = 0
        self._error_kinds: dict[str, int] = {}
        self._live_kinds: dict[str, int] = {}  # the bindings' error kinds so far, tick by tick
        self._nodes_known: set[str] = set()  # every node a tick named: the live line keeps them
        # each running worker's nodes down, as its newest tick said (a drain its reply missed
        # keeps them), and the last view of them all: what the phase shows once every worker ended
        self._down_of: dict[int, tuple[str, ...]] = {}
        self._down: set[str] = set()
        self._client_counts: dict[str, int] = {}
        self._key_tallies: list[KeyTally] = []  # each worker's, from its last tick
        self._last_tick = 0.0
        self._ever_paced = spec.target > 0
        # the measured window (spec.measured_window): everything above counts from its start
        self._window = spec.measured_window(phase)
        self._measuring = not (self._window and spec.warmup_s > 0)
        self._window_t0 = 0.0  # perf_counter at the start of the measured window
        # (interval_s, operations) of the newest measured ticks: as many as stable() can use
        tick = spec.snapshot_interval if spec.snapshot_interval > 0 else 1.0
        self._window_ticks: collections.deque[tuple[float, int]] = collections.deque(
            maxlen=2 * int(STABLE_WINDOW_S * STABLE_WINDOWS / tick) + 16)

    # -- subscriptions and live commands --------------------------------------------------------

    def before_final(self, look: Callable[[], None]) -> None:
        """Call look() once more when the run ends, before its last tick and its outcome (a
        watch of something outside the engine catches what happened in its last moments)."""
        self._before_final.append(look)

    def attach_server(self, feed: ServerFeed) -> None:
        """Have every tick carry what `feed` sampled of the servers for it (before run())."""
        self._server_feed = feed

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def subscribe_record(self, listener: RecordListener) -> None:
        """Hand every tick's StoredInterval (histograms compressed) and the events since the last
        tick to `listener`, on the controller's loop: the run store writes them as they happen."""
        self._record_listeners.append(listener)

    def _event(self, kind: str, value: object = None) -> None:
        self._events.append((self.elapsed(), kind, value))

    def mark(self, kind: str, value: object = None, at: float | None = None) -> None:
        """Record something that happened outside the engine (a node paused or killed, a node
        joining) as an event of the run, so it shows on the timeline and in the exports. `at`:
        when it happened (time.time()), if that was before now; the run's clock otherwise."""
        if at is None or not self._t0:
            self._event(kind, value)
        else:
            self._events.append((min(max(at - self._wall0, 0.0), self.elapsed()), kind, value))

    def events(self) -> list[tuple[float, str, object]]:
        """The run's events so far (a copy; call on the controller's loop)."""
        return list(self._events)

    @property
    def paced(self) -> bool:
        """Has a target rate been set at any time of this phase (response times exist)?"""
        return self._ever_paced

    def elapsed(self) -> float:
        return time.perf_counter() - self._t0 if self._t0 else 0.0

    def pause(self) -> None:
        if self._executor and not self.paused:
            self.paused = True
            self._executor.pause()
            self._event("pause")

    def resume(self) -> None:
        if self._executor and self.paused:
            self.paused = False
            self._executor.resume()
            self._event("resume")

    def stop(self, reason: str = "stopped") -> None:
        if self._stop_reason is None:
            self._stop_reason = reason
            self._stopped_at = time.perf_counter()
            self._event("stop", reason)
            if self._executor:
                self._executor.stop()

    def set_target(self, rate: float) -> None:
        if rate < 0:
            raise WorkbenchError(f"target rate {rate} is negative", "use 0 for no limit")
        self.target = rate
        self._ever_paced = self._ever_paced or rate > 0
        if self._executor:
            self._executor.set_target(rate)
        self._event("target", rate)

    def set_lanes(self, lanes: int) -> None:
        if lanes < 1:
            raise WorkbenchError(f"{lanes} lanes requested", "a run needs at least one lane")
        self.lanes = lanes
        if self._executor:
            self._executor.set_lanes(lanes)
        self._event("lanes", lanes)

    def threadsafe(self, command: str, *args) -> None:
        """Run a live command from another thread (the TUI)."""
        if self._loop is None:
            raise RuntimeError("the controller is not running")
        self._loop.call_soon_threadsafe(getattr(self, command), *args)

    def call(self, read: Callable[[], T], timeout: float) -> T:
        """read() run on the controller's loop from another thread, its value handed back: a
        scrape of the run's metrics reads the figures there, between two ticks. RuntimeError when
        the phase is not running, TimeoutError when its loop did not get to it within `timeout`."""
        loop = self._loop
        if loop is None or loop.is_closed():
            raise RuntimeError("the controller is not running")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def on_loop() -> None:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(read())
                except BaseException as exc:  # handed to the caller's thread
                    future.set_exception(exc)

        loop.call_soon_threadsafe(on_loop)
        try:
            return future.result(timeout)
        finally:
            future.cancel()  # (a no-op once it ran; never runs after the caller gave up)

    def measured(self) -> tuple[float, int, dict[str, HdrHistogram], dict[str, dict[str, int]]]:
        """The measured window (warm-up excluded) up to the newest tick: its seconds, operations,
        histograms since its start by measurement name, and status counts by operation. Live
        objects the next tick changes: call on the controller's loop and keep none of them."""
        seconds = self._last_tick - self._window_t0 if self._t0 else 0.0
        return seconds, self._total_ops, self._cumulative, self._returns

    # -- running ------------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Let the binding create its schema before any worker starts; a run phase that needs
        loaded records refuses a table that does not exist or is empty."""
        db = binding_factory(self.spec)({"phase": self.phase, "worker": -1, "workers": self.workers})
        if self.phase != "load" and self.spec.reads_existing_records:
            why = await db.nothing_loaded(self.spec.table)
            if why is not None:
                raise BindingError(
                    f"{why}: this run reads and updates records that a load writes",
                    f"load them first with `workbench load` and the same workload, cluster and "
                    f"table (-p table={self.spec.table})")
        await db.prepare()
        self._notes = list(db.notes())
        await db.cleanup()

    async def run(self) -> PhaseOutcome:
        self._loop = asyncio.get_running_loop()
        await self.prepare()
        if self.spec.ray_address:
            from workbench.core.ray_workers import RayExecutor  # noqa: PLC0415 - optional extra

            self._executor = RayExecutor(self.spec, self.phase, self.lanes, self.target, self.workers)
            self._executor.on_event = self._event
        elif self.workers > 1 or self.processes:
            self._executor = ProcessExecutor(
                self.spec, self.phase, self.lanes, self.target, self.workers
            )
        else:
            self._executor = InProcessExecutor(self.spec, self.phase, self.lanes, self.target)
        await self._executor.start()
        # The clock starts once every lane's process is up (YCSB's starts once its threads are
        # created, in a JVM that is already running); the bindings' init is inside the run.
        started_at = self._wall0 = time.time()
        self._t0 = self._last_tick = self._window_t0 = time.perf_counter()
        if self._server_feed is not None:
            self._server_feed.start(started_at)
        if self._stop_reason is not None:  # stopped while the binding was preparing
            self._executor.stop()
        error: str | None = None
        waiter = asyncio.ensure_future(self._executor.wait())
        tick = self.spec.snapshot_interval
        deadline = self._t0 + tick
        try:
            while not waiter.done():
                timeout = max(deadline - time.perf_counter(), 0)
                await asyncio.wait([waiter], timeout=timeout)
                if waiter.done():
                    break
                deadline += tick
                await self._tick(final=False)
                limit = self.spec.maxexecutiontime
                if limit and self.elapsed() >= limit:
                    self.stop("maxexecutiontime")
                elif self._window and self._window_done():
                    self.stop("measured")
                if self._stopped_at is not None and time.perf_counter() - self._stopped_at > END_GRACE_S:
                    stuck = self._executor.abandon()
                    raise WorkbenchError(
                        f"the phase had not ended {END_GRACE_S:.0f} s after its stop and was ended by "
                        f"force; still going: {stuck}",
                        "the results recorded so far are kept; a request or cleanup that hangs needs "
                        f"a timeout: see the {self.spec.db} binding's properties in docs/CLIENTS.md")
            waiter.result()
        except WorkbenchError as exc:
            error = str(exc)
        except asyncio.CancelledError:
            self.stop("interrupted")
            raise
        finally:
            runtime_ms = int((time.perf_counter() - self._window_t0) * 1000)
            if not waiter.done():
                waiter.cancel()
            for last_look in self._before_final:  # e.g. the cluster's journal, read once more
                last_look()
            await self._tick(final=True)
        if error:
            outcome = "failed"
        elif self._stop_reason in COMPLETED:
            outcome = "completed"
        else:
            outcome = self._stop_reason
        return PhaseOutcome(
            spec=self.spec,
            phase=self.phase,
            started_at=started_at,
            runtime_ms=runtime_ms,
            operations=self._total_ops,
            histograms=self._cumulative,
            returns=self._returns,
            intervals=self._intervals,
            events=list(self._events),
            outcome=outcome,
            error=error,
            paced=self._ever_paced,
            error_kinds=self._error_kinds,
            client_counts=self._client_counts,
            notes=self._notes,
            warmup_s=self._window_t0 - self._t0,
            ray=self._executor.describe() if hasattr(self._executor, "describe") else None,
            # worker processes start their loops as this one was started (loops.run, same choice)
            event_loop="asyncio (Ray's actor loop)" if self.spec.ray_address else loops.describe(self._loop),
            keys=merge_keys(self._key_tallies),
            server_events=self._server_events,
        )

    def _window_done(self) -> bool:
        """Has the measured window got all it asks for (minimum seconds, operationcount
        measured operations, a stable throughput)?"""
        spec = self.spec
        if not self._measuring or time.perf_counter() - self._window_t0 < spec.minimum_s:
            return False
        if spec.operationcount and self._total_ops < spec.operationcount:
            return False
        if spec.stable_pct:
            return stable(self._window_ticks, spec.stable_pct)
        return bool(spec.minimum_s or spec.operationcount)

    async def _tick(self, final: bool) -> None:
        ticks = await self._executor.drain()
        now = time.perf_counter()
        interval_s = now - self._last_tick
        self._last_tick = now
        merged: dict[str, HdrHistogram] = {}
        returns: dict[str, dict[str, int]] = {}
        ops = 0
        nodes: dict[str, tuple[int, int]] = {}
        regions: dict[str, tuple[int, int]] = {}
        for t in ticks:
            ops += t.operations
            for kind, n in (t.kinds_delta or {}).items():
                self._live_kinds[kind] = self._live_kinds.get(kind, 0) + n
            self._down_of[t.worker] = t.down or ()
            for into, counts in ((nodes, t.nodes), (regions, t.regions)):
                for where, (requests, errors) in (counts or {}).items():
                    before = into.get(where, (0, 0))
                    into[where] = (before[0] + requests, before[1] + errors)
            if t.keys is not None:
                self._key_tallies.append(t.keys)
            for kind, n in (t.error_kinds or {}).items():
                self._error_kinds[kind] = self._error_kinds.get(kind, 0) + n
            for what, n in (t.client_counts or {}).items():
                self._client_counts[what] = self._client_counts.get(what, 0) + n
            for name, h in t.histograms.items():
                target = merged.get(name)
                if target is None:
                    merged[name] = h
                else:
                    merge_into(target, h)
            for op, counts in t.returns.items():
                into = returns.setdefault(op, {})
                total = self._returns.setdefault(op, {})
                for status, n in counts.items():
                    into[status] = into.get(status, 0) + n
                    total[status] = total.get(status, 0) + n
        # the nodes the workers' clients know are down, as each worker last said (a state: a worker
        # whose reply comes late still knows them); a worker whose phase ended speaks no more for
        # the cluster, and once none runs, the phase's last view stands (the ticks that wait for
        # the workers' ends on a loaded machine, rehearsal 70)
        if self._down_of:
            self._down = set().union(*self._down_of.values())
        down = self._down
        for t in ticks:
            if t.last:
                self._down_of.pop(t.worker, None)
        for name, h in merged.items():
            cumulative = self._cumulative.get(name)
            if cumulative is None:
                cumulative = self._cumulative[name] = new_histogram()
            merge_into(cumulative, h)
        self._total_ops += ops
        stats = {name: OpStats.of(h) for name, h in merged.items()}
        behind = sum(t.behind for t in ticks) if self.target else 0
        self._nodes_known.update(nodes, down)
        server, server_events = ({}, []) if self._server_feed is None else \
            self._server_feed.take(now - self._t0)
        if own := client_figures(ticks):  # the client is a suspect too: its loops and its schedule
            server = {**server, CLIENT: {**server.get(CLIENT, {}), **own}}
        self._server_events.extend(server_events)
        snapshot = IntervalSnapshot(
            phase=self.phase,
            elapsed_s=now - self._t0,
            interval_s=interval_s,
            operations=ops,
            total_operations=self._total_ops,
            todo_operations=self._executor.remaining(),
            lanes=self.lanes,
            target=self.target,
            paused=self.paused,
            stats=stats,
            cumulative=(
                {name: OpStats.of(h) for name, h in self._cumulative.items()}
                if self.cumulative_stats
                else {}
            ),
            returns=returns,
            histograms=merged,
            final=final,
            # every node seen so far, (0, 0) for those without requests this tick (the record
            # below keeps only those with some, as it always did)
            nodes={node: nodes.get(node, (0, 0)) for node in sorted(self._nodes_known)},
            error_kinds=dict(self._live_kinds),
            down=frozenset(down),
            behind=behind,
            server=server,
            server_events=tuple(server_events),
        )
        stored = StoredInterval(
            snapshot.elapsed_s, interval_s, ops, self._total_ops, self.lanes, self.target,
            self.paused, stats, returns, {n: encode(h) for n, h in merged.items()},
            in_flight=sum(t.in_flight for t in ticks), warmup=not self._measuring, behind=behind,
            nodes=dict(sorted(nodes.items())),
            regions=dict(sorted(regions.items())),
            server=server, server_events=tuple(server_events),
        )
        if self._measuring:
            self._window_ticks.append((interval_s, ops))
        elif snapshot.elapsed_s >= self.spec.warmup_s:  # the warm-up ends with this tick
            self._measuring = True
            self._window_t0 = now
            self._cumulative, self._returns, self._total_ops = {}, {}, 0
            self._event("measuring", round(snapshot.elapsed_s, 3))
        self._intervals.append(stored)
        heap.maybe_trim()  # at most once a minute: what long runs freed goes back to the system
        if self._record_listeners:
            events = self._events[self._events_recorded:]
            self._events_recorded = len(self._events)
            for record in list(self._record_listeners):
                record(stored, events)
        for listener in list(self._listeners):
            listener(snapshot)
