"""`nodetool` against one Cassandra node: a local node's from the jars it runs (over its local
JMX port, one per node address), a Docker node's as the command to run in its container. The
cluster module (a node leaving), cluster_maintenance.py (settle, flush, compact) and the Docker
planner use it."""

from __future__ import annotations

import time

from workbench.clusters import java_tools
from workbench.clusters.base import Node
from workbench.clusters.settle import classpath, java, last_line
from workbench.errors import ClusterError

NODETOOL_CLASS = "org.apache.cassandra.tools.NodeTool"


def jmx_port(address: str) -> int:
    """The local JMX port of the node at 127.0.0.N: one per node, so that nodes share 127.0.0.1."""
    return 7199 + 100 * (int(address.rsplit(".", 1)[1]) - 1)


def nodetool(node: Node, args: list[str], deadline: float) -> str:
    """Run `nodetool ARGS` against a local Cassandra node (its JMX port); its output. One line
    (ClusterError) if it fails."""
    remaining = max(deadline - time.monotonic(), 5.0)
    proc = java(node, [f"-Duser.home={node.dir}",  # nodetool keeps its history under ~/.cassandra
                       f"-Dlogback.configurationFile={node.dir / 'conf' / 'logback.xml'}",
                       f"-Dcassandra.logdir={node.dir / 'logs'}",
                       "-cp", classpath(node), NODETOOL_CLASS,
                       "-h", "127.0.0.1", "-p", str(jmx_port(node.address)), *args], remaining)
    if proc.returncode != 0:
        raise ClusterError(f"{node.name}: nodetool {args[0]} failed: {last_line(proc)}",
                           "is the node up? `workbench cluster status`")
    return proc.stdout


def container_nodetool(node: Node, args: list[str]) -> list[str]:
    """`nodetool ARGS`, to run in a Docker node's container (its JMX port is local to it)."""
    # the image's jvm.options: Java 17's module flags, which nodetool needs as the server does
    return ["java", "@/etc/cassandra/jvm.options", "-Xms64m", "-Xmx256m", *java_tools.FLAGS,
            "-Duser.home=/tmp",
            "-cp", "/opt/cassandra/lib/*", NODETOOL_CLASS,
            "-h", "127.0.0.1", "-p", str(jmx_port(node.address)), *args]
