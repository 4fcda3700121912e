"""Worker processes as Ray actors: the lanes of one phase spread over a Ray cluster's machines.

`RayExecutor` answers the same calls as the local executors (start, drain, pause, resume,
set_target, set_lanes, stop, wait), so the controller merges a Ray run's ticks exactly as it
merges local worker processes': each actor runs the same WorkerEngine, and every tick its
interval histograms come back encoded (HdrHistogram's compressed form) and are merged
losslessly on the user's machine.

- Placement: one actor per worker, `ray.cpus` CPUs and `ray.resources` each, spread over the
  nodes (`ray.strategy=spread`, Ray's SPREAD) or packed (Ray's default placement). Each
  worker's node is recorded with the run.
- Operation numbers: one small counter actor hands them out in chunks, as the shared counter
  of local worker processes does; a worker asks for its next chunk before it needs it, so
  its lanes only wait when the counter is far away and the chunk runs out.
- Faults: a worker whose actor dies (its process or its node lost) is an event of the run;
  the operations it had in flight (its lanes at its last report) count as errors of the
  pseudo-operation LOST, and the run goes on with the other workers (`ray.onlost=continue`)
  or ends as failed (`ray.onlost=stop`). Actors are not detached: they end with the run, and
  Ray ends them with the driver if the controller is killed.

Ray is imported only here, and only when a run asks for it (`pip install 'ycsb-workbench[ray]'`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import socket
import sys
import time
from typing import Any

from workbench.config.bindings import BINDINGS
from workbench.config.spec import WorkloadSpec, ray_resources
from workbench.core.runner import LocalBudget, WorkerEngine, failure_line
from workbench.core.workers import KEPT, REPLY_TIMEOUT_S, _decode_tick, _encode_tick, binding_factory, split
from workbench.errors import WorkbenchError
from workbench.metrics.recorder import TickData

# REPLY_TIMEOUT_S (as for local workers): a worker that has not answered a drain by then answers
# at the next one.
CHUNK = 1024  # operation numbers a Ray worker claims at a time (a round trip to the counter)
START_TIMEOUT_S = 180.0  # placing every actor and importing the bindings in it
LOST_OP = "LOST"  # the pseudo-operation under which a lost worker's in-flight operations count
HEAD_RESOURCE = "node:__internal_head__"  # a resource only Ray's head node has
RAY_WINDOW_EVERY_S = 0.02  # how often a worker's loop lets Ray's threads take the GIL...
RAY_WINDOW_S = 0.0001  # ...and for how long (LaneWorker._let_ray_in)


def import_ray():
    """Ray, or one line naming the extra that installs it."""
    try:
        import ray  # noqa: PLC0415 - optional, and heavy
    except ImportError:
        raise WorkbenchError(
            "--ray (ray.address) needs Ray, which is not installed",
            "pip install 'ycsb-workbench[ray]' (the same version on every machine of the Ray cluster)",
        ) from None
    return ray


class Counter:
    """Operation numbers 0..total-1 in chunks (a Ray actor; total 0 = no limit)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.next = 0

    def claim(self, n: int) -> tuple[int, int]:
        start = self.next
        end = start + n
        if self.total:
            end = min(end, self.total)
            start = min(start, self.total)
        self.next = end
        return start, end

    def claimed(self) -> int:
        return self.next


class RemoteBudget:
    """A worker's operation numbers from the Counter actor, one chunk ahead of its lanes."""

    def __init__(self, counter, chunk: int = CHUNK) -> None:
        self.counter = counter
        self.chunk = chunk
        self.next = 0
        self.end = 0
        self._ahead: asyncio.Task | None = None  # the next chunk, asked for in advance
        self.empty = False  # the counter has no numbers left

    async def _ask(self) -> tuple[int, int]:
        return await self.counter.claim.remote(self.chunk)

    def _prefetch(self) -> None:
        if self._ahead is None and not self.empty:
            self._ahead = asyncio.get_running_loop().create_task(self._ask())

    def claim(self) -> int | None:
        n = self.next
        if n < self.end:
            self.next = n + 1
            return n
        ahead = self._ahead
        if ahead is not None and ahead.done() and self._take(ahead):
            return self.claim()
        return None

    def _take(self, ahead: asyncio.Task) -> bool:
        self._ahead = None
        start, end = ahead.result()
        if start >= end:
            self.empty = True
            return False
        self.next, self.end = start, end
        self._prefetch()
        return True

    async def refill(self) -> bool:
        while self.next >= self.end:
            if self.empty:
                return False
            self._prefetch()
            ahead = self._ahead
            assert ahead is not None
            await asyncio.shield(ahead)
            if self._ahead is ahead and not self._take(ahead):  # another lane may have taken it
                return False
        return True

    def remaining(self) -> int:
        return 0

    def exhausted(self) -> bool:
        return self.empty and self.next >= self.end


