"""The HBase binding against a bare happybase loop, and its throughput vs lanes.

1. Loads `--records` rows (YCSB's 10 x 100 B) into a fresh table on a running HBase Thrift gateway.
2. Workload A (50% read of all fields, 50% update of one field, scrambled zipfian keys) with
   `--lanes` requests in flight, by the workbench (`hbase` binding, a pool of that many
   connections) and by two bare loops (bench/common.py): that many threads, each with its own
   happybase Connection doing `table.row` / `table.put`, either replaying requests made up
   front (*replay*: the driver's ceiling) or doing workload A's own work inline per operation
   (*workload*). The order rotates per repetition; the ratios within one repetition are the
   figures that matter (2 shared cores: noisy).
3. Throughput and client CPU per operation vs lanes (1..64) for workloads A and C.

Client CPU is this process's user+system time (every thread) divided by operations.

    workbench cluster up hbase-standalone        # or any HBase Thrift1 gateway on 127.0.0.0/8
    python bench/bench_hbase.py [--port 9090] [--records 10000] [--operations 20000]
        [--lanes 16] [--repeat 3] [--sweep 1,2,4,8,16,32,64] [--sweep-operations 6000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import threading
import time
from pathlib import Path
from time import perf_counter_ns

import happybase
from common import FIELDS, WorkloadA, compare_loops, cpu_seconds, make_plan, timed

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller

WORKLOADS = Path(__file__).resolve().parents[1] / "workbench" / "workloads"


def workbench_run(args, table: str, workload: str, lanes: int, ops: int, phase: str = "run"):
    """(ops/s, client CPU us/op) of one workbench phase, in this process."""
    spec, _ = spec_from_args(
        [str(WORKLOADS / workload)],
        ["db=hbase", f"hbase.host={args.host}", f"hbase.port={args.port}", f"table={table}",
         f"recordcount={args.records}", f"operationcount={ops}", f"threadcount={lanes}"],
        phase,
    )
    cpu0 = cpu_seconds()
    outcome = asyncio.run(Controller(spec, phase).run())
    cpu = cpu_seconds() - cpu0
    failed = {op: c for op, c in outcome.returns.items() if set(c) - {"OK"}}
    assert outcome.outcome == "completed" and not failed, (outcome.error, failed)
    return outcome.operations * 1000 / outcome.runtime_ms, cpu / outcome.operations * 1e6


def bare_loop(args, table: str, lanes: int, ops: int, replay: bool) -> tuple[float, float]:
    """Workload A straight on happybase: `lanes` threads, one Connection each."""
    plan = [(is_read, key.encode(), FIELDS[f].encode()) for is_read, key, f in make_plan(args.records, ops)]
    value = b"x" * 100
    counter = itertools.count()
    conns = [happybase.Connection(args.host, args.port) for _ in range(lanes)]
    latencies: list[int] = []

    def replay_lane(conn, _seed) -> None:
        t = conn.table(table)
        for n in counter:
            if n >= ops:
                return
            is_read, key, field = plan[n]
            if is_read:
                t.row(key)
            else:
                t.put(key, {b"family:" + field: value})

    def workload_lane(conn, seed) -> None:
        t, choices, record = conn.table(table), WorkloadA(seed, args.records), latencies.append
        for n in counter:
            if n >= ops:
                return
            is_read, key, field, fresh = choices.next()
            t0 = perf_counter_ns()
            if is_read:
                t.row(key.encode())
            else:
                t.put(key.encode(), {b"family:" + FIELDS[field].encode(): fresh.encode()})
            record(perf_counter_ns() - t0)

    lane = replay_lane if replay else workload_lane
    threads = [threading.Thread(target=lane, args=(c, i)) for i, c in enumerate(conns)]
    clock = timed()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed, cpu = clock()
    for c in conns:
        c.close()
    return ops / elapsed, cpu / ops * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9090)
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--operations", type=int, default=20_000)
    ap.add_argument("--lanes", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sweep", default="1,2,4,8,16,32,64", help='lanes to sweep; "" for none')
    ap.add_argument("--sweep-operations", type=int, default=6000)
    args = ap.parse_args()
    if not args.host.startswith("127."):
        raise SystemExit("benchmarks only target 127.0.0.0/8")
    table = f"bench_hbase_{int(time.time())}"
    load = workbench_run(args, table, "workloada", 16, args.records, phase="load")
    print(f"load: {args.records} records, 16 lanes: {load[0]:.0f} ops/s, {load[1]:.0f} us CPU/op")
    print(f"\nworkload A, {args.lanes} in flight, {args.operations} ops per trial")
    compare_loops(
        lambda: bare_loop(args, table, args.lanes, args.operations, True),
        lambda: bare_loop(args, table, args.lanes, args.operations, False),
        lambda: workbench_run(args, table, "workloada", args.lanes, args.operations),
        args.repeat,
    )
    if args.sweep:  # --sweep "": no lanes table
        print(f"\nthroughput vs lanes ({args.sweep_operations} ops per point)")
        print("lanes  A ops/s  A us/op  C ops/s  C us/op")
    for lanes in (int(x) for x in args.sweep.split(",") if x):
        a = workbench_run(args, table, "workloada", lanes, args.sweep_operations)
        c = workbench_run(args, table, "workloadc", lanes, args.sweep_operations)
        print(f"{lanes:5d}  {a[0]:7.0f}  {a[1]:7.0f}  {c[0]:7.0f}  {c[1]:7.0f}")
    conn = happybase.Connection(args.host, args.port)
    conn.delete_table(table, disable=True)
    conn.close()


if __name__ == "__main__":
    main()
