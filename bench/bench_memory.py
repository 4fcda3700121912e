"""Memory over time: workload A on the memory binding (or a cluster) for N minutes.

Samples the resident set size (VmRSS) every 10 s and prints the growth from the end of the
first minute (warm-up: imports, preload, allocator pools) to the end.

    python bench/bench_memory.py [--minutes 10] [--threads 8]
        the engine alone, in this process, at full speed

    python bench/bench_memory.py --cli --minutes 60 --ticks 4 [--target 5000] [--cluster NAME]
        the real `workbench run` in a process of its own, recording into a run store of its own
        (a temporary directory), `--ticks` intervals a second (snapshot.interval = 1/ticks);
        VmRSS of that process read from /proc. What a user's hour-long run costs in memory.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller

WORKLOAD_A = str(Path(__file__).resolve().parents[1] / "workbench" / "workloads" / "workloada")


def rss_mb(pid: str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
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


def cli(minutes: float, threads: int, ticks: float, target: int, cluster: str | None) -> None:
    seconds = int(minutes * 60)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        cmd = [sys.executable, "-m", "workbench", "run", "-P", WORKLOAD_A, "-threads", str(threads),
               "-p", "recordcount=10000", "-p", "operationcount=0", "-p", f"maxexecutiontime={seconds}",
               "-p", f"snapshot.interval={1 / ticks:g}", "-p", "status.interval=60",
               "--store", str(Path(tmp) / "runs.db")]
        cmd += ["-target", str(target)] if target else []
        cmd += ["--cluster", cluster] if cluster else []
        print("$", " ".join(cmd[1:]), flush=True)
        with open(Path(tmp) / "stdout", "w") as out, open(Path(tmp) / "stderr", "w") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err)
            samples: list[tuple[float, float]] = []
            t0 = time.perf_counter()
            while proc.poll() is None:
                try:
                    samples.append((time.perf_counter() - t0, rss_mb(str(proc.pid))))
                except (FileNotFoundError, ProcessLookupError, RuntimeError):
                    break  # it ended between poll() and the read
                elapsed, mb = samples[-1]
                if len(samples) % 6 == 1:
                    print(f"{elapsed:7.1f} s  RSS {mb:7.1f} MB", flush=True)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
        status = proc.wait()
        text = (Path(tmp) / "stdout").read_text()
        summary = [line for line in text.splitlines() if line.startswith("[OVERALL]")]
        if status != 0 or not samples:
            print((Path(tmp) / "stderr").read_text()[-2000:])
            raise SystemExit(f"workbench run exited with {status}")
    warm = next((s for s in samples if s[0] >= 60), samples[0])
    last = samples[-1]
    peak = max(mb for _, mb in samples)
    print("\n".join(summary))
    print(f"{ticks:g} ticks/s, {seconds} s: RSS after the first minute ({warm[0]:.0f} s) {warm[1]:.1f} MB; "
          f"last sample ({last[0]:.0f} s) {last[1]:.1f} MB; growth {last[1] - warm[1]:+.1f} MB; "
          f"peak {peak:.1f} MB")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--cli", action="store_true", help="measure a real `workbench run` process")
    ap.add_argument("--ticks", type=float, default=1.0, help="--cli: intervals a second")
    ap.add_argument("--target", type=int, default=0, help="--cli: operations a second (0: unthrottled)")
    ap.add_argument("--cluster", help="--cli: a cluster started by `workbench cluster up`")
    args = ap.parse_args()
    if args.cli:
        cli(args.minutes, args.threads, args.ticks, args.target, args.cluster)
    else:
        asyncio.run(main(args.minutes, args.threads))
