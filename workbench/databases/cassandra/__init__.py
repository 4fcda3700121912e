"""Apache Cassandra: the cassandra binding (the workbench's own CQL client or cassandra-driver),
local and Docker clusters of one to nine nodes, external clusters over CQL.

Its modules are this folder's: binding.py (options.py, schema.py, errors.py, python_driver.py,
server_settings.py), protocol/ (the workbench's own CQL client), cluster.py (a local node),
cluster_docker.py, cluster_image.py, cluster_external.py, cluster_maintenance.py (nodetool: settle,
flush, compact), cluster_spec.py (CassandraSpec: a preset's fields), figures.py (the servers'
figures). Shared with the other databases: clusters/ (the providers, specs.py's common checks)."""

from __future__ import annotations

from typing import Any

from workbench.databases.base import Database, Server, resolve


def overrides(cluster: Any) -> list[str]:
    """-p overrides that point the cassandra binding at a running cluster."""
    # A bridged Docker cluster publishes every node on 127.0.0.1 (one port each): one contact
    # point is enough, the driver finds the others through system.peers_v2.
    hosts = ",".join(dict.fromkeys(host for host, _ in cluster.contact_points))
    port = cluster.contact_points[0][1]
    replication = cluster.replication or {}
    out = ["db=cassandra", f"hosts={hosts}", f"port={port}"]
    if replication:
        out += [f"cassandra.replication.class={replication['class']}",
                f"cassandra.replication.factor={replication['replication_factor']}"]
    if cluster.credentials:
        user, password = cluster.credentials
        out += [f"cassandra.username={user}", f"cassandra.password={password}"]
    if cluster.tls_ca is not None:
        out += ["cassandra.useSSL=true", f"cassandra.ssl.cafile={cluster.tls_ca}"]
    return out


def server_sources(cluster: Any) -> list:
    """The servers' figures of a run on this cluster (issue 54): databases/cassandra/figures.py, named
    by path (it stands on a floor above this one)."""
    return resolve("workbench.databases.cassandra.figures:server_sources")(cluster)


CASSANDRA = Database(
    name="cassandra",
    description="Apache Cassandra over CQL (its own client by default, or cassandra-driver)",
    binding="workbench.databases.cassandra.binding:CassandraBinding",
    prefix="cassandra.",
    label="Cassandra",
    bare_keys=frozenset({"hosts", "port"}),
    client_name="workbench.databases.cassandra.options:client_name",
    drivers=("cassandra-driver",),
    servers=(Server(
        kind="cassandra",
        label="Cassandra",
        spec="workbench.databases.cassandra.cluster_spec:CassandraSpec",
        local="workbench.databases.cassandra.cluster",
        docker="workbench.databases.cassandra.cluster_docker:CassandraPlanner",
        image="workbench.databases.cassandra.cluster_image:cassandra_files",
        image_inputs="workbench.clusters.images:distribution_inputs",
        image_content="workbench.clusters.images:distribution_content",
        version="workbench.clusters.images:distribution_version",
        listens_on="workbench.databases.cassandra.cluster:listens_on",
        shape="workbench.databases.cassandra.cluster:shape",
        settle="workbench.databases.cassandra.cluster_maintenance:settle_cassandra",
        compact="workbench.databases.cassandra.cluster_maintenance:compact_cassandra",
        resize="workbench.databases.cassandra.cluster:resizable",
        maintain="workbench.databases.cassandra.cluster_maintenance:maintain_cassandra",
    ),),
    overrides=overrides,
    default_preset="cassandra-single",
    demo_preset="cassandra-single",
    drop="cassandra.drop",
    nodes_sweep=True,
    up_down_s=25.0,  # BENCHMARKS.md, "Cluster start-up" (and 20 s a node past the first)
    external_port=9042,
    external_check="workbench.databases.cassandra.cluster_external:check_cassandra",
    settings="workbench.databases.cassandra.server_settings:cassandra_settings",
    external_keys=frozenset({"username", "password", "password_env", "tls", "ca_file", "replication"}),
    server_sources=server_sources,
    order=1,
)
