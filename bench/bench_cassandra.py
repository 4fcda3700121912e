"""The Cassandra binding against bare loops on each driver, and its throughput vs lanes.

1. Starts one Cassandra node with the local provider (stopped at the end), or uses `--hosts`.
2. Loads `--records` rows (YCSB's 10 x 100 B) into a fresh `bench.usertable` with the workbench.
3. Workload A (50% read of all fields, 50% update of one field, scrambled zipfian keys, QUORUM)
   with `--lanes` requests in flight, by the workbench (`-db cassandra`) and by two bare loops
   written directly on the same driver (bench/common.py): *replay* (requests made up front:
   the driver's ceiling) and *workload* (workload A's own work done inline per operation). For
   cassandra-driver (the only driver with a bare loop here since acsylla was retired; the
   native client's CPU is compared with YCSB's by bench_cpu.py), `--lanes` chains of
   `execute_async` whose callback sends the next request (no asyncio at all). All sides include
   opening their session and preparing statements (the workbench's schema check before the run
   is excluded). The order rotates per
   repetition; the ratios within one repetition are the figures that matter.
4. Throughput and client CPU per operation vs lanes for workloads A and C, per driver.

Client CPU is this process's user+system time (every thread, the drivers' IO threads too).

    python bench/bench_cassandra.py [--address 127.0.0.61] [--hosts H (use a running node)]
        [--records 10000] [--operations 20000] [--lanes 16] [--repeat 3]
        [--drivers python] [--sweep 1,2,4,8,16,32,64] [--sweep-operations 6000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import shutil
import tempfile
import threading
import time
from pathlib import Path
from time import perf_counter_ns

from common import FIELDS, WorkloadA, compare_loops, make_plan, timed

from workbench.clusters.local import LocalProvider
from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.databases.cassandra.cluster_spec import CassandraSpec

WORKLOADS = Path(__file__).resolve().parents[1] / "workbench" / "workloads"
READ = "SELECT " + ", ".join(FIELDS) + " FROM bench.usertable WHERE y_id = ?"
UPDATE = "UPDATE bench.usertable SET {} = ? WHERE y_id = ?"


def bare_python(host: str, lanes: int, ops: int, plan=None, records: int = 0) -> tuple[float, float]:
    """As bare_acsylla, on cassandra-driver: `lanes` callback chains."""
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
    latencies: list[int] = []

    def finished() -> None:
        with lock:
            running[0] -= 1
            if not running[0]:
                done.set()

    def replay(_rows=None) -> None:  # a chain: every answer sends the lane's next request
        n = next(counter)
        if n >= ops:
            return finished()
        is_read, key, field = plan[n]
        future = session.execute_async(read, (key,)) if is_read else session.execute_async(
            updates[field], (value, key))
        future.add_callbacks(replay, replay)

    def workload(choices: WorkloadA) -> None:
        def answered(rows, is_read: bool, t0: int) -> None:
            if is_read and rows:
                dict(zip(FIELDS, rows[0], strict=True))
            latencies.append(perf_counter_ns() - t0)
            send()

        def send() -> None:
            if next(counter) >= ops:
                return finished()
            is_read, key, field, fresh = choices.next()
            t0 = perf_counter_ns()
            future = session.execute_async(read, (key,)) if is_read else session.execute_async(
                updates[field], (fresh, key))
            future.add_callbacks(answered, answered, callback_args=(is_read, t0),
                                 errback_args=(False, t0))

        send()

    for lane in range(lanes):
        replay() if plan is not None else workload(WorkloadA(lane, records))
    done.wait()
    cluster.shutdown()
    wall, cpu = clock()
    return ops / wall, cpu / ops * 1e6


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


def bare_run(args, driver: str, lanes: int, ops: int, replay: bool) -> tuple[float, float]:
    plan = make_plan(args.records, ops) if replay else None
    if driver != "python":
        raise SystemExit(f"a bare loop exists for cassandra-driver only (--drivers python), not {driver}")
    return bare_python(args.hosts, lanes, ops, plan, args.records)


def compare(args, driver: str) -> None:
    print(f"\n{driver}: workload A, {args.lanes} in flight, {args.operations} ops per trial")
    compare_loops(
        lambda: bare_run(args, driver, args.lanes, args.operations, True),
        lambda: bare_run(args, driver, args.lanes, args.operations, False),
        lambda: workbench_run(args, driver, "workloada", args.lanes, args.operations),
        args.repeat,
    )


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
    ap.add_argument("--drivers", default="python")
    ap.add_argument("--sweep", default="1,2,4,8,16,32,64", help='lanes to sweep; "" for none')
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
        load = workbench_run(args, "native", "workloada", 16, args.records, "load", ("cassandra.drop=true",))
        print(f"load: {args.records} records, 16 lanes: {load[0]:.0f} ops/s, {load[1]:.0f} us CPU/op "
              f"({time.perf_counter() - t0:.1f} s)")
        drivers = args.drivers.split(",")
        for driver in drivers:
            compare(args, driver)
        for driver in drivers if args.sweep else ():  # --sweep "": no lanes table
            sweep(args, driver)
    finally:
        if provider is not None:
            provider.down(name)
            shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