class LaneWorker:
    """One worker (a Ray actor): the same WorkerEngine that a local worker process runs."""

    def __init__(self, spec: WorkloadSpec, phase: str, worker: int, workers: int, lanes: int,
                 target: float, counter, info) -> None:
        if info is not None:  # a binding registered at run time on the user's machine
            BINDINGS.setdefault(info.name, info)
        self.spec, self.phase, self.worker, self.workers = spec, phase, worker, workers
        self.lanes, self.target, self.counter = lanes, target, counter
        self.engine: WorkerEngine | None = None
        self.finished = False  # run() has returned the final tick: nothing more to drain
        self.early: list[str] = []  # stop, pause or resume that came before the engine

    async def where(self) -> dict[str, Any]:
        import ray  # noqa: PLC0415

        context = ray.get_runtime_context()
        return {"worker": self.worker, "node_id": context.get_node_id(),
                "node_ip": ray.util.get_node_ip_address(), "hostname": socket.gethostname(),
                "pid": os.getpid()}

    async def _let_ray_in(self) -> None:
        """Give Ray's own threads in this process the GIL now and then. Ray hands a call (a
        drain, a command) to this actor from a thread of its own, which must take the GIL from
        the event loop's thread. A loop that never waits (lanes on a binding that answers at
        once, or a saturated client) releases the GIL at every turn (select with no timeout)
        and takes it back before the waiting thread wakes, and CPython's GIL then never forces
        a switch: the call waits for seconds, or for ever (measured: a drain waited 2-5 s with
        two busy workers, and never came with one). A short sleep with the GIL released lets
        the waiting thread in. It is taken whether the loop is busy or not (a thread that is
        preempted holds the GIL too, so the loop's CPU time does not say whether Ray waits): an
        operation that completes during it is recorded up to RAY_WINDOW_S later, which is 0.5%
        of the time, by at most 0.1 ms."""
        while True:
            await asyncio.sleep(RAY_WINDOW_EVERY_S)
            time.sleep(RAY_WINDOW_S)

    async def run(self) -> tuple:
        total = self.spec.lane_budget(self.phase)
        budget = RemoteBudget(self.counter) if total else LocalBudget(0)
        window = asyncio.get_running_loop().create_task(self._let_ray_in())
        try:
            self.engine = WorkerEngine(self.spec, self.phase, binding_factory(self.spec), budget,
                                       self.lanes, self.target, self.worker, self.workers)
            for name in self.early:
                getattr(self.engine, name)()
            await self.engine.run()
        except WorkbenchError as exc:
            return ("error", str(exc), self._final())
        except Exception as exc:  # noqa: BLE001 - reported to the controller, which decides
            return ("error", failure_line(self.worker, exc), self._final())
        finally:
            window.cancel()
        failure = self.engine.failure
        if failure is not None:
            return ("error", failure_line(self.worker, failure), self._final())
        return ("done", None, self._final())

    def _final(self):
        self.finished = True
        return _encode_tick(self.engine.drain()) if self.engine is not None else None

    async def drain(self) -> tuple:
        if self.engine is None or self.finished:
            return None, 0
        return _encode_tick(self.engine.drain()), self.engine.active_lanes

    async def command(self, name: str, *args) -> None:
        engine = self.engine
        if engine is None:  # not running yet: remember it for the engine's start
            if name == "target":
                self.target = args[0]
            elif name == "lanes":
                self.lanes = args[0]
            elif name in ("stop", "pause", "resume"):
                self.early.append(name)
            return
        {"pause": engine.pause, "resume": engine.resume, "stop": engine.stop,
         "target": engine.set_target, "lanes": engine.set_lanes}[name](*args)


