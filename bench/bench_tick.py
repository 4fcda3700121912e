"""CPU of a tick's histogram work, compiled against Python, in the same invocation.

Every tick (once a second by default) the controller makes an HdrHistogram of each operation's
exact latency tallies (`from_counts`), summarises it (`OpStats.of`: mean and percentiles) and
encodes it for the run store. Its cost is per second, not per operation, so it weighs most on a
slow server. This times one tick's work for two operations (workload A's READ and UPDATE) from
tallies shaped like real ones (log-normal latencies around 1 ms, as many operations as a
second at the given rate), on the compiled loops (workbench._speedups: tally, summarize) and on
the Python ones, alternating.

    python bench/bench_tick.py [--rates 5000,15000] [--ticks 50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from workbench import speedups
from workbench.metrics import histograms, snapshot
from workbench.metrics.histograms import encode, from_counts
from workbench.metrics.snapshot import OpStats


def tallies(rng: random.Random, operations: int) -> dict[int, int]:
    out: dict[int, int] = {}
    for _ in range(operations):
        us = int(rng.lognormvariate(7.0, 0.6))
        out[us] = out.get(us, 0) + 1
    return out


def tick(per_op: list[dict[int, int]]) -> None:
    for counts in per_op:
        h = from_counts(counts)
        OpStats.of(h)
        encode(h)


def ms_per_tick(compiled: bool, per_op: list[dict[int, int]], ticks: int) -> float:
    c = speedups.C if compiled else None
    histograms._C = snapshot._C = c
    t0 = time.process_time()
    for _ in range(ticks):
        tick(per_op)
    return (time.process_time() - t0) / ticks * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rates", default="5000,15000", help="operations per second (per tick)")
    ap.add_argument("--ticks", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if speedups.C is None:
        raise SystemExit(f"workbench._speedups is not in use here ({speedups.describe()}): "
                         "build it with `python setup.py build_ext --inplace`")
    saved = histograms._C, snapshot._C
    rng = random.Random(1)
    try:
        for rate in (int(r) for r in args.rates.split(",")):
            per_op = [tallies(rng, rate // 2), tallies(rng, rate // 2)]
            got: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(args.repeat):
                for compiled in (True, False):
                    got[compiled].append(ms_per_tick(compiled, per_op, args.ticks))
            c, py = statistics.median(got[True]), statistics.median(got[False])
            distinct = sum(len(t) for t in per_op)
            print(f"{rate:>7,} ops/s ({distinct:,} distinct latencies): compiled {c:.2f} ms a tick, "
                  f"Python {py:.2f} ms; per operation {c * 1e3 / rate:.2f} against {py * 1e3 / rate:.2f} us "
                  f"(medians of {args.repeat})", flush=True)
    finally:
        histograms._C, snapshot._C = saved


if __name__ == "__main__":
    main()
