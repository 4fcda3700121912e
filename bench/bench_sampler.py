"""The servers' sampler's own CPU in an otherwise idle process, on a cluster (issue 54, 7).

    WORKBENCH_STATE_DIR=... workbench cluster up cassandra-single
    python bench/bench_sampler.py --cluster cassandra-single [--seconds 30] [--only cql,gc-log]
    python bench/bench_sampler.py --cluster cassandra-single --under-load [--seconds 30]

Builds the sources a `--cluster` run of the cluster's database reads (drive/server_sampler.py's
sources_for: the client's processes, the nodes' processes, the database's own source, the GC
logs), waits 3 s for their connections, runs a ServerSampler over them for --seconds while this
process takes each second's figures as a run's tick would, and prints the process's CPU per
second of sampling and each thread's (from /proc/self/task/TID/schedstat, nanoseconds), with
`host` (bench_cpu.py's fixed piece of Python) before and after. To compare two checkouts, run it
with each first on PYTHONPATH, alternately: on a shared host a thread that wakes once a second
costs 1-6 ms of CPU per wake-up where the same work in a loop costs 0.2 (cold caches), so read
the figures of one invocation together only.

--under-load: the sampler beside a loaded run instead, where it lives: this process runs `workbench
run --cluster NAME` of workload A, 16 lanes, closed loop, for --seconds (after `workbench load` of
its own table, bench_sampler_<time>, left in the cluster), while a thread of its own reads the
sampler's own threads' CPU four times a second (workbench-server-sampler, workbench-source-*, the
sources' helpers); it prints each one's and their share of the run's CPU (the poller's own left
out). What the tick does with their figures on the main thread is in the run's share, not theirs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import threading
import time
from pathlib import Path

from bench_cpu import host_ms


def threads_cpu() -> dict[int, float]:
    """Each thread of this process: seconds on a CPU."""
    out = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            out[int(task.name)] = int((task / "schedstat").read_text().split()[0]) / 1e9
        except OSError:
            continue
    return out


SAMPLER_THREADS = ("workbench-server-sampler", "workbench-source-", "workbench-cql-", "workbench-docker-")


def under_load(cluster: str, seconds: float) -> None:
    """The sampler's threads' share of a loaded `--cluster` run's CPU, in this process."""
    from workbench.cli import main as workbench

    workload = "workloada"  # a shipped workload, by name
    table = f"bench_sampler_{int(time.time())}"
    common = ["--cluster", cluster, "--no-store", "-q", "-P", workload, "-p", f"table={table}",
              "-p", "recordcount=10000"]
    with contextlib.redirect_stdout(io.StringIO()):
        loaded = workbench(["load", *common, "-threads", "16"])
    if loaded != 0:
        raise SystemExit("the load failed")
    seen: dict[int, tuple[str, float]] = {}  # native id -> (name, newest CPU seconds)
    done = threading.Event()
    own = [0.0]  # the poller's own CPU, left out of the run's

    def poll() -> None:  # the sampler's threads only: a poller that reads every thread costs more
        while not done.wait(0.25):
            for thread in threading.enumerate():
                if thread.name.startswith(SAMPLER_THREADS) and thread.native_id is not None:
                    try:
                        text = Path(f"/proc/self/task/{thread.native_id}/schedstat").read_text()
                    except OSError:
                        continue
                    seen[thread.native_id] = (thread.name, int(text.split()[0]) / 1e9)
        own[0] = time.thread_time()

    start = threads_cpu()
    poller = threading.Thread(target=poll, name="bench-poller", daemon=True)
    poller.start()
    cpu0, wall0 = time.process_time(), time.time()
    with contextlib.redirect_stdout(io.StringIO()):  # its YCSB summary: not this benchmark's figures
        status = workbench(["run", *common, "-threads", "16", "-p", "operationcount=0",
                            "-p", f"maxexecutiontime={seconds:.0f}"])
    done.set()
    poller.join()
    wall, cpu = time.time() - wall0, time.process_time() - cpu0
    if status != 0:
        raise SystemExit(f"the run failed (exit status {status})")
    used: dict[str, float] = {}
    for tid, (name, total) in seen.items():
        used[name] = used.get(name, 0.0) + total - start.get(tid, 0.0)
    run_cpu = cpu - own[0]
    sampler = sum(used.values())
    print(f"a --cluster run of workload A, 16 lanes, {wall:.1f} s: {run_cpu / wall * 1e3:.1f} ms CPU a "
          f"second (this process, the poller's {own[0] / wall * 1e3:.2f} left out); the sampler's "
          f"threads {sampler / wall * 1e3:.2f} ms a second, {sampler / run_cpu:.2%} of the run's CPU")
    for name, value in sorted(used.items(), key=lambda kv: -kv[1]):
        if value / wall * 1e3 > 0.005:
            print(f"  {name!s:>32}: {value / wall * 1e3:7.2f} ms/s")


def main() -> None:
    from workbench.databases import serving
    from workbench.drive.server_sampler import ServerSampler, sources_for
    from workbench.drive.targets import find_cluster

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--only", help="source names to keep (client, process, cql, gc-log, ...)")
    ap.add_argument("--under-load", action="store_true",
                    help="beside a loaded --cluster run, in this process")
    args = ap.parse_args()
    if args.under_load:
        under_load(args.cluster, args.seconds)
        return
    cluster = find_cluster(args.cluster)
    db, _ = serving(cluster.kind)  # the cluster's database, as `--cluster` finds it
    sources = sources_for(cluster, db.name)
    keep = [s for s in sources if not args.only or getattr(s, "name", "") in args.only.split(",")]
    for source in sources:
        if source not in keep:
            source.close()
    time.sleep(3.0)
    sampler = ServerSampler(keep)
    host0, before = host_ms(), threads_cpu()
    cpu0, wall0 = time.process_time(), time.time()
    sampler.start(wall0)
    most, events, k = 0, 0, 1
    while time.time() < wall0 + args.seconds:
        time.sleep(max(0.0, wall0 + k - time.time()))
        k += 1
        figures, said = sampler.take(time.time() - wall0)
        most, events = max(most, sum(len(f) for f in figures.values())), events + len(said)
    cpu1, after, host1 = time.process_time(), threads_cpu(), host_ms()
    names = {t.native_id: t.name for t in threading.enumerate()}
    notes = sampler.stop()
    print(f"{(cpu1 - cpu0) / args.seconds * 1e3:.2f} ms CPU a second over {args.seconds:.0f} s, "
          f"{most} figures a second, {events} events, host {host0:.0f}/{host1:.0f} ms; notes {notes}")
    for tid in sorted(after, key=lambda t: before.get(t, 0) - after[t]):
        used = (after[tid] - before.get(tid, 0)) / args.seconds * 1e3
        if used > 0.005:
            print(f"  {names.get(tid, tid)!s:>32}: {used:6.3f} ms/s")


if __name__ == "__main__":
    main()
