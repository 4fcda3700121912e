"""The servers' sampler's own CPU in an otherwise idle process, on a cluster (issue 54, 7).

    WORKBENCH_STATE_DIR=... workbench cluster up cassandra-single
    python bench/bench_sampler.py --cluster cassandra-single [--seconds 30] [--only cql,gc-log]

Builds the sources a `--cluster` run of the cluster's database reads (drive/server_sampler.py's
sources_for: the client's processes, the nodes' processes, the database's own source, the GC
logs), waits 3 s for their connections, runs a ServerSampler over them for --seconds while this
process takes each second's figures as a run's tick would, and prints the process's CPU per
second of sampling and each thread's (from /proc/self/task/TID/schedstat, nanoseconds), with
`host` (bench_cpu.py's fixed piece of Python) before and after. To compare two checkouts, run it
with each first on PYTHONPATH, alternately: on a shared host a thread that wakes once a second
costs 1-6 ms of CPU per wake-up where the same work in a loop costs 0.2 (cold caches), so read
the figures of one invocation together only.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    from workbench.databases import serving
    from workbench.drive.server_sampler import ServerSampler, sources_for
    from workbench.drive.targets import find_cluster

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--only", help="source names to keep (client, process, cql, gc-log, ...)")
    args = ap.parse_args()
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
