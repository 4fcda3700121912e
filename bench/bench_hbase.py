"""The HBase binding against a bare happybase loop, and its throughput vs lanes.

1. Loads `--records` rows (YCSB's 10 x 100 B) into a fresh table on a running HBase Thrift gateway.
2. Workload A (50% read of all fields, 50% update of one field, scrambled zipfian keys) with
   `--lanes` requests in flight, alternately by the workbench (`hbase` binding, a pool of
   that many connections) and by a bare loop: that many threads, each with its own happybase
   Connection doing `table.row` / `table.put` on precomputed keys, nothing else. The ratio of
   their throughputs within one repetition is the figure that matters (2 shared cores: noisy).
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
import random
import resource
import statistics
import threading
import time
from pathlib import Path

import happybase

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.core.generators.scrambled import ScrambledZipfian
from workbench.core.keys import build_key_name

WORKLOADS = Path(__file__).resolve().parents[1] / "workloads"


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


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


def bare_loop(args, table: str, lanes: int, ops: int) -> tuple[float, float]:
    """Workload A straight on happybase: `lanes` threads, one Connection each."""
    rng = random.Random(7)
    zipf = ScrambledZipfian(rng, 0, args.records - 1)
    plan = [(rng.random() < 0.5, build_key_name(zipf.next()).encode(), f"field{rng.randrange(10)}")
            for _ in range(ops)]
    value = bytes(rng.randrange(32, 127) for _ in range(100))
    counter = itertools.count()
    conns = [happybase.Connection(args.host, args.port) for _ in range(lanes)]

    def lane(conn) -> None:
        t = conn.table(table)
        for n in counter:
            if n >= ops:
                return
            is_read, key, field = plan[n]
            if is_read:
                t.row(key)
            else:
                t.put(key, {b"family:" + field.encode(): value})

    threads = [threading.Thread(target=lane, args=(c,)) for c in conns]
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
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
    ap.add_argument("--sweep", default="1,2,4,8,16,32,64")
    ap.add_argument("--sweep-operations", type=int, default=6000)
    args = ap.parse_args()
    if not args.host.startswith("127."):
        raise SystemExit("benchmarks only target 127.0.0.0/8")
    table = f"bench_hbase_{int(time.time())}"
    load = workbench_run(args, table, "workloada", 16, args.records, phase="load")
    print(f"load: {args.records} records, 16 lanes: {load[0]:.0f} ops/s, {load[1]:.0f} us CPU/op")
    workbench_run(args, table, "workloada", args.lanes, args.operations // 4)  # warm-up
    print(f"\nworkload A, {args.lanes} in flight, {args.operations} ops per trial")
    print("rep  bare ops/s  us/op  workbench ops/s  us/op  ratio")
    ratios = []
    for rep in range(args.repeat):
        if rep % 2:  # alternate who goes first: the machine's noise drifts
            wb = workbench_run(args, table, "workloada", args.lanes, args.operations)
            bare = bare_loop(args, table, args.lanes, args.operations)
        else:
            bare = bare_loop(args, table, args.lanes, args.operations)
            wb = workbench_run(args, table, "workloada", args.lanes, args.operations)
        ratios.append(wb[0] / bare[0])
        print(f"{rep:3d}  {bare[0]:10.0f}  {bare[1]:5.0f}  {wb[0]:15.0f}  {wb[1]:5.0f}  {ratios[-1]:5.2f}")
    print(f"median ratio workbench/bare: {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")
    print(f"\nthroughput vs lanes ({args.sweep_operations} ops per point)")
    print("lanes  A ops/s  A us/op  C ops/s  C us/op")
    for lanes in (int(x) for x in args.sweep.split(",")):
        a = workbench_run(args, table, "workloada", lanes, args.sweep_operations)
        c = workbench_run(args, table, "workloadc", lanes, args.sweep_operations)
        print(f"{lanes:5d}  {a[0]:7.0f}  {a[1]:7.0f}  {c[0]:7.0f}  {c[1]:7.0f}")
    conn = happybase.Connection(args.host, args.port)
    conn.delete_table(table, disable=True)
    conn.close()


if __name__ == "__main__":
    main()
