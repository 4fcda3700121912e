"""What the native CQL client knows of the cluster, read from a node's system tables: the
nodes of the contact point's datacenter with their tokens, the keyspace's replication factor
there, and the token map made of them (each token's owner and replicas). The DataStax drivers
keep the same in their metadata (cassandra/metadata.py's TokenMap and replication strategies);
the session (session.py) queries the tables, this module reads the rows, and the routing
(routing.py) reads the token map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

try:
    from cassandra.cmurmur3 import murmur3
except ImportError:  # cassandra-driver built without its C extensions
    from cassandra.murmur3 import murmur3

__all__ = ["NO_TOKENS", "TokenMap", "Topology", "murmur3", "replica_sets", "replication_factor", "topology"]

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Topology:
    """The nodes one node lists: the partitioner, its datacenter, and each node of that
    datacenter (address, native port) with its tokens, the listing node first."""

    partitioner: str
    datacenter: str | None
    nodes: dict[tuple[str, int], list]

    @property
    def routed(self) -> bool:
        """Whether keys are routed by token: a Murmur3 ring (every Cassandra default) of more
        than one node; with any other partitioner, or one node, requests go round robin."""
        return (self.partitioner.endswith("Murmur3Partitioner") and len(self.nodes) > 1
                and any(self.nodes.values()))


def topology(local: Sequence[Row], peers: Sequence[Row], here: tuple[str, int],
             default_port: int) -> Topology:
    """The rows of system.local and of system.peers_v2 (or system.peers) as a Topology: peers
    of another datacenter are left out (no request goes there, as with the Java driver's
    DC-aware policy that YCSB uses); a peer's address is its native address, else its RPC
    address, else the peer's own (when the others are the wildcard)."""
    partitioner = local[0].get("partitioner") or "" if local else ""
    datacenter = local[0].get("data_center") if local else None
    nodes: dict[tuple[str, int], list] = {here: list(local[0].get("tokens") or []) if local else []}
    for peer in peers:
        if datacenter is not None and peer.get("data_center") not in (None, datacenter):
            continue
        address = peer.get("native_address") or peer.get("rpc_address") or peer.get("peer")
        if address in (None, "0.0.0.0", "::"):
            address = peer.get("peer")
        if address is None:
            continue
        port = peer.get("native_port") or default_port
        nodes.setdefault((address, port), list(peer.get("tokens") or []))
    return Topology(partitioner, datacenter, nodes)


def replication_factor(rows: Sequence[Row], datacenter: str | None) -> int:
    """How many replicas the keyspace (its row of system_schema.keyspaces) keeps in this
    datacenter: SimpleStrategy's replication_factor, or NetworkTopologyStrategy's count for the
    datacenter; 1 when it cannot tell (no row: the keyspace does not exist yet, or a strategy
    it does not know). Racks are not considered (a local cluster has one), so with several
    racks the set may differ from the server's, which costs a hop, never a wrong answer."""
    replication = (rows[0].get("replication") if rows else None) or {}
    if not isinstance(replication, dict):
        return 1
    wanted = replication.get("replication_factor") if "SimpleStrategy" in str(replication.get("class")) \
        else replication.get(datacenter or "")
    try:
        return max(int(str(wanted).partition("/")[0]), 1)  # "3/1": transient replicas after the slash
    except ValueError:
        return 1


@dataclass(frozen=True)
class TokenMap:
    """The ring of one datacenter: its tokens ascending, the host index owning each, and the
    host indexes of each token's replicas, its owner first (empty: keys are not routed)."""

    ring: list[int]
    owners: list[int]
    replicas: list[tuple[int, ...]]

    @classmethod
    def of(cls, topo: Topology, hosts: Sequence[tuple[str, int]], factor: int) -> TokenMap:
        """The token map of a ring whose keys are routed (`topo.routed`; NO_TOKENS otherwise),
        `factor` replicas a token; host indexes are positions in `hosts`."""
        if not topo.routed:
            return NO_TOKENS
        ring = sorted((int(t), hosts.index(host)) for host, tokens in topo.nodes.items() for t in tokens)
        owners = [h for _, h in ring]
        return cls([t for t, _ in ring], owners, replica_sets(owners, factor))


NO_TOKENS = TokenMap([], [], [])


def replica_sets(owners: Sequence[int], factor: int) -> list[tuple[int, ...]]:
    """For each ring position, the first `factor` distinct hosts from it on round the ring (the
    owner first): the replicas of the keys whose token falls there, as SimpleStrategy places them
    (and NetworkTopologyStrategy within one datacenter and rack)."""
    n = len(owners)
    hosts = len(set(owners))
    factor = min(max(factor, 1), hosts)
    out = []
    for at in range(n):
        chosen: list[int] = []
        for step in range(n):
            host = owners[(at + step) % n]
            if host not in chosen:
                chosen.append(host)
                if len(chosen) == factor:
                    break
        out.append(tuple(chosen))
    return out
