"""The Docker provider on a real engine: images built here, Cassandra, HBase and FerretDB in
containers driven through `--cluster`, a node killed and restarted during a run, bridge networking with
published ports, the official image's environment contract, and `down` by labels after a crash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from cassandra.cluster import Cluster as Driver

from tests.support import capabilities
from tests.support.runs import Drained, wait_until_running
from workbench.clusters import engine, images, ports
from workbench.clusters import state as store
from workbench.clusters.docker_provider import STATE_LABEL
from workbench.clusters.java import SERVER_FLAGS_ENV
from workbench.clusters.specs import data_home
from workbench.databases.cassandra import cluster as cassandra_local
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.databases.hbase.cluster_spec import HBaseSpec
from workbench.databases.mongodb.cluster_spec import FerretDBSpec
from workbench.errors import ClusterError

pytestmark = [pytest.mark.servers, pytest.mark.docker]
ROOT = Path(__file__).resolve().parents[2]


def workbench(suite_servers, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def load_and_run(suite_servers, name: str, kind: str, table: str, *extra: str) -> str:
    common = ["--cluster", name, "-P", "workloada", "-p", "recordcount=300",
              "-p", "operationcount=600", "-p", f"table={table}", "-threads", "4", "-q", *extra]
    load = workbench(suite_servers, "load", *common, "-p", f"{kind}.drop=true")
    assert load.returncode == 0, load.stderr
    assert "[INSERT], Return=OK, 300" in load.stdout
    run = workbench(suite_servers, "run", *common)
    assert run.returncode == 0, run.stderr
    reads = int(run.stdout.split("[READ], Return=OK, ")[1].split()[0])
    updates = int(run.stdout.split("[UPDATE], Return=OK, ")[1].split()[0])
    assert reads + updates == 600
    return run.stdout


def labels_of(container) -> dict[str, str]:
    container.reload()
    return container.labels


def test_images_are_cached_and_listed(docker_suite, suite_servers):
    again = images.build(client=docker_suite.client, progress=False)
    assert again == {"cassandra": "up to date", "hbase": "up to date", "ferretdb": "up to date"}
    listed = workbench(suite_servers, "images", "list")
    assert listed.returncode == 0, listed.stderr
    for kind in images.KINDS:
        assert images.image_name(kind) in listed.stdout
    base = docker_suite.client.images.get(images.BASE)
    java = docker_suite.client.containers.run(base.id, ["java", "-version"], remove=True, stderr=True,
                                              network_mode="none")
    assert b'version "17' in java


def test_cassandra_in_a_container_serves_load_and_run_through_cluster(docker_cassandra, docker_suite,
                                                                      suite_servers):
    provider, name = docker_suite.provider, docker_cassandra.name
    node = provider.status(name).node("node1")
    assert node.status == "running" and node.container
    container = docker_suite.client.containers.get(node.container)
    assert labels_of(container)[engine.LABEL] == name
    host = container.attrs["HostConfig"]
    assert host["NetworkMode"] == "host"
    assert host["Memory"] == 1 << 30 and host["NanoCpus"] == 1_500_000_000
    env = dict(item.split("=", 1) for item in container.attrs["Config"]["Env"])
    assert env["CASSANDRA_LISTEN_ADDRESS"] == docker_cassandra.spec.first_address
    assert env["CASSANDRA_CLUSTER_NAME"] == name and env["MAX_HEAP_SIZE"] == "512M"
    # the suite's server JVM flags (tests/conftest.py), which the node's JVM took
    flags = os.environ[SERVER_FLAGS_ENV]
    assert env["JAVA_TOOL_OPTIONS"] == flags and node.jvm_flags == tuple(flags.split())
    assert f"Picked up JAVA_TOOL_OPTIONS: {flags}".encode() in container.logs(), container.logs()[-2000:]
    assert docker_cassandra.contact_points == [(docker_cassandra.spec.first_address, 9042)]
    load_and_run(suite_servers, name, "cassandra", "dk_cli")
    status = workbench(suite_servers, "cluster", "status", name)
    assert status.returncode == 0 and f"container {node.container[:12]}" in status.stdout
    assert "host network" in status.stdout
    logs = workbench(suite_servers, "cluster", "logs", name, "node1", "-n", "200")
    assert "Startup complete" in logs.stdout or "Starting listening for CQL clients" in logs.stdout

    # `cluster flush` and `cluster compact` run nodetool inside the node's container: the 300 rows
    # sit in the memtable (128 MiB) until the flush writes them to an sstable in the node's volume
    def sstables() -> list[str]:
        found = container.exec_run(["find", "/var/lib/cassandra/data/ycsb", "-path", "*/dk_cli-*",
                                    "-name", "*-Data.db"])
        return found.output.decode().split()

    assert sstables() == []
    flushed = workbench(suite_servers, "cluster", "flush", name)
    assert flushed.returncode == 0, flushed.stderr
    assert "node1: flushed in " in flushed.stdout and len(sstables()) == 1, (flushed.stdout, sstables())
    compacted = workbench(suite_servers, "cluster", "compact", name, "node1")
    assert compacted.returncode == 0, compacted.stderr
    assert "node1: compacted (a major compaction of every table)" in compacted.stdout
    assert len(sstables()) == 1  # one sstable compacts into one


def test_pause_and_resume_go_through_the_engine(docker_cassandra, docker_suite):
    provider, name = docker_suite.provider, docker_cassandra.name
    address = docker_cassandra.spec.first_address
    provider.pause(name, "node1")
    try:
        assert provider.status(name).node("node1").status == "paused"
        driver = Driver([address], protocol_version=4, connect_timeout=2, control_connection_timeout=2)
        with pytest.raises(Exception):  # noqa: B017 - the frozen node answers nothing
            driver.connect()
        driver.shutdown()
    finally:
        provider.resume(name, "node1")
    assert provider.status(name).node("node1").status == "running"


def test_hbase_in_containers_serves_load_and_run_through_cluster(docker_hbase, docker_suite, suite_servers):
    cluster = docker_suite.provider.status(docker_hbase.name)
    assert [(n.name, n.status) for n in cluster.nodes] == [("master", "running"), ("thrift", "running")]
    assert cluster.contact_points == [("127.0.0.1", docker_hbase.spec.thrift_port)]
    load_and_run(suite_servers, docker_hbase.name, "hbase", "dk_cli")

    # `cluster flush` and `cluster compact`: the admin calls run in the master's container, and
    # the rows held in the memstore land in a store file under the mounted root directory
    region_dirs = data_home(cluster.spec, cluster.run_dir) / "hbase" / "data" / "data" / "default"
    files = lambda: [p for p in (region_dirs / "dk_cli").glob("*/family/*") if p.is_file()]  # noqa: E731
    assert files() == []
    flushed = workbench(suite_servers, "cluster", "flush", docker_hbase.name)
    assert flushed.returncode == 0, flushed.stderr
    assert "RegionServer " in flushed.stdout and ": flushed (" in flushed.stdout, flushed.stdout
    assert files(), "no store file after the flush"
    compacted = workbench(suite_servers, "cluster", "compact", docker_hbase.name)
    assert compacted.returncode == 0, compacted.stderr
    assert ": major compaction requested (" in compacted.stdout, compacted.stdout


def test_hbase_regionservers_in_containers_one_added_and_removed(docker_suite, suite_servers):
    """HBase with a RegionServer of its own in containers (host network: ZooKeeper, master, rs1,
    gateway): `add_node` starts rs2 in a container of its own and the balancer gives it half the
    regions of a pre-split table; `remove_node` moves them back (HBase's RegionMover, run in its
    container) and removes the container."""
    from workbench.databases.hbase import cluster as hbase_local

    provider, client = docker_suite.provider, docker_suite.client
    chosen = suite_servers.hbase_ports()
    spec = HBaseSpec(name="t-dk-hbase-rs", regionservers=1, heap="384M", regionserver_heap="512M",
                     thrift_heap="256M", balancer_period_s=5, **chosen,
                     address=suite_servers.addresses(2, tuple(chosen.values())))
    cluster = provider.up(spec)
    try:
        assert [(n.name, n.status, bool(n.container)) for n in provider.status(spec.name).nodes] == [
            (name, "running", True) for name in ("zookeeper", "master", "rs1", "thrift")]
        load = workbench(suite_servers, "load", "--cluster", cluster.name, "-P", "workloada",
                         "-p", "recordcount=600", "-p", "table=dk_regions", "-p", "hbase.presplit=8", "-q")
        assert load.returncode == 0, load.stderr[-2000:]
        assert list(hbase_local.regions_per_server(spec).values()) == [8]
        grown = provider.add_node(spec.name)
        assert grown.node("rs2").address == spec.node_address(2) and grown.node("rs2").container
        rs2 = f"{spec.node_address(2)}:{spec.regionserver_port}"
        held = hbase_local.regions_per_server(spec)
        assert held.get(rs2, 0) >= 1 and sum(held.values()) == 8, held
        shrunk = provider.remove_node(spec.name, "rs2")
        assert [n.name for n in shrunk.nodes] == ["zookeeper", "master", "rs1", "thrift"]
        after = hbase_local.regions_per_server(spec)
        assert rs2 not in after and sum(after.values()) == 8, after
        rs2_objects = {"label": [f"{engine.LABEL}={spec.name}", "org.workbench.node=rs2"]}
        assert not client.containers.list(all=True, filters=rs2_objects)
    finally:
        provider.down(spec.name)
    assert not client.containers.list(all=True, filters={"label": f"{engine.LABEL}={spec.name}"})


def test_two_nodes_one_killed_and_restarted_during_a_run(docker_suite, suite_servers, tmp_path):
    """A run on two nodes in containers (RF 2) goes on while node2 is killed and restarted, while
    node3 joins in a container of its own (bootstrap) and is decommissioned again (three to two:
    forced past system_distributed's three replicas, as the elasticity lesson's server test does
    it locally): the run marks each, and node3's container and volume are gone.
    Then the workbench 'crashes' (its state folder goes): `cluster status` and `cluster down
    NAME`, without --provider, still find the containers and volumes by their labels, and down
    leaves an unlabelled container alone."""
    provider, client = docker_suite.provider, docker_suite.client
    spec = CassandraSpec(name="t-dk-cassandra2", nodes=2, heap="512M", replication_factor=2,
                         first_address=suite_servers.addresses(3))  # the third: node3's
    bystander = client.containers.run(images.BASE, ["sleep", "600"], detach=True, network_mode="none")
    cluster = provider.up(spec)
    try:
        common = ["--cluster", cluster.name, "-P", "workloadc",
                  "-p", "recordcount=500", "-p", "table=dk_fault", "-threads", "8"]
        load = workbench(suite_servers, "load", *common, "-p", "cassandra.drop=true", "-q")
        assert load.returncode == 0, load.stderr
        env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
        proc = subprocess.Popen(
            [sys.executable, "-m", "workbench", "run", *common, "-p", "operationcount=0",
             "-p", "maxexecutiontime=600", "-p", "cassandra.readconsistencylevel=ONE",
             "-p", "cassandra.readtimeoutmillis=2000", "-p", "status.interval=1", "-target", "300",
             "--export", f"json={tmp_path / 'run.json'}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
        try:
            wait_until_running(proc, 200, timeout=120)
            Drained(proc)  # read on from here, so that its pipe never fills
            provider.kill(cluster.name, "node2")
            assert provider.status(cluster.name).node("node2").status == "down"
            provider.restart(cluster.name, "node2")
            assert provider.status(cluster.name).node("node2").status == "running"
            time.sleep(2.0)  # some operations after the restart, with node2 back in the ring
            grown = provider.add_node(cluster.name)  # node3 bootstraps in a container of its own
            assert grown.node("node3").address == spec.address(3) and grown.node("node3").container
            assert grown.node("node3").status == "running"
            events, progress = [], provider.progress
            provider.progress = events.append
            try:
                shrunk = provider.remove_node(cluster.name, "node3")  # decommissioned in its container
            finally:
                provider.progress = progress
            assert [n.name for n in shrunk.nodes] == ["node1", "node2"]
            # three to two: refused for system_distributed's three replicas, then forced
            assert any(e.stage == "leave" and "decommissioning with --force" in e.message for e in events), \
                [e.message for e in events]
            proc.send_signal(2)  # SIGINT: the run stops and reports what it did
            proc.wait(timeout=120)  # (stderr is Drained's to read; its results are a few lines)
            out = proc.stdout.read()
        finally:
            if proc.poll() is None:
                proc.kill()
        assert "[OVERALL], RunTime(ms)" in out, out[-2000:]
        reads_ok = int(out.split("[READ], Return=OK, ")[1].split()[0])
        assert reads_ok > 300, out  # RF 2 at ONE: reads went on while node2 was down
        run = json.loads((tmp_path / "run.json").read_text())["run"]
        marked = [e["value"] for e in run["events"] if e["kind"] == "cluster"]
        # the kill and the restart, asked for in this process, are events of the run in another
        # one: the provider wrote them to the cluster's journal
        faults = [e["value"] for e in run["events"] if e["kind"] == "fault"]
        assert faults == ["node2 killed", "node2 restarting", "node2 restarted"], run["events"]
        assert marked[:2] == ["+ node3 joining", "node3 normal"], marked
        assert marked[-2:] == ["- node3 leaving", "node3 gone"], marked
        node3 = {"label": [f"{engine.LABEL}={spec.name}", "org.workbench.node=node3"]}
        assert not client.containers.list(all=True, filters=node3) and not client.volumes.list(filters=node3)

        shutil.rmtree(store.cluster_dir(provider.root, spec.name))  # its state folder is lost
        label = {"label": f"{engine.LABEL}={spec.name}"}
        assert len(client.volumes.list(filters=label)) == 2  # one data volume per node left
        # `cluster status` finds it by its labels too, and says what removes it
        status = workbench(suite_servers, "cluster", "status")
        assert status.returncode == 0, status.stderr
        assert f"{spec.name}: docker, 2 container(s) found by their labels; its state file is gone" \
            in status.stdout, status.stdout
        assert all(f"  {'node' + str(i):<8} running" in status.stdout for i in (1, 2)), status.stdout
        assert f"`workbench cluster down {spec.name}` removes" in status.stdout
        # No --provider: no state file names the cluster, the engine's labels do.
        down = workbench(suite_servers, "cluster", "down", spec.name)
        assert down.returncode == 0, down.stderr
        assert all(f"node{i}: stopped" in down.stdout for i in (1, 2)), down.stdout
        assert not client.containers.list(all=True, filters=label)
        assert not client.volumes.list(filters=label)
        assert not store.cluster_dir(provider.root, spec.name).exists()
        bystander.reload()
        assert bystander.status == "running"
    finally:
        bystander.remove(force=True)
        if client.containers.list(all=True, filters={"label": f"{engine.LABEL}={spec.name}"}):
            provider.down(spec.name)
    assert not [line for line in docker_suite.leftovers() if "t-dk-cassandra2" in line]


def test_bridge_network_publishes_only_on_loopback(docker_suite, suite_servers):
    """HBase on a network of its own: the gateway's port published on 127.0.0.1, the master and
    gateway sharing one namespace, and `--cluster` choosing the Thrift-only client."""
    provider = docker_suite.provider
    spec = HBaseSpec(name="t-dk-hbase-br", heap="768M", thrift_heap="256M", docker_network="bridge",
                     **suite_servers.hbase_ports())
    cluster = provider.up(spec)
    try:
        master = docker_suite.client.containers.get(cluster.node("master").container)
        bindings = master.attrs["HostConfig"]["PortBindings"]
        assert bindings == {f"{spec.thrift_port}/tcp": [{"HostIp": "127.0.0.1",
                                                        "HostPort": str(spec.thrift_port)}]}
        network = master.attrs["HostConfig"]["NetworkMode"]
        assert network.startswith("wb-t-dk-hbase-br-net")
        assert docker_suite.client.networks.get(network).attrs["Labels"][engine.LABEL] == spec.name
        gateway = docker_suite.client.containers.get(cluster.node("thrift").container)
        assert gateway.attrs["HostConfig"]["NetworkMode"] == f"container:{master.id}"
        assert not ports.is_free("127.0.0.1", spec.thrift_port)
        load = workbench(suite_servers, "load", "--cluster", spec.name, "-P",
                         "workloada", "-p", "recordcount=300", "-p",
                         "table=dk_bridge", "-threads", "4", "-q")  # the async client: the gateway only
        assert load.returncode == 0, load.stderr
        assert "[INSERT], Return=OK, 300" in load.stdout
    finally:
        provider.down(spec.name)
    assert not docker_suite.client.networks.list(names=[network])


def test_bridged_cassandra_advertises_loopback_and_keeps_its_volume(docker_suite, suite_servers):
    """One node on a bridge network: CQL published on 127.0.0.1:9042, and the node tells the
    driver 127.0.0.1 (so a client never connects to a container address). The preset names its
    image (docker_image, as for the official one: here our image under another tag), and
    `down --keep-data` keeps the data volume for the next `up`."""
    if not ports.is_free("127.0.0.1", 9042):
        pytest.skip("127.0.0.1:9042 is taken (a bridged node publishes CQL there)")
    provider, client = docker_suite.provider, docker_suite.client
    client.images.get(images.image_name("cassandra")).tag("wbtest/cassandra", "contract")
    spec = CassandraSpec(name="t-dk-cassandra-br", nodes=1, heap="512M", docker_network="bridge",
                         docker_image="wbtest/cassandra:contract")
    cluster = provider.up(spec)
    try:
        container = client.containers.get(cluster.node("node1").container)
        assert container.attrs["Config"]["Image"] == "wbtest/cassandra:contract"
        assert cluster.contact_points == [("127.0.0.1", 9042)]
        driver = Driver(["127.0.0.1"], protocol_version=4, connect_timeout=10)
        try:
            session = driver.connect()
            row = session.execute("SELECT rpc_address, listen_address FROM system.local").one()
            endpoints = [str(h.endpoint) for h in driver.metadata.all_hosts()]
        finally:
            driver.shutdown()
        assert str(row.rpc_address) == "127.0.0.1" and not str(row.listen_address).startswith("127.")
        assert endpoints == ["127.0.0.1:9042"]
        load_and_run(suite_servers, spec.name, "cassandra", "dk_bridge")

        provider.down(spec.name, keep_data=True)
        assert provider.phase(spec.name) == "kept"
        assert client.volumes.list(filters={"label": f"{engine.LABEL}={spec.name}"})
        provider.up(spec)
        driver = Driver(["127.0.0.1"], protocol_version=4, connect_timeout=10)
        try:
            count = driver.connect().execute("SELECT COUNT(*) FROM ycsb.dk_bridge").one()[0]
        finally:
            driver.shutdown()
        assert count == 300  # the records loaded before the restart
    finally:
        provider.down(spec.name)
        client.images.remove("wbtest/cassandra:contract")


def test_a_tls_cluster_folder_is_private_and_its_containers_still_read_their_mounts(docker_suite,
                                                                                    suite_servers):
    """A login and TLS in a container: the keystore and the cassandra.yaml that holds its password
    stay readable by the container's user (the official image's is not root), so the cluster's
    folder is what keeps them from other users of the machine: 0700. A process of another user
    in a container still reads them through their mounts, and load and run log in over TLS."""
    provider = docker_suite.provider
    spec = CassandraSpec(name="t-dk-secure", nodes=1, heap="512M", docker_memory="1G",
                         authenticator="PasswordAuthenticator", client_tls=True,
                         first_address=suite_servers.addresses(1))
    cluster = provider.up(spec)
    try:
        assert cluster.run_dir.stat().st_mode & 0o777 == 0o700
        conf, tls = cluster.run_dir / "node1" / "conf", cassandra_local.tls_dir(cluster.run_dir)
        assert "keystore_password" in (conf / "cassandra.yaml").read_text()
        look = "grep -c keystore_password /c/cassandra.yaml && wc -c < /t/keystore.p12"
        seen = docker_suite.client.containers.run(
            images.BASE, ["sh", "-c", look],
            user="999:999", network_mode="none", remove=True,
            volumes={str(conf): {"bind": "/c", "mode": "ro"}, str(tls): {"bind": "/t", "mode": "ro"}})
        lines = seen.decode().split()
        assert lines[0] == "1" and int(lines[1]) > 0, seen
        load_and_run(suite_servers, spec.name, "cassandra", "dk_tls")
    finally:
        provider.down(spec.name)


def test_the_cassandra_image_honours_the_official_environment_contract(docker_suite, suite_servers):
    """Run the image by hand, as a user of the official image would: env variables only."""
    address = suite_servers.addresses(1)
    client = docker_suite.client
    container = client.containers.run(
        images.image_name("cassandra"), detach=True, network_mode="host",
        labels={engine.LABEL: "t-dk-contract", STATE_LABEL: docker_suite.provider.tag},
        environment={"CASSANDRA_LISTEN_ADDRESS": address, "CASSANDRA_RPC_ADDRESS": address,
                     "CASSANDRA_CLUSTER_NAME": "Contract Test", "CASSANDRA_NUM_TOKENS": "4",
                     "CASSANDRA_ENDPOINT_SNITCH": "GossipingPropertyFileSnitch", "CASSANDRA_DC": "dc7",
                     "MAX_HEAP_SIZE": "512M", "HEAP_NEWSIZE": "128M",
                     "JVM_EXTRA_OPTS": f"-Dcassandra.jmx.local.port={cassandra_local.jmx_port(address)}"})
    try:
        deadline = time.monotonic() + 180
        row = None
        while row is None and time.monotonic() < deadline:
            container.reload()
            assert container.status == "running", container.logs(tail=30).decode(errors="replace")
            driver = Driver([address], protocol_version=4, connect_timeout=2)
            try:
                row = driver.connect().execute(
                    "SELECT cluster_name, listen_address, data_center, tokens FROM system.local").one()
            except Exception:  # noqa: BLE001 - not serving yet
                time.sleep(0.5)
            finally:
                driver.shutdown()
        assert row is not None, "the node did not serve CQL"
        assert row.cluster_name == "Contract Test" and str(row.listen_address) == address
        assert row.data_center == "dc7" and len(row.tokens) == 4
    finally:
        container.remove(force=True, v=True)


def test_what_the_engine_refuses_is_one_line_and_leaves_nothing(docker_suite, suite_servers):
    """A container of someone else's holds the node's name: `up` fails in one line, removes what
    it created, and leaves that container alone."""
    provider, client = docker_suite.provider, docker_suite.client
    spec = CassandraSpec(name="t-dk-taken", nodes=1, heap="512M", first_address=suite_servers.addresses(1))
    squatter = client.containers.create(images.BASE, ["sleep", "600"], network_mode="none",
                                        name=provider._object_name(spec.name, "node1"))
    try:
        with pytest.raises(ClusterError, match="the Docker engine refused: .*(Conflict|already in use)"):
            provider.up(spec)
        assert not client.volumes.list(filters={"label": f"{engine.LABEL}={spec.name}"})
        squatter.reload()
        assert squatter.status == "created"
    finally:
        squatter.remove(force=True)
        if spec.name in provider.clusters():
            provider.down(spec.name)


def test_no_engine_is_one_line_with_the_fix(tmp_path):
    env = dict(os.environ, DOCKER_HOST=f"unix://{tmp_path}/nothing.sock", WORKBENCH_STATE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "workbench", "cluster", "up", "cassandra-single",
                           "--provider", "docker"], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=env)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("workbench: error: no Docker engine answers at unix://"), done.stderr
    assert "Traceback" not in done.stderr and "DOCKER_HOST" in lines[-1]


# Runs in a network namespace of its own (unshare --net): the host's bridges and firewall tables
# are never touched, not even created empty.
_NETWORK_SCRIPT = """
import json, subprocess, sys, uuid
from pathlib import Path
from workbench.clusters import engine

