"""Load from several machines through Ray: what one controller can merge, and what Ray costs.

    python bench/bench_ray.py merge [--ops-per-tick 5000] [--repeat 5]
        The controller's cost per tick against the number of workers (1 to 512), with simulated
        workers: each one's tick (READ and UPDATE histograms of --ops-per-tick operations, with
        latencies spread like a real Cassandra run's) is encoded as a worker sends it; the timed
        part is what the controller does with N of them every tick: decode, merge into the
        interval and since-start histograms, summarise, compress the interval for the run store.
        Prints the milliseconds per tick, the bytes a worker sends per tick, and how many
        workers one controller merges in half of each tick at one and at four ticks a second.

    python bench/bench_ray.py throughput [--seconds 10] [--repeat 3] [--threads 8]
        Ray workers against local worker processes on this machine (memory binding, workload A,
        2 workers), alternating, inside a network namespace with only lo up (Ray would pick this
        machine's own address otherwise; needs root). Prints ops/s and the ratio Ray / local.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.core.workers import _decode_tick, _encode_tick
from workbench.metrics.histograms import new_histogram
from workbench.metrics.recorder import TickData

ROOT = Path(__file__).resolve().parents[1]
WORKERS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def worker_tick(rng: random.Random, ops: int) -> tuple:
    """One simulated worker's encoded tick: read and update latencies (us), log-normal."""
    hists = {}
    for name, median in (("READ", 400.0), ("UPDATE", 300.0)):
        h = new_histogram()
        for _ in range(ops // 2):
            h.record_value(max(int(rng.lognormvariate(0, 0.6) * median), 1))
        hists[name] = h
    returns = {name: {"OK": ops // 2} for name in hists}
    return _encode_tick(TickData(ops, hists, returns, {}, 8.0))


class Replay:
    """An executor that hands the controller N workers' ticks, decoded as RayExecutor does."""

    def __init__(self, payloads: list[tuple]) -> None:
        self.payloads = payloads

    async def drain(self) -> list[TickData]:
        return [_decode_tick(p) for p in self.payloads]

    def remaining(self) -> int:
        return 0


def merge_cost(payloads: list[tuple], ticks: int) -> float:
    """Seconds per tick the controller spends on these payloads (median of `ticks`)."""
    spec, _ = spec_from_args([], ["recordcount=1000", "operationcount=0"], "run")
    controller = Controller(spec, "run", cumulative_stats=True)  # the app's setting: the costlier
    controller._executor = Replay(payloads)
    controller._t0 = controller._last_tick = time.perf_counter()
    times = []

    async def go() -> None:
        for _ in range(ticks):
            t0 = time.perf_counter()
            await controller._tick(final=False)
            times.append(time.perf_counter() - t0)

    asyncio.run(go())
    return statistics.median(times)


def cmd_merge(args: argparse.Namespace) -> None:
    rng = random.Random(1)
    distinct = [worker_tick(rng, args.ops_per_tick) for _ in range(16)]
    size = statistics.median(len(json.dumps(p[1])) for p in distinct)
    print(f"simulated workers: {args.ops_per_tick} operations per tick each (READ and UPDATE), "
          f"about {size / 1024:.1f} KiB of encoded histograms per worker per tick; "
          f"controller with cumulative statistics (the app's), median of {args.repeat} ticks")
    print(f"{'workers':>8} {'ms/tick':>9} {'us/worker':>10}")
    per_worker = []
    for n in WORKERS:
        payloads = [distinct[i % len(distinct)] for i in range(n)]
        cost = merge_cost(payloads, args.repeat)
        per_worker.append(cost / n)
        print(f"{n:>8} {cost * 1000:>9.2f} {cost / n * 1e6:>10.0f}", flush=True)
    slope = statistics.median(per_worker[-4:])
    for rate in (1, 4):
        print(f"at {rate} tick(s)/s, the merge alone fits about {int(0.5 / rate / slope)} workers in half "
              f"of each tick ({slope * 1e6:.0f} us each; Ray's own cost per call, from `throughput`, "
              "comes on top)")


# Run inside the namespace: what one drain costs the controller in Ray's own machinery (16 actors
# that answer at once with a worker's encoded tick; the controller's merge is measured by `merge`).
CALLS = """
import asyncio, random, sys, time
sys.path.insert(0, sys.argv[2])
import ray
from bench_ray import worker_tick
ray.init(address=sys.argv[1], logging_level="WARNING", log_to_driver=False, _node_ip_address="127.0.0.1")
payload = worker_tick(random.Random(1), 5000)

@ray.remote(num_cpus=0)
class Fake:
    async def drain(self):
        return payload, 8

actors = [Fake.remote() for _ in range(16)]
ray.get([a.drain.remote() for a in actors])

async def rounds(n):
    for _ in range(n):
        await asyncio.gather(*(asyncio.wrap_future(a.drain.remote().future()) for a in actors))

import resource
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0, c0 = time.perf_counter(), cpu()
asyncio.run(rounds(100))
wall, used = time.perf_counter() - t0, cpu() - c0
print(f"Ray's own cost of a drain call in the controller: {used / 1600 * 1e6:.0f} us of CPU per worker "
      f"per tick ({wall / 100 * 1000:.1f} ms per round of 16 workers)")
"""


def cmd_throughput(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import pytest  # noqa: F401 - raynet skips through pytest when no namespace can be made

    from tests.support.raynet import Netns

    ns = Netns().start()
    try:
        address = ns.ray_start(nodes=1, cpus=2)
        out = Path(tempfile.mkdtemp(prefix="bench-ray-"))
        rows: dict[str, list[float]] = {"local": [], "ray": []}
        for r in range(args.repeat):
            for how in ("local", "ray"):
                export = out / f"{how}-{r}.json"
                argv = [sys.executable, "-m", "workbench", "run", "-P", "workloada",
                        "-p", "recordcount=10000", "-p", "operationcount=0",
                        "-p", f"maxexecutiontime={args.seconds}",
                        "-threads", str(args.threads), "--workers", "2", "--no-store", "-q",
                        "--export", f"json={export}"] + (["--ray", address] if how == "ray" else [])
                ns.run(argv, check=True, timeout=args.seconds * 10 + 120)
                run = json.loads(export.read_text())["run"]
                rows[how].append(run["throughput"])
                print(f"repetition {r + 1}: {how:>5} {run['throughput']:>10.0f} ops/s", flush=True)
        ratios = [ray / local for ray, local in zip(rows["ray"], rows["local"], strict=True)]
        print(f"memory binding, workload A, 2 workers, {args.threads} lanes, {args.seconds} s runs, "
              f"{args.repeat} alternating repetitions")
        print(f"local worker processes: median {statistics.median(rows['local']):.0f} ops/s")
        print(f"Ray workers (1 node):   median {statistics.median(rows['ray']):.0f} ops/s")
        print(f"ratio Ray / local: median {statistics.median(ratios):.2f} "
              f"(each: {', '.join(f'{x:.2f}' for x in ratios)})")
        calls = ns.run([sys.executable, "-c", CALLS, address, str(ROOT / "bench")], check=True, timeout=600)
        print(calls.stdout.strip())
    finally:
        ns.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--ops-per-tick", type=int, default=5000)
    m.add_argument("--repeat", type=int, default=5)
    t = sub.add_parser("throughput")
    t.add_argument("--seconds", type=int, default=10)
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument("--threads", type=int, default=8)
    args = ap.parse_args()
    {"merge": cmd_merge, "throughput": cmd_throughput}[args.what](args)


if __name__ == "__main__":
    main()
