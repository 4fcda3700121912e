"""The local provider with real FerretDB servers: on a private PostgreSQL, and on SQLite.

Each test that disturbs a node starts a cluster of its own (they take about a second), so the
session's `ferretdb_server`, which the mongodb binding's tests use, is never paused or killed.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time

import pytest
from pymongo import MongoClient

from workbench.clusters import ports
from workbench.databases.mongodb import cluster_ferretdb as ferretdb_local
from workbench.databases.mongodb import cluster_ferretdb_build as gobuild
from workbench.errors import ClusterError

pytestmark = pytest.mark.servers


def _client(cluster) -> MongoClient:
    host, port = cluster.contact_points[0]
    return MongoClient(host, port, serverSelectionTimeoutMS=10000, retryWrites=False)


@pytest.fixture
def own(suite_servers):
    """A FerretDB-on-PostgreSQL cluster of the test's own (free ports), taken down afterwards."""
    made = []

    def make(key: str = "ferretdb_server", **changes):
        spec = dataclasses.replace(suite_servers.spec(key), name=f"t-fdb-{len(made)}-{os.getpid()}",
                                   **changes)
        suite_servers.started.append(spec.name)
        made.append(spec.name)
        return suite_servers.provider.up(spec)

    yield make
    for name in made:
        if name in suite_servers.provider.clusters():
            suite_servers.provider.down(name)


def test_postgresql_backend_serves_documents_and_says_what_it_is(ferretdb_server, suite_servers):
    cluster = suite_servers.provider.status(ferretdb_server.name)
    assert cluster.kind == "ferretdb"
    assert {n.name: n.status for n in cluster.nodes} == {"postgres": "running", "ferretdb": "running"}
    assert cluster.contact_points == [("127.0.0.1", cluster.spec.port)]  # FerretDB, not PostgreSQL
    assert cluster.server_version == (f"FerretDB {gobuild.VERSION} on PostgreSQL "
                                      f"{ferretdb_local.postgres_version()} (MongoDB protocol)")
    assert ferretdb_local.postgres_version().startswith("15.")
    client = _client(cluster)
    try:
        info = client.server_info()
        assert info["ferretdbVersion"] == f"v{gobuild.VERSION}"  # what answers is FerretDB
        docs = client.t_provider.docs
        docs.insert_one({"_id": "k1", "f": "v"})
        assert docs.find_one({"_id": "k1"}) == {"_id": "k1", "f": "v"}
        assert ferretdb_local.PROBE_DB not in client.list_database_names()  # the probe cleaned up
        client.drop_database("t_provider")
    finally:
        client.close()
    # PostgreSQL listens on 127.0.0.1 only, on its own port, with its data in the cluster's directory.
    assert not ports.is_free("127.0.0.1", cluster.spec.postgres_port)
    postgres = cluster.node("postgres")
    assert postgres.dir == cluster.run_dir / "postgres" and (postgres.dir / "PG_VERSION").exists()
    assert "listen_addresses=127.0.0.1" in postgres.argv


def test_postgres_killed_then_restarted_serves_again_without_data_loss(own, suite_servers):
    provider = suite_servers.provider
    cluster = own()
    client = _client(cluster)
    try:
        client.t_kill.docs.insert_one({"_id": "kept", "v": 1})
        provider.kill(cluster.name, "postgres")  # SIGKILL: a power cut for PostgreSQL
        assert provider.status(cluster.name).node("postgres").status == "down"
        restarted = provider.restart(cluster.name, "postgres")  # stale postmaster.pid handled
        assert restarted.node("postgres").status == "running"
        assert client.t_kill.docs.find_one({"_id": "kept"}) == {"_id": "kept", "v": 1}
        provider.pause(cluster.name, "ferretdb")
        assert provider.status(cluster.name).node("ferretdb").status == "paused"
        provider.resume(cluster.name, "ferretdb")
        again = provider.restart(cluster.name, "ferretdb")
        assert again.node("ferretdb").pid != restarted.node("ferretdb").pid
        assert client.t_kill.docs.count_documents({}) == 1
    finally:
        client.close()
    result = provider.down(cluster.name)
    assert result == {"postgres": "stopped", "ferretdb": "stopped"}
    assert not cluster.run_dir.exists()


def test_down_keep_data_then_up_reuses_the_postgresql_cluster(own, suite_servers):
    provider = suite_servers.provider
    cluster = own()
    client = _client(cluster)
    client.t_keep.docs.insert_one({"_id": "a"})
    client.close()
    provider.down(cluster.name, keep_data=True)
    again = provider.up(cluster.spec)
    client = _client(again)
    try:
        assert client.t_keep.docs.find_one({"_id": "a"}) == {"_id": "a"}
    finally:
        client.close()


def test_sqlite_backend_is_one_process_with_its_files_in_the_cluster(own, suite_servers):
    cluster = own("ferretdb_sqlite")
    assert [n.name for n in cluster.nodes] == ["ferretdb"]
    assert cluster.server_version == f"FerretDB {gobuild.VERSION} on SQLite (MongoDB protocol)"
    client = _client(cluster)
    try:
        client.t_sqlite.docs.insert_one({"_id": "x", "f": "y"})
        assert client.t_sqlite.docs.find_one({"_id": "x"})["f"] == "y"
    finally:
        client.close()
    assert any((cluster.run_dir / "sqlite").glob("t_sqlite*"))


def test_a_busy_port_is_refused_before_anything_starts(own, suite_servers, ferretdb_server):
    with pytest.raises(ClusterError, match=f"127.0.0.1:{ferretdb_server.spec.port}"):
        own(port=ferretdb_server.spec.port)


def test_cli_up_status_down(suite_servers, tmp_path):
    """`workbench cluster up ferretdb-postgres` on free ports, as a user runs it (binary cached)."""
    spec = suite_servers.spec("ferretdb_server")
    preset = tmp_path / "my-ferret.toml"
    preset.write_text(f'kind = "ferretdb"\nbackend = "postgresql"\nport = {spec.port}\n'
                      f'postgres_port = {spec.postgres_port}\n')
    env = {**os.environ, "WORKBENCH_STATE_DIR": str(suite_servers.state_dir)}
    cli = [sys.executable, "-m", "workbench", "cluster"]
    began = time.monotonic()
    up = subprocess.run([*cli, "up", str(preset)], env=env, capture_output=True, text=True, timeout=300)
    took = time.monotonic() - began
    try:
        assert up.returncode == 0, up.stderr
        assert "FerretDB 1.24.2 on PostgreSQL 15." in up.stdout
        status = subprocess.run([*cli, "status", "my-ferret"], env=env, capture_output=True, text=True)
        assert "postgres running" in status.stdout and "ferretdb running" in status.stdout
    finally:
        down = subprocess.run([*cli, "down", "my-ferret"], env=env, capture_output=True, text=True)
    assert down.returncode == 0 and "files removed" in down.stdout
    print(f"ferretdb-postgres up in {took:.1f} s (interpreter start included)")  # bench/ times it
