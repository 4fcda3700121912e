"""Executors: where the lanes run. In the controller's own loop, or in K worker processes.

Both answer the same calls (start, drain, pause, resume, set_target, set_lanes, stop,
wait). Worker processes are started with `spawn`, ignore SIGINT (the parent decides when to
stop), take operation numbers from one shared counter in chunks, and send their interval
histograms encoded (HdrHistogram's compressed form) so the parent merges them losslessly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing as mp
import os
import signal
from typing import Any

from workbench.bindings.registry import load_binding_class
from workbench.config.bindings import BINDINGS
from workbench.config.spec import WorkloadSpec
from workbench.core import loops
from workbench.core.runner import LocalBudget, WorkerEngine, failure_line
from workbench.errors import WorkbenchError
from workbench.metrics.histograms import decode, encode
from workbench.metrics.recorder import TickData

# When set (by the terminal app), worker processes write their stdout and stderr to this file.
WORKER_LOG_ENV = "WORKBENCH_WORKER_LOG"
CHUNK = 256  # operation numbers a worker process claims at a time
# A worker process killed while it held the shared counter's lock never releases it; the others
# would wait for it for ever (their loops blocked, deaf to the controller's stop). Held for
# microseconds otherwise, so a wait this long means its holder is gone.
COUNTER_LOCK_WAIT_S = 5.0
REPLY_TIMEOUT_S = 2.0
KEPT = "the results recorded so far are kept"  # the hint of a failed phase


def split(total: float, parts: int, index: int) -> float:
    """Share `index` of `parts` of a whole number (lanes) spread as evenly as possible."""
    base, extra = divmod(int(total), parts)
    return base + (1 if index < extra else 0)


def binding_factory(spec: WorkloadSpec):
    cls = load_binding_class(spec.db, dict(spec.binding_properties))

    def make(context: dict[str, Any]):
        return cls(spec, dict(spec.binding_properties), context)

    return make


class InProcessExecutor:
    """One worker whose lanes run on the caller's event loop."""

    def __init__(self, spec: WorkloadSpec, phase: str, lanes: int, target: float) -> None:
        self.budget = LocalBudget(spec.lane_budget(phase))
        self.engine = WorkerEngine(spec, phase, binding_factory(spec), self.budget, lanes, target)
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        # Not awaited here: the binding's init runs inside the phase's clock, as with processes.
        self._task = asyncio.get_running_loop().create_task(self.engine.run())

    async def drain(self) -> list[TickData]:
        return [self.engine.drain()]

    def remaining(self) -> int:
        return self.budget.remaining()

    def pause(self) -> None:
        self.engine.pause()

    def resume(self) -> None:
        self.engine.resume()

    def set_target(self, rate: float) -> None:
        self.engine.set_target(rate)

    def set_lanes(self, lanes: int) -> None:
        self.engine.set_lanes(lanes)

    def stop(self) -> None:
        self.engine.stop()

    def done(self) -> bool:
        return self._task is not None and self._task.done()

    def abandon(self) -> str:
        """End a worker that outlived its stop's grace (its task is cancelled once more; a binding
        that shrugs that off too is left behind): what held it up."""
        what = self.engine.holdup()
        if self._task is not None:
            self._task.cancel()
        return what

    async def wait(self) -> None:
        """The worker's end; a failure as one line, as a worker process reports it (_worker_async):
        a lane's exception that it did not expect (rehearsal 70: pymongo's lock raised
        RuntimeError in a lane that the stop cancelled) once escaped the controller as a traceback,
        and the phase's results were neither printed nor stored."""
        try:
            if self._task is not None:
                await self._task
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - the phase fails in one line, its results kept
            raise WorkbenchError(failure_line(self.engine.worker, exc), KEPT) from exc
        failure = self.engine.failure
        if isinstance(failure, WorkbenchError):
            raise failure
        if failure is not None:
            raise WorkbenchError(failure_line(self.engine.worker, failure), KEPT) from failure


