"""What the Docker provider creates for a spec, as typed plans, with one planner per database.

    planner = planner_for(spec)                  # CassandraPlanner, HBasePlanner, FerretDBPlanner
    planner.check(spec)                          # refuses what the images cannot run
    plan = planner.plan(spec, run_dir, Naming(spec.name, tag))
    plan.containers[0].mounts, plan.network, plan.groups

A planner renders the files its containers mount (cassandra.yaml, HBase's conf/, ...) and says,
without any engine call, what to create: a `ClusterPlan` (the cluster's bridge network, if any,
its containers and the order they start in) of `ContainerPlan`s (name, image, command,
environment, mounts, labels, networking, published and host ports, limits, and the files the
provider records for the node). It also knows how its database is waited for, what the
provider reports as the server's version, and which nodes serve clients. The provider
(docker_provider.py) executes plans: docker-py calls, readiness waiting, the state file.

The planners mirror the local provider's per-database modules (databases/cassandra/cluster.py,
databases/hbase/cluster.py, databases/mongodb/cluster_ferretdb.py), whose config rendering,
command lines and readiness checks they reuse.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from workbench.clusters import engine, gc_log, images, paths
from workbench.clusters.distributions import VERSIONS
from workbench.clusters.specs import CassandraSpec, ClusterSpec, FerretDBSpec, HBaseSpec, data_home
from workbench.databases import resolve, servers
from workbench.databases.cassandra import cluster as cassandra_local
from workbench.databases.hbase import cluster as hbase_local
from workbench.databases.mongodb import cluster_ferretdb as ferretdb_local
from workbench.errors import ClusterError

STATE_LABEL = "org.workbench.state"
NODE_LABEL = "org.workbench.node"
MONGO_DATA = "/data/db"  # the official mongo image's data directory (and workbench/ferretdb's)
CONTAINER_CONF = Path("/workbench/conf")  # a Cassandra node's rendered config, inside its container
CONTAINER_TLS = Path("/workbench")  # the cluster's tls/ folder goes under here
CASSANDRA_DATA = "/var/lib/cassandra"
CASSANDRA_LOGS = "/var/log/cassandra"
HBASE_LIB = Path("/opt/hbase/lib")  # the image's jars and java, for the local command lines
IMAGE_JAVA = Path("/usr/bin/java")

Labels = tuple[tuple[str, str], ...]
HostPort = tuple[str, int, str]  # (address, port, what), as launch.NodePlan.ports


def size_bytes(size: str) -> int:
    """ "512M" or "2G" (a spec's heap or docker_memory) in bytes."""
    return int(size[:-1]) << (30 if size.endswith("G") else 20)


def published_port(index: int) -> int:
    """On a bridge network, node K serves CQL on 9042 + K - 1, published at the same port on
    127.0.0.1 and advertised as 127.0.0.1 (system.peers_v2 carries the port): the driver finds
    every node at an address it can reach, with no translation table of its own."""
    return cassandra_local.CQL_PORT + index - 1


@dataclass(frozen=True)
class Naming:
    """How the objects of one cluster are named and labelled under one provider state directory
    (`tag`: a hash of it), so that `down` finds them by label and never touches anything else."""

    cluster: str
    tag: str

    def object_name(self, what: str) -> str:
        """A container, volume or network name: wb-CLUSTER-WHAT-TAG6."""
        return f"wb-{self.cluster}-{what}-{self.tag[:6]}"

    def labels(self, node: str = "") -> Labels:
        """The cluster's labels, and the node's own for what belongs to one node."""
        cluster: Labels = ((engine.LABEL, self.cluster), (STATE_LABEL, self.tag))
        return (*cluster, (NODE_LABEL, node)) if node else cluster


@dataclass(frozen=True)
class Mount:
    """A host folder (absolute path) or a named volume, mounted at `target`."""

    source: str
    target: str
    read_only: bool = False

    @property
    def is_volume(self) -> bool:
        return not self.source.startswith("/")

    @property
    def mode(self) -> str:
        return "ro" if self.read_only else "rw"


@dataclass(frozen=True)
class Published:
    """A container port published on the host (bridge networks only)."""

    container_port: int
    host_address: str
    host_port: int

    @property
    def key(self) -> str:
        return f"{self.container_port}/tcp"


@dataclass(frozen=True)
class Networking:
    """host: the host's network; bridge: the cluster's network `name` (with `extra_hosts`);
    container: the network namespace of the container `name` (HBase's gateway joins its master)."""

    mode: Literal["host", "bridge", "container"]
    name: str = ""
    extra_hosts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ContainerPlan:
    """One container: what the engine is asked to run, and the node the provider records."""

    name: str  # the node's name in the cluster: node1, master, thrift, ferretdb
    container_name: str
    image: str
    command: tuple[str, ...]
    environment: tuple[tuple[str, str], ...]
    mounts: tuple[Mount, ...]
    labels: Labels
    networking: Networking
    published: tuple[Published, ...]  # bridge: what clients reach on 127.0.0.1
    host_ports: tuple[HostPort, ...]  # host network: what the servers bind, checked free first
    memory: int | None  # bytes (docker_memory), None: no limit
    nano_cpus: int | None  # docker_cpus * 1e9, None: no limit
    address: str  # where clients reach the node
    port: int
    dir: Path
    log: Path
    console_log: Path

    @property
    def volumes(self) -> tuple[str, ...]:
        """The named volumes it mounts (created, with its labels, before it starts)."""
        return tuple(m.source for m in self.mounts if m.is_volume)

    def ports_to_check(self) -> list[HostPort]:
        """The host ports that must be free before anything starts: those the servers bind on
        the host network, or those published on a bridge network."""
        if self.networking.mode == "host":
            return list(self.host_ports)
        return [(p.host_address, p.host_port, f"{self.name}'s published port {p.key}")
                for p in self.published]


@dataclass(frozen=True)
class ClusterPlan:
    """Every container of a cluster, the bridge network they share ("" on the host network) and
    the launch groups: node names started together, in order (the last group: waited for all)."""

    cluster: str
    network: str
    labels: Labels
    containers: tuple[ContainerPlan, ...]
    groups: tuple[tuple[str, ...], ...]

    def container(self, name: str) -> ContainerPlan:
        for plan in self.containers:
            if plan.name == name:
                return plan
        raise KeyError(name)

    @property
    def volumes(self) -> tuple[str, ...]:
        return tuple(v for plan in self.containers for v in plan.volumes)


Check = Callable[[], None]


class DockerPlanner(Protocol):
    """What the Docker provider asks of one database."""

    kind: str
    clients: tuple[str, ...]  # the nodes that serve clients (all of them when empty)

    def check(self, spec: ClusterSpec) -> None:
        """Refuse, before any engine call, what the images cannot run."""

    def plan(self, spec: ClusterSpec, run_dir: Path, naming: Naming) -> ClusterPlan:
        """Render the files the containers mount and return what to create."""

    def server_version(self, spec: ClusterSpec) -> str:
        """What the cluster reports running before it answers ("": the provider's pinned one)."""

    def served_version(self, spec: ClusterSpec, run_dir: Path) -> str | None:
        """Once up: what the servers say they are, if the plan could not know (None: keep)."""

    def wait_ready(self, spec: ClusterSpec, names: list[str], final: bool, deadline: float,
                   check: Check, run_dir: Path) -> None:
        """Block until the named nodes serve (NotReady at the deadline); check() raises if one died."""


def _networking(spec: ClusterSpec, naming: Naming, extra_hosts: tuple[tuple[str, str], ...] = ()
                ) -> Networking:
    if spec.docker_network == "host":
        return Networking("host")
    return Networking("bridge", naming.object_name("net"), extra_hosts)


def _limits(spec: ClusterSpec) -> tuple[int | None, int | None]:
    """(memory bytes, nano CPUs) of each container: docker_cpus, else the spec's per-node `cpus`
    cap (the engine's CPU quota, what a cgroup gives a local process)."""
    cpus = spec.docker_cpus or getattr(spec, "cpus", 0.0)
    return (size_bytes(spec.docker_memory) if spec.docker_memory else None,
            int(cpus * 1e9) if cpus else None)


def _cluster_plan(spec: ClusterSpec, naming: Naming, containers: list[ContainerPlan],
                  groups: list[list[str]]) -> ClusterPlan:
    return ClusterPlan(spec.name, naming.object_name("net") if spec.docker_network == "bridge" else "",
                       naming.labels(), tuple(containers), tuple(tuple(g) for g in groups))


def _check_release(spec: CassandraSpec | HBaseSpec) -> None:
    if spec.release != VERSIONS[spec.kind]:
        raise ClusterError(f"{spec.kind} {spec.release} (version = {spec.version!r}) is served by the "
                           f"local provider only: the images carry {spec.kind} "
                           f"{VERSIONS[spec.kind]}",
                           hint="leave out --provider docker, or leave version out of the preset")


def _check_memory(spec: CassandraSpec | HBaseSpec, heaps: int) -> None:
    if spec.docker_memory and size_bytes(spec.docker_memory) < heaps + (256 << 20):
        raise ClusterError(f"docker_memory = {spec.docker_memory!r} leaves no room beside the JVM heap "
                           f"({spec.heap}): the engine would kill the node",
                           hint="give each container at least its heap plus 256M")


class CassandraPlanner:
    """Nodes configured through the official image's environment contract, plus the node's
    cassandra.yaml (rendered as for local nodes) mounted read-only; data in a volume per node."""

    kind = "cassandra"
    clients: tuple[str, ...] = ()

    def check(self, spec: CassandraSpec) -> None:
        _check_release(spec)
        _check_memory(spec, size_bytes(spec.heap))

    def plan(self, spec: CassandraSpec, run_dir: Path, naming: Naming) -> ClusterPlan:
        password = None
        if spec.client_tls:
            from workbench.clusters import java

            # The keystore and each node's cassandra.yaml (its password) must stay readable by the
            # container's own user, so they cannot be 0600: the cluster's folder, which containers
            # never cross (they see only its mounted subfolders), is 0700 instead.
            paths.private_dir(run_dir)
            password = cassandra_local.make_tls(spec, run_dir, java.choose().java, private=False)
        containers = [self._node(spec, index, run_dir, naming, password)
                      for index in range(1, spec.nodes + 1)]
        return _cluster_plan(spec, naming, containers, cassandra_local.launch_groups(spec, run_dir))

    def joining(self, spec: CassandraSpec, index: int, run_dir: Path, naming: Naming, others: list[str],
                client: dict) -> ContainerPlan:
        """Node `index` joining the running cluster (resize.add_node): tokens of its own, taken
        from the ring `others[0]` reports, and auto_bootstrap on, as the local provider's."""
        owners = cassandra_local.ring_of(spec, others, client)
        password = cassandra_local.tls_password(run_dir) if spec.client_tls else None
        return self._node(spec, index, run_dir, naming, password,
                          initial_tokens=cassandra_local.new_tokens(owners, spec.num_tokens), bootstrap=True)

    def nodetool_command(self, node, args: list[str]) -> list[str]:
        """`nodetool ARGS`, to run in the node's container (its JMX port is local to it)."""
        from workbench.databases.cassandra.cluster_maintenance import container_nodetool

        return container_nodetool(node, args)

    def _node(self, spec: CassandraSpec, index: int, run_dir: Path, naming: Naming,
              password: str | None, initial_tokens: list[int] | None = None,
              bootstrap: bool = False) -> ContainerPlan:
        bridge = spec.docker_network == "bridge"
        name, address = f"node{index}", spec.address(index)
        node_dir = run_dir / name
        conf, logs = node_dir / "conf", node_dir / "logs"
        conf.mkdir(parents=True, exist_ok=True)
        logs.mkdir(parents=True, exist_ok=True)
        cql, network = cassandra_local.CQL_PORT, {}
        seed = naming.object_name("node1") if bridge else spec.address(1)
        if bridge:  # listen on the container's address, tell clients 127.0.0.1 and a port of its own
            cql = published_port(index)
            network = {"listen": naming.object_name(name), "rpc": "0.0.0.0",
                       "broadcast_rpc": "127.0.0.1", "native_port": cql, "seed": seed}
        (conf / "cassandra.yaml").write_text(cassandra_local._render_yaml(
            spec, index, Path(CASSANDRA_DATA), CONTAINER_TLS, password, initial_tokens=initial_tokens,
            bootstrap=bootstrap, **network))
        jmx = cassandra_local.jmx_port(address)
        env = {
            "CASSANDRA_CLUSTER_NAME": spec.name,
            "CASSANDRA_SEEDS": seed,
            "CASSANDRA_NUM_TOKENS": str(spec.num_tokens),
            "MAX_HEAP_SIZE": spec.heap,
            "HEAP_NEWSIZE": f"{max(64, size_bytes(spec.heap) // 4 >> 20)}M",
            "JVM_EXTRA_OPTS": " ".join((
                f"-Dcassandra.config=file://{CONTAINER_CONF / 'cassandra.yaml'}",
                f"-Dcassandra.jmx.local.port={jmx}",
                "-Dcassandra.superuser_setup_delay_ms=0",
                "-Dcassandra.ring_delay_ms=1000",
                "-Dcassandra.skip_wait_for_gossip_to_settle=0",
                # logs/system.gc.log on the host, as a local node's (gc_log.py)
                gc_log.flag(gc_log.beside(Path(CASSANDRA_LOGS) / "system.log")),
                *(cassandra_local.BOOTSTRAP_FLAGS if bootstrap else ()),
            )),
        }
        if bridge:
            env.update(CASSANDRA_LISTEN_ADDRESS="auto", CASSANDRA_RPC_ADDRESS="0.0.0.0",
                       CASSANDRA_BROADCAST_RPC_ADDRESS="127.0.0.1")
        else:
            env.update(CASSANDRA_LISTEN_ADDRESS=address, CASSANDRA_RPC_ADDRESS=address,
                       CASSANDRA_BROADCAST_ADDRESS=address)
        mounts = [Mount(str(conf), str(CONTAINER_CONF), read_only=True), Mount(str(logs), CASSANDRA_LOGS)]
        if spec.client_tls:
            mounts.append(Mount(str(cassandra_local.tls_dir(run_dir)), str(CONTAINER_TLS / "tls"),
                                read_only=True))
        if spec.data_dir:
            data = data_home(spec, run_dir) / name
            data.mkdir(parents=True, exist_ok=True)
            mounts.append(Mount(str(data), CASSANDRA_DATA))
        else:
            mounts.append(Mount(naming.object_name(f"{name}-data"), CASSANDRA_DATA))
        memory, cpus = _limits(spec)
        return ContainerPlan(
            name=name, container_name=naming.object_name(name),
            image=spec.docker_image or images.image_name("cassandra"), command=("cassandra", "-f"),
            environment=tuple(env.items()), mounts=tuple(mounts), labels=naming.labels(name),
            networking=_networking(spec, naming),
            published=(Published(cql, "127.0.0.1", cql),) if bridge else (),
            host_ports=cassandra_local.node_ports(address), memory=memory, nano_cpus=cpus,
            address="127.0.0.1" if bridge else address, port=cql, dir=node_dir,
            log=logs / "system.log", console_log=logs / "console.log")

    def server_version(self, spec: CassandraSpec) -> str:
        return ""

    def served_version(self, spec: CassandraSpec, run_dir: Path) -> str | None:
        return None

    def wait_ready(self, spec: CassandraSpec, names: list[str], final: bool, deadline: float,
                   check: Check, run_dir: Path) -> None:
        if spec.docker_network == "bridge":  # every node on 127.0.0.1, at its published port
            cassandra_local.wait_ready(spec, names, final, deadline, check, run_dir,
                                       where=lambda index: ("127.0.0.1", published_port(index)))
        else:
            cassandra_local.wait_ready(spec, names, final, deadline, check, run_dir)


class HBasePlanner:
    """The local provider's command lines (the image's java and jars) with the cluster directory
    mounted at the same path. On a bridge network the gateway joins the master's network
    namespace, where the Thrift port is published."""

    kind = "hbase"
    clients: tuple[str, ...] = ("thrift",)

    def check(self, spec: HBaseSpec) -> None:
        _check_release(spec)
        if spec.distributed and spec.docker_network != "host":
            raise ClusterError(f"cluster {spec.name!r}: HBase with RegionServers of their own "
                               f"(regionservers = {spec.regionservers}) runs on the host's network "
                               "only (each RegionServer on its own loopback address)",
                               hint='leave docker_network out of the preset (or set it to "host")')
        _check_memory(spec, max(size_bytes(spec.heap), size_bytes(spec.thrift_heap)))

    def plan(self, spec: HBaseSpec, run_dir: Path, naming: Naming) -> ClusterPlan:
        local = hbase_local.plans(spec, run_dir, HBASE_LIB, IMAGE_JAVA)
        mounts = self._mounts(spec, run_dir)
        containers = [self._container(spec, node, naming, mounts) for node in local]
        return _cluster_plan(spec, naming, containers, hbase_local.launch_groups(spec, run_dir))

    def joining(self, spec: HBaseSpec, index: int, run_dir: Path, naming: Naming, others: list[str],
                client: dict) -> ContainerPlan:
        """RegionServer `index` (resize.add_node), as plan() makes the others."""
        node = hbase_local.join_plan(spec, index, run_dir, HBASE_LIB, IMAGE_JAVA, others, client)
        return self._container(spec, node, naming, self._mounts(spec, run_dir))

    def leave_command(self, spec: HBaseSpec, node, deadline: float) -> list[str]:
        """HBase's RegionMover, run in the RegionServer's container on its own conf/ and jars."""
        return hbase_local.mover_argv(spec, node, deadline)

    def _mounts(self, spec: HBaseSpec, run_dir: Path) -> list[Mount]:
        mounts = [Mount(str(run_dir), str(run_dir))]
        data = data_home(spec, run_dir)
        if data != run_dir:
            mounts.append(Mount(str(data), str(data)))
        return mounts

    def _container(self, spec: HBaseSpec, node, naming: Naming, mounts: list[Mount]) -> ContainerPlan:
        """The container of one process of the local plan (a launch.NodePlan)."""
        bridge = spec.docker_network == "bridge"
        memory, cpus = _limits(spec)
        container_name = naming.object_name(node.name)
        command = list(node.argv)
        published: tuple[Published, ...] = ()
        if bridge and node.name == "thrift":
            # The published port reaches the container's own address, not its loopback.
            command[command.index("-b") + 1] = "0.0.0.0"
            networking = Networking("container", naming.object_name("master"))
        else:  # everything listens on the loopback it shares with its gateway
            networking = _networking(spec, naming, ((container_name, spec.address),))
            if bridge and node.name == "master":  # the gateway is reached through the master
                published = (Published(spec.thrift_port, "127.0.0.1", spec.thrift_port),)
        return ContainerPlan(
            name=node.name, container_name=container_name, image=images.image_name("hbase"),
            command=tuple(command), environment=(), mounts=tuple(mounts),
            labels=naming.labels(node.name), networking=networking, published=published,
            host_ports=node.ports, memory=memory, nano_cpus=cpus, address=node.address,
            port=node.port, dir=node.dir, log=node.log, console_log=node.console_log)

    def server_version(self, spec: HBaseSpec) -> str:
        return ""

    def served_version(self, spec: HBaseSpec, run_dir: Path) -> str | None:
        return None

    def wait_ready(self, spec: HBaseSpec, names: list[str], final: bool, deadline: float,
                   check: Check, run_dir: Path) -> None:
        hbase_local.wait_ready(spec, names, final, deadline, check, run_dir)


class FerretDBPlanner:
    """One container with the mongo image's contract: workbench/ferretdb (FerretDB and its
    PostgreSQL), or the preset's docker_image (a real `mongo:7.0` where one can be pulled)."""

    kind = "ferretdb"
    clients: tuple[str, ...] = ("ferretdb",)

    def check(self, spec: FerretDBSpec) -> None:
        if spec.client_tls:
            raise ClusterError("client_tls for FerretDB is served by the local provider only",
                               hint="leave it out with --provider docker, or use the local provider")

    def plan(self, spec: FerretDBSpec, run_dir: Path, naming: Naming) -> ClusterPlan:
        logs = run_dir / "ferretdb"
        logs.mkdir(parents=True, exist_ok=True)
        bridge = spec.docker_network == "bridge"
        inside = 27017 if bridge else spec.port
        env = {"FERRETDB_BACKEND": spec.backend, "WORKBENCH_POSTGRES_PORT": str(spec.postgres_port),
               "POSTGRES_SHARED_BUFFERS": spec.shared_buffers}
        if spec.login:
            secret = ferretdb_local.password_file(run_dir)
            if not secret.exists():
                import secrets

                paths.write_private(secret, secrets.token_urlsafe(18) + "\n")
            env.update(MONGO_INITDB_ROOT_USERNAME=ferretdb_local.FERRETDB_USER,
                       MONGO_INITDB_ROOT_PASSWORD=secret.read_text().strip())
        if spec.data_dir:
            data = data_home(spec, run_dir)
            data.mkdir(parents=True, exist_ok=True)
            mount = Mount(str(data), MONGO_DATA)
        else:
            mount = Mount(naming.object_name("data"), MONGO_DATA)
        needed = [(spec.address, spec.port, "FerretDB")]
        if spec.backend == "postgresql" and not spec.docker_image:
            needed.append(("127.0.0.1", spec.postgres_port, "PostgreSQL"))
        memory, cpus = _limits(spec)
        container = ContainerPlan(
            name="ferretdb", container_name=naming.object_name("ferretdb"),
            image=spec.docker_image or images.image_name("ferretdb"),
            command=("mongod", "--port", str(inside), "--bind_ip", "0.0.0.0" if bridge else spec.address),
            environment=tuple(env.items()), mounts=(mount,), labels=naming.labels("ferretdb"),
            networking=_networking(spec, naming),
            published=(Published(inside, "127.0.0.1", spec.port),) if bridge else (),
            host_ports=tuple(needed), memory=memory, nano_cpus=cpus,
            address="127.0.0.1" if bridge else spec.address, port=spec.port, dir=logs,
            log=logs / "console.log", console_log=logs / "console.log")
        return _cluster_plan(spec, naming, [container], [["ferretdb"]])  # PostgreSQL runs inside

    def server_version(self, spec: FerretDBSpec) -> str:
        """FerretDB's honest name in our image; "" for another image (named from what it
        answers once it is up)."""
        if spec.docker_image:
            return ""
        under = "PostgreSQL 15" if spec.backend == "postgresql" else "SQLite"
        from workbench.clusters import gobuild

        return f"FerretDB {gobuild.VERSION} on {under} (MongoDB protocol)"

    def served_version(self, spec: FerretDBSpec, run_dir: Path) -> str | None:
        """Whatever a preset's own image is, it says so itself (buildInfo); FerretDB is named as
        FerretDB."""
        if not spec.docker_image:
            return None
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        from workbench.databases.mongodb.server_name import mongodb_server_name

        client = MongoClient("127.0.0.1" if spec.docker_network == "bridge" else spec.address, spec.port,
                             serverSelectionTimeoutMS=10000, **ferretdb_local.client_options(spec, run_dir))
        try:
            return mongodb_server_name(client.admin.command("buildInfo"))
        except PyMongoError:
            return ""
        finally:
            client.close()

    def wait_ready(self, spec: FerretDBSpec, names: list[str], final: bool, deadline: float,
                   check: Check, run_dir: Path) -> None:
        ferretdb_local.wait_ready(spec, names, final, deadline, check, run_dir)


@functools.cache
def _planner(kind: str) -> DockerPlanner:
    return resolve(next(s.docker for s in servers() if s.kind == kind))()


def planner_for(spec: ClusterSpec) -> DockerPlanner:
    """The planner of the spec's server (its descriptor's `docker`, databases/); a server
    without one is refused."""
    kind = getattr(spec, "kind", None)
    planned = [s.kind for s in servers() if s.docker]
    if kind not in planned:
        raise ClusterError(f"the docker provider cannot start a {kind!r} cluster",
                           hint=f"it starts {', '.join(planned)}; other databases need another "
                                "provider (external for a running one)")
    return _planner(kind)


def plan(spec: ClusterSpec, run_dir: Path, tag: str) -> ClusterPlan:
    """What the Docker provider with state tag `tag` creates for `spec` (rendering its files
    under run_dir): checked, then planned by the database's planner."""
    planner = planner_for(spec)
    planner.check(spec)
    return planner.plan(spec, run_dir, Naming(spec.name, tag))
