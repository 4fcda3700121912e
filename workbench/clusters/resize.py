"""Adding a node to a running cluster and removing one, the same way for every provider.

What can grow: Cassandra (node N+1 bootstraps its share of the data; a node leaves by `nodetool
decommission`) and HBase with RegionServers of their own (rsN+1 reports for duty and the
balancer moves regions to it; one leaves once HBase's RegionMover has moved its regions away).
The kind modules (databases/cassandra/cluster.py, databases/hbase/cluster.py) say how a node of
theirs joins and leaves; the provider (`Host`: local processes, Docker containers) how one is
started, watched and stopped.

    add_node(provider, "cassandra-3")            # node4, once Up/Normal on every other node
    remove_node(provider, "hbase-3", "rs4")      # its regions moved away, then stopped

Every step is written to the cluster's journal ("+ node4 joining", "node4 normal", what the join
moved, "- node4 leaving", "node4 gone", or "node4 did not join (stopped)"), so a run going on
meanwhile marks it on its timeline. A node that fails to join (it dies, does not join in time,
or Ctrl-C) is stopped and forgotten again: `cluster status` lists what it listed before.
"""

from __future__ import annotations

import ipaddress
import time
from pathlib import Path
from typing import Any, Protocol

from workbench import interrupts
from workbench.clusters import journal
from workbench.clusters import state as store
from workbench.clusters.base import Cluster, Node
from workbench.clusters.launch import NotReady, StartupError, best_log
from workbench.clusters.progress import OnProgress, report
from workbench.databases import resolve, server, servers
from workbench.errors import ClusterError

MAX_NODES = 9  # as a preset's `nodes`


class Host(Protocol):
    """What a provider does for add_node and remove_node."""

    name: str
    progress: OnProgress

    def _loaded(self, name: str) -> tuple[Cluster, str]: ...
    def status(self, name: str) -> Cluster: ...
    def join_plan(self, cluster: Cluster, kind: Any, index: int, others: list[str], client: dict,
                  cpus: float | None) -> Any:
        """Render node `index` and return how to start it; its ports (and its cap) checked."""
    def launch_joining(self, cluster: Cluster, plan: Any, cpus: float | None) -> Node: ...
    def check_alive(self, cluster: Cluster) -> None: ...
    def leave(self, cluster: Cluster, kind: Any, node: Node, others: list[str], deadline: float) -> None:
        """Move the node's data to the others (decommission, RegionMover); it runs on."""
    def forget(self, cluster: Cluster, node: Node | None, phase: str, keep_log: bool) -> str:
        """Stop the node, drop it from the state file, remove its files (keep_log: its logs)."""


def resizable(cluster: Cluster, verb: str):
    """The kind module of a cluster that can grow and shrink (its server's resize step says:
    Cassandra; HBase with RegionServers of their own), else one line."""
    found = server(cluster.kind)
    if found.resize:
        return resolve(found.resize)(cluster, verb)
    able = " and ".join(s.label or s.kind for s in servers() if s.resize)
    name = found.label or cluster.kind
    raise ClusterError(f"{verb} works for {able} clusters here; {name} not yet: "
                       f"{cluster.name!r} is a {name} cluster")


def members(cluster: Cluster, kind) -> list[Node]:
    """The nodes add_node counts and remove_node may take: Cassandra's nodes, HBase's
    RegionServers (not its ZooKeeper, master or gateway)."""
    return [n for n in cluster.nodes if n.name.startswith(kind.NODE_PREFIX)
            and n.name[len(kind.NODE_PREFIX):].isdigit()]


def require_running(cluster: Cluster, phase: str, live: Cluster) -> None:
    """One line unless the cluster started (phase running) and every node runs."""
    if phase != "running":
        raise ClusterError(f"cluster {cluster.name!r} is not running (its state is {phase!r})",
                           hint=f"`workbench cluster up` it first; `workbench cluster status {cluster.name}`")
    idle = [n for n in live.nodes if n.status != "running"]
    if not idle:
        return
    if any(n.status == "no engine" for n in idle):
        raise ClusterError(f"cluster {cluster.name!r} runs in Docker, and no Docker engine answers",
                           hint="start the engine (or set DOCKER_HOST), then `workbench cluster status "
                           f"{cluster.name}`")
    said = ", ".join(f"{n.name} {n.status}" for n in idle)
    if len(idle) == len(live.nodes):
        raise ClusterError(f"cluster {cluster.name!r} is not running ({said})",
                           hint=f"`workbench cluster down {cluster.name}`, then `workbench cluster up` again")
    fix = "resume" if idle[0].status == "paused" else "restart"
    raise ClusterError(f"cluster {cluster.name!r} is not running on every node ({said}): the ring "
                       "changes only with every node up",
                       hint=f"`workbench cluster {fix} {cluster.name} {idle[0].name}` first")


def loopback(address: str) -> bool:
    """The address is still 127.0.0.K (K < 255), as the spec's own check wants."""
    try:
        return ipaddress.IPv4Address(address) < ipaddress.IPv4Address("127.0.0.255")
    except ValueError:
        return False


