"""`workbench cluster ...`: start, inspect, disturb and stop server clusters (local JVMs or Docker
containers), and name existing ones (the external provider).

    workbench cluster up cassandra-3          # preset name (presets/clusters/*.toml) or a path
    workbench cluster status
    workbench cluster kill cassandra-3 node3
    workbench cluster flush cassandra-3 node2         # nodetool flush (HBase: the RegionServer's)
    workbench cluster compact cassandra-3             # nodetool compact on every node
    workbench cluster add-node cassandra-3            # node4 bootstraps into the running ring
    workbench cluster remove-node cassandra-3 node4   # decommissioned, stopped, files removed
    workbench cluster add-node hbase-3                # rs4 reports for duty; the balancer moves regions
    workbench cluster down cassandra-3
    workbench cluster up cassandra-3 --provider docker   # the same preset as containers
    workbench cluster up lab.toml --provider external   # an existing cluster: checked, remembered
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from workbench import interrupts
from workbench.clusters import base, external, presets
from workbench.clusters.base import Cluster
from workbench.config import catalog
from workbench.databases import serving
from workbench.errors import ClusterError

PROVIDERS = ("local", "docker", "external")


def register(subparsers) -> None:
    top = subparsers.add_parser(
        "cluster",
        help="run real Cassandra / HBase servers on this machine (up, status, logs, down, ...)",
        description="Start real Cassandra and HBase servers as local JVMs from pinned jars "
        "(fetched from Maven Central on first use) or as Docker containers (--provider docker), "
        "inspect them, inject faults, stop them.",
    )
    top.add_argument("--state-dir", type=Path, metavar="DIR",
                     help="cluster state root (default: $WORKBENCH_STATE_DIR or "
                     "$XDG_STATE_HOME/workbench)")
    sub = top.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)

    def with_provider(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--provider", choices=PROVIDERS,
                       help="local (JVMs the workbench starts), docker (containers through the engine at "
                       "DOCKER_HOST) or external (an existing cluster named by a cluster file); "
                       "default: whichever knows the cluster, local for `up`")
        return p

    up = with_provider(sub.add_parser("up", help="start a cluster from a preset and wait until it serves "
                                      "(external: check that it answers, and remember it)"))
    up.add_argument("preset", help="preset name (see `cluster presets`) or path to a .toml "
                    "(a cluster file with provider = \"external\" for an existing cluster)")
    up.add_argument("--name", help="cluster name (default: the preset's name)")
    up.add_argument("--nodes", type=int, help="Cassandra: number of nodes")
    up.add_argument("--heap", help="JVM heap per node, e.g. 512M or 1G")
    up.add_argument("--cpus", type=float, metavar="N",
                    help="cap each server process at N cores (0.5: half a core): a cgroup for local "
                    "processes, the CPU quota for containers (the preset's `cpus`)")
    up.add_argument("--first-address", help="Cassandra: address of node 1 (127.0.0.K)")
    up.add_argument("--replication-factor", type=int, help="Cassandra: keyspace replication")
    up.add_argument("--version", dest="release", metavar="V",
                    help='the server release: Cassandra "5.0" (default) or "4.1", HBase "2.6" '
                    '(default) or "2.5" (the preset\'s `version`)')
    up.add_argument("--quiet", action="store_true", help="no download progress bar")
    up.set_defaults(func=cmd_up)

    status = with_provider(sub.add_parser("status", help="show clusters and whether each node runs"))
    status.add_argument("name", nargs="?", help="one cluster (default: all)")
    status.set_defaults(func=cmd_status)

    logs = with_provider(sub.add_parser("logs", help="print the last lines of the nodes' logs"))
    logs.add_argument("name")
    logs.add_argument("node", nargs="?", help="one node (default: all)")
    logs.add_argument("-n", "--lines", type=int, default=40, help="lines per node (default 40)")
    logs.set_defaults(func=cmd_logs)

    down = with_provider(sub.add_parser("down", help="stop every node (SIGTERM, then SIGKILL) and remove "
                                        "data (external: forget the cluster)"))
    down.add_argument("name")
    down.add_argument("--keep-data", action="store_true",
                      help="keep data and logs; the next `up` with this name reuses them")
    down.set_defaults(func=cmd_down)

    for action, text in (("pause", "freeze a node (SIGSTOP; docker: the engine's pause)"),
                         ("resume", "unfreeze it (SIGCONT; docker: unpause)"),
                         ("kill", "crash a node (SIGKILL)"),
                         ("restart", "stop a node if running, start it, wait until it serves")):
        p = with_provider(sub.add_parser(action, help=text))
        p.add_argument("name")
        p.add_argument("node", help="node name, e.g. node2, master, thrift")
        p.set_defaults(func=cmd_fault, action=action)

    for action, text in (
            ("flush", "write memtables/memstores to disk now (Cassandra: nodetool flush; HBase: the "
                      "RegionServer's flush), to watch a flush in a run's server figures"),
            ("compact", "start a major compaction now (Cassandra: nodetool compact; HBase: the "
                        "RegionServer's major compaction), to watch one in a run's server figures")):
        p = with_provider(sub.add_parser(action, help=text, description=text[0].upper() + text[1:] + ". "
                                         "Local and Docker clusters; without NODE on every node that "
                                         "holds data (every Cassandra node, every RegionServer)."))
        p.add_argument("name")
        p.add_argument("node", nargs="?", help="one node, e.g. node2 (HBase: rs2; standalone: master)")
        p.set_defaults(func=cmd_maintenance, action=action)

    grow = with_provider(sub.add_parser(
        "add-node", help="Cassandra, HBase with RegionServers: start one more node in a running "
        "cluster and wait until it has joined",
        description="Start node N+1 of a running local cluster on the next address 127.0.0.K, "
        "rendered as `up` renders the others. Cassandra: with tokens of its own, it bootstraps "
        "(streams its share of the data) and the command returns once every other node sees it "
        "Up/Normal. HBase with RegionServers of their own (hbase-3): RegionServer rsN+1 reports for "
        "duty to the master, whose balancer then moves regions to it; the command returns once it "
        "holds its share (or after three balancer periods). status, down, kill, pause and restart "
        "then know it."))
    grow.add_argument("name")
    grow.add_argument("--cpus", type=float, metavar="N",
                      help="cap the new node at N cores (default: the cluster's cap, if it has one)")
    grow.add_argument("--quiet", action="store_true", help="no progress lines")
    grow.set_defaults(func=cmd_add_node)

    shrink = with_provider(sub.add_parser(
        "remove-node", help="Cassandra, HBase with RegionServers: move a node's data to the others, "
        "then stop it and remove its files",
        description="Cassandra: `nodetool decommission` on the node (it streams its data to the "
        "others and leaves the ring), wait until no other node lists it, then stop its process and "
        "forget it; the last node, the seed (node1) and a node the replication factor still needs "
        "stay. HBase: HBase's RegionMover moves the RegionServer's regions to the others, then it "
        "stops; the last RegionServer stays."))
    shrink.add_argument("name")
    shrink.add_argument("node", help="node name, e.g. node4 (HBase: rs4)")
    shrink.add_argument("--quiet", action="store_true", help="no progress lines")
    shrink.set_defaults(func=cmd_remove_node)

    listing = sub.add_parser("presets", help="list the cluster presets")
    listing.set_defaults(func=cmd_presets)


def _provider(args: argparse.Namespace, progress: bool = True, name: str | None = None):
    """The provider asked for, or the one that knows cluster `name` (local first)."""
    shown = progress and sys.stderr.isatty()
    chosen = getattr(args, "provider", None)
    if chosen is None and name is not None:
        known = base.owner(name, state_dir=args.state_dir, progress=shown)
        if known is not None:
            return known
    return base.get_provider(chosen or "local", state_dir=args.state_dir, progress=shown)


def print_cluster(cluster: Cluster) -> None:
    spec = cluster.spec
    if cluster.provider == "external":
        extra = f", replication {cluster.replication}" if cluster.replication else ""
        version = cluster.server_version or "version not reported"
        print(f"{cluster.name}: external {cluster.kind} {version}, {cluster.nodes_seen} node(s) known "
              f"to its contact points{extra}")
        for node in cluster.nodes:
            print(f"  {node.name:<8} {node.status:<11} {node.address}:{node.port}")
        return
    extra = f", replication {cluster.replication}" if cluster.replication else ""
    kind, version = cluster.kind, cluster.server_version
    if version[:1].isdigit():  # the pinned release: "cassandra 4.1.10"
        kind += f" {version}"
    elif version:  # a server that is not what its protocol is called (FerretDB)
        extra += f", {version}"
    if cluster.provider == "docker":
        print(f"{cluster.name}: {kind}, {len(cluster.nodes)} container(s), "
              f"{spec.docker_network} network{extra}")
    else:
        print(f"{cluster.name}: {kind}, {len(cluster.nodes)} process(es){extra}")
    for node in cluster.nodes:
        which = f"container {node.container[:12]}" if node.container else f"pid {node.pid:<8}"
        capped = f" cpus {node.cpus:g}" if node.cpus else ""
        print(f"  {node.name:<8} {node.status:<8} {node.address}:{node.port:<6} {which}{capped} "
              f"log {node.log}")
    points = " ".join(f"{h}:{p}" for h, p in cluster.contact_points)
    sized = serving(spec.kind)[1]  # what `heap` sizes is its server's (FerretDB: PostgreSQL's buffers)
    memory = f"{sized.heap_label if sized else 'heap'} {spec.heap}" if spec.heap else "no memory setting"
    print(f"  contact points: {points}  ({memory})")


def cmd_up(args: argparse.Namespace) -> int:
    if args.provider == "external" or (args.provider is None and external.is_external_file(args.preset)):
        return _up_external(args)
    spec = presets.load(args.preset, name=args.name, nodes=args.nodes, heap=args.heap, cpus=args.cpus,
                        first_address=args.first_address,
                        replication_factor=args.replication_factor, version=args.release)
    # `kill <workbench pid>` during start-up must clean up exactly like Ctrl-C; either is raised
    # again if a driver's clean-up swallowed it while we waited for a node (interrupts.py).
    interrupts.install()
    signal.signal(signal.SIGTERM, interrupts.on_signal)
    started = time.monotonic()
    print(f"starting {spec.name} ({spec.kind}) ...", file=sys.stderr, flush=True)
    provider = _provider(args, progress=not args.quiet)
    if provider.name == "docker" and not args.quiet:  # image builds and starts, line by line
        provider.progress = lambda event: print(event.message, file=sys.stderr, flush=True)
    try:
        cluster = provider.up(spec)
    except KeyboardInterrupt:
        print("workbench: interrupted: every server started by this command was stopped",
              file=sys.stderr)
        return 130
    print(f"ready in {time.monotonic() - started:.1f} s", file=sys.stderr)
    print_cluster(cluster)
    return 0


def _up_external(args: argparse.Namespace) -> int:
    if args.nodes or args.heap or args.cpus or args.first_address or args.replication_factor:
        raise ClusterError("--nodes, --heap, --cpus, --first-address and --replication-factor are for "
                           "clusters the workbench starts",
                           hint="an external cluster's file says where it is")
    spec = external.load_file(args.preset, name=args.name)
    print(f"checking {spec.name} ({spec.kind}, external) ...", file=sys.stderr, flush=True)
    print_cluster(external.ExternalProvider(state_dir=args.state_dir).up(spec))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    if args.name:
        listed = [(_provider(args, name=args.name), args.name)]
    else:
        providers = ([_provider(args)] if args.provider else
                     base.all_providers(state_dir=args.state_dir, progress=False))
        listed = [(p, name) for p in providers for name in p.clusters()]
    # Docker containers of clusters whose state folder was lost: found by their labels, as
    # `cluster down NAME` finds them
    lost = {} if args.name or args.provider not in (None, "docker") else base.get_provider(
        "docker", state_dir=args.state_dir, progress=False).lost()
    if not listed and not lost:
        print("no clusters")
    for provider, name in listed:
        cluster = provider.status(name)
        print_cluster(cluster)
        print(f"  state: {provider.phase(name)}, files in {cluster.run_dir}")
    for name, nodes in lost.items():
        print(f"{name}: docker, {len(nodes)} container(s) found by their labels; its state file is gone")
        for node, status in nodes:
            print(f"  {node:<8} {status}")
        print(f"  `workbench cluster down {name}` removes its containers, network and volumes")
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    for node, text in _provider(args, name=args.name).logs(args.name, args.node, args.lines).items():
        print(f"==> {args.name} {node} <==")
        print(text)
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    provider = _provider(args, name=args.name)
    if args.provider is None and args.name not in provider.clusters():
        # No state file names it (the state directory was lost): a Docker engine may still
        # hold its labelled containers, which `down` finds by their labels.
        docker = base.get_provider("docker", state_dir=args.state_dir, progress=False)
        if docker.labelled(args.name):
            provider = docker
    result = provider.down(args.name, keep_data=args.keep_data)
    if isinstance(provider, external.ExternalProvider):
        print(f"{args.name}: forgotten (an external cluster: its servers were not touched)")
        return 0
    for node, outcome in result.items():
        print(f"{node}: {outcome}")
    print(f"{args.name}: down" + (" (data kept)" if args.keep_data else ", files removed"))
    return 0


def cmd_fault(args: argparse.Namespace) -> int:
    provider = _provider(args, name=args.name)
    result = getattr(provider, args.action)(args.name, args.node)
    if isinstance(result, Cluster):
        print_cluster(result)
    else:
        print(f"{args.name} {args.node}: {provider.status(args.name).node(args.node).status}")
    return 0


def cmd_maintenance(args: argparse.Namespace) -> int:
    from workbench.clusters import maintenance

    provider = _provider(args, progress=False, name=args.name)
    cluster = provider.status(args.name)
    for line in maintenance.run(provider, cluster, args.action, args.node):
        print(f"{args.name} {line}")
    return 0


def _resizing(args: argparse.Namespace, verb: str):
    """The provider (local or Docker) that knows the cluster, ready to print progress lines; one
    line for an external cluster."""
    provider = _provider(args, progress=False, name=args.name)
    if not hasattr(provider, "add_node"):
        what = {"external": "external clusters (the workbench did not start them)"}.get(
            provider.name, f"{provider.name} clusters")
        raise ClusterError(f"{verb} is not available for {what}",
                           hint="it works for Cassandra and HBase (RegionServers) clusters the workbench "
                                "started, as local processes or in Docker")
    if not args.quiet:
        provider.progress = lambda event: print(event.message, file=sys.stderr, flush=True)
    # Ctrl-C or `kill` during the join stops the node that was started (as for `up`)
    interrupts.install()
    signal.signal(signal.SIGTERM, interrupts.on_signal)
    return provider


def cmd_add_node(args: argparse.Namespace) -> int:
    provider = _resizing(args, "add-node")
    try:
        cluster = provider.add_node(args.name, cpus=args.cpus)
    except KeyboardInterrupt:
        print("workbench: interrupted: the node this command started was stopped and removed",
              file=sys.stderr)
        return 130
    print_cluster(cluster)
    return 0


def cmd_remove_node(args: argparse.Namespace) -> int:
    provider = _resizing(args, "remove-node")
    try:
        cluster = provider.remove_node(args.name, args.node)
    except KeyboardInterrupt:
        print(f"workbench: interrupted: a decommission that began goes on in {args.node}; "
              f"`workbench cluster remove-node {args.name} {args.node}` again stops it once it has left",
              file=sys.stderr)
        return 130
    print_cluster(cluster)
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    for entry in catalog.entries("clusters"):
        where = f"{entry.origin} (over shipped)" if entry.shadows else entry.origin
        print(f"{entry.name:<24} {where:<20} {presets.describe(entry.path)}")
    return 0
