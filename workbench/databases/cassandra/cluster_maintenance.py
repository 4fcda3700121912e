"""Cassandra's steps on a cluster the workbench started: `nodetool` from the node's own jars
(its local JMX port), the settle step between an experiment's runs (clusters/settle.py: flush the
table on every node, then wait until no compaction is pending or active) and `cluster
flush|compact` (clusters/maintenance.py: on a local node, or inside a Docker node's container)."""

from __future__ import annotations

import re
import time
from typing import Any

from workbench.clusters.base import Cluster, Node
from workbench.clusters.maintenance import TIMEOUT_S, in_container, targets
from workbench.databases.cassandra.cluster import node_dirs
from workbench.databases.cassandra.cluster_nodetool import container_nodetool, nodetool
from workbench.errors import ClusterError

POLL_S = 0.5
_PENDING = re.compile(r"^pending tasks\s*:?\s*(\d+)", re.MULTILINE)


def keyspace_of(properties: dict[str, str]) -> str:
    """The keyspace the runs' properties name (cassandra.keyspace, YCSB's ycsb by default)."""
    return properties.get("cassandra.keyspace", "").strip() or "ycsb"


def settle_cassandra(cluster: Cluster, properties: dict[str, str], table: str, timeout: float) -> str:
    keyspace = keyspace_of(properties)
    _settle_cassandra(cluster, keyspace, table, time.monotonic() + timeout)
    return f"{keyspace}.{table} flushed, no compaction running"


def compact_cassandra(cluster: Cluster, properties: dict[str, str], table: str, timeout: float) -> str:
    """The table flushed and compacted on every node (`nodetool compact KEYSPACE TABLE`: a major
    compaction, which returns once it is done; it does not flush first), no compaction left
    running, and each node's SSTables of it counted from its data directory once the compaction's
    transaction log is gone (the replaced files are deleted then)."""
    deadline, keyspace = time.monotonic() + timeout, keyspace_of(properties)
    for node in cluster.nodes:
        nodetool(node, ["flush", keyspace, table], deadline)
        nodetool(node, ["compact", keyspace, table], deadline)
    _wait_compactions(cluster, deadline)
    counts = [f"{_sstables(cluster, n, keyspace, table, deadline)} on {n.name}" for n in cluster.nodes]
    return f"{keyspace}.{table} flushed and compacted, SSTables: {', '.join(counts)}"


def _sstables(cluster: Cluster, node: Node, keyspace: str, table: str, deadline: float) -> int:
    data = node_dirs(cluster.spec, cluster.run_dir, node.name)[1] / "data"
    folders = list((data / keyspace).glob(f"{table}-*"))
    while any(any(folder.glob("*_txn_*.log")) for folder in folders) and time.monotonic() < deadline:
        time.sleep(POLL_S / 5)
    return sum(len(list(folder.glob("*-Data.db"))) for folder in folders)


def compactions_busy(compactionstats: str) -> bool:
    """Whether `nodetool compactionstats` output shows pending or running compactions."""
    match = _PENDING.search(compactionstats)
    pending = int(match.group(1)) if match else 0
    return pending > 0 or "Active compaction remaining time" in compactionstats


def _settle_cassandra(cluster: Cluster, keyspace: str, table: str, deadline: float) -> None:
    for node in cluster.nodes:
        nodetool(node, ["flush", keyspace, table], deadline)
    _wait_compactions(cluster, deadline)


def _wait_compactions(cluster: Cluster, deadline: float) -> None:
    waiting = list(cluster.nodes)
    while waiting:
        waiting = [n for n in waiting if compactions_busy(nodetool(n, ["compactionstats"], deadline))]
        if waiting and time.monotonic() > deadline:
            raise ClusterError(f"compactions still running on {', '.join(n.name for n in waiting)} "
                               "when the settle step's time was up",
                               "give the nodes more heap or the experiment fewer records")
        if waiting:
            time.sleep(POLL_S)


def maintain_cassandra(provider: Any, cluster: Cluster, node: str | None, action: str) -> list[str]:
    return [_cassandra(provider, cluster, n, action) for n in targets(cluster, node, list(cluster.nodes))]


def _cassandra(provider: Any, cluster: Cluster, node: Node, action: str) -> str:
    started = time.monotonic()
    if cluster.provider == "docker":
        in_container(provider, cluster, node, container_nodetool(node, [action]), f"nodetool {action}")
    else:
        nodetool(node, [action], time.monotonic() + TIMEOUT_S)
    done = "flushed" if action == "flush" else "compacted (a major compaction of every table)"
    return f"{node.name}: {done} in {time.monotonic() - started:.1f} s"
