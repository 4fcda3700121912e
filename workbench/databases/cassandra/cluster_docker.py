"""Cassandra's Docker planner (clusters/docker_plans.py's protocol; the Docker provider runs its
plans): nodes configured through the official image's environment contract, each node's
cassandra.yaml rendered as for a local node (cluster.py) and mounted read-only."""

from __future__ import annotations

from pathlib import Path

from workbench.clusters import gc_log, images, paths
from workbench.clusters.docker_plans import (
    Check,
    ClusterPlan,
    ContainerPlan,
    Mount,
    Naming,
    Published,
    check_memory,
    check_release,
    cluster_plan,
    container_limits,
    plan_networking,
    published_port,
    size_bytes,
)
from workbench.clusters.specs import data_home
from workbench.databases.cassandra import cluster as cassandra_local
from workbench.databases.cassandra.cluster_nodetool import container_nodetool
from workbench.databases.cassandra.cluster_spec import CassandraSpec

CONTAINER_CONF = Path("/workbench/conf")  # a Cassandra node's rendered config, inside its container
CONTAINER_TLS = Path("/workbench")  # the cluster's tls/ folder goes under here
CASSANDRA_DATA = "/var/lib/cassandra"
CASSANDRA_LOGS = "/var/log/cassandra"


class CassandraPlanner:
    """Nodes configured through the official image's environment contract, plus the node's
    cassandra.yaml (rendered as for local nodes) mounted read-only; data in a volume per node."""

    kind = "cassandra"
    clients: tuple[str, ...] = ()

    def check(self, spec: CassandraSpec) -> None:
        check_release(spec)
        check_memory(spec, size_bytes(spec.heap))

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
        return cluster_plan(spec, naming, containers, cassandra_local.launch_groups(spec, run_dir))

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
        return container_nodetool(node, args)

    def leave(self, spec: CassandraSpec, node, deadline: float, run, say) -> None:
        """`nodetool decommission` in the node's container: it streams its data away."""
        def nodetool(args: list[str]) -> None:
            run(self.nodetool_command(node, args), f"nodetool {args[0]}")

        cassandra_local.decommission(nodetool, say)

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
                *cassandra_local.ring_flags(index, bootstrap),  # after the 1 s above: they win
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
        memory, cpus = container_limits(spec)
        return ContainerPlan(
            name=name, container_name=naming.object_name(name),
            image=spec.docker_image or images.image_name("cassandra"), command=("cassandra", "-f"),
            environment=tuple(env.items()), mounts=tuple(mounts), labels=naming.labels(name),
            networking=plan_networking(spec, naming),
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