# ---- worker processes ----------------------------------------------------------------------


class SharedBudget:
    """Operation numbers from one counter shared by every worker process, CHUNK at a time."""

    def __init__(self, counter, total: int) -> None:
        self.counter = counter
        self.total = total
        self.next = 0
        self.end = 0

    def claim(self) -> int | None:
        if self.next >= self.end:
            lock = self.counter.get_lock()
            if not lock.acquire(timeout=COUNTER_LOCK_WAIT_S):
                raise WorkbenchError(
                    f"the operation counter the worker processes share stayed locked for "
                    f"{COUNTER_LOCK_WAIT_S:g} s: a worker process ended while it held it",
                    "see the other worker's error; the results recorded so far are kept")
            try:
                start = self.counter.value
                if self.total and start >= self.total:
                    return None
                end = start + CHUNK
                if self.total:
                    end = min(end, self.total)
                self.counter.value = end
            finally:
                lock.release()
            self.next, self.end = start, end
        n = self.next
        self.next = n + 1
        return n

    async def refill(self) -> bool:
        return False

    def remaining(self) -> int:
        return max(self.total - self.counter.value, 0) if self.total else 0

    def exhausted(self) -> bool:
        return bool(self.total) and self.next >= self.end and self.counter.value >= self.total


def _encode_tick(tick: TickData) -> tuple:
    hists = {k: encode(h) for k, h in tick.histograms.items()}
    return (tick.operations, hists, tick.returns, tick.error_kinds, tick.in_flight, tick.nodes, tick.keys,
            tick.regions, tick.client_counts, tick.kinds_delta, tick.down, tick.behind, tick.loop_lag_ms,
            tick.start_gap_ms, tick.worker, tick.last)


def _decode_tick(payload: tuple) -> TickData:
    (ops, hists, returns, kinds, in_flight, nodes, keys, regions, client, delta, down, behind, lag, gap,
     worker, last) = payload
    return TickData(ops, {k: decode(v) for k, v in hists.items()}, returns, kinds, in_flight, nodes, keys,
                    regions, client, delta, down, behind, lag, gap, worker, last)


def _worker_main(conn, spec, phase, worker, workers, lanes, target, counter, total, info) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn.send(("up",))  # imported and unpickled: the phase's clock may start
    # ... and nothing runs before it has: a parent slow to read "up" (a loaded machine) would
    # otherwise start its clock after some or all of the operations (a 2,000-operation run once
    # measured 0 ms, and 0 ops/s). Commands sent before the go (a stop, a new target) are done
    # once the engine exists; a stop ends the wait (a parent interrupted while starting sends no go).
    early: list[tuple] = []
    while not early or early[-1][0] != "stop":
        try:
            msg = conn.recv()
        except EOFError:  # the parent is gone
            return
        if msg[0] == "go":
            break
        early.append(msg)
    log = os.environ.get(WORKER_LOG_ENV)
    if log:  # under the terminal app: whatever a driver prints must not land on its screen
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    if info is not None:  # a binding registered at run time in the parent (plug-ins, tests)
        BINDINGS.setdefault(info.name, info)
    loops.run(_worker_async(conn, spec, phase, worker, workers, lanes, target, counter, total, early),
              spec.eventloop)


