"""Apache HBase: the hbase binding (the workbench's own RPC client, or the Thrift gateway), local
and Docker clusters (standalone, or a master with RegionServers of their own), external clusters
through their Thrift gateway.

Its modules are this folder's: binding.py (options.py, schema.py, admin.py, native.py,
server_settings.py), protocol/ (the native RPC client and the Thrift client), cluster.py (a local
master and RegionServers), cluster_docker.py, cluster_image.py, cluster_external.py,
cluster_maintenance.py (settle, flush, compact, by the Java programs of tools/), cluster_spec.py
(HBaseSpec), figures.py (the servers' figures)."""

from __future__ import annotations

from typing import Any

from workbench.databases.base import Database, Server, resolve


def overrides(cluster: Any) -> list[str]:
    """-p overrides that point the hbase binding at a running cluster."""
    host, port = cluster.contact_points[0]
    out = ["db=hbase", f"hbase.host={host}", f"hbase.port={port}"]
    if getattr(cluster.spec, "docker_network", "host") == "bridge" and cluster.provider == "docker":
        # Only the gateway's port is published: the native client's RegionServer is not reachable.
        out.append("hbase.client=async")
    zookeeper = getattr(cluster.spec, "zookeeper_port", None)
    if zookeeper is not None:  # where a pre-split table is created (hbase.presplit)
        out.append(f"hbase.zookeeper={cluster.spec.address}:{zookeeper}")
    for key in ("transport", "protocol"):  # how the gateway was started, when not the default
        value = getattr(cluster.spec, f"thrift_{key}", "")
        if value and value != {"transport": "buffered", "protocol": "binary"}[key]:
            out.append(f"hbase.{key}={value}")
    return out


def server_sources(cluster: Any) -> list:
    """The servers' figures of a run on this cluster (issue 54): databases/hbase/figures.py, named
    by path (it stands on a floor above this one)."""
    return resolve("workbench.databases.hbase.figures:server_sources")(cluster)


HBASE = Database(
    name="hbase",
    description="Apache HBase over its own RPC (reads, puts) and its Thrift gateway",
    binding="workbench.databases.hbase.binding:HBaseBinding",
    prefix="hbase.",
    label="HBase",
    bare_keys=frozenset({"columnfamily", "clientbuffering", "writebuffersize", "durability"}),
    chooser="workbench.databases.hbase.options:binding_target",
    client_name="workbench.databases.hbase.options:client_name",
    drivers=("happybase", "thriftpy2"),
    servers=(Server(
        kind="hbase",
        label="HBase",
        spec="workbench.databases.hbase.cluster_spec:HBaseSpec",
        local="workbench.databases.hbase.cluster",
        docker="workbench.databases.hbase.cluster_docker:HBasePlanner",
        image="workbench.databases.hbase.cluster_image:hbase_files",
        image_inputs="workbench.clusters.images:distribution_inputs",
        image_content="workbench.clusters.images:distribution_content",
        version="workbench.clusters.images:distribution_version",
        client_nodes=("thrift",),
        listens_on="workbench.databases.hbase.cluster:listens_on",
        shape="workbench.databases.hbase.cluster:shape",
        settle="workbench.databases.hbase.cluster_maintenance:settle_hbase",
        resize="workbench.databases.hbase.cluster:resizable",
        maintain="workbench.databases.hbase.cluster_maintenance:maintain_hbase",
    ),),
    overrides=overrides,
    default_preset="hbase-standalone",
    demo_preset="hbase-standalone",
    drop="hbase.drop",
    up_down_s=35.0,
    external_port=9090,
    external_check="workbench.databases.hbase.cluster_external:check_hbase",
    settings="workbench.databases.hbase.server_settings:hbase_settings",
    external_keys=frozenset({"thrift_transport", "thrift_protocol"}),
    server_sources=server_sources,
    order=2,
)
