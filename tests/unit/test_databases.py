"""The databases' descriptors (workbench/databases/): found through the entry point group, each
Ref naming something that exists, the lookups by name and by cluster kind."""

from __future__ import annotations

import dataclasses
from importlib import metadata

import pytest

from workbench import databases
from workbench.databases.base import Database, Server, resolve
from workbench.errors import ClusterError, ConfigError


def test_the_built_ins_are_the_entry_point_groups():
    group = {e.name: e.value for e in metadata.entry_points(group="workbench.databases")}
    assert {"memory", "cassandra", "hbase", "mongodb"} <= set(group)
    assert databases.names()[:4] == ("memory", "cassandra", "hbase", "mongodb")
    for name in ("memory", "cassandra", "hbase", "mongodb"):
        assert databases.database(name) is metadata.EntryPoint(name, group[name], "").load()


def test_every_ref_of_the_built_ins_names_something_that_exists():
    for db in databases.databases():
        things = [db, *db.servers]
        for thing in things:
            for f in dataclasses.fields(thing):
                value = getattr(thing, f.name)
                if f.name in ("binding", "chooser") or (isinstance(value, str) and ":" in value):
                    if value:
                        assert resolve(value) is not None, f"{db.name}.{f.name} = {value}"
                elif f.name in ("local",) and value:
                    assert resolve(value).__name__ == value


def test_a_database_by_name_and_by_its_servers_kind():
    assert databases.database("hbase").prefix == "hbase."
    assert databases.serving("ferretdb")[0].name == "mongodb"  # FerretDB serves the mongodb database
    assert databases.serving("mongodb") == (databases.database("mongodb"), None)  # an external cluster
    assert databases.server("cassandra").kind == "cassandra"
    assert databases.database("memory").in_process and not databases.database("cassandra").in_process
    with pytest.raises(ConfigError, match=r"unknown database 'redis' \(installed: memory, cassandra"):
        databases.database("redis")
    with pytest.raises(ConfigError, match="unknown cluster kind 'redis'"):
        databases.serving("redis")


def test_resolve_takes_a_path_or_the_thing_itself():
    assert resolve("workbench.databases.base:Database") is Database
    assert resolve("workbench.databases.base").Server is Server
    assert resolve(len) is len


def _cluster(preset: str, tmp_path, provider: str = "local"):
    from workbench.clusters import presets
    from workbench.clusters.base import Cluster

    spec = presets.load(preset)
    return Cluster(spec.name, spec.kind, spec, (), tmp_path, provider)


def test_what_the_generic_code_asks_goes_to_the_servers_descriptor(tmp_path):
    from workbench.clusters import resize, settle
    from workbench.ui.widgets.run_status import _served_by

    # settle = flush on FerretDB on SQLite: its own step, which has nothing to wait for
    said = []
    settle.settle(_cluster("ferretdb-sqlite", tmp_path), table="usertable", say=said.append)
    assert said and said[0].startswith("  settled: nothing (FerretDB on SQLite")
    # resizing: Cassandra's kind module; FerretDB has no resize step, said with the ones there are
    assert resize.resizable(_cluster("cassandra-3", tmp_path), "add-node").NODE_PREFIX == "node"
    with pytest.raises(ClusterError, match=r"add-node works for Cassandra and HBase clusters here; "
                                           r"FerretDB not yet: 'ferretdb-sqlite' is a FerretDB cluster"):
        resize.resizable(_cluster("ferretdb-sqlite", tmp_path), "add-node")
    with pytest.raises(ClusterError, match="is standalone HBase"):
        resize.resizable(_cluster("hbase-standalone", tmp_path), "add-node")
    # the Run screen names the server where it is not the database's namesake
    assert _served_by(_cluster("ferretdb-sqlite", tmp_path)) == " (FerretDB)"
    assert _served_by(_cluster("cassandra-3", tmp_path)) == "" and _served_by(None) == ""


@pytest.mark.parametrize(("fields", "said"), [
    ({"kind": "redis"}, "kind 'redis' must be cassandra, hbase or mongodb"),
    ({"kind": "cassandra", "url": "mongodb://h/ycsb"}, 'url is for kind = "mongodb"'),
    ({"kind": "hbase", "username": "bench"}, "username and tls are not for HBase"),
    ({"kind": "cassandra", "thrift_transport": "framed"}, "thrift_transport is not for Cassandra"),
])
def test_an_external_cluster_files_keys_are_its_databases(fields, said):
    from workbench.clusters.external import ExternalSpec

    with pytest.raises(ClusterError, match=said):
        ExternalSpec(name="lab", hosts=("10.0.0.1",), **fields)
    for kind, port in (("cassandra", 9042), ("hbase", 9090), ("mongodb", 27017)):
        assert ExternalSpec(name="lab", kind=kind, hosts=("10.0.0.1",)).client_port == port
    assert ExternalSpec(name="lab", kind="cassandra", hosts=("h",)).replication is not None
    assert ExternalSpec(name="lab", kind="hbase", hosts=("h",)).replication is None


def test_each_servers_spec_says_its_own_login_and_certificate(tmp_path):
    """Cluster.credentials and .tls_ca ask the spec (ClusterSpec), which each server's folder writes:
    nothing in clusters/ guesses them from which fields a spec happens to have."""
    from workbench.clusters.base import Cluster
    from workbench.clusters.external import ExternalSpec
    from workbench.databases.cassandra.cluster_spec import CassandraSpec
    from workbench.databases.hbase.cluster_spec import HBaseSpec
    from workbench.databases.mongodb.cluster_spec import FerretDBSpec

    def handle(spec):
        return Cluster(spec.name, spec.kind, spec, (), tmp_path)

    for server in (s for db in databases.databases() for s in db.servers):
        spec = resolve(server.spec)
        assert callable(spec.credentials) and callable(spec.tls_ca), server.kind
    assert handle(CassandraSpec()).credentials is None and handle(CassandraSpec()).tls_ca is None
    secure = handle(CassandraSpec(authenticator="PasswordAuthenticator", client_tls=True))
    assert secure.credentials == ("cassandra", "cassandra") and secure.tls_ca == tmp_path / "tls" / "ca.pem"
    assert handle(HBaseSpec()).credentials is None and handle(HBaseSpec()).tls_ca is None
    assert handle(FerretDBSpec()).credentials is None and handle(FerretDBSpec()).tls_ca is None
    (tmp_path / "postgres.password").write_text("s3cret\n")  # made at initdb by cluster_ferretdb
    login = handle(FerretDBSpec(login=True, client_tls=True))
    assert login.credentials == ("ferretdb", "s3cret") and login.tls_ca == tmp_path / "tls" / "ca.pem"
    external = handle(ExternalSpec(name="lab", kind="cassandra", hosts=("127.0.0.1",), username="bench",
                                   password="pw", tls=True, ca_file="/etc/ca.pem"))
    assert external.credentials == ("bench", "pw") and external.tls_ca.as_posix() == "/etc/ca.pem"
    plain = handle(ExternalSpec(name="lab", kind="hbase", hosts=("127.0.0.1",)))
    assert plain.credentials is None and plain.tls_ca is None
