"""One worker: lanes on an asyncio loop driving one binding, with live controls.

A lane is YCSB's "thread": a sequential stream of operations, so the number of lanes is the
number of requests in flight. Lanes take operation numbers from a budget shared by every
worker of the run (for load, operation n inserts key insertstart + n, so the key sequence is
YCSB's whatever the number of workers), pace themselves on the worker's schedule when a target
rate is set, and record into the worker's Recorder, which the controller drains every tick.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import time
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any, Protocol

from workbench import speedups
from workbench.bindings.base import Binding, Status
from workbench.config.spec import WorkloadSpec
from workbench.core import heap
from workbench.core.pacing import Pacer
from workbench.core.workload import LaneWorkload, WorkerKeys
from workbench.metrics.keycounts import KeyCounter
from workbench.metrics.recorder import Recorder, TickData

YIELD_EVERY = 32  # a lane on a binding that never suspends (unpaced, or behind its schedule) lets others run
# A sequence returns to its lane within this, so live figures stay live (its operations are
# recorded when it returns). Each return costs the lane a wake-up and its next sequence a first
# request from our thread: 0.1 s cost cassandra-driver 6 us of client CPU per operation more
# than 0.25 s at 5,000 ops/s (BENCHMARKS.md, "Session 4").
SEQUENCE_NS = 250_000_000
STOP_GRACE_S = 5.0  # after stop, operations still in flight get this long before cancellation
# While lanes run, the cyclic collector's youngest generation holds this many objects (Python's
# default is 700). cassandra-driver leaves reference cycles behind every request, and lanes hold
# chosen operations and answers across many young collections; with the default, collections
# took about a tenth of the client's CPU. 10,000 helped cassandra-driver but cost acsylla CPU
# (the young objects no longer stay in cache); 3,000 suited both (BENCHMARKS.md, "Session 3").
GC_YOUNG = 3_000
# How often a worker counts the operations in its system (for Little's law: in flight = throughput
# x response time): 50 times a second, a wake-up of a few microseconds each.
SAMPLE_S = 0.02
SAMPLE_NS = int(SAMPLE_S * 1e9)  # the same wake-up measures the loop's lag: how late it came
ASYNCIO_DIR = os.path.dirname(asyncio.__file__) + os.sep


def waiting_in(task: asyncio.Task) -> str:
    """Where a suspended task waits: the innermost coroutine outside asyncio itself, by its
    function, file (from its package on) and line, following what each coroutine awaits ("" when
    it cannot be told)."""
    coro, frame = task.get_coro(), None
    while coro is not None:
        inner = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if inner is None:
            break
        if not inner.f_code.co_filename.startswith(ASYNCIO_DIR):  # not asyncio.Event.wait and such
            frame = inner
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    if frame is None:
        return ""
    return _place(frame.f_code, frame.f_lineno)


def _place(code, line: int) -> str:
    """A function by its name, file (from its package on) and line: "release
    (pymongo/_asyncio_lock.py:174)"."""
    path = code.co_filename.replace("\\", "/")
    for root, keep in (("/site-packages/", 0), ("/dist-packages/", 0), ("/workbench/", 1), ("/tests/", 1)):
        if root in path:  # pymongo/pool.py, workbench/core/runner.py
            path = path[path.rindex(root) + (1 if keep else len(root)):]
            break
    return f"{code.co_name} ({path}:{line})"