folder = Path(sys.argv[1])
private = engine.PrivateEngine(folder, folder / "root")
bridge, chain = "wbo" + uuid.uuid4().hex[:8], "WBT" + uuid.uuid4().hex[:8].upper()
jump = ["INPUT", "-i", bridge, "-j", chain]
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
try:
    client = engine.connect(private.start())
    try:
        theirs = "br-" + client.networks.create("wbtest", driver="bridge").id[:12]
    finally:
        client.close()
    subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], check=True)
    subprocess.run(["iptables", "-N", chain], check=True)
    subprocess.run(["iptables", "-A", chain, "-j", "RETURN"], check=True)
    subprocess.run(["iptables", "-A", *jump], check=True)
    during = engine.network_state()
    undone = private.stop()
finally:
    private.stop()
after = engine.network_state()
kept_rule = subprocess.run(["iptables", "-C", *jump], capture_output=True).returncode == 0
print(json.dumps({"bridge": bridge, "chain": chain, "theirs": theirs, "during": during, "after": after,
                  "undone": undone, "kept_rule": kept_rule}))
"""


@pytest.mark.skipif(not capabilities.network_admin(),
                    reason="needs iproute2, iptables and CAP_NET_ADMIN (probed in a namespace)")
def test_a_private_engine_undoes_only_what_it_made_to_the_network(tmp_path):
    """While a private dockerd runs, another program adds a bridge and an iptables chain with a
    rule; the engine makes a bridge network of its own. Its stop removes its own bridge and
    leaves the other program's bridge, chain and rule as they are."""
    if shutil.which("dockerd") is None or shutil.which("iptables") is None:
        pytest.skip("needs dockerd and iptables (.ci/run installs docker.io)")
    folder = Path(tempfile.mkdtemp(prefix="wb-dockerd-net-", dir="/tmp"))
    try:
        done = subprocess.run(["unshare", "--net", sys.executable, "-c", _NETWORK_SCRIPT, str(folder)],
                              capture_output=True, text=True, timeout=300, cwd=ROOT)
    finally:
        left = engine.PrivateEngine(folder).pid()
        if left is not None:  # the script died with its engine running: stop it, restore nothing
            from workbench.clusters import processes

            processes.stop(left[0], left[1], 30)
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert {seen["theirs"], seen["bridge"]} <= set(seen["during"]["bridges"])
    assert seen["bridge"] in seen["after"]["bridges"], seen["undone"]  # another program's: kept
    assert seen["theirs"] not in seen["after"]["bridges"], seen["undone"]  # the engine's: gone
    assert seen["kept_rule"] and f":{seen['chain']} " in seen["after"]["iptables"], seen["undone"]
    assert f"-A {seen['chain']} -j RETURN" in seen["after"]["iptables"]


