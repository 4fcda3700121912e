"""The Docker provider's plans (docker_plans.py), built with no engine: what each database's
planner asks the engine to create for the shipped presets, on the host network and on a bridge,
and the database it refuses."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from workbench import databases
from workbench.clusters import docker_plans, engine, images, java, presets
from workbench.clusters.docker_plans import (
    NODE_LABEL,
    STATE_LABEL,
    Mount,
    Naming,
    Networking,
    Published,
    planner_for,
)
from workbench.clusters.docker_provider import DockerProvider, run_options
from workbench.clusters.specs import data_home
from workbench.databases.cassandra import cluster as cassandra_local
from workbench.databases.cassandra.cluster_docker import CassandraPlanner
from workbench.databases.hbase.cluster_docker import HBasePlanner
from workbench.databases.mongodb.cluster_docker import FerretDBPlanner
from workbench.errors import ClusterError, WorkbenchError

TAG = "0123456789ab"  # a provider's state tag (a hash of its state directory)


def labels(cluster: str, node: str = "") -> dict[str, str]:
    found = {engine.LABEL: cluster, STATE_LABEL: TAG}
    return {**found, NODE_LABEL: node} if node else found


def test_each_database_has_its_planner_chosen_by_the_specs_kind():
    assert isinstance(planner_for(presets.load("cassandra-3")), CassandraPlanner)
    assert isinstance(planner_for(presets.load("hbase-standalone")), HBasePlanner)
    assert isinstance(planner_for(presets.load("ferretdb-sqlite")), FerretDBPlanner)
    # each server's planner is its descriptor's (databases/): the kinds with one
    assert {s.kind for s in databases.servers() if s.docker} == {"cassandra", "hbase", "ferretdb"}


def test_cassandra_3_on_the_host_network(tmp_path: Path):
    spec = presets.load("cassandra-3")
    plan = docker_plans.plan(spec, tmp_path, TAG)
    assert plan.cluster == "cassandra-3" and plan.network == ""  # no network of its own
    assert plan.groups == (("node1",), ("node2", "node3"))  # the seed first, as local nodes
    assert [c.name for c in plan.containers] == ["node1", "node2", "node3"]
    for index, node in enumerate(plan.containers, 1):
        name, address = f"node{index}", f"127.0.0.{index}"
        assert node.container_name == f"wb-cassandra-3-{name}-012345"
        assert dict(node.labels) == labels("cassandra-3", name)
        assert node.image == images.image_name("cassandra") and node.command == ("cassandra", "-f")
        env = dict(node.environment)
        assert env["CASSANDRA_SEEDS"] == "127.0.0.1" and env["CASSANDRA_CLUSTER_NAME"] == "cassandra-3"
        assert env["CASSANDRA_LISTEN_ADDRESS"] == env["CASSANDRA_BROADCAST_ADDRESS"] == address
        assert env["MAX_HEAP_SIZE"] == "768M" and env["HEAP_NEWSIZE"] == "192M"
        assert f"-Dcassandra.jmx.local.port={7199 + 100 * (index - 1)}" in env["JVM_EXTRA_OPTS"]
        # the ring delay: the seed's 1 s; the nodes after it wait up to 5 s for its answer, the
        # last -D of the two being the one the JVM keeps
        delays = [f for f in env["JVM_EXTRA_OPTS"].split() if f.startswith("-Dcassandra.ring_delay_ms=")]
        assert delays[-1] == f"-Dcassandra.ring_delay_ms={1000 if index == 1 else 5000}", delays
        # the GC log inside the mounted logs/: logs/system.gc.log on the host (gc_log.beside)
        assert ("-Xlog:gc*:file=/var/log/cassandra/system.gc.log:time,uptime,level,tags:filecount=5,"
                "filesize=20M") in env["JVM_EXTRA_OPTS"].split()
        conf, logs = tmp_path / name / "conf", tmp_path / name / "logs"
        assert node.mounts == (Mount(str(conf), "/workbench/conf", read_only=True),
                               Mount(str(logs), "/var/log/cassandra"),
                               Mount(f"wb-cassandra-3-{name}-data-012345", "/var/lib/cassandra"))
        assert node.volumes == (f"wb-cassandra-3-{name}-data-012345",)
        assert f"listen_address: {address}" in (conf / "cassandra.yaml").read_text()
        assert (node.address, node.port, node.log) == (address, 9042, logs / "system.log")
        assert node.networking == Networking("host") and node.published == ()
        assert node.ports_to_check() == [(address, 7000, "Cassandra storage"),
                                         (address, 9042, "Cassandra CQL"),
                                         ("127.0.0.1", 7199 + 100 * (index - 1), "Cassandra JMX")]
        options = run_options(node)
        assert options["network_mode"] == "host" and "ports" not in options and "hostname" not in options
        assert options["volumes"][str(conf)] == {"bind": "/workbench/conf", "mode": "ro"}
        assert "mem_limit" not in options and "nano_cpus" not in options
    assert plan.volumes == tuple(f"wb-cassandra-3-node{i}-data-012345" for i in (1, 2, 3))


def test_cassandra_3_on_a_bridge_publishes_one_port_per_node_on_127_0_0_1(tmp_path: Path):
    spec = presets.load("cassandra-3", docker_network="bridge", docker_memory="2G", docker_cpus=1.5)
    plan = docker_plans.plan(spec, tmp_path, TAG)
    assert plan.network == "wb-cassandra-3-net-012345" and dict(plan.labels) == labels("cassandra-3")
    for index, node in enumerate(plan.containers, 1):
        port = 9041 + index
        assert (node.address, node.port) == ("127.0.0.1", port)
        assert node.published == (Published(port, "127.0.0.1", port),)
        assert node.ports_to_check() == [("127.0.0.1", port, f"node{index}'s published port {port}/tcp")]
        env = dict(node.environment)
        assert env["CASSANDRA_SEEDS"] == "wb-cassandra-3-node1-012345"  # by name on the network
        assert env["CASSANDRA_LISTEN_ADDRESS"] == "auto"
        assert env["CASSANDRA_BROADCAST_RPC_ADDRESS"] == "127.0.0.1"
        options = run_options(node)
        assert options["network"] == plan.network and options["hostname"] == node.container_name
        assert options["ports"] == {f"{port}/tcp": ("127.0.0.1", port)} and "extra_hosts" not in options
        assert options["mem_limit"] == 2 << 30 and options["nano_cpus"] == 1_500_000_000


def test_hbase_on_the_host_network_runs_the_local_command_lines(tmp_path: Path):
    plan = docker_plans.plan(presets.load("hbase-standalone"), tmp_path, TAG)
    assert plan.network == "" and plan.groups == (("master", "thrift"),) and plan.volumes == ()
    master, thrift = plan.containers
    assert (master.name, master.container_name) == ("master", "wb-hbase-standalone-master-012345")
    assert (thrift.name, thrift.container_name) == ("thrift", "wb-hbase-standalone-thrift-012345")
    for node in (master, thrift):
        assert dict(node.labels) == labels("hbase-standalone", node.name)
        assert node.image == images.image_name("hbase") and node.environment == ()
        assert node.mounts == (Mount(str(tmp_path), str(tmp_path)),)  # at the same path
        assert node.command[0] == "/usr/bin/java" and "-cp" in node.command
        assert node.networking == Networking("host") and run_options(node)["network_mode"] == "host"
    assert master.command[-2:] == ("org.apache.hadoop.hbase.master.HMaster", "start")
    assert thrift.command[thrift.command.index("-b") + 1] == "127.0.0.1"
    assert (thrift.address, thrift.port) == ("127.0.0.1", 9090)
    assert master.ports_to_check() == [("127.0.0.1", 2181, "HBase ZooKeeper"),
                                       ("127.0.0.1", 16000, "HBase master"),
                                       ("127.0.0.1", 16010, "HBase master /jmx"),
                                       ("127.0.0.1", 16020, "HBase RegionServer"),
                                       ("127.0.0.1", 16030, "HBase RegionServer /jmx")]
    assert thrift.ports_to_check() == [("127.0.0.1", 9090, "HBase Thrift")]
    site = (tmp_path / "hbase" / "conf" / "hbase-site.xml").read_text()
    for name, value in (("hbase.master.info.bindAddress", "127.0.0.1"), ("hbase.master.info.port", 16010),
                        ("hbase.regionserver.info.bindAddress", "127.0.0.1"),
                        ("hbase.regionserver.info.port", 16030), ("hbase.thrift.info.port", -1)):
        assert f"<name>{name}</name><value>{value}</value>" in site  # /jmx on, on its own address
    gc_file = tmp_path / "hbase" / "logs" / "master.gc.log"
    assert f"-Xlog:gc*:file={gc_file}:time,uptime,level,tags:filecount=5,filesize=20M" in master.command


def test_hbase_on_a_bridge_puts_the_gateway_in_the_masters_namespace(tmp_path: Path):
    plan = docker_plans.plan(presets.load("hbase-standalone", docker_network="bridge",
                                          data_dir=str(tmp_path / "fast")), tmp_path / "run", TAG)
    master, thrift = plan.containers
    data = data_home(presets.load("hbase-standalone", data_dir=str(tmp_path / "fast")), tmp_path / "run")
    assert master.mounts == (Mount(str(tmp_path / "run"), str(tmp_path / "run")), Mount(str(data), str(data)))
    assert master.published == (Published(9090, "127.0.0.1", 9090),)
    assert master.ports_to_check() == [("127.0.0.1", 9090, "master's published port 9090/tcp")]
    options = run_options(master)
    assert options["network"] == "wb-hbase-standalone-net-012345"
    assert options["extra_hosts"] == {master.container_name: "127.0.0.1"}  # its loopback, by name
    assert options["ports"] == {"9090/tcp": ("127.0.0.1", 9090)}
    assert thrift.networking == Networking("container", master.container_name)
    assert run_options(thrift)["network_mode"] == f"container:{master.container_name}"
    assert thrift.ports_to_check() == [] and "ports" not in run_options(thrift)
    assert thrift.command[thrift.command.index("-b") + 1] == "0.0.0.0"  # the published port's way in


def test_ferretdb_is_one_container_with_a_data_volume(tmp_path: Path):
    plan = docker_plans.plan(presets.load("ferretdb-sqlite"), tmp_path, TAG)
    [node] = plan.containers
    assert node.container_name == "wb-ferretdb-sqlite-ferretdb-012345" and plan.groups == (("ferretdb",),)
    assert node.mounts == (Mount("wb-ferretdb-sqlite-data-012345", "/data/db"),)
    assert node.command == ("mongod", "--port", "27017", "--bind_ip", "127.0.0.1")
    assert node.ports_to_check() == [("127.0.0.1", 27017, "FerretDB")]


class MongoSpec:
    """What the docker provider does not start (the external provider's kind = "mongodb")."""

    name = "m"
    kind = "mongodb"
    docker_network = "host"


def test_an_unknown_database_is_refused_before_any_engine_call(tmp_path: Path):
    refused = "the docker provider cannot start a 'mongodb' cluster"
    with pytest.raises(WorkbenchError, match=refused) as caught:
        planner_for(MongoSpec())
    assert isinstance(caught.value, ClusterError)
    assert "cassandra, hbase, ferretdb" in str(caught.value)
    with pytest.raises(ClusterError, match="cannot start a 'mongodb' cluster"):
        docker_plans.plan(MongoSpec(), tmp_path, TAG)
    provider = DockerProvider(state_dir=tmp_path, client=object(), progress=False)  # no engine
    with pytest.raises(ClusterError, match="cannot start a 'mongodb' cluster"):
        provider.up(MongoSpec())
    assert not (tmp_path / "docker").exists()


def test_a_tls_cluster_mounts_its_keystore_from_a_folder_only_its_owner_enters(tmp_path, monkeypatch):
    def fake_tls(spec, run_dir, java_path, private=True):
        assert not private  # the container's own user reads the keystore through its mount
        cassandra_local.tls_dir(run_dir).mkdir(parents=True, exist_ok=True)
        return "keystore-pw-123"

    monkeypatch.setattr(cassandra_local, "make_tls", fake_tls)
    monkeypatch.setattr(java, "choose", lambda: type("Jdk", (), {"java": tmp_path / "java"})())
    spec = dataclasses.replace(presets.load("cassandra-secure"), docker_network="bridge")
    run_dir = tmp_path / "run"
    old = os.umask(0o022)
    try:
        plan = docker_plans.plan(spec, run_dir, TAG)
    finally:
        os.umask(old)
    [node] = plan.containers
    conf = run_dir / "node1" / "conf"
    assert "keystore-pw-123" in (conf / "cassandra.yaml").read_text()
    assert run_dir.stat().st_mode & 0o777 == 0o700  # nobody else reaches the yaml or the keystore
    assert Mount(str(cassandra_local.tls_dir(run_dir)), "/workbench/tls", read_only=True) in node.mounts
    assert all(run_dir in Path(m.source).parents for m in node.mounts if not m.is_volume)


def test_the_memory_check_is_the_planners(tmp_path: Path):
    with pytest.raises(ClusterError, match="leaves no room beside the JVM heap"):
        docker_plans.plan(presets.load("hbase-standalone", thrift_heap="2G", docker_memory="2G"),
                          tmp_path, TAG)
    with pytest.raises(ClusterError, match="client_tls for FerretDB is served by the local provider only"):
        docker_plans.plan(presets.load("ferretdb-sqlite", client_tls=True), tmp_path, TAG)
    assert Naming("c", TAG).object_name("net") == "wb-c-net-012345"
