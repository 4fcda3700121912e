"""The server a run measured and the settings of it that change the figures, for its manifest.

Read from what the workbench already holds, with no request to the servers: the spec of a cluster
it started (local processes or Docker containers: the same spec rendered their cassandra.yaml and
hbase-site.xml), the binding's properties (consistency levels, write concern, replication of a
new keyspace, pre-split regions) and their defaults. What cannot be seen from here (an external
cluster's heap, a table made by someone else) is "unknown", never a guess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.databases import find, serving
from workbench.databases.base import UNKNOWN
from workbench.databases.registry import package_version
from workbench.errors import ConfigError

if TYPE_CHECKING:
    from workbench.clusters.base import Cluster



def server(db: str, props: dict[str, str], cluster: Cluster | None) -> dict[str, Any]:
    """{"product", "version", "settings"}: settings name -> value, "unknown" where not seen."""
    ours = cluster is not None and cluster.provider in ("local", "docker")
    kind = cluster.kind if cluster is not None else db
    version = UNKNOWN
    if cluster is not None:
        pinned = getattr(cluster.spec, "release", "") if cluster.provider == "local" else ""
        version = cluster.server_version or pinned or UNKNOWN
    described = find(kind)  # a database's name (no cluster, or an external one), else a server kind
    served = described.server(kind) if described is not None else None
    if described is None:
        try:
            described, served = serving(kind)
        except ConfigError:  # a binding registered at run time (tests): no descriptor
            return {"product": kind, "version": version, "settings": {}}
    if described.in_process:  # the database is the package its binding comes from
        version = package_version(described.name) or UNKNOWN
        product = f"{described.name} (in-process)"
    else:
        product = served.label if served is not None and served.label else described.title
        # a server of another product's protocol may run instead (a ferretdb preset's mongo:7.0)
        named = [n for n in (*(s.label for s in described.servers), described.title) if n and n in version]
        product = named[0] if named else product
    spec = cluster.spec if ours else None
    settings = described.load("settings")(props, spec) if described.settings else {}  # its folder's
    return {"product": product, "version": version, "settings": settings}


def cluster_shape(cluster: Cluster | None) -> dict[str, Any] | None:
    """The cluster's name, provider, nodes and CPU caps (None: no cluster named, -p hosts)."""
    if cluster is None:
        return None
    shape: dict[str, Any] = {"name": cluster.name, "provider": cluster.provider, "kind": cluster.kind,
                             "nodes": cluster.nodes_seen or len(cluster.nodes)}
    if cluster.provider == "external":
        shape["cpu_caps"] = UNKNOWN
        return shape
    spec = cluster.spec
    shape["node_names"] = [n.name for n in cluster.nodes]
    # a node's own cap (0: none) as it was started, else the spec's
    caps = {n.name: n.cpus or getattr(spec, "cpus", 0.0) for n in cluster.nodes}
    shape["cpu_caps"] = {name: cap for name, cap in caps.items() if cap} or "none"
    # the servers' extra JVM flags (clusters/java.py server_flags), one string for all nodes that
    # share them, else per node
    flags = {n.name: " ".join(n.jvm_flags) for n in cluster.nodes}
    shared = set(flags.values())
    shape["jvm_flags"] = (shared.pop() if len(shared) == 1 else flags) or "none"
    if cluster.provider == "docker":
        shape["docker_cpus"] = spec.docker_cpus or "none"
        shape["docker_memory"] = spec.docker_memory or "none"
        shape["docker_network"] = spec.docker_network
    shape["data_dir"] = spec.data_dir or "the cluster's own directory"
    return shape
