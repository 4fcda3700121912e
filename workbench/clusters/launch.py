"""Helpers shared by the local server kinds: node plans, templates, probes, start-up errors."""

from __future__ import annotations

import dataclasses
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from workbench.clusters import state as store
from workbench.clusters.base import Cluster, Node
from workbench.clusters.progress import OnProgress, report
from workbench.errors import ClusterError


@dataclass(frozen=True)
class NodePlan:
    """How to start one node: its identity, files, command line and the ports it will bind."""

    name: str
    address: str
    port: int
    dir: Path
    log: Path
    console_log: Path
    argv: tuple[str, ...]
    ports: tuple[tuple[str, int, str], ...]  # (address, port, what) that must be free


class NotReady(Exception):
    """A node did not become ready before the deadline (turned into a StartupError)."""

    def __init__(self, node: str, what: str) -> None:
        super().__init__(f"{node} {what}")
        self.node = node
        self.what = what


class StartupError(ClusterError):
    """A server died or timed out during start-up: names its log and shows the last lines."""

    def __init__(self, message: str, log: Path, hint: str | None = None) -> None:
        super().__init__(f"{message}; see {log}", hint=hint)
        self.log = log
        self.tail = tail(log, 15)

    def __str__(self) -> str:
        text = super().__str__()
        if self.tail:
            text += "\n" + "\n".join("    " + line for line in self.tail.splitlines())
        return text


def best_log(node) -> Path:
    """The log that says why a node stopped: the server's own, if it wrote one; else the console
    log (JVM-level failures, or a container's output)."""
    try:
        if node.log.stat().st_size > 0:
            return node.log
    except OSError:
        pass
    return node.console_log


def template_text(name: str) -> str:
    return resources.files("workbench.clusters").joinpath("templates", name).read_text()


def tcp_open(address: str, port: int, timeout: float = 0.5) -> bool:
    """True if something accepts TCP connections on address:port."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def tail(path: Path, lines: int) -> str:
    """The last `lines` lines of a text file ('' if missing), read from the end."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            data = handle.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])


def start_cluster(cluster: Cluster, prepare: Callable[[], list[list[str]]],
                  start: Callable[[str], Node],
                  wait: Callable[[Cluster, list[str], bool, float], None],
                  abort: Callable[[Cluster, bool], None], reuse: bool, progress: OnProgress) -> Cluster:
    """The start-up every provider shares. prepare() renders configs and checks ports, and
    returns the launch groups (node names started together, in order); each node is started,
    recorded in the state file before anything waits on it (a crash leaves a trail), and each
    group waited for (the last one: every node). Whatever goes wrong, abort(cluster, keep_files)
    stops what was started: a server that died or did not become ready keeps its files for
    inspection; an interruption or a busy port keeps them only if they were kept data."""
    spec = cluster.spec
    try:
        groups = prepare()
        everyone = [name for group in groups for name in group]
        store.save(cluster, "starting")
        deadline = time.monotonic() + spec.start_timeout
        for number, group in enumerate(groups, 1):
            for name in group:
                node = start(name)
                cluster = dataclasses.replace(cluster, nodes=(*cluster.nodes, node))
                store.save(cluster, "starting")
                which = f"container {node.container[:12]}" if node.container else f"pid {node.pid}"
                report(progress, "start", f"{spec.name}: {name} started on {node.address} ({which})")
            final = number == len(groups)
            names = everyone if final else group
            report(progress, "wait", f"{spec.name}: waiting for {', '.join(names)} to serve "
                                     f"(at most {spec.start_timeout:.0f} s)")
            wait(cluster, names, final, deadline)
    except NotReady as exc:
        abort(cluster, True)
        raise StartupError(f"{spec.kind} {exc.node} {exc.what} within {spec.start_timeout:.0f} s",
                           best_log(cluster.node(exc.node)),
                           hint=f"`workbench cluster down {spec.name}` removes its files") from None
    except StartupError:
        abort(cluster, True)
        raise
    except BaseException:
        # Ctrl-C, SIGTERM, a busy port, a bug: no server may outlive this call.
        abort(cluster, reuse)
        raise
    store.save(cluster, "running")
    report(progress, "ready", f"{spec.name}: ready")
    return cluster
