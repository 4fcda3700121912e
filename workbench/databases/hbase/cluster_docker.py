"""HBase's Docker planner (clusters/docker_plans.py's protocol; the Docker provider runs its
plans): the workbench's own HBase image, each process's conf/ and command line as a local one's
(cluster.py), with the image's jars and java."""

from __future__ import annotations

from pathlib import Path

from workbench.clusters import images
from workbench.clusters.docker_plans import (
    Check,
    ClusterPlan,
    ContainerPlan,
    Mount,
    Naming,
    Networking,
    Published,
    check_memory,
    check_release,
    cluster_plan,
    container_limits,
    plan_networking,
    size_bytes,
)
from workbench.clusters.specs import data_home
from workbench.databases.hbase import cluster as hbase_local
from workbench.databases.hbase.cluster_spec import HBaseSpec
from workbench.errors import ClusterError

HBASE_LIB = Path("/opt/hbase/lib")  # the image's jars and java, for the local command lines
IMAGE_JAVA = Path("/usr/bin/java")


class HBasePlanner:
    """The local provider's command lines (the image's java and jars) with the cluster directory
    mounted at the same path. On a bridge network the gateway joins the master's network
    namespace, where the Thrift port is published."""

    kind = "hbase"
    clients: tuple[str, ...] = ("thrift",)

    def check(self, spec: HBaseSpec) -> None:
        check_release(spec)
        if spec.distributed and spec.docker_network != "host":
            raise ClusterError(f"cluster {spec.name!r}: HBase with RegionServers of their own "
                               f"(regionservers = {spec.regionservers}) runs on the host's network "
                               "only (each RegionServer on its own loopback address)",
                               hint='leave docker_network out of the preset (or set it to "host")')
        check_memory(spec, max(size_bytes(spec.heap), size_bytes(spec.thrift_heap)))

    def plan(self, spec: HBaseSpec, run_dir: Path, naming: Naming) -> ClusterPlan:
        local = hbase_local.plans(spec, run_dir, HBASE_LIB, IMAGE_JAVA)
        mounts = self._mounts(spec, run_dir)
        containers = [self._container(spec, node, naming, mounts) for node in local]
        return cluster_plan(spec, naming, containers, hbase_local.launch_groups(spec, run_dir))

    def joining(self, spec: HBaseSpec, index: int, run_dir: Path, naming: Naming, others: list[str],
                client: dict) -> ContainerPlan:
        """RegionServer `index` (resize.add_node), as plan() makes the others."""
        node = hbase_local.join_plan(spec, index, run_dir, HBASE_LIB, IMAGE_JAVA, others, client)
        return self._container(spec, node, naming, self._mounts(spec, run_dir))

    def leave(self, spec: HBaseSpec, node, deadline: float, run, say) -> None:
        """HBase's RegionMover, run in the RegionServer's container on its own conf/ and jars."""
        run(hbase_local.mover_argv(spec, node, deadline), "HBase's RegionMover")

    def _mounts(self, spec: HBaseSpec, run_dir: Path) -> list[Mount]:
        mounts = [Mount(str(run_dir), str(run_dir))]
        data = data_home(spec, run_dir)
        if data != run_dir:
            mounts.append(Mount(str(data), str(data)))
        return mounts

    def _container(self, spec: HBaseSpec, node, naming: Naming, mounts: list[Mount]) -> ContainerPlan:
        """The container of one process of the local plan (a launch.NodePlan)."""
        bridge = spec.docker_network == "bridge"
        memory, cpus = container_limits(spec)
        container_name = naming.object_name(node.name)
        command = list(node.argv)
        published: tuple[Published, ...] = ()
        if bridge and node.name == "thrift":
            # The published port reaches the container's own address, not its loopback.
            command[command.index("-b") + 1] = "0.0.0.0"
            networking = Networking("container", naming.object_name("master"))
        else:  # everything listens on the loopback it shares with its gateway
            networking = plan_networking(spec, naming, ((container_name, spec.address),))
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
