"""MongoDB and the servers that speak its protocol: the mongodb binding (pymongo's asyncio
client), FerretDB as the server the workbench starts (no MongoDB can be installed here), and any
MongoDB-protocol server as an external cluster.

Its modules are this folder's: binding.py (options.py, server_name.py, server_settings.py),
cluster_ferretdb.py (a local FerretDB and its PostgreSQL), cluster_ferretdb_build.py (FerretDB
built from its pinned Go source), cluster_docker.py, cluster_image.py, cluster_external.py,
cluster_maintenance.py (VACUUM and CHECKPOINT), cluster_spec.py (FerretDBSpec), figures.py (the
servers' figures)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from workbench.databases.base import Database, Server, resolve


def mongodb_url(cluster: Any) -> str:
    """The URL the mongodb binding gets: an external cluster's own (login and TLS included), or
    YCSB's default URL on the server's address (database ycsb, w=1)."""
    if cluster.provider == "external":
        return cluster.spec.mongodb_url()
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


def overrides(cluster: Any) -> list[str]:
    return ["db=mongodb", f"mongodb.url={mongodb_url(cluster)}"]


def server_sources(cluster: Any) -> list:
    """The servers' figures of a run on this cluster (issue 54): databases/mongodb/figures.py, named
    by path (it stands on a floor above this one)."""
    return resolve("workbench.databases.mongodb.figures:server_sources")(cluster)


FERRETDB = Server(
    kind="ferretdb",
    label="FerretDB",
    spec="workbench.databases.mongodb.cluster_spec:FerretDBSpec",
    local="workbench.databases.mongodb.cluster_ferretdb",
    docker="workbench.databases.mongodb.cluster_docker:FerretDBPlanner",
    image="workbench.databases.mongodb.cluster_image:ferretdb_files",
    image_inputs="workbench.databases.mongodb.cluster_image:ferretdb_inputs",
    image_content="workbench.databases.mongodb.cluster_image:ferretdb_content",
    version="workbench.databases.mongodb.cluster_image:ferretdb_version",
    needs_java=False,
    heap_label="PostgreSQL shared_buffers",
    client_nodes=("ferretdb",),
    listens_on="workbench.databases.mongodb.cluster_ferretdb:listens_on",
    shape="workbench.databases.mongodb.cluster_ferretdb:shape",
    settle="workbench.databases.mongodb.cluster_maintenance:settle_ferretdb",
)

MONGODB = Database(
    name="mongodb",
    description="MongoDB and MongoDB-protocol servers such as FerretDB (pymongo's asyncio client)",
    binding="workbench.databases.mongodb.binding:MongoDBBinding",
    prefix="mongodb.",
    label="MongoDB",
    bare_keys=frozenset({"batchsize"}),
    client_name="workbench.databases.mongodb.options:client_name",
    servers=(FERRETDB,),
    overrides=overrides,
    default_preset="ferretdb-postgres",  # FerretDB on PostgreSQL: no MongoDB can be installed here
    drop="mongodb.drop",
    up_down_s=3.0,
    external_port=27017,
    external_check="workbench.databases.mongodb.cluster_external:check_mongodb",
    settings="workbench.databases.mongodb.server_settings:mongodb_settings",
    external_keys=frozenset({"url", "username", "password", "password_env", "tls", "ca_file"}),
    server_sources=server_sources,
    order=3,
)
