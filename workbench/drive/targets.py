"""From a running cluster to a binding's properties: what `--cluster NAME` and the demo use.

This glue lives in the headless layer below every front end: the one place that knows both the cluster
handles (clusters/) and the bindings' property names (bindings/).
"""

from __future__ import annotations

from workbench.clusters.base import Cluster
from workbench.errors import ClusterError, ConfigError


def binding_overrides(cluster: Cluster) -> list[str]:
    """-p overrides that point the cluster's binding at it."""
    if cluster.kind == "cassandra":
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
    if cluster.kind == "hbase":
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
    if cluster.kind in ("ferretdb", "mongodb"):
        return ["db=mongodb", f"mongodb.url={mongodb_url(cluster)}"]
    raise ConfigError(f"no binding for a {cluster.kind} cluster", "use -db and -p hosts=...")


def mongodb_url(cluster: Cluster) -> str:
    """The URL the mongodb binding gets: an external cluster's own (login and TLS included), or
    YCSB's default URL on the server's address (database ycsb, w=1)."""
    if cluster.provider == "external":
        return cluster.spec.mongodb_url()
    from urllib.parse import quote

    host, port = cluster.contact_points[0]
    login, options = "", ["w=1"]
    if cluster.credentials:  # FerretDB 1.x checks logins with the PLAIN mechanism
        user, password = cluster.credentials
        login = f"{quote(user, safe='')}:{quote(password, safe='')}@"
        # FerretDB 1.x takes PLAIN only; an image of the preset's own (a real mongo) SCRAM, in admin
        real = cluster.provider == "docker" and getattr(cluster.spec, "docker_image", "")
        options.append("authSource=admin" if real else "authMechanism=PLAIN")
    if cluster.tls_ca is not None:
        options += ["tls=true", f"tlsCAFile={quote(str(cluster.tls_ca), safe='/')}"]
    return f"mongodb://{login}{host}:{port}/ycsb?{'&'.join(options)}"


def find_cluster(name: str) -> Cluster:
    """A cluster `workbench cluster up` started (local or docker provider) or remembered (external)."""
    from workbench.clusters.base import all_providers

    providers = all_providers(progress=False)
    for provider in providers:
        if name in provider.clusters():
            return provider.status(name)
    known = ", ".join(n for p in providers for n in p.clusters()) or "none"
    raise ClusterError(f"no cluster named {name!r}", hint=f"known clusters: {known}; "
                       "`workbench cluster up PRESET` starts one, `--provider external` adds one")


def cluster_overrides(name: str) -> list[str]:
    """Overrides for a cluster `workbench cluster up` started or remembered."""
    return binding_overrides(find_cluster(name))
