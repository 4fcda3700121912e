#!/usr/bin/env python3
"""The CPU of the short-lived Java tools run against a cluster (clusters/java_tools.py):
`workbench cluster flush` on a running local cluster, as shipped and as before (the server's JIT
flags, and for HBase its tool compiled in memory at every call), alternated in one process.

    WORKBENCH_STATE_DIR=... workbench cluster up cassandra-single   (or hbase-standalone)
    python bench/bench_java_tools.py --cluster cassandra-single [--repeat 5]

Each call's CPU is its child processes' (getrusage(RUSAGE_CHILDREN): the tool's JVM), its wall
the call's. "before" sets java_tools.FLAGS to nothing and has compiled() answer None (the source
file, as the Java launcher runs it); "after" is the code as it is (the compile into the cache,
done once before the first timed call, is not counted: it is paid once per tool and jars). Prints
each call and the medians, and their ratio.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from contextlib import contextmanager


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


@contextmanager
def as_before(java_tools):
    flags, compiled = java_tools.FLAGS, java_tools.compiled
    java_tools.FLAGS, java_tools.compiled = (), lambda *a, **k: None
    try:
        yield
    finally:
        java_tools.FLAGS, java_tools.compiled = flags, compiled


def main() -> None:
    from workbench.clusters import java_tools, maintenance
    from workbench.clusters.base import get_provider

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    provider = get_provider("local")
    cluster = provider.status(args.cluster)
    maintenance.run(provider, cluster, "flush")  # warm: the page cache, and the compile once
    figures: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    for i in range(args.repeat):
        for label in (("before", "after") if i % 2 == 0 else ("after", "before")):
            cpu, wall = children_cpu(), time.monotonic()
            if label == "before":
                with as_before(java_tools):
                    maintenance.run(provider, cluster, "flush")
            else:
                maintenance.run(provider, cluster, "flush")
            figures[label].append((children_cpu() - cpu, time.monotonic() - wall))
            print(f"{label:6} flush: {figures[label][-1][0]:.2f} CPU-s, {figures[label][-1][1]:.2f} s")
    med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
           for k, v in figures.items()}
    for k, (c, w) in med.items():
        print(f"median {k}: {c:.2f} CPU-s, {w:.2f} s wall a flush")
    print(f"after/before: CPU {med['after'][0] / med['before'][0]:.2f}, "
          f"wall {med['after'][1] / med['before'][1]:.2f}")


if __name__ == "__main__":
    main()
