"""`workbench cluster ...`: start, inspect, disturb and stop local server clusters.

    workbench cluster up cassandra-3          # preset name (presets/clusters/*.toml) or a path
    workbench cluster status
    workbench cluster kill cassandra-3 node3
    workbench cluster down cassandra-3
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from workbench.clusters import presets
from workbench.clusters.base import Cluster
from workbench.clusters.local import LocalProvider


def register(subparsers) -> None:
    top = subparsers.add_parser(
        "cluster",
        help="run real Cassandra / HBase servers on this machine (up, status, logs, down, ...)",
        description="Start real Cassandra and HBase servers as local JVMs from pinned jars "
        "(fetched from Maven Central on first use), inspect them, inject faults, stop them.",
    )
    top.add_argument("--state-dir", type=Path, metavar="DIR",
                     help="cluster state root (default: $WORKBENCH_STATE_DIR or "
                     "$XDG_STATE_HOME/workbench)")
    sub = top.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)

    up = sub.add_parser("up", help="start a cluster from a preset and wait until it serves")
    up.add_argument("preset", help="preset name (see `cluster presets`) or path to a .toml")
    up.add_argument("--name", help="cluster name (default: the preset's name)")
    up.add_argument("--nodes", type=int, help="Cassandra: number of nodes")
    up.add_argument("--heap", help="JVM heap per node, e.g. 512M or 1G")
    up.add_argument("--first-address", help="Cassandra: address of node 1 (127.0.0.K)")
    up.add_argument("--replication-factor", type=int, help="Cassandra: keyspace replication")
    up.add_argument("--quiet", action="store_true", help="no download progress bar")
    up.set_defaults(func=cmd_up)

    status = sub.add_parser("status", help="show clusters and whether each node runs")
    status.add_argument("name", nargs="?", help="one cluster (default: all)")
    status.set_defaults(func=cmd_status)

    logs = sub.add_parser("logs", help="print the last lines of the nodes' logs")
    logs.add_argument("name")
    logs.add_argument("node", nargs="?", help="one node (default: all)")
    logs.add_argument("-n", "--lines", type=int, default=40, help="lines per node (default 40)")
    logs.set_defaults(func=cmd_logs)

    down = sub.add_parser("down", help="stop every node (SIGTERM, then SIGKILL) and remove data")
    down.add_argument("name")
    down.add_argument("--keep-data", action="store_true",
                      help="keep data and logs; the next `up` with this name reuses them")
    down.set_defaults(func=cmd_down)

    for action, text in (("pause", "freeze a node (SIGSTOP)"), ("resume", "unfreeze it (SIGCONT)"),
                         ("kill", "crash a node (SIGKILL)"),
                         ("restart", "stop a node if running, start it, wait until it serves")):
        p = sub.add_parser(action, help=text)
        p.add_argument("name")
        p.add_argument("node", help="node name, e.g. node2, master, thrift")
        p.set_defaults(func=cmd_fault, action=action)

    listing = sub.add_parser("presets", help="list the cluster presets")
    listing.set_defaults(func=cmd_presets)


def _provider(args: argparse.Namespace, progress: bool = True) -> LocalProvider:
    return LocalProvider(state_dir=args.state_dir, progress=progress and sys.stderr.isatty())


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def print_cluster(cluster: Cluster) -> None:
    spec = cluster.spec
    extra = f", replication {cluster.replication}" if cluster.replication else ""
    print(f"{cluster.name}: {cluster.kind}, {len(cluster.nodes)} process(es){extra}")
    for node in cluster.nodes:
        print(f"  {node.name:<8} {node.status:<8} {node.address}:{node.port:<6} pid {node.pid:<8} "
              f"log {node.log}")
    points = " ".join(f"{h}:{p}" for h, p in cluster.contact_points)
    print(f"  contact points: {points}  (heap {spec.heap})")


def cmd_up(args: argparse.Namespace) -> int:
    spec = presets.load(args.preset, name=args.name, nodes=args.nodes, heap=args.heap,
                        first_address=args.first_address,
                        replication_factor=args.replication_factor)
    # `kill <workbench pid>` during start-up must clean up exactly like Ctrl-C.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    started = time.monotonic()
    print(f"starting {spec.name} ({spec.kind}) ...", file=sys.stderr, flush=True)
    try:
        cluster = _provider(args, progress=not args.quiet).up(spec)
    except KeyboardInterrupt:
        print("workbench: interrupted: every server started by this command was stopped",
              file=sys.stderr)
        return 130
    print(f"ready in {time.monotonic() - started:.1f} s", file=sys.stderr)
    print_cluster(cluster)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    provider = _provider(args)
    names = [args.name] if args.name else provider.clusters()
    if not names:
        print("no clusters")
    for name in names:
        print_cluster(provider.status(name))
        print(f"  state: {provider.phase(name)}, files in {provider.status(name).run_dir}")
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    for node, text in _provider(args).logs(args.name, args.node, args.lines).items():
        print(f"==> {args.name} {node} <==")
        print(text)
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    result = _provider(args).down(args.name, keep_data=args.keep_data)
    for node, outcome in result.items():
        print(f"{node}: {outcome}")
    print(f"{args.name}: down" + (" (data kept)" if args.keep_data else ", files removed"))
    return 0


def cmd_fault(args: argparse.Namespace) -> int:
    provider = _provider(args)
    result = getattr(provider, args.action)(args.name, args.node)
    if isinstance(result, Cluster):
        print_cluster(result)
    else:
        print(f"{args.name} {args.node}: {provider.status(args.name).node(args.node).status}")
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    for name, path in presets.available().items():
        print(f"{name:<24} {presets.describe(path)}")
    return 0
