"""`workbench cluster add-node` / `remove-node`: what they refuse, each as one line with exit
status 2, decided from the state files alone (no server starts; a `sleep` stands in for a node
that runs). The real join and decommission are in tests/integration/test_cluster_cassandra.py."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from tests.support.inprocess import workbench
from workbench.clusters import ports
from workbench.clusters import processes as procs
from workbench.clusters import state as store
from workbench.clusters.base import Cluster, Node
from workbench.databases.cassandra import cluster as cassandra_local
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.databases.hbase.cluster_spec import HBaseSpec


@pytest.fixture
def stand_ins():
    """Processes that stand in for running nodes (`sleep`), stopped after the test."""
    started: list[subprocess.Popen] = []

    def start() -> tuple[int, int]:
        proc = subprocess.Popen(["sleep", "120"])
        started.append(proc)
        return proc.pid, procs.start_time(proc.pid) or 0

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def _gone() -> tuple[int, int]:
    """A process that has exited (a node that is down)."""
    proc = subprocess.Popen(["true"])
    pid, started = proc.pid, procs.start_time(proc.pid) or 1
    proc.wait()
    return pid, started


def _save(state: Path, spec, nodes: list[tuple[str, str, tuple[int, int]]], phase: str = "running",
          provider: str = "local") -> None:
    root = state / "docker" if provider == "docker" else state
    run_dir = store.cluster_dir(root, spec.name)
    made = tuple(Node(name, address, 9042, pid, started, run_dir / name / "system.log",
                      run_dir / name / "console.log", run_dir / name)
                 for name, address, (pid, started) in nodes)
    store.save(Cluster(spec.name, spec.kind, spec, made, run_dir, provider), phase)


def _one_line(state: Path, tmp_path: Path, *args: str) -> str:
    done = workbench(tmp_path / "runs.db", "cluster", "--state-dir", str(state), *args)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("workbench: error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def _free_block(count: int) -> str:
    """The first of `count` loopback addresses whose Cassandra ports are all free."""
    for first in range(220, 250 - count):
        block = [f"127.0.0.{first + i}" for i in range(count)]
        if all(ports.is_free(h, p) for a in block for h, p, _ in cassandra_local.node_ports(a)):
            return block[0]
    raise RuntimeError("no free loopback addresses")


def test_an_unknown_cluster_an_hbase_one_and_a_docker_one_are_one_line_each(tmp_path, stand_ins, monkeypatch):
    state = tmp_path / "state"
    _save(state, CassandraSpec(name="c3", nodes=3), [])  # so that the list of known ones is not empty
    for args in (("add-node", "nope"), ("remove-node", "nope", "node2")):
        line = _one_line(state, tmp_path, *args)
        assert "no cluster named 'nope'" in line and "known clusters: c3" in line, line
    _save(state, HBaseSpec(name="hb"),
          [("master", "127.0.0.1", stand_ins()), ("thrift", "127.0.0.1", stand_ins())])
    line = _one_line(state, tmp_path, "add-node", "hb")
    assert "add-node: 'hb' is standalone HBase (one master with its RegionServer in one JVM)" in line \
        and "cluster up hbase-3" in line, line
    line = _one_line(state, tmp_path, "remove-node", "hb", "thrift")
    assert "remove-node: 'hb' is standalone HBase" in line, line
    # HBase with RegionServers of its own: only those leave, and not the last one
    _save(state, HBaseSpec(name="hd", regionservers=1, address="127.0.0.230"),
          [("zookeeper", "127.0.0.230", stand_ins()), ("master", "127.0.0.230", stand_ins()),
           ("rs1", "127.0.0.230", stand_ins()), ("thrift", "127.0.0.230", stand_ins())])
    line = _one_line(state, tmp_path, "remove-node", "hd", "master")
    assert "master of cluster 'hd' is not a RegionServer: only those (rs1) can be removed" in line, line
    line = _one_line(state, tmp_path, "remove-node", "hd", "rs1")
    assert "rs1 is the last RegionServer of cluster 'hd'" in line and "add-node hd" in line, line
    _save(state, CassandraSpec(name="dk", nodes=2), [("node1", "127.0.0.1", (0, 0))], provider="docker")
    # a Docker cluster whose engine does not answer
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    line = _one_line(state, tmp_path, "add-node", "dk")
    assert "cluster 'dk' runs in Docker, and no Docker engine answers" in line, line
    line = _one_line(state, tmp_path, "remove-node", "dk", "node2")
    assert "has no node 'node2'" in line, line


def test_remove_refuses_an_unknown_node_the_last_one_the_seed_and_a_replica_still_needed(tmp_path, stand_ins):
    state = tmp_path / "state"
    _save(state, CassandraSpec(name="one", first_address="127.0.0.230"),
          [("node1", "127.0.0.230", stand_ins())])
    line = _one_line(state, tmp_path, "remove-node", "one", "node7")
    assert "cluster 'one' has no node 'node7'" in line and "its nodes are node1" in line, line
    line = _one_line(state, tmp_path, "remove-node", "one", "node1")
    assert "node1 is the last node of cluster 'one'" in line and "cluster down one" in line, line
    spec = CassandraSpec(name="two", nodes=2, replication_factor=2, first_address="127.0.0.230")
    _save(state, spec, [("node1", "127.0.0.230", stand_ins()), ("node2", "127.0.0.231", stand_ins())])
    line = _one_line(state, tmp_path, "remove-node", "two", "node1")
    assert "node1 is the seed of cluster 'two'" in line, line
    line = _one_line(state, tmp_path, "remove-node", "two", "node2")
    assert "keeps 2 replicas of each row: its 2 nodes cannot become 1" in line, line
    assert "cluster add-node two" in line, line


def test_a_cluster_that_is_not_running_or_not_on_every_node_is_refused(tmp_path, stand_ins):
    state = tmp_path / "state"
    spec = CassandraSpec(name="c2", nodes=2, first_address="127.0.0.230")
    _save(state, spec, [("node1", "127.0.0.230", _gone()), ("node2", "127.0.0.231", _gone())])
    line = _one_line(state, tmp_path, "add-node", "c2")
    assert "cluster 'c2' is not running (node1 down, node2 down)" in line, line
    _save(state, spec, [("node1", "127.0.0.230", stand_ins()), ("node2", "127.0.0.231", _gone())])
    line = _one_line(state, tmp_path, "add-node", "c2")
    assert "is not running on every node (node2 down)" in line and "cluster restart c2 node2" in line, line
    _save(state, spec, [("node1", "127.0.0.230", stand_ins())], phase="kept")
    line = _one_line(state, tmp_path, "add-node", "c2")
    assert "cluster 'c2' is not running (its state is 'kept')" in line, line


def test_add_refuses_when_the_next_nodes_address_and_port_are_taken(tmp_path, stand_ins):
    state = tmp_path / "state"
    first = _free_block(2)
    taken = CassandraSpec(first_address=first, nodes=2).address(2)
    spec = CassandraSpec(name="c1", first_address=first)
    _save(state, spec, [("node1", first, stand_ins())])
    with socket.socket() as holder:
        holder.bind((taken, cassandra_local.STORAGE_PORT))
        holder.listen()
        line = _one_line(state, tmp_path, "add-node", "c1")
    assert f"port {taken}:7000 (Cassandra storage) is already in use by PID" in line, line
    assert [n.name for n in store.load(store.cluster_dir(state, "c1"))[0].nodes] == ["node1"]  # unchanged
    assert not (store.cluster_dir(state, "c1") / "node2").exists()


def test_an_added_node_is_rendered_as_the_others_but_bootstraps_with_tokens_of_its_own(tmp_path):
    java, lib, run_dir = Path("/usr/bin/java"), tmp_path / "lib", tmp_path / "c3"
    spec = CassandraSpec(name="c3", nodes=3, first_address="127.0.0.61")
    plans = cassandra_local.plans(spec, run_dir, lib, java)
    owners = {t: plan.address for i, plan in enumerate(plans, 1)
              for t in cassandra_local.tokens(3, spec.num_tokens, i)}
    added = cassandra_local.added_plan(spec, 4, run_dir, lib, java, owners)
    third = plans[2]
    assert (added.name, added.address, added.port) == ("node4", "127.0.0.64", 9042)
    assert added.ports == cassandra_local.node_ports("127.0.0.64")
    assert added.dir == run_dir / "node4" and (run_dir / "node4" / "data").is_dir()

    def like_node4(text: str) -> str:
        return text.replace("node3", "node4").replace("127.0.0.63", "127.0.0.64").replace(
            str(cassandra_local.jmx_port("127.0.0.63")), str(cassandra_local.jmx_port("127.0.0.64")))

    # the seed starts with its files' 1 s ring delay, the nodes after it with a longer one (their
    # shadow round waits for the seed's answer that long: PEER_FLAGS)
    assert not any(flag in plans[0].argv for flag in cassandra_local.PEER_FLAGS)
    assert all(set(cassandra_local.PEER_FLAGS) <= set(plan.argv) for plan in plans[1:])
    # the same command line, with the bootstrap's flags in place of a later peer's
    argv = [a for a in like_node4(" ".join(third.argv)).split() if a not in cassandra_local.PEER_FLAGS]
    at = argv.index("-cp")
    assert added.argv == (*argv[:at], *cassandra_local.BOOTSTRAP_FLAGS, *argv[at:])
    assert "-Dcassandra.ring_delay_ms=5000" in added.argv
    # the same cassandra.yaml but for its tokens and auto_bootstrap
    ours = (added.dir / "conf" / "cassandra.yaml").read_text().splitlines()
    theirs = like_node4((third.dir / "conf" / "cassandra.yaml").read_text()).splitlines()
    differ = [(a, b) for a, b in zip(ours, theirs, strict=True) if a != b]
    assert [a.split(":")[0] for a, _ in differ] == ["initial_token", "auto_bootstrap"], differ
    assert "auto_bootstrap: true" in ours and "auto_bootstrap: false" in theirs
    new = [int(t) for t in differ[0][0].split(":", 1)[1].split(",")]
    assert len(new) == spec.num_tokens and not set(new) & set(owners)
    # a fair share: a quarter of the ring for node4, taken from the three about evenly
    ring = {**owners, **dict.fromkeys(new, "127.0.0.64")}
    ordered = sorted(ring)
    share: dict[str, float] = {}
    for i, token in enumerate(ordered):
        share[ring[token]] = share.get(ring[token], 0) + ((token - ordered[i - 1]) % 2**64) / 2**64
    assert abs(share["127.0.0.64"] - 0.25) < 0.01, share
    assert all(0.22 < share[p.address] < 0.29 for p in plans), share


def test_new_tokens_split_the_largest_ranges_and_never_reuse_one():
    assert cassandra_local.new_tokens({5: "a"}, 1) == [5 - 2**63]  # one token: the opposite side
    lopsided = {0: "a", 2**62: "b", -(2**62): "c"}  # c's range, from b's token round, is half the ring
    [token] = cassandra_local.new_tokens(lopsided, 1)
    assert 2**62 < token or token < -(2**62)  # it splits that one


def test_a_decommission_below_a_system_keyspaces_replicas_is_forced_and_said_a_users_is_refused():
    """Cassandra keeps 3 replicas of system_distributed and system_traces and refuses a
    decommission from three nodes to two (seen when elastic-speedup's node left cassandra-2
    again); the workbench forces it then, saying why. A user keyspace's refusal stays."""
    from workbench.errors import ClusterError

    said, asked = [], []

    def refusing(keyspace):
        def nodetool(args):
            asked.append(args)
            if args == ["decommission"]:
                raise ClusterError("node3: nodetool decommission failed: nodetool: Unsupported operation: "
                                   "Not enough live nodes to maintain replication factor in keyspace "
                                   f"{keyspace} (RF = 3, N = 3). Perform a forceful decommission to ignore.")
        return nodetool

    cassandra_local.decommission(refusing("system_distributed"), said.append)
    assert asked == [["decommission"], ["decommission", "--force"]]
    assert said == ["Cassandra's own keyspace system_distributed keeps 3 replicas and 3 nodes would be 2: "
                    "decommissioning with --force (it is under-replicated from now on)"]
    asked.clear()
    with pytest.raises(ClusterError, match="keyspace ycsb"):
        cassandra_local.decommission(refusing("ycsb"), said.append)
    assert asked == [["decommission"]] and len(said) == 1
