"""Engine throughput on the memory binding: workload A, zipfian keys, all metrics on.

Runs one worker process, then two, in the same invocation (the machine is shared and noisy:
compare the ratio, not absolute figures across runs), and prints operations/s and client CPU
microseconds per operation (all processes of the run: parent and workers).

    python bench/bench_engine.py [--operations 2000000] [--threads 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import time
from pathlib import Path

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller

WORKLOAD_A = str(Path(__file__).resolve().parents[1] / "workbench" / "workloads" / "workloada")


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def one_run(workers: int, operations: int, threads: int, records: int) -> tuple[float, float]:
    spec, _ = spec_from_args(
        [WORKLOAD_A],
        [f"recordcount={records}", f"operationcount={operations}", f"threadcount={threads}",
         f"workers={workers}", f"memory.store=bench-{workers}-{time.time()}"],
        "run",
    )
    cpu0 = cpu_seconds()
    outcome = asyncio.run(Controller(spec, "run").run())
    cpu = cpu_seconds() - cpu0
    assert outcome.outcome == "completed" and outcome.operations == operations, outcome.error
    return outcome.operations * 1000 / outcome.runtime_ms, cpu / outcome.operations * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--operations", type=int, default=2_000_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = {1: [], 2: []}
    for _ in range(args.repeat):  # interleave so both see the same machine noise
        for workers in (1, 2):
            rows[workers].append(one_run(workers, args.operations, args.threads, args.records))
    print(f"workload A, zipfian, {args.records} records, {args.operations} ops, "
          f"{args.threads} lanes, memory binding, {args.repeat} repetitions (median)")
    med = {}
    for workers, runs in rows.items():
        ops = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        med[workers] = ops
        print(f"workers={workers}: {ops:10.0f} ops/s   {cpu:6.2f} CPU us/op   "
              f"(runs: {', '.join(f'{r[0]:.0f}' for r in runs)})")
    print(f"two workers / one worker: {med[2] / med[1]:.2f}x")


if __name__ == "__main__":
    main()