def test_ferretdb_in_a_container_with_a_login_serves_and_survives_a_kill(docker_suite, suite_servers):
    """workbench/ferretdb on the host network: FerretDB and its PostgreSQL in one container, a
    login made through the mongo image's MONGO_INITDB_ROOT_* contract (checked by PostgreSQL: a
    wrong password is refused); killed and restarted, it keeps what was loaded."""
    from pymongo import MongoClient
    from pymongo.errors import OperationFailure

    provider, client = docker_suite.provider, docker_suite.client
    spec = FerretDBSpec(name="t-dk-ferretdb", login=True, **suite_servers.ferretdb_ports())
    cluster = provider.up(spec)
    try:
        assert [n.name for n in cluster.nodes] == ["ferretdb"]
        assert cluster.server_version == "FerretDB 1.24.2 on PostgreSQL 15 (MongoDB protocol)"
        container = client.containers.get(cluster.node("ferretdb").container)
        assert container.attrs["Config"]["Env"].count("MONGO_INITDB_ROOT_USERNAME=ferretdb") == 1
        load_and_run(suite_servers, spec.name, "mongodb", "dk_ferret")
        wrong = MongoClient(spec.address, spec.port, username="ferretdb", password="wrong",
                            authMechanism="PLAIN", serverSelectionTimeoutMS=10000)
        with pytest.raises(OperationFailure):
            wrong.ycsb.list_collection_names()
        wrong.close()
        provider.kill(spec.name, "ferretdb")
        assert provider.status(spec.name).node("ferretdb").status == "down"
        provider.restart(spec.name, "ferretdb")
        user, password = provider.status(spec.name).credentials
        right = MongoClient(spec.address, spec.port, username=user, password=password, authMechanism="PLAIN",
                            serverSelectionTimeoutMS=10000)
        try:
            assert right.ycsb.dk_ferret.count_documents({}) == 300
        finally:
            right.close()
    finally:
        provider.down(spec.name)
    assert not [line for line in docker_suite.leftovers() if spec.name in line]


