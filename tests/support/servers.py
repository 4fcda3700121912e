"""Real servers for the test suite, started through the project's own local provider.

Each topology starts at most once per test run, on first use, and is brought down at the end
of the session. Every cluster lives under one temporary state directory (the jar cache is shared
and taken from WORKBENCH_CACHE_DIR as usual), on addresses and ports that stay clear of the
presets' defaults and from other test runs on the same machine (free addresses and ports are
claimed with lock files), so a developer's own clusters keep running during the tests.
Every JVM the suite starts carries that state directory in its command line; that is how the
end-of-session check finds survivors.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import shutil
import signal
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from workbench.clusters import distributions, engine, images, ports, processes
from workbench.clusters.base import Cluster
from workbench.clusters.docker_provider import STATE_LABEL, DockerProvider
from workbench.clusters.local import LocalProvider
from workbench.clusters.specs import ClusterSpec
from workbench.databases.cassandra import cluster as cassandra_local
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.databases.hbase.cluster_spec import HBaseSpec
from workbench.databases.mongodb.cluster_spec import FerretDBSpec
from workbench.errors import ClusterError

SPECS: dict[str, ClusterSpec] = {
    "cassandra_node": CassandraSpec(name="t-cassandra", nodes=1, heap="512M"),
    "cassandra_cluster3": CassandraSpec(name="t-cassandra3", nodes=3, heap="512M",
                                        replication_factor=2),
    "hbase_server": HBaseSpec(name="t-hbase", heap="768M", thrift_heap="256M"),
    "ferretdb_server": FerretDBSpec(name="t-ferretdb", shared_buffers="64MB"),
    "ferretdb_sqlite": FerretDBSpec(name="t-ferretdb-sqlite", backend="sqlite"),
    "ferretdb_secure": FerretDBSpec(name="t-ferretdb-sec", shared_buffers="64MB", login=True,
                                    client_tls=True),
    "cassandra_secure": CassandraSpec(name="t-cassandra-sec", nodes=1, heap="512M",
                                      authenticator="PasswordAuthenticator", client_tls=True),
    # the second pinned releases (distributions.SERIES): Cassandra 4.1 on Java 17, HBase 2.5
    "cassandra41_node": CassandraSpec(name="t-cassandra41", nodes=1, heap="512M", version="4.1"),
    "hbase25_server": HBaseSpec(name="t-hbase25", heap="768M", thrift_heap="256M", version="2.5"),
    # ZooKeeper, the master and 3 RegionServers of their own (each on its own address), the gateway
    "hbase_cluster3": HBaseSpec(name="t-hbase3", regionservers=3, heap="384M", regionserver_heap="512M",
                                thrift_heap="256M", balancer_period_s=5),
}
# Addresses claimed after a cluster's own, free for a node a test adds (the add-node test's node4)
SPARE_ADDRESSES = {"cassandra_cluster3": 1, "hbase_cluster3": 1}
LOCK_DIR = Path(tempfile.gettempdir()) / "workbench-test-locks"


def skip_without_jars(kind: str, version: str = "") -> None:
    """Skip, saying why, when the server's jars are neither in the cache nor downloadable (no
    network to Maven Central): the one thing a server test needs from outside the machine."""
    missing = distributions.missing(kind, version=version)
    if not missing:
        return
    request = urllib.request.Request(missing[0].url, method="HEAD", headers={"User-Agent": "workbench"})
    try:
        urllib.request.urlopen(request, timeout=20).close()
    except (urllib.error.URLError, OSError) as exc:
        pytest.skip(f"needs the {kind} {distributions.resolve(kind, version)} jars: {len(missing)} "
                    f"are not in the cache and Maven Central "
                    f"does not answer ({getattr(exc, 'reason', exc)})")


def skip_without_ferretdb(spec: FerretDBSpec) -> None:
    """Skip, saying why, when FerretDB can be neither found built nor built (no Go toolchain),
    or the PostgreSQL preset has no PostgreSQL: the things a FerretDB test needs from the machine
    (.ci/run installs both)."""
    from workbench.databases.mongodb import cluster_ferretdb as ferretdb_local
    from workbench.databases.mongodb import cluster_ferretdb_build as gobuild

    if gobuild.cached() is None and gobuild.find_go() is None:
        pytest.skip("needs FerretDB: not built yet and no Go toolchain to build it (`workbench servers "
                    "fetch ferretdb` with Go installed)")
    if spec.backend == "postgresql":
        try:
            ferretdb_local.postgres_bin()
        except ClusterError as exc:
            pytest.skip(f"needs PostgreSQL's server programs: {exc.message}")


class SuiteServers:
    """The session's provider, its state directory and the clusters it started."""

    def __init__(self) -> None:
        self.state_dir = Path(tempfile.mkdtemp(prefix="workbench-test-state-"))
        self.provider = LocalProvider(state_dir=self.state_dir, progress=False, stop_timeout=30)
        self.started: list[str] = []

        self._locks: list[int] = []

    def _claim(self, what: str) -> bool:
        """Hold an exclusive lock on `what` for the rest of the session (False if taken):
        test runs started at the same time on one machine must not pick the same ports."""
        LOCK_DIR.mkdir(exist_ok=True)
        fd = os.open(LOCK_DIR / what, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._locks.append(fd)
        return True

    def addresses(self, count: int, ports_of: tuple[int, ...] = (7000, 9042)) -> str:
        """First of `count` consecutive free loopback addresses (127.0.0.41 and up): `ports_of`
        free on each (Cassandra's storage and CQL ports, and its JMX port on 127.0.0.1)."""
        for first in range(41, 250 - count):
            block = [f"127.0.0.{first + i}" for i in range(count)]
            free = all(ports.is_free(a, p) for a in block for p in ports_of) and all(
                ports.is_free("127.0.0.1", cassandra_local.jmx_port(a)) for a in block)
            if free and all(self._claim(a) for a in block):
                return block[0]
        raise RuntimeError("no free block of loopback addresses for Cassandra")

    def hbase_ports(self) -> dict[str, int]:
        for i in range(1, 40):
            # 20 apart: the info servers (/jmx) listen at the master's and RegionServer's port + 10
            chosen = {"zookeeper_port": 12181 + 10 * i, "master_port": 16100 + 20 * i,
                      "regionserver_port": 16105 + 20 * i, "thrift_port": 19090 + 10 * i}
            info = (chosen["master_port"] + 10, chosen["regionserver_port"] + 10)
            if all(ports.is_free("127.0.0.1", p) for p in (*chosen.values(), *info)) and self._claim(
                    f"hbase-{i}"):
                return chosen
        raise RuntimeError("no free set of HBase ports")

    def ferretdb_ports(self) -> dict[str, int]:
        for i in range(1, 40):
            chosen = {"port": 27100 + 10 * i, "postgres_port": 27105 + 10 * i}
            if all(ports.is_free("127.0.0.1", p) for p in chosen.values()) and self._claim(
                    f"ferretdb-{i}"):
                return chosen
        raise RuntimeError("no free pair of FerretDB and PostgreSQL ports")

    def spec(self, key: str) -> ClusterSpec:
        spec = SPECS[key]
        if isinstance(spec, CassandraSpec):
            count = spec.nodes + SPARE_ADDRESSES.get(key, 0)
            return dataclasses.replace(spec, first_address=self.addresses(count))
        if isinstance(spec, FerretDBSpec):
            return dataclasses.replace(spec, **self.ferretdb_ports())
        chosen = self.hbase_ports()
        if spec.regionservers:  # each RegionServer on an address of its own, and one spare
            count = spec.regionservers + SPARE_ADDRESSES.get(key, 0)
            chosen["address"] = self.addresses(count, tuple(chosen.values()))
        return dataclasses.replace(spec, **chosen)

    def up(self, key: str) -> Cluster:
        spec = self.spec(key)
        if spec.kind == "ferretdb":
            skip_without_ferretdb(spec)
        else:
            skip_without_jars(spec.kind, spec.version)
        self.started.append(spec.name)
        return self.provider.up(spec)

    def down_all(self) -> None:
        """Every cluster still up, all at once: one thread each, so their JVMs shut down in
        parallel instead of one cluster after the other (the nodes of one cluster already do)."""
        from concurrent.futures import ThreadPoolExecutor

        names = self.provider.clusters()
        with ThreadPoolExecutor(max(1, len(names))) as pool:
            list(pool.map(self.provider.down, names))  # the first error, once all have stopped

    def survivors(self) -> list[tuple[int, str]]:
        """(pid, command) of every live process whose command line names our state dir."""
        marker = str(self.state_dir).encode()
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if marker in cmd and processes.state(int(pid)) not in (None, "Z"):
                found.append((int(pid), cmd.replace(b"\0", b" ").decode(errors="replace")[:200]))
        return found

    def kill_survivors(self) -> None:
        for pid, _ in self.survivors():
            started = processes.start_time(pid)
            if started is not None:
                processes.send(pid, started, signal.SIGKILL)


class SuiteDocker:
    """The Docker engine of a test run: the one at DOCKER_HOST (or the default socket) if it
    answers, else a private dockerd this run starts (engine.PrivateEngine), and stops at the end,
    restoring the host's network state. Its images are built once per run (a no-op when cached).
    `reason` says why there is no engine, for the skip message."""

    def __init__(self, servers: SuiteServers) -> None:
        self.servers = servers
        self.private: engine.PrivateEngine | None = None
        self.client = None
        self.reason = ""
        self.provider: DockerProvider | None = None

    def start(self) -> bool:
        if self.client is not None or self.reason:
            return self.client is not None
        for kind in ("cassandra", "hbase"):  # the images carry the jars
            skip_without_jars(kind)
        try:
            self.client = engine.connect(timeout=30)
        except ClusterError as exc:
            found = str(exc)
            # The images live in the workbench cache's data root, unless another dockerd (a
            # second test run, a developer's private engine) uses it: then in one of our own.
            folder = Path(tempfile.mkdtemp(prefix="wb-dockerd-", dir="/tmp"))
            shared = self.servers._claim("dockerd-data-root")
            self.private = engine.PrivateEngine(folder)
            if not shared or engine.data_root_user(self.private.data_root) is not None:
                self.private = engine.PrivateEngine(folder, folder / "root")
            try:
                os.environ["DOCKER_HOST"] = self.private.start()
                self.client = engine.connect(timeout=30)
            except ClusterError as again:
                self.private.stop()
                self.private = None
                os.environ.pop("DOCKER_HOST", None)
                self.reason = f"no Docker engine ({found}) and none could be started ({again})"
                return False
        images.build(client=self.client, progress=False)
        self.provider = DockerProvider(state_dir=self.servers.state_dir, client=self.client,
                                       progress=False, stop_timeout=30)
        return True

    def _objects(self) -> list[tuple[str, str, str]]:
        """(what, name, cluster) of every container, network and volume this run's provider made
        that is still there."""
        if self.provider is None:
            return []
        label = {"label": f"{STATE_LABEL}={self.provider.tag}"}
        client = self.client
        found = [("container", c.name, c.labels) for c in client.containers.list(all=True, filters=label)]
        found += [("network", n.name, n.attrs.get("Labels") or {})
                  for n in client.networks.list(filters=label)]
        found += [("volume", v.name, v.attrs.get("Labels") or {}) for v in client.volumes.list(filters=label)]
        return [(what, name, labels.get(engine.LABEL, "")) for what, name, labels in found]

    def leftovers(self) -> list[str]:
        """What this run's provider created and did not remove: containers, networks, volumes."""
        return [f"{what} {name}" for what, name, _ in self._objects()]

    def stop(self) -> list[str]:
        """Take down what is left (returned), then stop the engine if this run started it."""
        objects = self._objects()
        left = [f"{what} {name}" for what, name, _ in objects]
        if self.provider is not None:
            names = set(self.provider.clusters()) | {cluster for _, _, cluster in objects}
            for name in sorted(names - {""}):
                try:
                    self.provider.down(name)
                except ClusterError:
                    pass
        if self.client is not None:
            self.client.close()
        if self.private is not None:
            self.private.stop()
            if self.private.pid() is not None:
                left.append("dockerd still running")
            else:
                shutil.rmtree(self.private.dir, ignore_errors=True)
        return left