_connected: str | None = None  # the address this process's ray.init used
PROBE_TIMEOUT_S = 10.0


def _probe(address: str) -> None:
    """Refuse at once an address where nothing answers (ray.init would wait on it for minutes)."""
    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        raise WorkbenchError(f"--ray {address}: not an address",
                             "give auto, HOST:PORT of the head (6379) or ray://HOST:10001")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S).close()
    except OSError as exc:
        raise WorkbenchError(f"no Ray cluster answers at {address}: {exc.strerror or exc}",
                             "start one (`ray start --head`) or give its address: --ray HOST:6379, "
                             "--ray ray://HOST:10001 or --ray auto") from None


def connect(address: str):
    """ray.init on `address` once per process (auto, host:port or ray://host:port)."""
    global _connected
    ray = import_ray()
    if ray.is_initialized() and _connected not in (None, address):
        raise WorkbenchError(f"this process is connected to the Ray cluster at {_connected} already, "
                             f"not {address}", "run the other cluster's phases from another process")
    if not ray.is_initialized():
        _probe(address)
        extra: dict[str, Any] = {}
        host = address.rpartition(":")[0] if ":" in address else address
        if not address.startswith("ray://") and (host.startswith("127.") or host == "localhost"):
            # A cluster on loopback addresses: this driver is on 127.0.0.1 too (otherwise Ray
            # looks for the machine's own address by routing towards a public one).
            extra["_node_ip_address"] = "127.0.0.1"
        try:
            with _real_std_streams():
                ray.init(address=address, logging_level="WARNING", log_to_driver=False, **extra)
            _connected = address
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise WorkbenchError(
                f"cannot connect to the Ray cluster at {address}: {first}",
                "start one (`ray start --head`) or give its address: --ray HOST:6379, "
                "--ray ray://HOST:10001 or --ray auto") from None
    return ray


@contextlib.contextmanager
def _real_std_streams():
    """ray.init needs sys.stdout and sys.stderr with file descriptors; the terminal app replaces
    them with objects that have none. For the call, they are /dev/null (Ray prints nothing we
    need there: its logs stay in the cluster's session directory)."""
    def usable(stream) -> bool:
        try:
            return stream.fileno() >= 0
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            return False

    if usable(sys.stdout) and usable(sys.stderr):
        yield
        return
    saved = sys.stdout, sys.stderr
    with open(os.devnull, "w") as null:
        sys.stdout = sys.stderr = null
        try:
            yield
        finally:
            sys.stdout, sys.stderr = saved