def failure_line(worker: int, exc: BaseException) -> str:
    """One line for an exception a worker did not expect (a lane's, or its engine's), with where it
    was raised: "worker 0: RuntimeError: Lock is not acquired., raised in release
    (pymongo/_asyncio_lock.py:174)"."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f", raised in {_place(tb.tb_frame.f_code, tb.tb_lineno)}" if tb is not None else ""
    return f"worker {worker}: {type(exc).__name__}: {exc}{where}"


class Budget(Protocol):
    def claim(self) -> int | None: ...

    async def refill(self) -> bool:
        """After claim() said None: wait for more numbers (True) or say there are none (False).
        Only a budget whose numbers come from far away (a Ray run's) ever waits."""
        ...

    def remaining(self) -> int: ...

    def exhausted(self) -> bool: ...


class LocalBudget:
    """Operation numbers 0..total-1 for lanes in one process (total 0 = no limit)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.next = 0

    def claim(self) -> int | None:
        n = self.next
        if self.total and n >= self.total:
            return None
        self.next = n + 1
        return n

    async def refill(self) -> bool:
        return False

    def remaining(self) -> int:
        return max(self.total - self.next, 0) if self.total else 0

    def exhausted(self) -> bool:
        return bool(self.total) and self.next >= self.total


def lane_seed(seed: int | None, worker: int, lane: int) -> int | None:
    """Each lane's random stream: reproducible from `seed`, independent between lanes."""
    if seed is None:
        return None
    return (seed * 1_000_003 + worker * 10_007 + lane) & 0xFFFFFFFFFFFF


class WorkerEngine:
    """Runs the lanes of one worker until the budget is used up or it is stopped."""

    def __init__(
        self,
        spec: WorkloadSpec,
        phase: str,
        binding_factory: Callable[[dict[str, Any]], Binding],
        budget: Budget,
        lanes: int,
        target: float,
        worker: int = 0,
        workers: int = 1,
    ) -> None:
        self.spec = spec
        self.phase = phase
        self.worker = worker
        self.workers = workers
        self.budget = budget
        self.recorder = Recorder()
        self.keys = WorkerKeys(spec, worker, workers)
        if spec.count_keys and phase == "run":  # measurement.keys: which keys the requests chose
            self.keys.counter = KeyCounter(spec, worker)
        self._keys_sent = False
        self.pacer = Pacer(target)
        self.lane_limit = lanes
        self.binding_factory = binding_factory
        self.db: Binding | None = None
        self._tasks: dict[int, asyncio.Task] = {}
        self._running = asyncio.Event()
        self._running.set()
        self.stopping = False
        self._held = False  # True while a lane must look at pause, stop or lane_limit
        self._halt = False  # True while paused or stopping: sequences end after their current step
        self.done = asyncio.Event()
        self.exhausted = False
        self.failure: BaseException | None = None  # an exception a lane did not expect
        self.cleanup_error: BaseException | None = None
        self._cleaning = False  # True while the binding's cleanup runs (what holdup() names)
        self._drained_ops = 0  # operations completed up to the last drain
        self._paced_base = 0  # operations completed when the schedule became active
        self._in_flight_sum = 0.0  # samples of the operations in the system since the last drain
        self._in_flight_n = 0
        self._nodes_seen: dict[str, tuple[int, int]] = {}  # the binding's node totals at the last drain
        self._regions_seen: dict[str, tuple[int, int]] = {}  # and its region totals
        self._kinds_seen: dict[str, int] = {}  # the binding's error kinds at the last drain
        self._lag_max_ns = 0  # the loop's longest lag since the last drain (_sample's overshoot)

    # -- live controls (call on the worker's loop) -------------------------------------------

    def _update_held(self) -> None:
        self._halt = self.stopping or not self._running.is_set()
        self._held = self._halt or any(lane >= self.lane_limit for lane in self._tasks)

    def pause(self) -> None:
        self._running.clear()
        self._update_held()

    def resume(self) -> None:
        if not self._running.is_set():
            self.pacer.restart()
            self._running.set()
        self._update_held()

    def set_target(self, rate: float) -> None:
        if rate > 0 and not self.pacer.active:
            self._paced_base = self._completed()
        self.pacer.set_rate(rate)

    def _completed(self) -> int:
        return self._drained_ops + self.recorder.operations

    def in_system(self) -> int:
        """Operations in the system now: paced, those whose intended start has come and that
        have not completed (waiting for a lane, or in flight); unpaced, the lanes (a closed
        loop: each lane always has one operation on its way)."""
        if not self._running.is_set() and not self.stopping:
            return 0
        if self.pacer.active:
            return max(self.pacer.due(perf_counter_ns()) - (self._completed() - self._paced_base), 0)
        return len(self._tasks)

    async def _sample(self) -> None:
        """Samples the operations in the system, and how late the loop wakes this task up: a lane
        that holds the loop (a binding that blocks, a CPU-bound worker) delays every other lane
        and the tick's drain by as much, the loop lag (TickData.loop_lag_ms)."""
        while True:
            t0 = perf_counter_ns()
            await asyncio.sleep(SAMPLE_S)
            lag = perf_counter_ns() - t0 - SAMPLE_NS
            if lag > self._lag_max_ns:
                self._lag_max_ns = lag
            self._in_flight_sum += self.in_system()
            self._in_flight_n += 1

    def set_lanes(self, n: int) -> None:
        self.lane_limit = n
        if self.db is not None and not self.stopping:
            self._spawn_missing()
        self._update_held()

    def stop(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        self._held = self._halt = True
        self._running.set()  # paused lanes must wake up to see the stop
        asyncio.get_running_loop().call_later(STOP_GRACE_S, self._cancel_lanes)

    def _cancel_lanes(self) -> None:
        for task in self._tasks.values():
            task.cancel()

    @property
    def active_lanes(self) -> int:
        return len(self._tasks)

    def holdup(self) -> str:
        """What keeps this worker from ending after its stop, in a few words: its lanes still in
        flight (and where the first of them waits), or its binding's cleanup."""
        if self._tasks:
            where = waiting_in(next(iter(self._tasks.values())))
            lanes = len(self._tasks)
            return (f"{lanes} lane{'s' if lanes > 1 else ''} of worker {self.worker}"
                    + (f", one waiting in {where}" if where else ""))
        if self._cleaning:
            return f"worker {self.worker}'s {type(self.db).__name__}.cleanup()"
        return f"worker {self.worker}"

    def drain(self) -> TickData:
        heap.maybe_trim()  # a worker process's own heap (at most once a minute)
        tick = self.recorder.drain()
        tick.worker, tick.last = self.worker, self.done.is_set()
        self._drained_ops += tick.operations
        if self._in_flight_n:
            tick.in_flight = self._in_flight_sum / self._in_flight_n
            self._in_flight_sum, self._in_flight_n = 0.0, 0
        # a paused schedule owes nothing, nor one whose operations have all been started
        if self._running.is_set() and not self.stopping and not self.exhausted and not self.done.is_set():
            tick.behind = self.pacer.behind(perf_counter_ns())
        if self.pacer.active:
            tick.start_gap_ms = self.pacer.take_late()
        tick.loop_lag_ms, self._lag_max_ns = self._lag_max_ns / 1e6, 0
        if self.db is not None:
            tick.nodes = self._node_deltas(self.db.node_counts())
            tick.regions = self._node_deltas(self.db.region_counts(), self._regions_seen)
            tick.kinds_delta = self._kinds_delta(self.db.error_kinds())
            tick.down = tuple(sorted(self.db.down_nodes())) or None
        if self.done.is_set() and self.keys.counter is not None and not self._keys_sent:
            self._keys_sent = True  # handed over once: the controller adds up its workers' tallies
            tick.keys = self.keys.counter.tally(self.keys.inserts.value - self.keys.record_total)
        if self.done.is_set() and self.db is not None:
            tick.error_kinds = dict(self.db.error_kinds())
            tick.client_counts = dict(self.db.client_counts()) or None
            if self.cleanup_error is not None:
                kind = f"cleanup {type(self.cleanup_error).__name__}: {self.cleanup_error}"
                tick.error_kinds[kind] = 1
        return tick

    def _node_deltas(self, counts: dict[str, tuple[int, int]],
                     seen: dict[str, tuple[int, int]] | None = None) -> dict[str, tuple[int, int]] | None:
        """This tick's requests and errors per node (or per region, with its own `seen`), from
        the binding's totals since init."""
        if not counts:
            return None
        seen, out = self._nodes_seen if seen is None else seen, {}
        for node, (requests, errors) in counts.items():
            before = seen.get(node, (0, 0))
            if requests != before[0] or errors != before[1]:
                out[node] = (requests - before[0], errors - before[1])
            seen[node] = (requests, errors)
        return out

    def _kinds_delta(self, kinds: dict[str, int]) -> dict[str, int] | None:
        """The error kinds that grew since the last drain, by how much (None: none did). Deltas,
        not totals: ticks carry no worker's name and a late one lands in a later drain, so the
        controller can only add them up."""
        seen, out = self._kinds_seen, {}
        for kind, n in kinds.items():
            before = seen.get(kind, 0)
            if n != before:
                out[kind] = n - before
                seen[kind] = n
        return out or None

    # -- running -----------------------------------------------------------------------------

    def _record_source(self):
        """(key, values) of every record a load would write; the memory binding preloads them."""
        rng = random.Random(lane_seed(self.spec.seed, self.worker, 10**6))
        lane = LaneWorkload(self.spec, self.db, Recorder(), self.keys, rng)
        for keynum in range(self.spec.insertstart, self.spec.insertstart + self.spec.insert_total):
            key = lane.key_name(keynum)
            yield key, lane.values.all_fields(key)

    async def run(self) -> None:
        context = {
            "phase": self.phase,
            "worker": self.worker,
            "workers": self.workers,
            "record_source": self._record_source,
        }
        self.db = self.binding_factory(context)
        await self.db.init()
        thresholds = gc.get_threshold()
        gc.collect()
        gc.freeze()  # what exists now (modules, connections) is never scanned again during the run
        gc.set_threshold(GC_YOUNG, *thresholds[1:])
        sampler = asyncio.get_running_loop().create_task(self._sample())
        try:
            self.pacer.restart()  # the schedule starts with the lanes, not before the binding's init
            self._spawn_missing()
            while True:
                if self._tasks:
                    await asyncio.wait(list(self._tasks.values()))
                elif self.stopping or self.exhausted or self.budget.exhausted():
                    break
                else:  # no lanes here for now (lanes < workers): wait for more or for the end
                    await asyncio.sleep(0.05)
        finally:
            sampler.cancel()
            gc.set_threshold(*thresholds)
            gc.unfreeze()
            t0 = time.perf_counter_ns()
            self._cleaning = True
            try:
                await self.db.cleanup()
            except Exception as exc:  # reported, and the run's results are still kept
                self.cleanup_error = exc
            self._cleaning = False
            cleanup = self.recorder.meter("CLEANUP")
            cleanup.record_value((time.perf_counter_ns() - t0) // 1000)
            if self.cleanup_error is not None:  # e.g. a client-side write buffer that failed to flush
                cleanup.count_status(Status.ERROR)
            self.done.set()

    def _spawn_missing(self) -> None:
        for lane in range(self.lane_limit):
            if lane not in self._tasks:
                task = asyncio.get_running_loop().create_task(self._lane(lane))
                self._tasks[lane] = task
                task.add_done_callback(lambda t, lane=lane: self._lane_ended(lane, t))

    def _lane_ended(self, lane: int, task: asyncio.Task) -> None:
        self._tasks.pop(lane, None)
        self._update_held()
        if not task.cancelled() and task.exception() is not None and self.failure is None:
            self.failure = task.exception()
            self.stop()

    async def _lane(self, lane: int) -> None:
        rng = random.Random(lane_seed(self.spec.seed, self.worker, lane))
        work = LaneWorkload(self.spec, self.db, self.recorder, self.keys, rng)
        load = self.phase == "load"
        insertstart = self.spec.insertstart
        choose, batch = work.choose, work.batch
        # Unpaced reads and updates chosen ahead go to the binding as sequences (see
        # Binding.sequence); paced operations need their own intended start times.
        sequences = batch > 1 and not load
        sequence_length, run_sequence = work.sequence_length, work.run_sequence
        chosen: list[tuple] = []
        at = 0  # the next transaction of `chosen` to run
        credit = 0  # operation numbers claimed but not run yet (a sequence that stopped early)
        pacer = self.pacer
        running = self._running
        recorder = self.recorder
        claim, refill = self.budget.claim, self.budget.refill
        done = 0
        next_yield = YIELD_EVERY
        deadline = 0

        # more(): may a sequence go on? (asked on the driver's thread, maybe). Compiled where
        # workbench._speedups is (the native CQL client's compiled chain step reads it without
        # a call), else this closure; the lane sets the deadline before each sequence.
        timer = speedups.C.Deadline(self) if speedups.C is not None else None

        def more() -> bool:
            return not self._halt and perf_counter_ns() < deadline

        try:
            while True:
                if self._held:  # paused, stopping or fewer lanes: the slow path
                    if self.stopping or (lane >= self.lane_limit and not credit):
                        break
                    if not running.is_set():
                        await running.wait()
                        continue
                if load:
                    n = claim()
                    if n is None:
                        if await refill():
                            continue
                        self.exhausted = True
                        break
                    intended = await pacer.next_slot() if pacer.active else 0
                    await work.insert_load(insertstart + n, intended)
                    ran = 1
                else:
                    if at == len(chosen):
                        chosen, at = choose(batch), 0
                    length = sequence_length(chosen, at) if sequences and not pacer.active else 0
                    want = length or 1
                    if not (self._held and lane >= self.lane_limit):  # a lane on its way out claims no more
                        while credit < want:
                            if claim() is None:
                                if await refill():
                                    continue
                                self.exhausted = True
                                break
                            credit += 1
                    if not credit:
                        break
                    if length:
                        deadline = perf_counter_ns() + SEQUENCE_NS
                        if timer is not None:
                            timer.deadline = deadline
                        end = at + min(length, credit)
                        ran = await run_sequence([args for _, args in chosen[at:end]], timer or more)
                    else:
                        intended = await pacer.next_slot() if pacer.active else 0
                        execute, args = chosen[at]
                        await execute(intended, args)
                        ran = 1
                    at += ran
                    credit -= ran
                recorder.operations += ran
                done += ran
                if done >= next_yield:  # paced too: a lane behind its schedule never sleeps
                    next_yield = done + YIELD_EVERY
                    await asyncio.sleep(0)
        finally:
            if work.drawn is not None and not load:  # counting keys: take back what never ran
                work.uncount(chosen[at:])
