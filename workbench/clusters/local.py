"""The local provider: real Cassandra and HBase servers as JVM processes on this machine, and
FerretDB (a MongoDB-protocol server) with its PostgreSQL as native processes.

    provider = LocalProvider()                 # state under $WORKBENCH_STATE_DIR, jars in cache
    cluster = provider.up(presets.load("cassandra-3"))
    cluster.contact_points                     # [("127.0.0.1", 9042), ("127.0.0.2", 9042), ...]
    provider.kill(cluster.name, "node3"); provider.restart(cluster.name, "node3")
    provider.add_node(cluster.name)            # Cassandra: node4 bootstraps into the running ring
    provider.remove_node(cluster.name, "node4")  # nodetool decommission, then stopped and removed
    provider.down(cluster.name)                # SIGTERM, SIGKILL after a timeout, files removed

`up` fetches the jars if needed, picks a JDK, checks every port, renders configs, starts the nodes
(each in its own session) and returns only when the cluster serves. If it fails or is
interrupted (Ctrl-C, SIGTERM), every JVM it started is stopped before the exception propagates.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import time
from pathlib import Path

from workbench import interrupts
from workbench.clusters import (
    cgroups,
    distributions,
    java,
    journal,
    paths,
    ports,
    resize,
)
from workbench.clusters import processes as procs
from workbench.clusters import state as store
from workbench.clusters.base import Cluster, Node
from workbench.clusters.launch import NodePlan, NotReady, StartupError, best_log, start_cluster, tail
from workbench.clusters.progress import OnProgress, report
from workbench.clusters.specs import ClusterSpec, data_home
from workbench.databases import resolve, server
from workbench.errors import ClusterError


def _kind(kind: str):
    """The kind module that renders, starts and watches a server of this kind (its descriptor's
    `local`): databases/cassandra/cluster.py, databases/hbase/cluster.py, ..."""
    return resolve(server(kind).local)


def _needs_java(kind: str) -> bool:
    return server(kind).needs_java


def _stop_signal(kind: str, node: str) -> signal.Signals:
    return getattr(_kind(kind), "STOP_SIGNALS", {}).get(node, signal.SIGTERM)


def server_version(spec: ClusterSpec) -> str:
    """What the servers are: the pinned release ("5.0.9", "4.1.10"), or a name and version
    (FerretDB)."""
    describe = getattr(_kind(spec.kind), "describe", None)
    return describe(spec) if describe else ""


class LocalProvider:
    """Starts, inspects, disturbs and stops local server clusters; see the module docstring."""

    name = "local"

    def __init__(self, state_dir: Path | None = None, cache_dir: Path | None = None,
                 progress: OnProgress = True, stop_timeout: float = 30.0) -> None:
        self.root = Path(state_dir) if state_dir else paths.state_dir()
        self.cache = Path(cache_dir) if cache_dir else paths.cache_dir()
        self.progress = progress
        self.stop_timeout = stop_timeout

    # -- lifecycle -------------------------------------------------------------------------
    def up(self, spec: ClusterSpec) -> Cluster:
        """Start the cluster `spec` describes and return once it serves clients."""
        run_dir = store.cluster_dir(self.root, spec.name)
        reuse = self._clear_previous(spec, run_dir)
        kind = _kind(spec.kind)
        jdk = java.choose() if _needs_java(spec.kind) else None
        flags = java.server_flags() if jdk is not None else ()  # a bad value: refused before any start
        if hasattr(kind, "fetch"):  # a native server built or fetched its own way
            lib = kind.fetch(self.cache, self.progress)
        else:
            lib = distributions.fetch(spec.kind, self.cache, progress=self.progress,
                                      version=spec.version)
        cluster = Cluster(spec.name, spec.kind, spec, (), run_dir, self.name,
                          clients=server(spec.kind).client_nodes, server_version=server_version(spec))
        plans: dict[str, NodePlan] = {}
        cpus = getattr(spec, "cpus", 0.0)
        cgroups.require(cpus)  # caps asked for where they cannot be set: one line, nothing started

        def prepare() -> list[list[str]]:
            plans.update((p.name, p) for p in kind.plans(spec, run_dir, lib, jdk.java if jdk else None))
            for plan in plans.values():
                for address, port, what in plan.ports:
                    ports.require_free(address, port, what)
            return kind.launch_groups(spec, run_dir)

        def wait(current: Cluster, names: list[str], final: bool, deadline: float) -> None:
            kind.wait_ready(spec, names, final, deadline, lambda: _check_alive(current), run_dir)

        start_cluster(cluster, prepare, lambda name: self._launch(plans[name], jdk, spec.name, cpus, flags),
                      wait, lambda current, keep: self._abort(current, keep_files=keep), reuse, self.progress)
        return self.status(spec.name)

    def _clear_previous(self, spec: ClusterSpec, run_dir: Path) -> bool:
        """Refuse if the cluster runs; reuse data kept by `down --keep-data`, else wipe it."""
        previous = store.load(run_dir)
        if previous is None:
            _remove_files(spec, run_dir)
            return False
        old, phase = previous
        running = [n.name for n in old.nodes if procs.is_ours(n.pid, n.start_time)]
        if running:
            raise ClusterError(f"cluster {spec.name!r} is already running ({', '.join(running)})",
                               hint=f"`workbench cluster down {spec.name}` first")
        # (a kept cluster that grew or shrank since its `up` is not what the spec starts)
        started = [name for group in _kind(spec.kind).launch_groups(spec, run_dir) for name in group]
        if phase == "kept" and old.kind == spec.kind and old.spec == spec and \
                sorted(n.name for n in old.nodes) == sorted(started):
            return True
        _remove_files(old.spec, run_dir)
        _remove_files(spec, run_dir)
        return False

    def _launch(self, plan: NodePlan, jdk: java.Jdk | None, cluster: str = "", cpus: float = 0.0,
                flags: tuple[str, ...] = ()) -> Node:
        """Start one node; a JVM's with `flags` (java.server_flags) added to its command line."""
        env = {k: v for k, v in os.environ.items() if k not in ("CLASSPATH", "JAVA_TOOL_OPTIONS")}
        if jdk is not None:
            env["JAVA_HOME"] = str(jdk.home)
        child = procs.launch(list(java.with_flags(plan.argv, flags)), plan.dir, plan.console_log, env)
        started = procs.start_time(child.pid) or 0
        if cpus > 0:  # its own share of the cores, from its first instructions on
            try:
                cgroups.cap(child.pid, cpus, cgroups.group_name(self.root, cluster, plan.name))
            except OSError as exc:
                procs.send(child.pid, started, signal.SIGKILL)
                raise ClusterError(f"cannot cap {plan.name} at {cpus:g} cores: {exc.strerror or exc}",
                                   hint="leave cpus out, or run as root on a machine with cgroups") from None
        return Node(plan.name, plan.address, plan.port, child.pid, started, plan.log,
                    plan.console_log, plan.dir, plan.argv, cpus=cpus, jvm_flags=flags)

    def _uncap(self, cluster: str, nodes) -> None:
        """Remove the cpu groups of stopped nodes that had a cap."""
        for node in nodes:
            if node.cpus > 0:
                cgroups.release(cgroups.group_name(self.root, cluster, node.name))

    def _abort(self, cluster: Cluster, keep_files: bool) -> None:
        with interrupts.held_off():  # a second Ctrl-C must not leave JVMs behind
            self._stop_nodes(cluster.nodes, 10.0, cluster.kind)
            self._uncap(cluster.name, cluster.nodes)
        if keep_files:
            store.save(cluster, "failed")
        else:
            _remove_files(cluster.spec, cluster.run_dir)

    def _stop_nodes(self, nodes: tuple[Node, ...], timeout: float, kind: str) -> dict[str, str]:
        # SIGTERM everyone first so the nodes shut down in parallel, then wait and escalate; what
        # the others need to shut down (HBase's own ZooKeeper) after them.
        last = getattr(_kind(kind), "STOP_LAST", ())
        if any(n.name in last for n in nodes) and any(n.name not in last for n in nodes):
            first = self._stop_nodes(tuple(n for n in nodes if n.name not in last), timeout, kind)
            return {**first, **self._stop_nodes(tuple(n for n in nodes if n.name in last), timeout, kind)}
        alive = {n.name for n in nodes if procs.is_ours(n.pid, n.start_time)}
        for node in nodes:
            procs.send(node.pid, node.start_time, signal.SIGCONT)
            procs.send(node.pid, node.start_time, _stop_signal(kind, node.name))
        result = {n.name: procs.stop(n.pid, n.start_time, timeout, _stop_signal(kind, n.name)) for n in nodes}
        # A node that exited on our SIGTERM while we waited for another one was stopped too.
        return {k: "stopped" if v == "not running" and k in alive else v for k, v in result.items()}

    def down(self, name: str, keep_data: bool = False) -> dict[str, str]:
        """Stop every node (SIGTERM, SIGKILL after stop_timeout); remove files unless keep_data.
        Returns node -> 'stopped' | 'killed' | 'not running'."""
        cluster = self._load(name)
        result = self._stop_nodes(cluster.nodes, self.stop_timeout, cluster.kind)
        self._uncap(name, cluster.nodes)
        if keep_data:
            store.save(cluster, "kept")
        else:
            _remove_files(cluster.spec, cluster.run_dir)
        return result

    # -- inspection ------------------------------------------------------------------------
    def clusters(self) -> list[str]:
        return store.names(self.root)

    def status(self, name: str) -> Cluster:
        """The cluster with each node's live status: running, paused or down."""
        cluster = self._load(name)
        nodes = tuple(dataclasses.replace(n, status=_node_status(n)) for n in cluster.nodes)
        return dataclasses.replace(cluster, nodes=nodes, server_version=server_version(cluster.spec))

    def phase(self, name: str) -> str:
        """What the state file says: starting, running, failed or kept."""
        return self._loaded(name)[1]

    def logs(self, name: str, node: str | None = None, lines: int = 50) -> dict[str, str]:
        """Node name -> the last `lines` lines of its log."""
        cluster = self._load(name)
        chosen = [cluster.node(node)] if node else list(cluster.nodes)
        return {n.name: tail(best_log(n), lines) for n in chosen}

    # -- fault injection -------------------------------------------------------------------
    def pause(self, name: str, node: str) -> None:
        """Freeze a node (SIGSTOP): it keeps its sockets but answers nothing."""
        target = self._signal(name, node, signal.SIGSTOP)
        _wait_state(target, stopped=True)
        journal.fault(self._load(name).run_dir, node, "pause")

    def resume(self, name: str, node: str) -> None:
        target = self._signal(name, node, signal.SIGCONT)
        _wait_state(target, stopped=False)
        journal.fault(self._load(name).run_dir, node, "resume")

    def kill(self, name: str, node: str) -> None:
        """Crash a node (SIGKILL), as a power failure would."""
        target = self._signal(name, node, signal.SIGKILL)
        journal.fault(self._load(name).run_dir, node, "kill")
        procs.wait_gone(target.pid, target.start_time, 10.0)

    def restart(self, name: str, node: str) -> Cluster:
        """Stop the node if it runs, start it again with the same command, wait until ready."""
        cluster, phase = self._loaded(name)
        old = cluster.node(node)
        journal.fault(cluster.run_dir, node, "restarting")
        procs.stop(old.pid, old.start_time, self.stop_timeout, _stop_signal(cluster.kind, node))
        jdk = java.choose() if _needs_java(cluster.kind) else None
        plan = NodePlan(old.name, old.address, old.port, old.dir, old.log, old.console_log,
                        old.argv, ())
        before = getattr(_kind(cluster.kind), "before_restart", None)
        if before is not None:
            before(old)
        fresh = self._launch(plan, jdk, name, old.cpus, old.jvm_flags)  # its cap again, in the same group
        cluster = dataclasses.replace(
            cluster, nodes=tuple(fresh if n.name == node else n for n in cluster.nodes))
        store.save(cluster, phase)
        deadline = time.monotonic() + cluster.spec.start_timeout
        try:
            _kind(cluster.kind).wait_ready(cluster.spec, [node], False, deadline,
                                           lambda: _check_alive(cluster), cluster.run_dir)
        except NotReady as exc:
            raise StartupError(f"{cluster.kind} {node} {exc.what} after restart",
                               best_log(fresh)) from None
        journal.fault(cluster.run_dir, node, "restart")
        return self.status(name)

    # -- growing and shrinking (Cassandra nodes, HBase RegionServers): resize.py -------------------
    def add_node(self, name: str, cpus: float | None = None) -> Cluster:
        """Start node N+1 of a running cluster and return once it has joined (resize.add_node).
        If it fails to join (or on Ctrl-C) it is stopped and forgotten again."""
        return resize.add_node(self, name, cpus)

    def remove_node(self, name: str, node: str) -> Cluster:
        """Move a node's data to the others, then stop it and forget it (resize.remove_node)."""
        return resize.remove_node(self, name, node)

    def join_plan(self, cluster: Cluster, kind, index: int, others: list[str], client: dict,
                  cpus: float | None) -> NodePlan:
        spec = cluster.spec
        cgroups.require(spec.cpus if cpus is None else cpus)
        for host, port, what in kind.node_ports(kind.node_address(spec, index), spec):
            ports.require_free(host, port, what)
        jdk = java.choose()
        lib = distributions.fetch(spec.kind, self.cache, progress=False, version=spec.version)
        for folder in kind.node_dirs(spec, cluster.run_dir, f"{kind.NODE_PREFIX}{index}"):
            shutil.rmtree(folder, ignore_errors=True)  # left by an earlier attempt
        return kind.join_plan(spec, index, cluster.run_dir, lib, jdk.java, others, client)

    def launch_joining(self, cluster: Cluster, plan: NodePlan, cpus: float | None) -> Node:
        # the cluster's JVM flags, as its other nodes were started (not this command's environment)
        return self._launch(plan, java.choose(), cluster.name, cluster.spec.cpus if cpus is None else cpus,
                            cluster.jvm_flags)

    def check_alive(self, cluster: Cluster) -> None:
        _check_alive(cluster)

    def leave(self, cluster: Cluster, kind, node: Node, others: list[str], deadline: float) -> None:
        """The database's own move of the node's data (its cluster module's leave), run here."""
        kind.leave(cluster.spec, node, deadline,
                   lambda said: report(self.progress, "leave", f"{cluster.name}: {node.name}: {said}"))

    def forget(self, cluster: Cluster, node: Node | None, phase: str, keep_log: bool) -> str:
        """Stop `node`, drop it from the cluster's state and remove its files (keep_log: its
        conf/ and logs/, which say why it did not join)."""
        if node is None:
            return "not started"
        outcome = procs.stop(node.pid, node.start_time, self.stop_timeout)
        self._uncap(cluster.name, [node])
        resize.drop(cluster, node, phase, keep_log)
        return outcome

    def _signal(self, name: str, node: str, sig: signal.Signals) -> Node:
        target = self._load(name).node(node)
        if not procs.send(target.pid, target.start_time, sig):
            raise ClusterError(f"node {node} of cluster {name!r} is not running",
                               hint=f"`workbench cluster restart {name} {node}` starts it")
        return target

    def _loaded(self, name: str) -> tuple[Cluster, str]:
        found = store.load(store.cluster_dir(self.root, name))
        if found is None:
            known = ", ".join(self.clusters()) or "none"
            raise ClusterError(f"no cluster named {name!r} under {self.root}",
                               hint=f"known clusters: {known}")
        return found

    def _load(self, name: str) -> Cluster:
        return self._loaded(name)[0]


