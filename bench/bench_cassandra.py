"""The Cassandra binding against bare loops on each driver, and its throughput vs lanes.

1. Starts one Cassandra node with the local provider (stopped at the end), or uses `--hosts`.
2. Loads `--records` rows (YCSB's 10 x 100 B) into a fresh `bench.usertable` with the workbench.
3. Workload A (50% read of all fields, 50% update of one field, scrambled zipfian keys, QUORUM)
   with `--lanes` requests in flight, alternately by the workbench (`-db cassandra`) and by a bare
   loop written directly on the same driver: for acsylla, `--lanes` coroutines awaiting
   `session.execute(prepared(params))` on precomputed keys; for cassandra-driver, `--lanes`
   chains of `execute_async` whose callback sends the next request (no asyncio at all). Both
   sides include opening their session and preparing statements (the workbench's schema check
   before the run is excluded). The ratio within one repetition is the figure that matters.
4. Throughput and client CPU per operation vs lanes for workloads A and C, per driver.

Client CPU is this process's user+system time (every thread, the drivers' IO threads too).

    python bench/bench_cassandra.py [--address 127.0.0.61] [--hosts H (use a running node)]
        [--records 10000] [--operations 20000] [--lanes 16] [--repeat 3]
        [--drivers acsylla,python] [--sweep 1,2,4,8,16,32,64] [--sweep-operations 6000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import resource
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from workbench.clusters.local import LocalProvider
from workbench.clusters.specs import CassandraSpec
from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.core.generators.scrambled import ScrambledZipfian
from workbench.core.keys import build_key_name

WORKLOADS = Path(__file__).resolve().parents[1] / "workloads"
FIELDS = [f"field{i}" for i in range(10)]
READ = "SELECT " + ", ".join(FIELDS) + " FROM bench.usertable WHERE y_id = ?"
UPDATE = "UPDATE bench.usertable SET {} = ? WHERE y_id = ?"


def timed():
    """Start a clock; calling the result returns (wall s, CPU s) since then."""
    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        return own.ru_utime + own.ru_stime

    wall0, cpu0 = time.perf_counter(), cpu()
    return lambda: (time.perf_counter() - wall0, cpu() - cpu0)


def make_plan(records: int, ops: int) -> list[tuple[bool, str, int]]:
    """Workload A's choices: (is_read, key, field index), scrambled zipfian keys."""
    rng = random.Random(7)
    zipf = ScrambledZipfian(rng, 0, records - 1)
    return [(rng.random() < 0.5, build_key_name(zipf.next()), rng.randrange(10)) for _ in range(ops)]


async def bare_acsylla(host: str, lanes: int, plan) -> tuple[float, float]:
    import acsylla

    clock = timed()
    cl = acsylla.Consistency.QUORUM
    session = await acsylla.create_cluster([host], protocol_version=4, consistency=cl).create_session()
    read = await session.create_prepared(READ)
    updates = [await session.create_prepared(UPDATE.format(f)) for f in FIELDS]
    value, counter, execute = "x" * 100, itertools.count(), session.execute

    async def lane() -> None:
        for n in counter:
            if n >= len(plan):
                return
            is_read, key, field = plan[n]
            if is_read:
                (await execute(read((key,), consistency=cl))).first()
            else:
                await execute(updates[field]((value, key), consistency=cl))

    await asyncio.gather(*(lane() for _ in range(lanes)))
    await session.close()
    return clock()