async def _worker_async(conn, spec, phase, worker, workers, lanes, target, counter, total,
                        early: list[tuple]) -> None:
    loop = asyncio.get_running_loop()
    try:
        engine = WorkerEngine(
            spec, phase, binding_factory(spec), SharedBudget(counter, total), lanes, target,
            worker, workers,
        )
    except WorkbenchError as exc:
        conn.send(("error", str(exc)))
        return
    commands = {
        "pause": engine.pause,
        "resume": engine.resume,
        "stop": engine.stop,
        "go": lambda: None,  # after a stop that came before it (stopped while the workers started)
        "target": engine.set_target,
        "lanes": engine.set_lanes,
    }

    def on_message() -> None:
        try:
            msg = conn.recv()
        except EOFError:  # the parent is gone: stop, never run on unsupervised
            engine.stop()
            loop.remove_reader(conn.fileno())
            return
        if msg[0] == "drain":  # (once stopped, what it still waits for: ProcessExecutor.abandon)
            conn.send(("tick", msg[1], _encode_tick(engine.drain()), engine.active_lanes,
                       engine.holdup() if engine.stopping else None))
        else:
            commands[msg[0]](*msg[1:])

    for msg in early:  # commands that came before the go
        commands[msg[0]](*msg[1:])
    loop.add_reader(conn.fileno(), on_message)
    try:
        await engine.run()
    except WorkbenchError as exc:
        conn.send(("error", str(exc)))
        return
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
        conn.send(("error", failure_line(worker, exc)))
        return
    finally:
        loop.remove_reader(conn.fileno())
    # uvloop's add_reader left the pipe non-blocking: the last tick (with the key counts of
    # measurement.keys, up to megabytes) is longer than the pipe's buffer and must wait for it
    os.set_blocking(conn.fileno(), True)
    failure = engine.failure
    if failure is not None:  # the last tick goes with it: the parent reads nothing after an error
        conn.send(("error", failure_line(worker, failure), _encode_tick(engine.drain())))
        return
    conn.send(("done", _encode_tick(engine.drain())))