def _remove_files(spec: ClusterSpec, run_dir: Path) -> None:
    """The cluster's directory and, when its data lives elsewhere (data_dir), its data folder."""
    shutil.rmtree(run_dir, ignore_errors=True)
    data = data_home(spec, run_dir)
    if data != run_dir:
        shutil.rmtree(data, ignore_errors=True)


def _wait_state(node: Node, stopped: bool, timeout: float = 10.0) -> None:
    # A signal reaches a many-threaded JVM asynchronously: return once it has taken effect.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and procs.is_ours(node.pid, node.start_time):
        if (procs.state(node.pid) == "T") == stopped:
            return
        time.sleep(0.02)


def _node_status(node: Node) -> str:
    if not procs.is_ours(node.pid, node.start_time):
        return "down"
    return "paused" if procs.state(node.pid) == "T" else "running"


def _check_alive(cluster: Cluster) -> None:
    interrupts.check()  # a Ctrl-C that a driver's clean-up swallowed while we waited
    for node in cluster.nodes:
        if not procs.is_ours(node.pid, node.start_time):
            try:
                _, status = os.waitpid(node.pid, os.WNOHANG)
                code = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                code = None
            how = f" (exit status {code})" if code is not None else ""
            raise StartupError(f"{cluster.kind} {node.name} exited during start-up{how}",
                               best_log(node),
                               hint=f"`workbench cluster down {cluster.name}` removes its files")
