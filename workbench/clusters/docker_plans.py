"""What the Docker provider creates for a spec, as typed plans, with one planner per database
(each in its database's folder, databases/<name>/cluster_docker.py, named by the server's
descriptor: `docker`); this module holds the plans' types and what the planners share.

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
databases/hbase/cluster.py, databases/mongodb/cluster_ferretdb.py), beside them in their folders,
whose config rendering, command lines and readiness checks they reuse.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from workbench.clusters import engine
from workbench.clusters.distributions import VERSIONS
from workbench.clusters.specs import ClusterSpec
from workbench.databases import resolve, servers
from workbench.databases.cassandra import cluster as cassandra_local
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.databases.hbase.cluster_spec import HBaseSpec
from workbench.errors import ClusterError

STATE_LABEL = "org.workbench.state"
NODE_LABEL = "org.workbench.node"

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

    def leave(self, spec: ClusterSpec, node: Any, deadline: float, run: Callable[[list, str], None],
              say: Callable[[str], None]) -> None:
        """Move a node's data to the others before it is removed (databases that resize), running
        each command in its container with `run(argv, what)`, which raises ClusterError."""


def plan_networking(spec: ClusterSpec, naming: Naming, extra_hosts: tuple[tuple[str, str], ...] = ()
                ) -> Networking:
    if spec.docker_network == "host":
        return Networking("host")
    return Networking("bridge", naming.object_name("net"), extra_hosts)


def container_limits(spec: ClusterSpec) -> tuple[int | None, int | None]:
    """(memory bytes, nano CPUs) of each container: docker_cpus, else the spec's per-node `cpus`
    cap (the engine's CPU quota, what a cgroup gives a local process)."""
    cpus = spec.docker_cpus or getattr(spec, "cpus", 0.0)
    return (size_bytes(spec.docker_memory) if spec.docker_memory else None,
            int(cpus * 1e9) if cpus else None)


def cluster_plan(spec: ClusterSpec, naming: Naming, containers: list[ContainerPlan],
                  groups: list[list[str]]) -> ClusterPlan:
    return ClusterPlan(spec.name, naming.object_name("net") if spec.docker_network == "bridge" else "",
                       naming.labels(), tuple(containers), tuple(tuple(g) for g in groups))


def check_release(spec: CassandraSpec | HBaseSpec) -> None:
    if spec.release != VERSIONS[spec.kind]:
        raise ClusterError(f"{spec.kind} {spec.release} (version = {spec.version!r}) is served by the "
                           f"local provider only: the images carry {spec.kind} "
                           f"{VERSIONS[spec.kind]}",
                           hint="leave out --provider docker, or leave version out of the preset")


def check_memory(spec: CassandraSpec | HBaseSpec, heaps: int) -> None:
    if spec.docker_memory and size_bytes(spec.docker_memory) < heaps + (256 << 20):
        raise ClusterError(f"docker_memory = {spec.docker_memory!r} leaves no room beside the JVM heap "
                           f"({spec.heap}): the engine would kill the node",
                           hint="give each container at least its heap plus 256M")


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