class ProcessExecutor:
    """K worker processes; lanes and target rate are split between them."""

    def __init__(
        self, spec: WorkloadSpec, phase: str, lanes: int, target: float, workers: int
    ) -> None:
        self.spec, self.phase, self.workers = spec, phase, workers
        self.lanes, self.target = lanes, target
        self.ctx = mp.get_context("spawn")
        self.total = spec.lane_budget(phase)
        self.counter = self.ctx.Value("q", 0)
        self.procs: list[Any] = []
        self.conns: list[Any] = []
        self.live: set[int] = set()
        self.pending: dict[int, asyncio.Future] = {}
        self.finals: list[TickData] = []
        self.errors: list[str] = []
        self.all_done = asyncio.Event()
        self.up: set[int] = set()
        self.all_up = asyncio.Event()
        self.holdups: dict[int, str] = {}  # worker -> what it waited for at its last reply after the stop
        self._seq = 0

    def _target_share(self, index: int) -> float:
        lanes_here = split(self.lanes, self.workers, index)
        return self.target * lanes_here / self.lanes if self.lanes else 0.0

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # the workers run on the loop this process runs on (not on what they could import)
        spec = dataclasses.replace(self.spec, eventloop=loops.kind(loop))
        for w in range(self.workers):
            parent, child = self.ctx.Pipe()
            proc = self.ctx.Process(
                target=_worker_main,
                args=(child, spec, self.phase, w, self.workers,
                      split(self.lanes, self.workers, w), self._target_share(w),
                      self.counter, self.total, BINDINGS.get(self.spec.db)),
                name=f"workbench-worker-{w}",
                daemon=True,
            )
            proc.start()
            child.close()
            self.procs.append(proc)
            self.conns.append(parent)
            self.live.add(w)
            loop.add_reader(parent.fileno(), self._on_message, w)
            # uvloop's add_reader makes the pipe non-blocking; a message longer than its buffer
            # (a worker's key counts) must be read whole when the first of it arrives
            os.set_blocking(parent.fileno(), True)
        # Spawning an interpreter and importing the bindings is not part of the benchmark.
        up, done = asyncio.ensure_future(self.all_up.wait()), asyncio.ensure_future(self.all_done.wait())
        await asyncio.wait([up, done], return_when=asyncio.FIRST_COMPLETED)
        up.cancel()
        done.cancel()
        self._send("go")  # the workers wait for it: the phase's clock starts as this returns

    def _on_message(self, w: int) -> None:
        conn = self.conns[w]
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            msg = ("error", f"worker process {w} exited unexpectedly")
        kind = msg[0]
        if kind == "up":
            self.up.add(w)
            if len(self.up) == self.workers:
                self.all_up.set()
            return
        if kind == "tick":
            tick = _decode_tick(msg[2])
            if msg[4]:
                self.holdups[w] = msg[4]
            fut = self.pending.pop(w, None)
            if fut is not None and not fut.done():
                fut.set_result(tick)
            else:  # a reply that missed its drain's deadline: it belongs to the next tick
                self.finals.append(tick)
            return
        if kind == "error":
            self.errors.append(msg[1])
            if len(msg) > 2:  # a lane's failure: what the worker recorded until then
                self.finals.append(_decode_tick(msg[2]))
            self.stop()
            self._finish(w)
        elif kind == "done":
            self.finals.append(_decode_tick(msg[1]))
            self._finish(w)

    def _finish(self, w: int) -> None:
        if w not in self.live:
            return
        self.live.discard(w)
        asyncio.get_running_loop().remove_reader(self.conns[w].fileno())
        fut = self.pending.pop(w, None)
        if fut is not None and not fut.done():
            fut.set_result(None)
        if not self.live:
            self.all_done.set()

    def _send(self, *msg) -> None:
        for w in list(self.live):
            self._send_to(w, msg)

    def _send_to(self, w: int, msg: tuple) -> None:
        if w in self.live:
            try:
                self.conns[w].send(msg)
            except (BrokenPipeError, OSError):
                # It has just ended: its "done" (or the EOF of a crash) is still to be read.
                pass

    async def drain(self) -> list[TickData]:
        loop = asyncio.get_running_loop()
        self._seq += 1
        for w in list(self.live):
            self.pending[w] = loop.create_future()
        self._send("drain", self._seq)
        futures = list(self.pending.values())
        ticks: list[TickData] = []
        if futures:
            done, _ = await asyncio.wait(futures, timeout=REPLY_TIMEOUT_S)
            ticks = [f.result() for f in done if f.result() is not None]
            # A worker too busy to answer in time: its reply is kept for the next drain.
            self.pending.clear()
        # Final reports of workers that ended since the last drain belong to this tick too, and
        # the replies that missed the last drain: first, being older than this drain's own.
        ticks[:0], self.finals = self.finals, []
        return ticks

    def remaining(self) -> int:
        return max(self.total - self.counter.value, 0) if self.total else 0

    def pause(self) -> None:
        self._send("pause")

    def resume(self) -> None:
        self._send("resume")

    def set_target(self, rate: float) -> None:
        self.target = rate
        for w in list(self.live):
            self._send_to(w, ("target", self._target_share(w)))

    def set_lanes(self, lanes: int) -> None:
        self.lanes = lanes
        for w in list(self.live):
            self._send_to(w, ("lanes", split(lanes, self.workers, w)))
        if self.target:
            self.set_target(self.target)

    def stop(self) -> None:
        self._send("stop")

    def done(self) -> bool:
        return self.all_done.is_set()

    def abandon(self) -> str:
        """Kill the workers that outlived their stop's grace: what held each up, as its last answer
        to a drain said (a worker whose loop was blocked could not say)."""
        stuck = []
        for w in sorted(self.live):
            stuck.append(self.holdups.get(w) or f"worker {w} (its loop no longer answered)")
            self.procs[w].kill()
            self.procs[w].join(2)
            self._finish(w)
        return "; ".join(stuck)

    async def wait(self) -> None:
        await self.all_done.wait()
        for proc in self.procs:
            await asyncio.get_running_loop().run_in_executor(None, proc.join, 10)
            if proc.is_alive():
                proc.kill()
                proc.join(2)
        if self.errors:
            raise WorkbenchError(self.errors[0], KEPT)