def test_a_mongo_image_of_the_preset_is_started_by_its_contract_and_named_by_what_it_answers(
        docker_suite, suite_servers):
    """docker_image = "mongo:7.0" is how a user with a registry runs MongoDB itself; here our own
    image under such a tag stands in for it, on a bridge network: `mongod --port 27017` inside,
    published on 127.0.0.1 only, and the server named from its buildInfo (FerretDB, not MongoDB)."""
    provider, client = docker_suite.provider, docker_suite.client
    client.images.get(images.image_name("ferretdb")).tag("wbtest/mongo", "7.0")
    spec = FerretDBSpec(name="t-dk-mongo", docker_image="wbtest/mongo:7.0", docker_network="bridge",
                        **suite_servers.ferretdb_ports())
    try:
        cluster = provider.up(spec)
        container = client.containers.get(cluster.node("ferretdb").container)
        assert container.attrs["Config"]["Image"] == "wbtest/mongo:7.0"
        assert container.attrs["Config"]["Cmd"] == ["mongod", "--port", "27017", "--bind_ip", "0.0.0.0"]
        published = container.attrs["HostConfig"]["PortBindings"]["27017/tcp"]
        assert published == [{"HostIp": "127.0.0.1", "HostPort": str(spec.port)}]
        assert cluster.contact_points == [("127.0.0.1", spec.port)]
        assert cluster.server_version == "FerretDB 1.24.2 (MongoDB protocol, reports 7.0.42)"
        run = load_and_run(suite_servers, spec.name, "mongodb", "dk_mongo")
        assert "[OVERALL], Throughput(ops/sec)" in run
    finally:
        if spec.name in provider.clusters():
            provider.down(spec.name)
        client.images.remove("wbtest/mongo:7.0")
