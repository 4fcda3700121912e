"""The settle step (experiments' `settle = "flush"`) on real servers: what a load left in memory
is on disk afterwards, and nothing is compacting."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from workbench.clusters.settle import settle
from workbench.clusters.specs import data_home
from workbench.databases.cassandra.cluster_maintenance import compactions_busy
from workbench.drive.targets import binding_overrides
from workbench.errors import ClusterError

pytestmark = pytest.mark.servers


def load(cluster, *props: str) -> None:
    args = [sys.executable, "-m", "workbench", "load", "-P", "workloada",
            "-p", "recordcount=300", "-q", "--no-store"]
    for p in [*binding_overrides(cluster), *props]:
        args += ["-p", p]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_settling_cassandra_flushes_the_table_to_sstables(cassandra_node):
    keyspace = "settle_test"
    load(cassandra_node, f"cassandra.keyspace={keyspace}", "cassandra.drop=true")
    data = data_home(cassandra_node.spec, cassandra_node.run_dir) / "node1" / "data" / keyspace
    before = list(data.glob("usertable-*/*-Data.db"))
    assert before == []  # 300 rows sit in the memtable (128 MiB) until something flushes them
    said: list[str] = []
    settle(cassandra_node, properties={"cassandra.keyspace": keyspace}, table="usertable", say=said.append)
    assert list(data.glob("usertable-*/*-Data.db")), "no sstable after the flush"
    assert said and "settle_test.usertable flushed" in said[0]
    with pytest.raises(ClusterError, match="nodetool flush failed: .*nosuch"):
        settle(cassandra_node, properties={"cassandra.keyspace": "nosuch"}, table="usertable")


def test_settling_hbase_flushes_the_table_to_store_files(hbase_server):
    load(hbase_server, "table=settle_test", "hbase.drop=true")
    region_dirs = data_home(hbase_server.spec, hbase_server.run_dir) / "hbase" / "data" / "data" / "default"
    files = lambda: [p for p in (region_dirs / "settle_test").glob("*/family/*") if p.is_file()]  # noqa: E731
    assert files() == []  # in the memstore until flushed
    settle(hbase_server, table="settle_test")
    assert files(), "no store file after the flush"
    with pytest.raises(ClusterError, match="no table nosuch"):
        settle(hbase_server, table="nosuch")


def test_a_cluster_keeps_its_data_in_the_data_dir_it_was_given_and_down_removes_it(suite_servers, tmp_path):
    """An experiment's storage location (a RAM-backed folder against a disk) is a spec's data_dir."""
    spec = dataclasses.replace(suite_servers.spec("hbase_server"), name="t-hbase-elsewhere",
                               data_dir=str(tmp_path / "elsewhere"))
    suite_servers.started.append(spec.name)
    cluster = suite_servers.provider.up(spec)
    try:
        load(cluster, "table=elsewhere")
        settle(cluster, table="elsewhere")
        [folder] = (tmp_path / "elsewhere").glob("workbench-t-hbase-elsewhere-*")
        home = folder / "hbase"
        table_dir = home / "data" / "data" / "default" / "elsewhere"
        assert [p for p in table_dir.glob("*/family/*") if p.is_file()]
        assert (home / "zookeeper").is_dir()
        assert not (cluster.run_dir / "hbase" / "data").exists()  # nothing of it in the usual place
    finally:
        suite_servers.provider.down(cluster.name)
    assert not folder.exists()
    assert (tmp_path / "elsewhere").is_dir()  # the folder the user named is left alone


@pytest.mark.parametrize("output, busy", [
    ("pending tasks: 0\n", False),
    ("concurrent compactors            2\npending tasks                    0\n", False),
    ("pending tasks                    3\n", True),
    ("pending tasks: 0\nid  compaction type ...\nActive compaction remaining time :   0h00m01s\n", True),
])
def test_compactionstats_is_read_as_busy_or_not(output, busy):
    assert compactions_busy(output) is busy
