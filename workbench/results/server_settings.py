"""The server a run measured and the settings of it that change the figures, for its manifest.

Read from what the workbench already holds, with no request to the servers: the spec of a cluster
it started (local processes or Docker containers: the same spec rendered their cassandra.yaml and
hbase-site.xml), the binding's properties (consistency levels, write concern, replication of a
new keyspace, pre-split regions) and their defaults. What cannot be seen from here (an external
cluster's heap, a table made by someone else) is "unknown", never a guess.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from workbench.databases import find, serving
from workbench.databases.registry import package_version
from workbench.errors import ConfigError

if TYPE_CHECKING:
    from workbench.clusters.base import Cluster

UNKNOWN = "unknown"
# HBase's own default share of the heap for the block cache (hbase-default.xml).
HBASE_BLOCK_CACHE_DEFAULT = "0.4"


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
    settings = described.load("settings")(props, spec) if described.settings else {}
    return {"product": product, "version": version, "settings": settings}


# Each database's settings, named by its descriptor (databases/): (props, spec) -> settings.
def cassandra_settings(props: dict[str, str], spec: Any) -> dict[str, Any]:
    return _cassandra(props, spec)


def hbase_settings(props: dict[str, str], spec: Any) -> dict[str, Any]:
    return _hbase(props, spec)


def mongodb_settings(props: dict[str, str], spec: Any) -> dict[str, Any]:
    return _mongodb(props, spec)


def _cassandra(props: dict[str, str], spec: Any) -> dict[str, Any]:
    from workbench.databases.cassandra.options import PROPERTIES  # noqa: PLC0415

    def prop(key: str) -> str:
        return props.get(key, PROPERTIES[key][0])

    out: dict[str, Any] = {
        "heap": spec.heap if spec else UNKNOWN,
        "memtable_heap_space": spec.memtable_heap_space if spec else UNKNOWN,
        "memtable_offheap_space": spec.memtable_offheap_space if spec else UNKNOWN,
        "commitlog_sync": (f"{spec.commitlog_sync}" + (f" every {spec.commitlog_sync_period_ms} ms"
                                                       if spec.commitlog_sync == "periodic" else "")
                           ) if spec else UNKNOWN,
        "commitlog_total_space": spec.commitlog_total_space if spec else UNKNOWN,
        "concurrent_reads": spec.concurrent_reads if spec else UNKNOWN,
        "concurrent_writes": spec.concurrent_writes if spec else UNKNOWN,
        "num_tokens": spec.num_tokens if spec else UNKNOWN,
        # The binding creates its table with no compaction option: the server's default applies;
        # the workbench's cassandra.yaml sets no default_compaction, so that is SizeTiered.
        "compaction": ("SizeTieredCompactionStrategy (the server's default; the binding creates its "
                       "table with no compaction option)") if spec else
                      "the server's default (the binding creates its table with no compaction option)",
        "replication": f"{prop('cassandra.replication.class')}, factor "
                       f"{prop('cassandra.replication.factor')} (asked for a new keyspace)",
        "read_consistency": prop("cassandra.readconsistencylevel").upper(),
        "write_consistency": prop("cassandra.writeconsistencylevel").upper(),
    }
    if spec is not None:
        out["replication_factor_of_cluster"] = spec.replication_factor
    return out


def _hbase(props: dict[str, str], spec: Any) -> dict[str, Any]:
    from workbench.databases.hbase.options import DEFAULTS  # noqa: PLC0415

    out: dict[str, Any] = {}
    if spec is None:
        out.update(heap=UNKNOWN, block_cache=UNKNOWN)
    else:
        out["heap"] = spec.heap if not spec.distributed else \
            f"master {spec.heap}, each of {spec.regionservers} RegionServers {spec.regionserver_heap}"
        out["block_cache"] = _block_cache()
    out["regions"] = (f"{props.get('hbase.presplit', DEFAULTS['hbase.presplit'])} for a table the "
                      "binding creates (hbase.presplit)")
    out["durability"] = props.get("durability", DEFAULTS["durability"])
    out["clientbuffering"] = props.get("clientbuffering", DEFAULTS["clientbuffering"])
    return out


def _block_cache() -> str:
    """hfile.block.cache.size as the workbench's hbase-site.xml sets it (local and Docker clusters
    render the same template), else HBase's default."""
    from workbench.clusters.launch import template_text  # noqa: PLC0415

    found = re.search(r"<name>hfile\.block\.cache\.size</name>\s*<value>([^<]*)</value>",
                      template_text("hbase-site.xml"))
    if found:
        return f"{found.group(1)} of the heap (hfile.block.cache.size)"
    return f"{HBASE_BLOCK_CACHE_DEFAULT} of the heap (HBase's default hfile.block.cache.size)"


def _mongodb(props: dict[str, str], spec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"write_concern": write_concern(props)}
    if spec is not None and hasattr(spec, "backend"):  # FerretDB on its storage
        out["backend"] = spec.backend
        if spec.backend == "postgresql":
            out["shared_buffers"] = spec.shared_buffers
            out["postgres_fsync"] = spec.postgres_fsync
    return out


def write_concern(props: dict[str, str]) -> str:
    """mongodb.writeConcern when set, else the URL's w, journal and wtimeoutMS, else the server's
    default (the URL sets none)."""
    from workbench.databases.mongodb.options import DEFAULT_URL  # noqa: PLC0415

    legacy = props.get("mongodb.writeConcern", "").strip()
    if legacy:
        return f"{legacy} (mongodb.writeConcern)"
    query = parse_qs(urlsplit(props.get("mongodb.url", DEFAULT_URL).strip()).query)
    options = {k.lower(): v[-1] for k, v in query.items()}
    parts = [f"{name}={options[name.lower()]}" for name in ("w", "journal", "j", "wtimeoutMS")
             if name.lower() in options]
    return ", ".join(parts) if parts else "the server's default (the URL sets no w)"


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
    if cluster.provider == "docker":
        shape["docker_cpus"] = spec.docker_cpus or "none"
        shape["docker_memory"] = spec.docker_memory or "none"
        shape["docker_network"] = spec.docker_network
    shape["data_dir"] = spec.data_dir or "the cluster's own directory"
    return shape
