"""What one read of the client's own figures costs (clusters/node_figures.py's ClientProcesses),
with and without its threads' run delay (`cpu_wait`: one schedstat file per thread), measured in
the same run, alternately (issue 54, 7: the sampler's cost).

    python bench/bench_client_figures.py [--workers 2] [--threads 12] [--reads 2000] [--cold 10]

This process stands for a run's parent: --threads idle threads beside its own, and --workers
worker processes started by multiprocessing (the reader counts only those) with a few threads each.
Warm: --reads reads back to back, the two kinds alternating in blocks of 100; each kind's CPU per
read (this thread's CPU time). Cold: --cold reads of each kind once a second, as the sampler does,
alternating; each read's own CPU. Compare within one invocation only (a shared host).
"""

from __future__ import annotations

import argparse
import multiprocessing
import threading
import time

from workbench.clusters import node_figures
from workbench.clusters.node_figures import ClientProcesses


def _worker(stop) -> None:
    for _ in range(3):
        threading.Thread(target=stop.wait, daemon=True).start()
    stop.wait()


def _without_run_delay(pid: int) -> None:
    return None


real = node_figures.run_delay


def _read_cost(reader: ClientProcesses, with_delay: bool) -> float:
    node_figures.run_delay = real if with_delay else _without_run_delay
    start = time.thread_time_ns()
    reader.read(time.time())
    return (time.thread_time_ns() - start) / 1e3  # µs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=12)
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--cold", type=int, default=10)
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    stop, local_stop = context.Event(), threading.Event()
    workers = [context.Process(target=_worker, args=(stop,)) for _ in range(args.workers)]
    for w in workers:
        w.start()
    for _ in range(args.threads):
        threading.Thread(target=local_stop.wait, daemon=True).start()
    try:
        reader = ClientProcesses()
        time.sleep(1.0)  # the workers' interpreters started
        figures = reader.read(time.time())[node_figures.CLIENT]
        print(f"workers {args.workers}, threads here {threading.active_count()}, figures {sorted(figures)}")
        warm = {True: [], False: []}
        for block in range(args.reads // 100):
            first = block % 2 == 0  # which kind goes first alternates from block to block
            for kind in (first, not first):
                warm[kind].extend(_read_cost(reader, kind) for _ in range(50))
        cold = {True: [], False: []}
        for i in range(args.cold * 2):
            time.sleep(1.0)
            cold[i % 2 == 0].append(_read_cost(reader, i % 2 == 0))
        for kind, name in ((False, "without cpu_wait"), (True, "with cpu_wait")):
            w, c = sorted(warm[kind]), sorted(cold[kind])
            print(f"{name:17} warm median {w[len(w) // 2]:7.1f} µs a read   "
                  f"cold median {c[len(c) // 2]:7.1f} µs (min {c[0]:.1f}, max {c[-1]:.1f})")
        ratio = sorted(warm[True])[len(warm[True]) // 2] / sorted(warm[False])[len(warm[False]) // 2]
        print(f"warm ratio with/without: {ratio:.2f}")
    finally:
        node_figures.run_delay = real
        stop.set()
        local_stop.set()
        for w in workers:
            w.join(5)


if __name__ == "__main__":
    main()