def add_node(host: Host, name: str, cpus: float | None = None) -> Cluster:
    """Start node N+1 of a running cluster and return once it has joined (Cassandra: Up/Normal on
    every other node; HBase: registered with the master, then given its share of regions by the
    balancer). It is in the state file from its start: status, down, kill, pause and restart
    know it. `cpus`: its cap (default: the cluster's)."""
    cluster, phase = host._loaded(name)
    kind = resizable(cluster, "add-node")
    require_running(cluster, phase, host.status(name))
    spec = cluster.spec
    grown = members(cluster, kind)
    index = max(int(n.name[len(kind.NODE_PREFIX):]) for n in grown) + 1
    if len(grown) >= MAX_NODES or not loopback(kind.node_address(spec, index)):
        raise ClusterError(f"cluster {name!r} cannot grow past {len(grown)} nodes "
                           f"(at most {MAX_NODES}, on addresses below 127.0.0.255)",
                           hint=f"`workbench cluster remove-node {name} NODE` makes room")
    node, address = f"{kind.NODE_PREFIX}{index}", kind.node_address(spec, index)
    client = kind.client_kwargs(spec, cluster.run_dir)
    others = [n.address for n in grown]
    plan = host.join_plan(cluster, kind, index, others, client, cpus)
    report(host.progress, "start", f"{name}: starting {node} on {address} ...")
    started = time.monotonic()
    fresh: Node | None = None
    try:
        fresh = host.launch_joining(cluster, plan, cpus)
        cluster = _with(cluster, (*cluster.nodes, fresh))
        store.save(cluster, phase)
        which = f"container {fresh.container[:12]}" if fresh.container else f"pid {fresh.pid}"
        report(host.progress, "join", f"{name}: {node} started ({which}); {kind.JOINING} ...")
        journal.append(cluster.run_dir, f"+ {node} joining")
        kind.wait_joined(spec, node, address, others, started + spec.start_timeout,
                         lambda: host.check_alive(cluster), cluster.run_dir)
    except BaseException as exc:
        with interrupts.held_off():
            host.forget(cluster, fresh, phase, keep_log=True)
            if fresh is not None:
                journal.append(cluster.run_dir, f"{node} did not join (stopped)")
        if isinstance(exc, NotReady):
            raise StartupError(f"{spec.kind} {node} {exc.what} within {spec.start_timeout:.0f} s "
                               f"(stopped again)", best_log(fresh)) from None
        if isinstance(exc, StartupError) and fresh is not None and exc.log == best_log(fresh):
            raise StartupError(f"{spec.kind} {node} exited while it joined (removed again)",
                               best_log(fresh)) from None
        raise
    journal.append(cluster.run_dir, f"{node} normal")
    report(host.progress, "ready", f"{name}: {node} {kind.JOINED} ({time.monotonic() - started:.1f} s)")
    # what the join moved to it, for the runs' records: after the moment above (a query of a node
    # under load can take seconds; HBase's balancer moves regions on its own period)
    try:
        moved = kind.after_join(spec, node, address, started + spec.start_timeout,
                                lambda: host.check_alive(cluster), client)
    except StartupError:  # it died after it joined: status says so, as for any node
        moved = None
    if moved is not None:
        journal.append(cluster.run_dir, moved)
        report(host.progress, "moved", f"{name}: {moved}")
    return host.status(name)


def remove_node(host: Host, name: str, node: str) -> Cluster:
    """Take a node out of a running cluster: its data moved to the others first (Cassandra:
    `nodetool decommission`; HBase: RegionMover unload), then it is stopped and removed from the
    state file and its files from the disk, once the others no longer list it."""
    cluster, phase = host._loaded(name)
    kind = resizable(cluster, "remove-node")
    target = cluster.node(node)
    spec = cluster.spec
    if len(cluster.nodes) == 1:
        raise ClusterError(f"{node} is the last node of cluster {name!r}: it cannot be removed",
                           hint=f"`workbench cluster down {name}` stops the whole cluster")
    kind.check_removal(spec, members(cluster, kind), target)
    require_running(cluster, phase, host.status(name))
    rest = [n for n in members(cluster, kind) if n.name != node]
    others = [n.address for n in rest]
    client = kind.client_kwargs(spec, cluster.run_dir)
    started = time.monotonic()
    deadline = started + spec.start_timeout
    if kind.still_member(spec, target.address, others, client):
        leaving = kind.LEAVING.format(rest=", ".join(n.name for n in rest))
        report(host.progress, "leave", f"{name}: {node} {leaving} ...")
        journal.append(cluster.run_dir, f"- {node} leaving")
        host.leave(cluster, kind, target, others, deadline)
        if kind.LEFT_BY_ITSELF:  # Cassandra's node leaves the ring; a RegionServer once stopped
            kind.wait_left(spec, target.address, others, deadline, cluster.run_dir)
        report(host.progress, "left", f"{name}: {node} has left ({time.monotonic() - started:.1f} s); "
                                      "stopping it")
    else:  # an earlier remove-node moved its data and was interrupted
        report(host.progress, "left", f"{name}: {node} is not a member any more; stopping it")
    with interrupts.held_off():
        outcome = host.forget(cluster, target, phase, keep_log=False)
    if not kind.LEFT_BY_ITSELF:
        kind.wait_left(spec, target.address, others, deadline, cluster.run_dir)
    journal.append(cluster.run_dir, f"{node} gone")
    report(host.progress, "gone", f"{name}: {node} gone ({outcome}, its files removed)")
    return host.status(name)


def drop(cluster: Cluster, node: Node, phase: str, keep_log: bool) -> None:
    """Forget `node` in the state file and remove its files (keep_log: its conf/ and logs/, which
    say why it did not join)."""
    import shutil

    store.save(_with(cluster, tuple(n for n in cluster.nodes if n.name != node.name)), phase)
    for folder in resolve(server(cluster.kind).local).node_dirs(cluster.spec, cluster.run_dir, node.name):
        folder = Path(folder)
        if not keep_log:
            shutil.rmtree(folder, ignore_errors=True)
            continue
        for child in folder.iterdir() if folder.is_dir() else ():
            if child.name not in ("conf", "logs"):
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)


def _with(cluster: Cluster, nodes: tuple[Node, ...]) -> Cluster:
    import dataclasses

    return dataclasses.replace(cluster, nodes=nodes)