def bare_python(host: str, lanes: int, plan) -> tuple[float, float]:
    from cassandra import ConsistencyLevel
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.query import tuple_factory

    clock = timed()
    profile = ExecutionProfile(row_factory=tuple_factory, consistency_level=ConsistencyLevel.QUORUM)
    cluster = Cluster([host], protocol_version=4, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    session = cluster.connect()
    read = session.prepare(READ)
    updates = [session.prepare(UPDATE.format(f)) for f in FIELDS]
    value, counter, lock, done = "x" * 100, itertools.count(), threading.Lock(), threading.Event()
    running = [lanes]

    def issue(_rows=None) -> None:  # a chain: every answer sends the lane's next request
        n = next(counter)
        if n >= len(plan):
            with lock:
                running[0] -= 1
                if not running[0]:
                    done.set()
            return
        is_read, key, field = plan[n]
        future = session.execute_async(read, (key,)) if is_read else session.execute_async(
            updates[field], (value, key))
        future.add_callbacks(issue, issue)

    for _ in range(lanes):
        issue()
    done.wait()
    cluster.shutdown()
    return clock()


class _Timed(Controller):
    """Starts the clock after the schema check, where the bare loops start theirs."""

    async def prepare(self) -> None:
        await super().prepare()
        self.clock = timed()


def workbench_run(args, driver: str, workload: str, lanes: int, ops: int, phase: str = "run",
                  extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """(ops/s, client CPU us/op) of one workbench phase, in this process."""
    spec, _ = spec_from_args(
        [str(WORKLOADS / workload)],
        ["db=cassandra", f"hosts={args.hosts}", "cassandra.keyspace=bench", f"cassandra.driver={driver}",
         f"recordcount={args.records}", f"operationcount={ops}", f"threadcount={lanes}", *extra],
        phase,
    )
    controller = _Timed(spec, phase)
    outcome = asyncio.run(controller.run())
    wall, cpu = controller.clock()
    failed = {op: c for op, c in outcome.returns.items() if set(c) - {"OK"}}
    assert outcome.outcome == "completed" and not failed, (outcome.error, failed)
    return outcome.operations / wall, cpu / outcome.operations * 1e6


def bare_run(args, driver: str, lanes: int, ops: int) -> tuple[float, float]:
    plan = make_plan(args.records, ops)
    if driver == "acsylla":
        wall, cpu = asyncio.run(bare_acsylla(args.hosts, lanes, plan))
    else:
        wall, cpu = bare_python(args.hosts, lanes, plan)
    return ops / wall, cpu / ops * 1e6


def compare(args, driver: str) -> None:
    workbench_run(args, driver, "workloada", args.lanes, args.operations // 4)  # warm-up
    print(f"\n{driver}: workload A, {args.lanes} in flight, {args.operations} ops per trial")
    print("rep  bare ops/s  us/op  workbench ops/s  us/op  ratio")
    ratios = []
    for rep in range(args.repeat):
        if rep % 2:  # alternate who goes first: the machine's noise drifts
            wb = workbench_run(args, driver, "workloada", args.lanes, args.operations)
            bare = bare_run(args, driver, args.lanes, args.operations)
        else:
            bare = bare_run(args, driver, args.lanes, args.operations)
            wb = workbench_run(args, driver, "workloada", args.lanes, args.operations)
        ratios.append(wb[0] / bare[0])
        print(f"{rep:3d}  {bare[0]:10.0f}  {bare[1]:5.0f}  {wb[0]:15.0f}  {wb[1]:5.0f}  {ratios[-1]:5.2f}",
              flush=True)
    print(f"{driver}: median ratio workbench/bare {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")


def sweep(args, driver: str) -> None:
    print(f"\n{driver}: throughput vs lanes ({args.sweep_operations} ops per point)")
    print("lanes  A ops/s  A us/op  C ops/s  C us/op")
    for lanes in (int(x) for x in args.sweep.split(",")):
        a = workbench_run(args, driver, "workloada", lanes, args.sweep_operations)
        c = workbench_run(args, driver, "workloadc", lanes, args.sweep_operations)
        print(f"{lanes:5d}  {a[0]:7.0f}  {a[1]:7.0f}  {c[0]:7.0f}  {c[1]:7.0f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--address", default="127.0.0.61", help="loopback address of the node to start")
    ap.add_argument("--hosts", help="use this running node instead of starting one")
    ap.add_argument("--heap", default="1G")
    ap.add_argument("--cache-dir", help="jar cache (default: the workbench's)")
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--operations", type=int, default=20_000)
    ap.add_argument("--lanes", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--drivers", default="acsylla,python")
    ap.add_argument("--sweep", default="1,2,4,8,16,32,64")
    ap.add_argument("--sweep-operations", type=int, default=6000)
    args = ap.parse_args()
    provider = name = state = None
    if args.hosts is None:
        state = tempfile.mkdtemp(prefix="bench-cassandra-")
        provider = LocalProvider(state_dir=Path(state), cache_dir=args.cache_dir, progress=True)
        name = "bench-cassandra"
        cluster = provider.up(CassandraSpec(name=name, heap=args.heap, first_address=args.address))
        args.hosts = cluster.contact_points[0][0]
    if not args.hosts.startswith("127."):
        raise SystemExit("benchmarks only target 127.0.0.0/8")
    try:
        t0 = time.perf_counter()
        load = workbench_run(args, "acsylla", "workloada", 16, args.records, "load", ("cassandra.drop=true",))
        print(f"load: {args.records} records, 16 lanes: {load[0]:.0f} ops/s, {load[1]:.0f} us CPU/op "
              f"({time.perf_counter() - t0:.1f} s)")
        drivers = args.drivers.split(",")
        for driver in drivers:
            compare(args, driver)
        for driver in drivers:
            sweep(args, driver)
    finally:
        if provider is not None:
            provider.down(name)
            shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
