"""The run store's cost: the engine's throughput recording into the store versus `--no-store`.

The same `workbench run` of workload A on the memory binding (the engine at full speed, where a
cost on the hot path would show most) is made `--repeat` times recording into a fresh store and
`--repeat` times with `--no-store`, alternating which goes first. Throughput is the run's own
`[OVERALL], Throughput` line. The figures that matter are the ratio store / no-store of the
medians and the median of the per-pair ratios (both from the same invocation). The goal: at
least 0.97. `--snapshot-interval 0.1` makes ten intervals a second to commit instead of one.

    python bench/bench_store.py [--operations 1500000] [--records 10000] [--lanes 8]
        [--repeat 5] [--snapshot-interval 1]
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")
THROUGHPUT = re.compile(r"^\[OVERALL\], Throughput\(ops/sec\), ([0-9.]+)", re.MULTILINE)


def run(args: list[str], env: dict[str, str]) -> float:
    proc = subprocess.run([sys.executable, "-m", "workbench", "run", *args, "-q"],
                          capture_output=True, text=True, env=env, timeout=3600)
    found = THROUGHPUT.search(proc.stdout)
    if proc.returncode != 0 or not found:
        raise SystemExit(f"the run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return float(found.group(1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--operations", type=int, default=1_500_000)
    p.add_argument("--records", type=int, default=10_000)
    p.add_argument("--lanes", type=int, default=8)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--snapshot-interval", type=float, default=1.0)
    a = p.parse_args()
    common = ["-P", WORKLOAD_A, "-p", f"recordcount={a.records}", "-p", f"operationcount={a.operations}",
              "-threads", str(a.lanes), "-p", f"snapshot.interval={a.snapshot_interval}"]
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        store = Path(tmp) / "runs.db"
        env = dict(os.environ, WORKBENCH_STORE=str(store))
        recorded: list[float] = []
        plain: list[float] = []
        for i in range(a.repeat):
            order = (("store", True), ("no-store", False)) if i % 2 == 0 else \
                (("no-store", False), ("store", True))
            for name, recording in order:
                t = run(common + ([] if recording else ["--no-store"]), env)
                (recorded if recording else plain).append(t)
                print(f"rep {i + 1} {name:9s} {t:12,.0f} ops/s", flush=True)
        c = sqlite3.connect(store)
        runs, intervals = c.execute("SELECT count(*), (SELECT count(*) FROM intervals) FROM runs").fetchone()
        c.close()
        size = sum(f.stat().st_size for f in Path(tmp).iterdir())
    ratio = statistics.median(recorded) / statistics.median(plain)
    pairs = statistics.median(r / n for r, n in zip(recorded, plain, strict=True))
    print(f"\nmemory binding, workload A, {a.operations:,} operations, {a.lanes} lanes, "
          f"snapshot.interval={a.snapshot_interval} s, {a.repeat} runs each")
    print(f"median with the store    {statistics.median(recorded):12,.0f} ops/s")
    print(f"median with --no-store   {statistics.median(plain):12,.0f} ops/s")
    print(f"ratio of medians         {ratio:.3f}")
    print(f"median of per-pair ratio {pairs:.3f}   (goal: at least 0.97)")
    print(f"store: {runs} runs, {intervals} intervals, {size / 1e6:.1f} MB on disk")


if __name__ == "__main__":
    main()
