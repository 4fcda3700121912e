"""The second pinned releases (distributions.SERIES): Cassandra 4.1 on Java 17 and HBase 2.5 start
from their own jars, say so in `cluster status`, and every run on them records that release."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.clusters import distributions, settle
from workbench.databases.cassandra import cluster as cassandra_local
from workbench.results.store import RunStore

pytestmark = pytest.mark.servers
ROOT = Path(__file__).resolve().parents[2]


def served_release(cluster) -> str:
    """What the server itself says it runs."""
    if cluster.kind == "cassandra":
        [row] = cassandra_local._query(cluster.nodes[0].address, "SELECT release_version FROM system.local")
        return row.release_version
    master = cluster.node("master").log.read_text()
    return master.split("util.VersionInfo: HBase ", 1)[1].split()[0]


def on_disk(cluster, table: str) -> list[Path]:
    """The data files of `table` written so far: Cassandra's SSTables (`*-Data.db`) of ycsb.TABLE
    on every node, HBase's store files of TABLE under the master's hbase.rootdir."""
    if cluster.kind == "cassandra":
        return [f for node in cluster.nodes
                for f in (cassandra_local.node_dirs(cluster.spec, cluster.run_dir, node.name)[1] / "data"
                          / "ycsb").glob(f"{table}-*/*-Data.db")]
    site = (cluster.node("master").dir / "conf" / "hbase-site.xml").read_text()
    root = Path(re.search(r"<name>hbase.rootdir</name><value>file://([^<]+)</value>", site).group(1))
    return [f for f in (root / "data" / "default" / table).glob("*/family/*")  # YCSB's family
            if f.is_file() and not f.name.startswith(".")]


@pytest.mark.parametrize(("fixture", "series"), [
    pytest.param(fixture, series, marks=pytest.mark.needs(fixture))  # tests/support/lifetimes.py
    for fixture, series in (("cassandra41_node", "4.1"), ("hbase25_server", "2.5"))])
def test_the_other_release_serves_and_every_run_records_it(request, suite_servers, tmp_path, fixture,
                                                           series):
    cluster = request.getfixturevalue(fixture)
    pinned = distributions.SERIES[cluster.kind][series]
    assert pinned.startswith(f"{series}.") and pinned != distributions.VERSIONS[cluster.kind]
    assert served_release(cluster) == pinned
    assert cluster.server_version == pinned
    lib = distributions.dist_dir(cluster.kind, version=series)
    for node in cluster.nodes:  # its own jars, not the default's
        assert any(arg.endswith(f":{lib}/*") for arg in node.argv), node.argv

    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    store = tmp_path / "runs.db"

    def workbench(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                              text=True, timeout=300, cwd=ROOT, env=env)

    status = workbench("cluster", "status", cluster.name)
    assert f"{cluster.name}: {cluster.kind} {pinned}, " in status.stdout, status.stdout + status.stderr
    table = f"versions_{os.getpid()}"
    common = ["--cluster", cluster.name, "-P", str(ROOT / "workbench" / "workloads" / "workloada"),
              "-p", "recordcount=200", "-p", "operationcount=400", "-p", f"table={table}",
              "-threads", "4", "-q", "--store", str(store)]
    load = workbench("load", *common)
    assert load.returncode == 0, load.stderr
    assert "[INSERT], Return=OK, 200" in load.stdout
    run = workbench("run", *common)
    assert run.returncode == 0, run.stderr
    with RunStore(store, write=False) as runs:
        rows = runs.list()
        recorded = [runs.result(row.id).environment["cluster"] for row in rows]
    assert [r["server_version"] for r in recorded] == [pinned, pinned]
    assert {r["kind"] for r in recorded} == {cluster.kind}
    shown = workbench("runs", "show", "--store", str(store), str(rows[0].id))
    assert f"server: {pinned}\n" in shown.stdout, shown.stdout + shown.stderr
    # settle = "flush" runs the release's own tools: nodetool with the 4.1 flags, HBase's Admin.
    # The load's 200 rows are in memory (memtable, MemStore) until then, and on disk after it.
    assert on_disk(cluster, table) == []
    settle.settle(cluster, table=table, timeout=120)
    assert on_disk(cluster, table), f"{table}: no SSTable or store file after settle"