class RayExecutor:
    """K workers as Ray actors; lanes and target rate are split between them as locally."""

    def __init__(self, spec: WorkloadSpec, phase: str, lanes: int, target: float,
                 workers: int) -> None:
        self.spec, self.phase, self.workers = spec, phase, workers
        self.lanes, self.target = lanes, target
        self.total = spec.lane_budget(phase)
        self.ray = connect(spec.ray_address)
        self.actors: list[Any] = []
        self.counter = None
        self.live: set[int] = set()
        self.placement: list[dict[str, Any]] = []
        self.runs: dict[int, asyncio.Future] = {}
        self.pending: dict[int, asyncio.Future] = {}  # drains not answered yet
        self.finals: list[TickData] = []
        self.errors: list[str] = []
        self.all_done = asyncio.Event()
        self.lanes_seen: dict[int, int] = {}  # each worker's lanes at its last report
        self.operations: dict[int, int] = {}  # each worker's operations so far
        self.counts: dict[int, dict[str, int]] = {}  # each worker's histogram counts so far
        self.lost: list[int] = []
        self._claimed = 0
        self._claimed_ask: asyncio.Future | None = None
        self.on_event = lambda kind, value: None  # the controller records these as run events

    def _target_share(self, index: int) -> float:
        lanes_here = split(self.lanes, self.workers, index)
        return self.target * lanes_here / self.lanes if self.lanes else 0.0

    def _future(self, ref) -> asyncio.Future:
        return asyncio.wrap_future(ref.future())

    async def start(self) -> None:
        ray = self.ray
        options: dict[str, Any] = {"num_cpus": self.spec.ray_cpus, "max_restarts": 0,
                                   "max_task_retries": 0}
        resources = ray_resources(self.spec.ray_resources)
        if resources:
            options["resources"] = resources
        if self.spec.ray_strategy == "spread":
            options["scheduling_strategy"] = "SPREAD"
        actor_class = ray.remote(LaneWorker)
        if self.total:
            # On the head node, with the cluster's own control processes: a worker's node may go
            # away during the run, the head may not.
            self.counter = ray.remote(Counter).options(
                num_cpus=0, max_restarts=0, resources={HEAD_RESOURCE: 0.001}).remote(self.total)
        info = BINDINGS.get(self.spec.db)
        for w in range(self.workers):
            self.actors.append(actor_class.options(**options, name=None).remote(
                self.spec, self.phase, w, self.workers, split(self.lanes, self.workers, w),
                self._target_share(w), self.counter, info))
            self.live.add(w)
        # Placing the actors and starting their interpreters is not part of the benchmark.
        try:
            # A first drain and command too: Ray's first call of each method of an actor costs
            # far more than the next ones, and the first ticks would come late.
            answers = await asyncio.wait_for(asyncio.gather(
                *(self._future(call) for a in self.actors
                  for call in (a.where.remote(), a.drain.remote(), a.command.remote("ready")))),
                START_TIMEOUT_S)
            self.placement = list(answers[::3])
        except TimeoutError:
            self.close()
            raise WorkbenchError(
                f"the Ray cluster placed fewer than {self.workers} workers in {START_TIMEOUT_S:g} s",
                f"each worker asks for {self.spec.ray_cpus:g} CPU(s)"
                + (f" and {self.spec.ray_resources}" if resources else "")
                + ": see `ray status`, lower --workers or -p ray.cpus") from None
        except self.ray.exceptions.RayError as exc:
            self.close()
            raise WorkbenchError(f"the Ray workers could not start: {_first_line(exc)}",
                                 "check the Ray cluster's resources (`ray status`): each worker "
                                 f"asks for {self.spec.ray_cpus:g} CPU(s)"
                                 + (f" and {self.spec.ray_resources}" if resources else "")) from None
        for w, actor in enumerate(self.actors):
            fut = self._future(actor.run.remote())
            fut.add_done_callback(lambda f, w=w: self._ended(w, f))
            self.runs[w] = fut

    def _ended(self, w: int, fut: asyncio.Future) -> None:
        if w not in self.live:
            return
        try:
            kind, message, final = fut.result()
        except BaseException as exc:  # noqa: BLE001 - the actor (or its node) is gone
            self._lost(w, exc)
        else:
            if final is not None:
                self.finals.append(self._count(w, _decode_tick(final)))
            if kind == "error":
                self.errors.append(message)
                self.stop()
        self._finish(w)

    def _lost(self, w: int, exc: BaseException) -> None:
        where = self.placement[w] if w < len(self.placement) else {}
        in_flight = self.lanes_seen.get(w, split(self.lanes, self.workers, w))
        node = f"{where.get('hostname', '?')} ({where.get('node_ip', '?')})"
        kind = f"worker {w} on {node} lost: {type(exc).__name__}"
        self.lost.append(w)
        self.operations[w] = self.operations.get(w, 0) + in_flight
        self.on_event("worker-lost", {"worker": w, "node_ip": where.get("node_ip"),
                                      "node_id": where.get("node_id"), "in_flight": in_flight,
                                      "error": _first_line(exc)})
        self.finals.append(TickData(in_flight, {}, {LOST_OP: {"ERROR": in_flight}} if in_flight else {},
                                    {kind: in_flight}, 0.0, worker=w, last=True))
        if self.spec.ray_onlost == "stop":
            self.errors.append(f"{kind} ({_first_line(exc)}); ray.onlost=stop ended the run")
            self.stop()

    def _finish(self, w: int) -> None:
        self.live.discard(w)
        fut = self.pending.pop(w, None)
        if fut is not None and not fut.done():
            fut.cancel()
        if not self.live:
            self.all_done.set()

    def _send(self, w: int, *msg) -> None:
        if w in self.live:
            self.actors[w].command.remote(*msg)

    async def drain(self) -> list[TickData]:
        for w in list(self.live):
            if w not in self.pending:
                self.pending[w] = self._future(self.actors[w].drain.remote())
        if self.counter is not None and (self._claimed_ask is None or self._claimed_ask.done()):
            if self._claimed_ask is not None and not self._claimed_ask.exception():
                self._claimed = self._claimed_ask.result()
            self._claimed_ask = self._future(self.counter.claimed.remote())
        ticks: list[TickData] = []
        waiting = dict(self.pending)
        if waiting:
            await asyncio.wait(list(waiting.values()), timeout=REPLY_TIMEOUT_S)
        for w, fut in waiting.items():
            if not fut.done():
                continue  # a worker too busy to answer in time answers at the next drain
            self.pending.pop(w, None)
            if fut.cancelled() or fut.exception() is not None:
                continue  # its end (or loss) is reported by its run's future
            payload, lanes = fut.result()
            if payload is not None:
                self.lanes_seen[w] = lanes
                ticks.append(self._count(w, _decode_tick(payload)))
        # Final reports of workers that ended (or were lost) since the last drain.
        ticks.extend(self.finals)
        self.finals = []
        return ticks

    def _count(self, w: int, tick: TickData) -> TickData:
        """Keep each worker's own totals, which the run's record lists beside the merged ones."""
        self.operations[w] = self.operations.get(w, 0) + tick.operations
        counts = self.counts.setdefault(w, {})
        for name, h in tick.histograms.items():
            counts[name] = counts.get(name, 0) + h.get_total_count()
        return tick

    def remaining(self) -> int:
        return max(self.total - self._claimed, 0) if self.total else 0

    def pause(self) -> None:
        for w in list(self.live):
            self._send(w, "pause")

    def resume(self) -> None:
        for w in list(self.live):
            self._send(w, "resume")

    def set_target(self, rate: float) -> None:
        self.target = rate
        for w in list(self.live):
            self._send(w, "target", self._target_share(w))

    def set_lanes(self, lanes: int) -> None:
        self.lanes = lanes
        for w in list(self.live):
            self._send(w, "lanes", split(lanes, self.workers, w))
        if self.target:
            self.set_target(self.target)

    def stop(self) -> None:
        for w in list(self.live):
            self._send(w, "stop")

    def done(self) -> bool:
        return self.all_done.is_set()

    async def wait(self) -> None:
        try:
            await self.all_done.wait()
        finally:
            self.close()
        if self.errors:
            raise WorkbenchError(self.errors[0], KEPT)

    def abandon(self) -> str:
        """End the actors that outlived their stop's grace: which workers they were."""
        stuck = ", ".join(f"worker {w}" for w in sorted(self.live))
        self.close()
        for w in list(self.live):
            self._finish(w)
        return f"{stuck} on Ray"

    def close(self) -> None:
        """End every actor of this phase (they would end with the driver anyway)."""
        for fut in [self._claimed_ask, *self.pending.values()]:
            if fut is not None:  # their actors are about to go: nobody will read these
                fut.add_done_callback(_forget)
        for actor in self.actors + ([self.counter] if self.counter is not None else []):
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass

    def describe(self) -> dict[str, Any]:
        """What the run's record keeps: the address, the placement and each worker's share."""
        workers = []
        for w, where in enumerate(self.placement):
            workers.append({**where, "lanes": split(self.lanes, self.workers, w),
                            "operations": self.operations.get(w, 0),
                            "counts": dict(sorted(self.counts.get(w, {}).items())),
                            "lost": w in self.lost})
        nodes = sorted({w.get("node_id") for w in self.placement})
        return {"address": self.spec.ray_address, "ray": getattr(self.ray, "__version__", "?"),
                "nodes": len(nodes), "cpus_per_worker": self.spec.ray_cpus,
                "resources": self.spec.ray_resources, "strategy": self.spec.ray_strategy,
                "workers": workers}


def _forget(fut: asyncio.Future) -> None:
    if not fut.cancelled():
        fut.exception()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
