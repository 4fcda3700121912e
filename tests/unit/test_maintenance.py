"""`workbench cluster flush|compact`: which nodes an action runs on, and the one-line refusals
(clusters/maintenance.py); the real flushes and compactions are in
tests/integration/test_server_events.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.clusters import maintenance
from workbench.clusters.base import Cluster, Node
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.databases.hbase import cluster_maintenance as hbase_steps
from workbench.databases.hbase.cluster_spec import HBaseSpec
from workbench.errors import ClusterError


def node(name: str, address: str = "127.0.0.1") -> Node:
    return Node(name, address, 9042, 1, 1, Path("/x/system.log"), Path("/x/console.log"), Path("/x"))


CASSANDRA = Cluster("c3", "cassandra", CassandraSpec(name="c3", nodes=3),
                    (node("node1"), node("node2", "127.0.0.2"), node("node3", "127.0.0.3")), Path("/x"))
STANDALONE = Cluster("h", "hbase", HBaseSpec(name="h"), (node("master"), node("thrift")), Path("/x"))
DISTRIBUTED = Cluster("h3", "hbase", HBaseSpec(name="h3", regionservers=2),
                      (node("zookeeper"), node("master"), node("rs1"), node("rs2", "127.0.0.2"),
                       node("thrift")),
                      Path("/x"))


def names(nodes: list[Node]) -> list[str]:
    return [n.name for n in nodes]


def test_every_node_that_holds_data_or_the_one_named():
    assert names(maintenance.targets(CASSANDRA, None, list(CASSANDRA.nodes))) == ["node1", "node2", "node3"]
    assert names(maintenance.targets(CASSANDRA, "node2", list(CASSANDRA.nodes))) == ["node2"]
    servers = [n for n in DISTRIBUTED.nodes if n.name.startswith("rs")]
    assert names(maintenance.targets(DISTRIBUTED, "rs2", servers)) == ["rs2"]


def test_a_node_that_is_not_there_or_holds_no_data_is_one_line():
    with pytest.raises(ClusterError, match="cluster 'c3' has no node 'node7'") as found:
        maintenance.targets(CASSANDRA, "node7", list(CASSANDRA.nodes))
    assert "node1, node2, node3" in found.value.hint
    with pytest.raises(ClusterError, match="thrift of cluster 'h' holds no data") as found:
        maintenance.targets(STANDALONE, "thrift", [STANDALONE.nodes[0]])
    assert found.value.hint == "name one of master, or none for all"
    with pytest.raises(ClusterError, match="thrift of cluster 'h' holds no data"):
        hbase_steps.maintain_hbase(None, STANDALONE, "thrift", "flush")  # standalone: the master holds it
    with pytest.raises(ClusterError, match="master of cluster 'h3' holds no data"):
        hbase_steps.maintain_hbase(None, DISTRIBUTED, "master", "flush")  # distributed: the RegionServers


def test_clusters_the_workbench_did_not_start_are_refused():
    external = Cluster("lab", "cassandra", CASSANDRA.spec, CASSANDRA.nodes, Path("/x"), provider="external")
    with pytest.raises(ClusterError, match="flush is not available for external clusters"):
        maintenance.run(None, external, "flush")
    ferret = Cluster("f", "ferretdb", None, (node("ferretdb"),), Path("/x"))
    with pytest.raises(ClusterError, match="is ferretdb: flush and compact are for Cassandra and "
                                           "HBase clusters"):
        maintenance.run(None, ferret, "compact")
