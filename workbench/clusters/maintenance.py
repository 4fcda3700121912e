"""Causing what the server figures observe: `workbench cluster flush|compact NAME [NODE]`.

- Cassandra: `nodetool flush` / `nodetool compact` (every keyspace: a major compaction) on the
  node, through the node's own distribution: a local node's java, jars and JMX port, a Docker
  node's inside its container.
- HBase: Admin.flushRegionServer / majorCompactRegionServer for the RegionServer, by a small
  Java program (tools/HBaseServers.java) on the master's own conf/ and jars, locally (from its
  classes, compiled once into the cache: java_tools.py) or in the master's container (from the
  source file; the cluster's folder is mounted at the same path).

Each is its database's (databases/<name>/cluster_maintenance.py, named by the server's descriptor:
`maintain`); this module checks the request, runs the one a cluster's kind names, and holds what
they share (targets, in_container). No NODE: every Cassandra node, every RegionServer. nodetool
returns once the node has flushed or compacted; HBase's admin calls once the RegionServer has the
request (it queues a compaction).
"""

from __future__ import annotations

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


def tool_argv(node: Node, argv: list) -> list[str]:
    """A tool's command line in a server's container: without the server's JVM flags, which the
    container's JAVA_TOOL_OPTIONS holds (docker_provider.py; every JVM would print "Picked up
    JAVA_TOOL_OPTIONS" into the output read here, and a tool has flags of its own, java_tools.py)."""
    argv = [str(a) for a in argv]
    return ["env", "-u", "JAVA_TOOL_OPTIONS", *argv] if node.jvm_flags else argv


def in_container(provider: Any, cluster: Cluster, node: Node, argv: list[str], what: str) -> str:
    container = provider._running(cluster.name, node.name)  # one line if it is not running
    code, output = container.exec_run(tool_argv(node, argv))
    text = output.decode(errors="replace")
    if code != 0:
        said = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("at ")]
        raise ClusterError(f"{node.name}: {what} failed in its container (exit status {code}): "
                           f"{(said[-1:] or ['(no output)'])[0][:300]}",
                           hint=f"`workbench cluster logs {cluster.name} {node.name}`")
    return text
