"""Causing what the server figures observe: `workbench cluster flush|compact NAME [NODE]`.

- Cassandra: `nodetool flush` / `nodetool compact` (every keyspace: a major compaction) on the
  node, through the node's own distribution: a local node's java, jars and JMX port (settle.py's
  nodetool), a Docker node's inside its container (the planner's nodetool_command).
- HBase: Admin.flushRegionServer / majorCompactRegionServer for the RegionServer, by a small
  Java program run from source (tools/HBaseServers.java) on the master's own conf/ and jars,
  locally or in the master's container (the cluster's folder is mounted at the same path).

No NODE: every Cassandra node, every RegionServer. nodetool returns once the node has flushed
or compacted; HBase's admin calls once the RegionServer has the request (it queues a compaction).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from importlib import resources
from pathlib import Path
from typing import Any

from workbench.clusters.base import Cluster, Node
from workbench.databases import resolve, server, servers
from workbench.errors import ClusterError

ACTIONS = ("flush", "compact")
TIMEOUT_S = 300.0


def targets(cluster: Cluster, node: str | None, holders: list[Node]) -> list[Node]:
    """The nodes the action runs on: `node` (one line naming the cluster's nodes if it has no
    such node, or if it is one that holds no data), or every node that holds data."""
    if node is None:
        return holders
    chosen = cluster.node(node)  # one line if there is no such node
    if chosen not in holders:
        raise ClusterError(f"{node} of cluster {cluster.name!r} holds no data to flush or compact",
                           hint=f"name one of {', '.join(n.name for n in holders)}, or none for all")
    return [chosen]


def run(provider: Any, cluster: Cluster, action: str, node: str | None = None) -> list[str]:
    """Flush or compact `node` of the cluster (every data node when None); one line per node."""
    if action not in ACTIONS:
        raise ValueError(action)
    if cluster.provider not in ("local", "docker"):
        raise ClusterError(f"{action} is not available for {cluster.provider} clusters (the workbench "
                           "did not start them)", hint="use the database's own tools on them")
    step = server(cluster.kind).maintain  # the server's own flush and compact (databases/)
    if not step:
        able = " and ".join(s.label or s.kind for s in servers() if s.maintain)
        raise ClusterError(f"cluster {cluster.name!r} is {cluster.kind}: flush and compact are for "
                           f"{able} clusters")
    return resolve(step)(provider, cluster, node, action)


# The servers' flush and compact, named by their descriptors: (provider, cluster, node or None
# for every node that holds data, action) -> one line per node.
def maintain_cassandra(provider: Any, cluster: Cluster, node: str | None, action: str) -> list[str]:
    return [_cassandra(provider, cluster, n, action) for n in targets(cluster, node, list(cluster.nodes))]


def maintain_hbase(provider: Any, cluster: Cluster, node: str | None, action: str) -> list[str]:
    regionservers = [n for n in cluster.nodes if n.name.startswith("rs")]
    holders = regionservers or [n for n in cluster.nodes if n.name == "master"]  # standalone: its own
    return _hbase(provider, cluster, targets(cluster, node, holders), action, whole=node is None)


def _cassandra(provider: Any, cluster: Cluster, node: Node, action: str) -> str:
    started = time.monotonic()
    if cluster.provider == "docker":
        from workbench.clusters.docker_plans import planner_for

        _in_container(provider, cluster, node, planner_for(cluster.spec).nodetool_command(node, [action]),
                      f"nodetool {action}")
    else:
        from workbench.clusters.settle import nodetool

        nodetool(node, [action], time.monotonic() + TIMEOUT_S)
    done = "flushed" if action == "flush" else "compacted (a major compaction of every table)"
    return f"{node.name}: {done} in {time.monotonic() - started:.1f} s"


def _in_container(provider: Any, cluster: Cluster, node: Node, argv: list[str], what: str) -> str:
    container = provider._running(cluster.name, node.name)  # one line if it is not running
    code, output = container.exec_run([str(a) for a in argv])
    text = output.decode(errors="replace")
    if code != 0:
        said = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("at ")]
        raise ClusterError(f"{node.name}: {what} failed in its container (exit status {code}): "
                           f"{(said[-1:] or ['(no output)'])[0][:300]}",
                           hint=f"`workbench cluster logs {cluster.name} {node.name}`")
    return text


def _hbase(provider: Any, cluster: Cluster, nodes: list[Node], action: str, whole: bool) -> list[str]:
    master = cluster.node("master")
    tool = _tool_copy(master)
    conf = master.dir / "conf"
    where = [] if whole else [f"{n.address}:{cluster.spec.regionserver_port}" for n in nodes]
    argv = [master.argv[0], f"@{conf / 'jvm.options'}", "-Xms64m", "-Xmx256m",
            f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
            f"-Dworkbench.log.file={master.dir / 'logs' / 'admin.log'}",
            f"-Djava.io.tmpdir={master.dir / 'tmp'}",
            "-cp", _classpath(master), str(tool), action, *where]
    started = time.monotonic()
    if cluster.provider == "docker":
        out = _in_container(provider, cluster, master, argv, f"HBase's {action}")
    else:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                                  stdin=subprocess.DEVNULL, cwd=master.dir)
        except subprocess.TimeoutExpired:
            raise ClusterError(f"{cluster.name}: HBase's {action} did not answer within {TIMEOUT_S:.0f} s",
                               hint=f"`workbench cluster status {cluster.name}`") from None
        if proc.returncode != 0:
            lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
            if "jdk.compiler" in proc.stderr:
                raise ClusterError(f"{cluster.name}: HBase's {action} runs a Java source file, and this "
                                   "Java has no compiler",
                                   hint="install a JDK (Debian: openjdk-17-jdk-headless)")
            raise ClusterError(f"{cluster.name}: HBase's {action} failed: {(lines[-1:] or ['?'])[0][:300]}",
                               hint=f"see {master.dir / 'logs' / 'admin.log'}")
        out = proc.stdout
    servers = [ln.split(" ", 1)[1] for ln in out.splitlines() if ln.startswith(f"{action} ")]
    verb = "flushed" if action == "flush" else "major compaction requested"
    return [f"RegionServer {s}: {verb} ({time.monotonic() - started:.1f} s)" for s in servers]


def _tool_copy(master: Node) -> Path:
    """tools/HBaseServers.java copied under the master's folder, which its container also sees."""
    target = master.dir / "tmp" / "HBaseServers.java"
    target.parent.mkdir(parents=True, exist_ok=True)
    tool = resources.files("workbench.databases.hbase").joinpath("tools", "HBaseServers.java")
    with resources.as_file(tool) as src:
        shutil.copyfile(src, target)
    return target


def _classpath(node: Node) -> str:
    argv = list(node.argv)
    try:
        return argv[argv.index("-cp") + 1]
    except (ValueError, IndexError):
        raise ClusterError(f"{node.name}: its command line has no class path to run tools with",
                           hint="restart the cluster with this version of the workbench") from None
