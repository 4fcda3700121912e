#!/usr/bin/env python3
"""Cluster start-up benchmark: how long until real servers serve, and how long a cold fetch takes.

    python3 bench/bench_cluster_startup.py                 # everything, once
    python3 bench/bench_cluster_startup.py --repeat 3 --skip-fetch

Measures, with the local provider and a temporary state directory:
  fetch     both distributions into an empty temporary cache (network: Maven Central)
  cassandra one node, jars cached: `up` until CQL answers
  hbase     standalone + Thrift, jars cached: `up` until a create/put/get succeeds
  cassandra3 three nodes, jars cached: `up` until all nodes are up in the ring
  ferretdb  FerretDB on a new private PostgreSQL (initdb included), binary built: `up` until an
            insert/find/delete goes through the MongoDB protocol
  ferretdb-sqlite  the same on SQLite
and `down` for each. Prints a Markdown table for BENCHMARKS.md. Targets: 15 s, 30 s, 60 s, 2 min,
10 s for FerretDB.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.clusters import distributions  # noqa: E402
from workbench.clusters.local import LocalProvider  # noqa: E402
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.databases.hbase.cluster_spec import HBaseSpec
from workbench.databases.mongodb import cluster_ferretdb_build as gobuild  # noqa: E402
from workbench.databases.mongodb.cluster_spec import FerretDBSpec

# Away from the presets' defaults so a running development cluster does not interfere.
TOPOLOGIES = {
    "cassandra": (CassandraSpec(name="b-cassandra", heap="1G", first_address="127.0.0.101"), 15),
    "hbase": (HBaseSpec(name="b-hbase", zookeeper_port=12981, master_port=16900,
                        regionserver_port=16905, thrift_port=19990), 30),
    "cassandra3": (CassandraSpec(name="b-cassandra3", nodes=3, heap="768M",
                                 first_address="127.0.0.111", replication_factor=2), 60),
    "ferretdb": (FerretDBSpec(name="b-ferretdb", port=27917, postgres_port=27918), 10),
    "ferretdb-sqlite": (FerretDBSpec(name="b-ferretdb-sqlite", backend="sqlite", port=27919), 10),
}


def bench_fetch() -> float:
    with tempfile.TemporaryDirectory(prefix="workbench-bench-cache-") as cache:
        started = time.monotonic()
        for name in distributions.VERSIONS:
            distributions.fetch(name, Path(cache), progress=sys.stderr.isatty())
        return time.monotonic() - started


def bench_up(provider: LocalProvider, key: str) -> tuple[float, float]:
    spec, _ = TOPOLOGIES[key]
    started = time.monotonic()
    cluster = provider.up(spec)
    ready = time.monotonic() - started
    started = time.monotonic()
    provider.down(cluster.name)
    return ready, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-fetch", action="store_true")
    parser.add_argument("--only", choices=list(TOPOLOGIES), action="append")
    args = parser.parse_args()

    rows = []
    if not args.skip_fetch:
        seconds = bench_fetch()
        total = sum(a.size for n in distributions.VERSIONS for a in distributions.read_lock(n))
        rows.append(("cold fetch, both distributions", f"{total / 1e6:.0f} MB", [seconds], 120))
    chosen = args.only or list(TOPOLOGIES)
    for name in distributions.VERSIONS:  # the timed runs below start with a warm cache
        if any(key.startswith(name) for key in chosen):
            distributions.fetch(name, progress=False)
    if any(key.startswith("ferretdb") for key in chosen):
        gobuild.fetch(progress=False)
    with tempfile.TemporaryDirectory(prefix="workbench-bench-state-") as state:
        provider = LocalProvider(state_dir=Path(state), progress=False)
        for key in chosen:
            spec, target = TOPOLOGIES[key]
            ups, downs = [], []
            for _ in range(args.repeat):
                ready, down = bench_up(provider, key)
                ups.append(ready)
                downs.append(down)
                print(f"{key}: ready {ready:.1f} s, down {down:.1f} s", file=sys.stderr)
            cached = "binary built" if key.startswith("ferretdb") else "jars cached"
            memory = (f"shared_buffers {spec.heap}" if key.startswith("ferretdb") else f"heap {spec.heap}"
                      ) if spec.heap else "-"
            rows.append((f"{key} ready ({cached})", memory, ups, target))
            rows.append((f"{key} down", "SIGTERM", downs, None))

    load = os.getloadavg()[0]
    print(f"\n{os.cpu_count()} CPUs, load average {load:.1f} at the end\n")
    print("| measurement | setting | runs | median s | min s | max s | target s |")
    print("|---|---|---|---|---|---|---|")
    for label, setting, values, target in rows:
        print(f"| {label} | {setting} | {len(values)} | {statistics.median(values):.1f} | "
              f"{min(values):.1f} | {max(values):.1f} | {target or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
