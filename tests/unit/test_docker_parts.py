"""The Docker provider's parts that need no engine: the host network snapshot and its restore,
image input hashes, the memory check, the bridge ports, what `--cluster` hands a bridged
cluster's binding, and one-line errors when no engine answers."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from workbench.clusters import distributions, engine, images
from workbench.clusters.base import Cluster, Node
from workbench.clusters.docker_provider import DockerProvider, published_port
from workbench.clusters.specs import CassandraSpec, HBaseSpec
from workbench.commands.targets import binding_overrides
from workbench.errors import ClusterError


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="needs root and iproute2")
def test_restore_network_removes_a_new_bridge_and_nothing_else():
    before = engine.network_state()
    name = f"wbt{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "link", "add", name, "type", "bridge"], check=True)
    try:
        assert name in engine.network_state()["bridges"]
        undone = engine.restore_network(before)
        assert undone == [f"removed bridge {name}"]
        assert engine.network_state()["bridges"] == before["bridges"]
        assert engine.restore_network(before) == []  # nothing more to undo
    finally:
        subprocess.run(["ip", "link", "delete", name], capture_output=True, check=False)


def test_no_engine_is_one_clear_line(tmp_path: Path):
    with pytest.raises(ClusterError) as caught:
        engine.connect(f"unix://{tmp_path}/none.sock", timeout=5)
    text = str(caught.value)
    assert text.startswith(f"no Docker engine answers at unix://{tmp_path}/none.sock: ")
    assert "DOCKER_HOST" in text and "\n" not in text


def test_image_inputs_follow_the_lockfile_and_the_base(monkeypatch, tmp_path: Path):
    first = images._inputs("cassandra", "sha256:aaa")
    assert images._inputs("cassandra", "sha256:aaa") == first  # stable: a second build is a no-op
    assert images._inputs("cassandra", "sha256:bbb") != first  # a new base image rebuilds
    assert images._inputs("hbase", "sha256:aaa") != first
    lock = distributions.LOCK_DIR / f"cassandra-{distributions.VERSIONS['cassandra']}.lock"
    (tmp_path / lock.name).write_bytes(lock.read_bytes() + b"# changed\n")
    monkeypatch.setattr(distributions, "LOCK_DIR", tmp_path)
    assert images._inputs("cassandra", "sha256:aaa") != first  # other jars rebuild


def test_the_cassandra_image_config_leaves_tokens_and_addresses_to_the_entry_point():
    yaml = images._cassandra_yaml()
    assert "initial_token" not in yaml
    for key in ("listen_address: ", "rpc_address: ", "broadcast_address: ", "broadcast_rpc_address: ",
                "cluster_name: 'Test Cluster'", 'seeds: "'):
        assert key in yaml
    entry = images.CASSANDRA_ENTRYPOINT
    for variable in ("CASSANDRA_SEEDS", "CASSANDRA_CLUSTER_NAME", "CASSANDRA_LISTEN_ADDRESS",
                     "CASSANDRA_BROADCAST_ADDRESS", "CASSANDRA_RPC_ADDRESS",
                     "CASSANDRA_BROADCAST_RPC_ADDRESS",
                     "CASSANDRA_NUM_TOKENS", "CASSANDRA_DC", "CASSANDRA_RACK", "CASSANDRA_ENDPOINT_SNITCH",
                     "MAX_HEAP_SIZE", "HEAP_NEWSIZE", "JVM_OPTS", "JVM_EXTRA_OPTS"):
        assert variable in entry, variable


def test_a_memory_limit_below_the_heap_is_refused_before_any_engine_call(tmp_path: Path):
    provider = DockerProvider(state_dir=tmp_path, client=object(), progress=False)
    with pytest.raises(ClusterError, match="docker_memory = '1G' leaves no room beside the JVM heap"):
        provider.up(CassandraSpec(name="x", heap="1G", docker_memory="1G"))
    with pytest.raises(ClusterError, match="leaves no room"):
        provider.up(HBaseSpec(name="y", heap="1G", docker_memory="1G"))


def test_a_bridged_cluster_gives_one_loopback_contact_point_and_the_thrift_client(tmp_path: Path):
    spec = CassandraSpec(name="b", nodes=3, replication_factor=2, docker_network="bridge")
    nodes = tuple(Node(f"node{i}", "127.0.0.1", published_port(i), 0, 0, tmp_path, tmp_path, tmp_path)
                  for i in (1, 2, 3))
    cluster = Cluster("b", "cassandra", spec, nodes, tmp_path, "docker")
    assert cluster.contact_points == [("127.0.0.1", 9042), ("127.0.0.1", 9043), ("127.0.0.1", 9044)]
    out = binding_overrides(cluster)
    assert "hosts=127.0.0.1" in out and "port=9042" in out
    hbase = HBaseSpec(name="h", docker_network="bridge")
    gateway = Node("thrift", "127.0.0.1", 9090, 0, 0, tmp_path, tmp_path, tmp_path)
    bridged = Cluster("h", "hbase", hbase, (gateway,), tmp_path, "docker", clients=("thrift",))
    assert "hbase.client=async" in binding_overrides(bridged)
    host = dataclasses.replace(bridged, spec=dataclasses.replace(hbase, docker_network="host"))
    assert not any(p.startswith("hbase.client=") for p in binding_overrides(host))
