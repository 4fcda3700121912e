"""Memory over time: workload A at full speed on the memory binding for N minutes.

Samples the resident set size (VmRSS) of the process every 10 s and prints the growth from the
end of the first minute (warm-up: imports, preload, allocator pools) to the end.

    python bench/bench_memory.py [--minutes 10] [--threads 8]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller

WORKLOAD_A = str(Path(__file__).resolve().parents[1] / "workbench" / "workloads" / "workloada")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def main(minutes: float, threads: int) -> None:
    spec, _ = spec_from_args(
        [WORKLOAD_A],
        ["recordcount=10000", "operationcount=0", f"maxexecutiontime={int(minutes * 60)}",
         f"threadcount={threads}"],
        "run",
    )
    controller = Controller(spec, "run")
    samples: list[tuple[float, float, int]] = []
    last = [0.0]

    def sample(snap) -> None:
        if snap.elapsed_s - last[0] >= 10 or snap.final:
            last[0] = snap.elapsed_s
            samples.append((snap.elapsed_s, rss_mb(), snap.total_operations))
            print(f"{snap.elapsed_s:7.1f} s  RSS {samples[-1][1]:7.1f} MB  "
                  f"{snap.total_operations:>12,} ops", flush=True)

    controller.subscribe(sample)
    t0 = time.perf_counter()
    outcome = await controller.run()
    warm = next(s for s in samples if s[0] >= 60) if minutes >= 2 else samples[0]
    end = samples[-1]
    print(f"ran {time.perf_counter() - t0:.0f} s, {outcome.operations:,} operations "
          f"({outcome.operations * 1000 / outcome.runtime_ms:,.0f} ops/s)")
    print(f"RSS after warm-up ({warm[0]:.0f} s): {warm[1]:.1f} MB; at the end: {end[1]:.1f} MB; "
          f"growth {end[1] - warm[1]:+.1f} MB")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--threads", type=int, default=8)
    args = ap.parse_args()
    asyncio.run(main(args.minutes, args.threads))
