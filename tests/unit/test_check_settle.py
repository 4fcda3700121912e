"""`workbench check` settles its own table before it measures (drive/check.py `_settle`): on a
cluster the workbench started here, flushed and compacted through the server's own step
(clusters/settle.py with compact=True); on any other, said once and measured as it is. The real
step on a real Cassandra node is tests/integration/test_check_servers.py's."""

from __future__ import annotations

import pytest

from workbench.clusters import presets
from workbench.clusters import settle as settle_module
from workbench.clusters.base import Cluster
from workbench.databases.cassandra import cluster_maintenance
from workbench.drive import check
from workbench.drive.check import TABLE, CheckPlan


def _cluster(preset: str, tmp_path, provider: str = "local") -> Cluster:
    spec = presets.load(preset)
    return Cluster(spec.name, spec.kind, spec, (), tmp_path, provider)


def _plan(cluster: Cluster | None, *overrides: str) -> CheckPlan:
    db = cluster.kind if cluster is not None else "memory"
    return CheckPlan((), (f"db={db}", *overrides), quick=True, cluster=cluster)


@pytest.fixture
def settled(monkeypatch):
    calls = []

    def fake(cluster, *, table, properties=None, timeout=600.0, say=None, compact=False):
        # the keyspace as Cassandra's own step reads it from the properties it is handed
        keyspace = cluster_maintenance.keyspace_of(dict(properties or {}))
        calls.append({"cluster": cluster.name, "keyspace": keyspace, "table": table, "compact": compact})
        say("  settled: the step's own line (1.0 s)")
        return 1.0

    monkeypatch.setattr(settle_module, "settle", fake)
    return calls


def test_a_local_cluster_has_the_checks_own_table_flushed_and_compacted(settled, tmp_path):
    said = []
    plan = _plan(_cluster("cassandra-single", tmp_path), "cassandra.keyspace=other")
    assert check._settle(plan, said.append) == "settled: the step's own line (1.0 s)"
    assert settled == [{"cluster": "cassandra-single", "keyspace": "other", "table": TABLE, "compact": True}]
    assert said == ["workbench: check: settled: the step's own line (1.0 s)"]


@pytest.mark.parametrize("provider", ["docker", "external"], ids=["a-container", "elsewhere"])
def test_a_cluster_started_elsewhere_is_measured_as_it_is_and_said(settled, tmp_path, provider):
    said = []
    got = check._settle(_plan(_cluster("cassandra-single", tmp_path, provider)), said.append)
    assert settled == []
    assert got.startswith("not settled:") and f"not a {provider} cassandra cluster" in got
    assert said == [f"workbench: check: {got}"]


def test_the_memory_binding_has_nothing_to_settle(settled):
    said = []
    assert check._settle(_plan(None), said.append) == "" and said == [] and settled == []


def test_compact_falls_back_to_the_settle_step_where_the_server_has_none(tmp_path):
    # FerretDB on SQLite: no compact step, its settle step (nothing to wait for) instead
    said = []
    settle_module.settle(_cluster("ferretdb-sqlite", tmp_path), table="usertable",
                         say=said.append, compact=True)
    assert said and said[0].startswith("  settled: nothing (FerretDB on SQLite")


def test_cassandras_compact_step_counts_the_tables_sstables_once_its_compaction_log_is_gone(
        tmp_path, monkeypatch):
    spec = presets.load("cassandra-single")
    node1 = type("FakeNode", (), {"name": "node1"})()
    cluster = Cluster(spec.name, spec.kind, spec, (node1,), tmp_path, "local")
    ran = []
    monkeypatch.setattr(cluster_maintenance, "nodetool", lambda n, args, deadline: ran.append(args) or "")
    monkeypatch.setattr(cluster_maintenance, "node_dirs",
                        lambda spec, run_dir, name: (tmp_path / name, tmp_path / "data" / name))
    keyspace = tmp_path / "data" / "node1" / "data" / "ycsb"
    folder = keyspace / "workbench_check-0a1b"
    folder.mkdir(parents=True)
    for n in (7, 8):
        (folder / f"nb-{n}-big-Data.db").write_bytes(b"")
    (keyspace / "workbench_checkless-9f").mkdir()  # another table's folder, not counted
    (keyspace / "workbench_checkless-9f" / "nb-1-big-Data.db").write_bytes(b"")
    log = folder / "nb_txn_compaction_0a1b.log"
    log.write_text("")
    # while the compaction's transaction log is there the count waits for it, up to the deadline
    assert cluster_maintenance._sstables(cluster, node1, "ycsb", "workbench_check", 0.0) == 2
    log.unlink()
    (folder / "nb-7-big-Data.db").unlink()
    line = cluster_maintenance.compact_cassandra(cluster, {}, "workbench_check", 30.0)
    assert line == "ycsb.workbench_check flushed and compacted, SSTables: 1 on node1"
    assert ran == [["flush", "ycsb", "workbench_check"], ["compact", "ycsb", "workbench_check"],
                   ["compactionstats"]]


def test_a_local_cluster_whose_server_has_no_settle_step_is_measured_as_it_is_and_said(settled, tmp_path,
                                                                                        monkeypatch):
    from workbench.databases.base import Server

    monkeypatch.setattr(check, "server", lambda kind: Server(kind=kind))  # a third party's, say
    said = []
    got = check._settle(_plan(_cluster("cassandra-single", tmp_path)), said.append)
    assert settled == [] and said == [f"workbench: check: {got}"]
    assert got == ("not settled: the check measures the table as earlier runs left it (the workbench "
                   "has no settle step for cassandra)")
