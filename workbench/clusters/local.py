"""The local provider: real Cassandra and HBase servers as JVM processes on this machine, and
FerretDB (a MongoDB-protocol server) with its PostgreSQL as native processes.

    provider = LocalProvider()                 # state under $WORKBENCH_STATE_DIR, jars in cache
    cluster = provider.up(presets.load("cassandra-3"))
    cluster.contact_points                     # [("127.0.0.1", 9042), ("127.0.0.2", 9042), ...]
    provider.kill(cluster.name, "node3"); provider.restart(cluster.name, "node3")
    provider.down(cluster.name)                # SIGTERM, SIGKILL after a timeout, files removed

`up` fetches the jars if needed, picks a JDK, checks every port, renders configs, starts the nodes
(each in its own session) and returns only when the cluster serves. If it fails or is
interrupted (Ctrl-C, SIGTERM), every JVM it started is stopped before the exception propagates.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from workbench import interrupts
from workbench.clusters import cassandra_local, distributions, ferretdb_local, hbase_local, java, paths, ports
from workbench.clusters import processes as procs
from workbench.clusters import state as store
from workbench.clusters.base import Cluster, Node
from workbench.clusters.launch import NodePlan, NotReady, StartupError, best_log, start_cluster, tail
from workbench.clusters.progress import OnProgress
from workbench.clusters.specs import ClusterSpec, data_home
from workbench.errors import ClusterError

KINDS = {"cassandra": cassandra_local, "hbase": hbase_local, "ferretdb": ferretdb_local}
# The node that serves clients, where a kind has nodes that do not (HBase's master, PostgreSQL).
CLIENTS = {"hbase": ("thrift",), "ferretdb": ("ferretdb",)}


def _needs_java(kind: str) -> bool:
    return getattr(KINDS[kind], "NEEDS_JAVA", True)


def _stop_signal(kind: str, node: str) -> signal.Signals:
    return getattr(KINDS[kind], "STOP_SIGNALS", {}).get(node, signal.SIGTERM)


def server_version(spec: ClusterSpec) -> str:
    """What the servers are: the pinned release ("5.0.9", "4.1.10"), or a name and version
    (FerretDB)."""
    describe = getattr(KINDS[spec.kind], "describe", None)
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
        kind = KINDS[spec.kind]
        jdk = java.choose() if _needs_java(spec.kind) else None
        if hasattr(kind, "fetch"):  # a native server built or fetched its own way
            lib = kind.fetch(self.cache, self.progress)
        else:
            lib = distributions.fetch(spec.kind, self.cache, progress=self.progress,
                                      version=spec.version)
        cluster = Cluster(spec.name, spec.kind, spec, (), run_dir, self.name,
                          clients=CLIENTS.get(spec.kind, ()), server_version=server_version(spec))
        plans: dict[str, NodePlan] = {}

        def prepare() -> list[list[str]]:
            plans.update((p.name, p) for p in kind.plans(spec, run_dir, lib, jdk.java if jdk else None))
            for plan in plans.values():
                for address, port, what in plan.ports:
                    ports.require_free(address, port, what)
            return kind.launch_groups(spec, run_dir)

        def wait(current: Cluster, names: list[str], final: bool, deadline: float) -> None:
            kind.wait_ready(spec, names, final, deadline, lambda: _check_alive(current), run_dir)

        start_cluster(cluster, prepare, lambda name: self._launch(plans[name], jdk), wait,
                      lambda current, keep: self._abort(current, keep_files=keep), reuse, self.progress)
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
        if phase == "kept" and old.kind == spec.kind and old.spec == spec:
            return True
        _remove_files(old.spec, run_dir)
        _remove_files(spec, run_dir)
        return False

    def _launch(self, plan: NodePlan, jdk: java.Jdk | None) -> Node:
        env = {k: v for k, v in os.environ.items() if k not in ("CLASSPATH", "JAVA_TOOL_OPTIONS")}
        if jdk is not None:
            env["JAVA_HOME"] = str(jdk.home)
        child = procs.launch(list(plan.argv), plan.dir, plan.console_log, env)
        started = procs.start_time(child.pid) or 0
        return Node(plan.name, plan.address, plan.port, child.pid, started, plan.log,
                    plan.console_log, plan.dir, plan.argv)

    def _abort(self, cluster: Cluster, keep_files: bool) -> None:
        with _uninterruptible():  # a second Ctrl-C must not leave JVMs behind
            self._stop_nodes(cluster.nodes, 10.0, cluster.kind)
        if keep_files:
            store.save(cluster, "failed")
        else:
            _remove_files(cluster.spec, cluster.run_dir)

    def _stop_nodes(self, nodes: tuple[Node, ...], timeout: float, kind: str) -> dict[str, str]:
        # SIGTERM everyone first so the nodes shut down in parallel, then wait and escalate.
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

    def resume(self, name: str, node: str) -> None:
        target = self._signal(name, node, signal.SIGCONT)
        _wait_state(target, stopped=False)

    def kill(self, name: str, node: str) -> None:
        """Crash a node (SIGKILL), as a power failure would."""
        target = self._signal(name, node, signal.SIGKILL)
        procs.wait_gone(target.pid, target.start_time, 10.0)

    def restart(self, name: str, node: str) -> Cluster:
        """Stop the node if it runs, start it again with the same command, wait until ready."""
        cluster, phase = self._loaded(name)
        old = cluster.node(node)
        procs.stop(old.pid, old.start_time, self.stop_timeout, _stop_signal(cluster.kind, node))
        jdk = java.choose() if _needs_java(cluster.kind) else None
        plan = NodePlan(old.name, old.address, old.port, old.dir, old.log, old.console_log,
                        old.argv, ())
        before = getattr(KINDS[cluster.kind], "before_restart", None)
        if before is not None:
            before(old)
        fresh = self._launch(plan, jdk)
        cluster = dataclasses.replace(
            cluster, nodes=tuple(fresh if n.name == node else n for n in cluster.nodes))
        store.save(cluster, phase)
        deadline = time.monotonic() + cluster.spec.start_timeout
        try:
            KINDS[cluster.kind].wait_ready(cluster.spec, [node], False, deadline,
                                           lambda: _check_alive(cluster), cluster.run_dir)
        except NotReady as exc:
            raise StartupError(f"{cluster.kind} {node} {exc.what} after restart",
                               best_log(fresh)) from None
        return self.status(name)

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


@contextlib.contextmanager
def _uninterruptible() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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
