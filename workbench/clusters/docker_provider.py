"""The Docker provider: the same presets as containers, through docker-py only.

    provider = DockerProvider()                # engine from DOCKER_HOST or the default socket
    cluster = provider.up(presets.load("cassandra-3"))
    provider.kill(cluster.name, "node3"); provider.restart(cluster.name, "node3")
    provider.down(cluster.name)                # removes what carries the cluster's labels

`up` builds the images if needed (`images.build`, a no-op when they are current), then starts
one container per node and waits exactly as the local provider does (the same readiness code).

Networking (the preset's `docker_network`):
- "host" (the default): every container shares the host's network, and node K listens on its
  own loopback address, as a local JVM would. Ports are checked free before anything starts.
- "bridge": the cluster gets a network of its own (Docker Desktop users have no host network);
  each node's client port is published on 127.0.0.1 only, so clients never see a container
  address. Cassandra node K serves CQL on 9042 + K - 1, published at that port, and advertises
  127.0.0.1 as its client address (broadcast_rpc_address): system.peers_v2 then tells a driver
  every node as 127.0.0.1:PORT, which is the translation a published port needs, done once by
  the servers instead of in each driver. Nodes find each other by container name on the
  network. HBase runs its master and gateway in one network namespace (the gateway joins the
  master's container), and the Thrift port is published; the native HBase client cannot reach a
  RegionServer through it, so `--cluster` picks hbase.client=async there.

Cassandra containers are configured through the official image's environment contract
(CASSANDRA_CLUSTER_NAME, CASSANDRA_SEEDS, CASSANDRA_LISTEN_ADDRESS, MAX_HEAP_SIZE, ...) plus
JVM_EXTRA_OPTS naming the node's cassandra.yaml, rendered from the same template as for local
nodes and mounted read-only; data lives in a labelled volume per node (or under the preset's
data_dir), logs in the cluster's directory. With client_tls the keystore and each cassandra.yaml
(which holds the keystore's password) stay readable by the container's user, and the cluster's
directory, which containers never cross, is 0700. HBase containers run the local provider's
command lines with the cluster directory mounted at the same path.

Everything created carries the labels org.workbench.cluster=NAME and org.workbench.state=ROOT
(a hash of the state directory), so `down` finds it even when the state file is gone, and never
touches anything else.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import shutil
import time
from pathlib import Path
from typing import Any

from workbench.clusters import cassandra_local, engine, ferretdb_local, hbase_local, images, paths, ports
from workbench.clusters import state as store
from workbench.clusters.base import Cluster, Node
from workbench.clusters.distributions import VERSIONS
from workbench.clusters.launch import NotReady, StartupError, best_log, start_cluster, tail
from workbench.clusters.progress import OnProgress, report
from workbench.clusters.specs import CassandraSpec, ClusterSpec, FerretDBSpec, HBaseSpec, data_home
from workbench.errors import ClusterError

KINDS = {"cassandra": cassandra_local, "hbase": hbase_local, "ferretdb": ferretdb_local}
CLIENTS = {"hbase": ("thrift",), "ferretdb": ("ferretdb",)}
MONGO_DATA = "/data/db"  # the official mongo image's data directory (and workbench/ferretdb's)
STATE_LABEL = "org.workbench.state"
NODE_LABEL = "org.workbench.node"
CONTAINER_CONF = Path("/workbench/conf")  # a Cassandra node's rendered config, inside its container
CONTAINER_TLS = Path("/workbench")  # the cluster's tls/ folder goes under here
CASSANDRA_DATA = "/var/lib/cassandra"
CASSANDRA_LOGS = "/var/log/cassandra"


def _engine_errors(method):
    """What the engine refuses or a lost connection to it becomes one ClusterError line."""
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        from docker.errors import APIError, DockerException
        from requests import RequestException

        try:
            return method(*args, **kwargs)
        except APIError as exc:
            said = (exc.explanation or str(exc)).strip().splitlines()[0][:300]
            raise ClusterError(f"the Docker engine refused: {said}",
                               hint="`workbench cluster status` shows what the workbench knows") from None
        except (DockerException, RequestException) as exc:
            raise ClusterError(f"lost the Docker engine: {str(exc).splitlines()[0][:200]}",
                               hint="is dockerd still running? (DOCKER_HOST names it)") from None
    return wrapper


def _bytes(size: str) -> int:
    return int(size[:-1]) << (30 if size.endswith("G") else 20)


class DockerProvider:
    """Starts, inspects, disturbs and stops container clusters; see the module docstring."""

    name = "docker"

    def __init__(self, state_dir: Path | None = None, cache_dir: Path | None = None,
                 progress: OnProgress = True, stop_timeout: float = 30.0, client: Any = None) -> None:
        base = Path(state_dir) if state_dir else paths.state_dir()
        self.root = base / "docker"
        self.cache = Path(cache_dir) if cache_dir else paths.cache_dir()
        self.progress = progress
        self.stop_timeout = stop_timeout
        self._client = client
        self.tag = hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:12]

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = engine.connect()
        return self._client

    def _labels(self, cluster: str, node: str = "") -> dict[str, str]:
        labels = {engine.LABEL: cluster, STATE_LABEL: self.tag}
        if node:
            labels[NODE_LABEL] = node
        return labels

    def _filters(self, cluster: str) -> dict[str, Any]:
        return {"label": [f"{engine.LABEL}={cluster}", f"{STATE_LABEL}={self.tag}"]}

    def _object_name(self, cluster: str, what: str) -> str:
        return f"wb-{cluster}-{what}-{self.tag[:6]}"

    # -- lifecycle -------------------------------------------------------------------------
    @_engine_errors
    def up(self, spec: ClusterSpec) -> Cluster:
        """Start the cluster `spec` describes as containers; return once it serves clients."""
        _check_supported(spec)
        run_dir = store.cluster_dir(self.root, spec.name)
        reuse = self._clear_previous(spec, run_dir)
        self._image(spec)
        cluster = Cluster(spec.name, spec.kind, spec, (), run_dir, self.name,
                          clients=CLIENTS.get(spec.kind, ()), server_version=_server_version(spec))
        plans: dict[str, dict[str, Any]] = {}

        def prepare() -> list[list[str]]:
            plans.update(self._plans(spec, run_dir))
            for plan in plans.values():
                if spec.docker_network == "host":
                    needed = plan["ports"]
                else:  # only what is published on the host
                    needed = [(host, port, f"{plan['name']}'s published port {inside}")
                              for inside, (host, port) in plan["publish"].items()]
                for address, port, what in needed:
                    ports.require_free(address, port, what)
            if spec.docker_network == "bridge":
                self._network(spec)
            if spec.kind == "ferretdb":
                return [["ferretdb"]]  # one container: FerretDB with its PostgreSQL inside
            return KINDS[spec.kind].launch_groups(spec, run_dir)

        cluster = start_cluster(cluster, prepare, lambda name: self._start(spec, plans[name]),
                                self._wait_ready, lambda current, keep: self._abort(current, keep_files=keep),
                                reuse, self.progress)
        if spec.kind == "ferretdb" and spec.docker_image:  # whatever the image is, it says so itself
            store.save(dataclasses.replace(cluster, server_version=_ask_name(spec, run_dir)), "running")
        return self.status(spec.name)

    def _clear_previous(self, spec: ClusterSpec, run_dir: Path) -> bool:
        previous = store.load(run_dir)
        running = [c.name for c in self.client.containers.list(filters=self._filters(spec.name))]
        if running:
            raise ClusterError(f"cluster {spec.name!r} is already running ({', '.join(running)})",
                               hint=f"`workbench cluster down {spec.name} --provider docker` first")
        if previous is not None:
            old, phase = previous
            if phase == "kept" and old.spec == spec:
                self._remove_objects(spec.name, volumes=False)
                return True
            self._remove_files(old.spec, run_dir)
        self._remove_objects(spec.name, volumes=True)
        self._remove_files(spec, run_dir)
        return False

    def _plans(self, spec: ClusterSpec, run_dir: Path) -> dict[str, dict[str, Any]]:
        if isinstance(spec, CassandraSpec):
            return {p["name"]: p for p in self._cassandra_plans(spec, run_dir)}
        if isinstance(spec, FerretDBSpec):
            return {p["name"]: p for p in self._ferretdb_plans(spec, run_dir)}
        return {p["name"]: p for p in self._hbase_plans(spec, run_dir)}

    def _ferretdb_plans(self, spec: FerretDBSpec, run_dir: Path) -> list[dict[str, Any]]:
        """One container with the mongo image's contract: workbench/ferretdb (FerretDB and its
        PostgreSQL), or the preset's docker_image (a real `mongo:7.0` where one can be pulled)."""
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
            mounts = {str(data): {"bind": MONGO_DATA, "mode": "rw"}}
        else:
            mounts = {self._object_name(spec.name, "data"): {"bind": MONGO_DATA, "mode": "rw"}}
        needed = [(spec.address, spec.port, "FerretDB")]
        if spec.backend == "postgresql" and not spec.docker_image:
            needed.append(("127.0.0.1", spec.postgres_port, "PostgreSQL"))
        return [{
            "name": "ferretdb", "address": "127.0.0.1" if bridge else spec.address, "port": spec.port,
            "dir": logs, "log": logs / "console.log", "console_log": logs / "console.log",
            "image": spec.docker_image or images.image_name("ferretdb"),
            "command": ["mongod", "--port", str(inside), "--bind_ip", "0.0.0.0" if bridge else spec.address],
            "environment": env, "volumes": mounts,
            "publish": {f"{inside}/tcp": ("127.0.0.1", spec.port)}, "ports": needed,
        }]

    def _cassandra_plans(self, spec: CassandraSpec, run_dir: Path) -> list[dict[str, Any]]:
        bridge = spec.docker_network == "bridge"
        password = None
        if spec.client_tls:
            from workbench.clusters import java

            # The keystore and each node's cassandra.yaml (its password) must stay readable by the
            # container's own user, so they cannot be 0600: the cluster's folder, which containers
            # never cross (they see only its mounted subfolders), is 0700 instead.
            paths.private_dir(run_dir)
            password = cassandra_local.make_tls(spec, run_dir, java.choose().java, private=False)
        result = []
        for index in range(1, spec.nodes + 1):
            name, address = f"node{index}", spec.address(index)
            node_dir = run_dir / name
            conf, logs = node_dir / "conf", node_dir / "logs"
            conf.mkdir(parents=True, exist_ok=True)
            logs.mkdir(parents=True, exist_ok=True)
            cql, network = cassandra_local.CQL_PORT, {}
            if bridge:  # listen on the container's address, tell clients 127.0.0.1 and a port of its own
                cql = published_port(index)
                network = {"listen": self._object_name(spec.name, name), "rpc": "0.0.0.0",
                           "broadcast_rpc": "127.0.0.1", "native_port": cql,
                           "seed": self._object_name(spec.name, "node1")}
            (conf / "cassandra.yaml").write_text(cassandra_local._render_yaml(
                spec, index, Path(CASSANDRA_DATA), CONTAINER_TLS, password, **network))
            jmx = cassandra_local.jmx_port(address)
            env = {
                "CASSANDRA_CLUSTER_NAME": spec.name,
                "CASSANDRA_SEEDS": self._object_name(spec.name, "node1") if bridge else spec.address(1),
                "CASSANDRA_NUM_TOKENS": str(spec.num_tokens),
                "MAX_HEAP_SIZE": spec.heap,
                "HEAP_NEWSIZE": f"{max(64, _bytes(spec.heap) // 4 >> 20)}M",
                "JVM_EXTRA_OPTS": " ".join((
                    f"-Dcassandra.config=file://{CONTAINER_CONF / 'cassandra.yaml'}",
                    f"-Dcassandra.jmx.local.port={jmx}",
                    "-Dcassandra.superuser_setup_delay_ms=0",
                    "-Dcassandra.ring_delay_ms=1000",
                    "-Dcassandra.skip_wait_for_gossip_to_settle=0",
                )),
            }
            if bridge:
                env.update(CASSANDRA_LISTEN_ADDRESS="auto", CASSANDRA_RPC_ADDRESS="0.0.0.0",
                           CASSANDRA_BROADCAST_RPC_ADDRESS="127.0.0.1")
            else:
                env.update(CASSANDRA_LISTEN_ADDRESS=address, CASSANDRA_RPC_ADDRESS=address,
                           CASSANDRA_BROADCAST_ADDRESS=address)
            mounts = {str(conf): {"bind": str(CONTAINER_CONF), "mode": "ro"},
                      str(logs): {"bind": CASSANDRA_LOGS, "mode": "rw"}}
            if spec.client_tls:
                mounts[str(cassandra_local.tls_dir(run_dir))] = {"bind": str(CONTAINER_TLS / "tls"),
                                                                "mode": "ro"}
            if spec.data_dir:
                data = data_home(spec, run_dir) / name
                data.mkdir(parents=True, exist_ok=True)
                mounts[str(data)] = {"bind": CASSANDRA_DATA, "mode": "rw"}
            else:
                mounts[self._object_name(spec.name, f"{name}-data")] = {"bind": CASSANDRA_DATA,
                                                                        "mode": "rw"}
            result.append({
                "name": name, "address": "127.0.0.1" if bridge else address,
                "port": cql, "dir": node_dir, "log": logs / "system.log",
                "console_log": logs / "console.log",
                "image": spec.docker_image or images.image_name("cassandra"),
                "command": ["cassandra", "-f"], "environment": env, "volumes": mounts,
                "publish": {f"{cql}/tcp": ("127.0.0.1", cql)},
                "ports": [(address, cassandra_local.STORAGE_PORT, "Cassandra storage"),
                          (address, cassandra_local.CQL_PORT, "Cassandra CQL"),
                          ("127.0.0.1", jmx, "Cassandra JMX")],
            })
        return result

    def _hbase_plans(self, spec: HBaseSpec, run_dir: Path) -> list[dict[str, Any]]:
        # The local provider's command lines, with the image's java and jars.
        local = hbase_local.plans(spec, run_dir, Path("/opt/hbase/lib"), Path("/usr/bin/java"))
        mounts = {str(run_dir): {"bind": str(run_dir), "mode": "rw"}}
        data = data_home(spec, run_dir)
        if data != run_dir:
            mounts[str(data)] = {"bind": str(data), "mode": "rw"}
        result = []
        for plan in local:
            publish = {}  # the gateway joins the master's network namespace: published there
            if spec.docker_network == "bridge" and plan.name == "master":
                publish = {f"{spec.thrift_port}/tcp": ("127.0.0.1", spec.thrift_port)}
            command = list(plan.argv)
            if spec.docker_network == "bridge" and plan.name == "thrift":
                # The published port reaches the container's own address, not its loopback.
                command[command.index("-b") + 1] = "0.0.0.0"
            result.append({
                "name": plan.name, "address": plan.address, "port": plan.port, "dir": plan.dir,
                "log": plan.log, "console_log": plan.console_log, "image": images.image_name("hbase"),
                "command": command, "environment": {}, "volumes": mounts,
                "publish": publish, "ports": list(plan.ports),
            })
        return result

    def _image(self, spec: ClusterSpec) -> None:
        """Build the workbench's image if needed, or make sure the preset's own image is here."""
        wanted = getattr(spec, "docker_image", "")
        if not wanted:
            images.build((spec.kind,), self.client, self.cache, self.progress)
            return
        from docker.errors import DockerException, ImageNotFound

        try:
            self.client.images.get(wanted)
            return
        except ImageNotFound:
            pass
        report(self.progress, "build", f"{spec.name}: pulling {wanted}")
        try:
            self.client.images.pull(wanted)
        except DockerException as exc:
            raise ClusterError(f"image {wanted!r} is not in the engine and cannot be pulled: "
                               f"{str(exc).splitlines()[0][:200]}",
                               hint="leave docker_image empty: `workbench images build` makes "
                               "workbench/cassandra with no registry") from None

    def _network(self, spec: ClusterSpec) -> None:
        name = self._object_name(spec.name, "net")
        if not self.client.networks.list(names=[name]):
            self.client.networks.create(name, driver="bridge", labels=self._labels(spec.name))

    def _start(self, spec: ClusterSpec, plan: dict[str, Any]) -> Node:
        client = self.client
        for volume in plan["volumes"]:
            if not volume.startswith("/") and not client.volumes.list(filters={"name": volume}):
                client.volumes.create(volume, labels=self._labels(spec.name, plan["name"]))
        options: dict[str, Any] = {
            "name": self._object_name(spec.name, plan["name"]),
            "command": plan["command"], "environment": plan["environment"],
            "volumes": plan["volumes"], "labels": self._labels(spec.name, plan["name"]),
            "detach": True, "init": False,
        }
        if spec.docker_memory:
            options["mem_limit"] = _bytes(spec.docker_memory)
        if spec.docker_cpus:
            options["nano_cpus"] = int(spec.docker_cpus * 1e9)
        if spec.docker_network == "host":
            options["network_mode"] = "host"
        elif spec.kind == "hbase" and plan["name"] == "thrift":
            options["network_mode"] = f"container:{self._object_name(spec.name, 'master')}"
        else:
            options["network"] = self._object_name(spec.name, "net")
            options["hostname"] = options["name"]
            options["ports"] = plan["publish"]
            if spec.kind == "hbase":  # everything listens on the loopback it shares with its gateway
                options["extra_hosts"] = {options["name"]: spec.address}
        container = client.containers.run(plan["image"], **options)
        return Node(plan["name"], plan["address"], plan["port"], 0, 0, plan["log"], plan["console_log"],
                    plan["dir"], tuple(plan["command"]), container=container.id)

    def _wait_ready(self, cluster: Cluster, names: list[str], final: bool, deadline: float) -> None:
        spec = cluster.spec
        check = lambda: self._check_alive(cluster)  # noqa: E731
        if spec.kind == "cassandra" and spec.docker_network == "bridge":
            cassandra_local.wait_ready(spec, names, final, deadline, check, cluster.run_dir,
                                       where=lambda index: ("127.0.0.1", published_port(index)))
        else:
            KINDS[spec.kind].wait_ready(spec, names, final, deadline, check, cluster.run_dir)

    def _check_alive(self, cluster: Cluster) -> None:
        for node in cluster.nodes:
            container = self._container(node)
            if container is None or container.status in ("exited", "dead"):
                code = container.attrs["State"].get("ExitCode") if container is not None else None
                self._save_console(node)
                how = f" (exit status {code})" if code is not None else ""
                raise StartupError(f"{cluster.kind} {node.name} exited during start-up{how}",
                                   best_log(node),
                                   hint=f"`workbench cluster down {cluster.name}` removes its files")

    def _container(self, node: Node) -> Any | None:
        from docker.errors import NotFound

        try:
            return self.client.containers.get(node.container)
        except NotFound:
            return None

    def _save_console(self, node: Node) -> None:
        """The container's own output (the JVM's stdout/stderr) into the node's console log."""
        container = self._container(node)
        if container is None:
            return
        try:
            node.console_log.parent.mkdir(parents=True, exist_ok=True)
            node.console_log.write_bytes(container.logs(tail=2000))
        except OSError:
            pass

    def _abort(self, cluster: Cluster, keep_files: bool) -> None:
        for node in cluster.nodes:
            self._save_console(node)
        self._remove_objects(cluster.name, volumes=not keep_files)
        if keep_files:
            store.save(cluster, "failed")
        else:
            self._remove_files(cluster.spec, cluster.run_dir)

    @_engine_errors
    def down(self, name: str, keep_data: bool = False) -> dict[str, str]:
        """Stop and remove the cluster's containers, its network and (unless keep_data) its
        volumes and files. Works from the labels alone when the state file is gone."""
        found = store.load(store.cluster_dir(self.root, name))
        containers = self.client.containers.list(all=True, filters=self._filters(name))
        if found is None and not containers:
            raise self._unknown(name)
        result = {}
        # SIGTERM every node first so they shut down in parallel, then wait, then SIGKILL.
        live = [c for c in containers if c.status in ("running", "paused", "restarting")]
        for container in containers:
            if container not in live:
                result[container.labels.get(NODE_LABEL, container.name)] = "not running"
        for container in live:
            if container.status == "paused":
                container.unpause()
            container.kill(signal="SIGTERM")
        from requests import RequestException  # what docker-py's wait raises on its timeout

        for container in live:
            node = container.labels.get(NODE_LABEL, container.name)
            try:
                container.wait(timeout=self.stop_timeout)
                result[node] = "stopped"
            except RequestException:  # still running after stop_timeout
                container.kill()
                container.wait(timeout=30)
                result[node] = "killed"
        if found is not None:
            cluster = found[0]
            for node in cluster.nodes:
                self._save_console(node)
                result.setdefault(node.name, "not running")
        self._remove_objects(name, volumes=not keep_data)
        if found is None:  # the workbench died before its state file: the folder it had begun
            shutil.rmtree(store.cluster_dir(self.root, name), ignore_errors=True)
        elif keep_data:
            store.save(found[0], "kept")
        else:
            self._remove_files(found[0].spec, found[0].run_dir)
        return result

    def labelled(self, name: str) -> bool:
        """Does a Docker engine that answers hold containers of cluster `name` started under
        this state directory (its labels), whether or not the state file is still there?"""
        try:
            return bool(self.client.containers.list(all=True, filters=self._filters(name)))
        except Exception:  # noqa: BLE001 - no engine, or one that does not answer: none here
            return False

    def _remove_objects(self, name: str, volumes: bool) -> None:
        client = self.client
        for container in client.containers.list(all=True, filters=self._filters(name)):
            container.remove(force=True, v=False)
        for network in client.networks.list(filters=self._filters(name)):
            network.remove()
        if volumes:
            for volume in client.volumes.list(filters=self._filters(name)):
                volume.remove(force=True)

    def _remove_files(self, spec: ClusterSpec, run_dir: Path) -> None:
        shutil.rmtree(run_dir, ignore_errors=True)
        data = data_home(spec, run_dir)
        if data != run_dir:
            shutil.rmtree(data, ignore_errors=True)

    # -- inspection ------------------------------------------------------------------------
    def clusters(self) -> list[str]:
        return store.names(self.root)

    @_engine_errors
    def status(self, name: str) -> Cluster:
        """The cluster with each node's live status (running, paused, down; 'no engine' when the
        engine does not answer) and, for a running node, its container's start as start_time."""
        cluster = self._load(name)
        try:
            _ = self.client
        except ClusterError:
            nodes = tuple(dataclasses.replace(n, status="no engine") for n in cluster.nodes)
            return dataclasses.replace(cluster, nodes=nodes)
        nodes = tuple(self._live(n) for n in cluster.nodes)
        return dataclasses.replace(cluster, nodes=nodes)

    def _live(self, node: Node) -> Node:
        container = self._container(node)
        if container is None:
            return dataclasses.replace(node, status="down")
        status = {"running": "running", "paused": "paused", "restarting": "running"}.get(container.status,
                                                                                         "down")
        return dataclasses.replace(node, status=status, start_time=_ticks(container.attrs["State"]))

    def phase(self, name: str) -> str:
        return self._loaded(name)[1]

    @_engine_errors
    def logs(self, name: str, node: str | None = None, lines: int = 50) -> dict[str, str]:
        cluster = self._load(name)
        chosen = [cluster.node(node)] if node else list(cluster.nodes)
        return {n.name: self._tail(n, lines) for n in chosen}

    def _tail(self, node: Node, lines: int) -> str:
        text = tail(node.log, lines)
        if text:
            return text
        container = self._container(node)
        if container is None:
            return tail(node.console_log, lines)
        return container.logs(tail=lines).decode(errors="replace").rstrip("\n")

    # -- fault injection -------------------------------------------------------------------
    @_engine_errors
    def pause(self, name: str, node: str) -> None:
        """Freeze a node (the engine's cgroup freezer): it keeps its sockets, answers nothing."""
        self._running(name, node).pause()

    @_engine_errors
    def resume(self, name: str, node: str) -> None:
        container = self._target(name, node)
        if container.status == "paused":
            container.unpause()

    @_engine_errors
    def kill(self, name: str, node: str) -> None:
        """Crash a node (SIGKILL through the engine), as a power failure would."""
        container = self._running(name, node)
        if container.status == "paused":
            container.unpause()
        container.kill()
        container.wait(timeout=30)

    @_engine_errors
    def restart(self, name: str, node: str) -> Cluster:
        """Stop the node if it runs, start its container again, wait until it serves."""
        cluster, _ = self._loaded(name)
        target = cluster.node(node)
        container = self._target(name, node)
        if container.status == "paused":
            container.unpause()
        if container.status in ("running", "restarting"):
            container.stop(timeout=int(self.stop_timeout))
        container.start()
        deadline = time.monotonic() + cluster.spec.start_timeout
        try:
            self._wait_ready(cluster, [node], False, deadline)
        except NotReady as exc:
            self._save_console(target)
            raise StartupError(f"{cluster.kind} {node} {exc.what} after restart",
                               best_log(target)) from None
        return self.status(name)

    def _target(self, name: str, node: str) -> Any:
        target = self._load(name).node(node)
        container = self._container(target)
        if container is None:
            raise ClusterError(f"node {node} of cluster {name!r} has no container any more",
                               hint=f"`workbench cluster down {name}` and `up` again")
        return container

    def _running(self, name: str, node: str) -> Any:
        container = self._target(name, node)
        if container.status not in ("running", "paused"):
            raise ClusterError(f"node {node} of cluster {name!r} is not running",
                               hint=f"`workbench cluster restart {name} {node}` starts it")
        return container

    def _unknown(self, name: str) -> ClusterError:
        known = ", ".join(self.clusters()) or "none"
        return ClusterError(f"no docker cluster named {name!r} under {self.root}",
                            hint=f"known docker clusters: {known}")

    def _loaded(self, name: str) -> tuple[Cluster, str]:
        found = store.load(store.cluster_dir(self.root, name))
        if found is None:
            raise self._unknown(name)
        return found

    def _load(self, name: str) -> Cluster:
        return self._loaded(name)[0]


def _ticks(state: dict[str, Any]) -> int:
    """A container's start as clock ticks after boot, like a process's /proc start time."""
    import datetime
    import os

    try:
        stamp = state.get("StartedAt", "")[:26].rstrip("Z")
        started = datetime.datetime.fromisoformat(stamp).replace(tzinfo=datetime.UTC).timestamp()
        since_boot = float(Path("/proc/uptime").read_text().split()[0])
    except (ValueError, OSError):
        return 0
    boot = time.time() - since_boot
    return max(0, int((started - boot) * os.sysconf("SC_CLK_TCK")))


def _ask_name(spec: FerretDBSpec, run_dir: Path) -> str:
    """A MongoDB-protocol server's own name and version (buildInfo), FerretDB named as FerretDB."""
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    from workbench.clusters.external import mongodb_server_name

    client = MongoClient("127.0.0.1" if spec.docker_network == "bridge" else spec.address, spec.port,
                         serverSelectionTimeoutMS=10000, **ferretdb_local.client_options(spec, run_dir))
    try:
        return mongodb_server_name(client.admin.command("buildInfo"))
    except PyMongoError:
        return ""
    finally:
        client.close()


def _server_version(spec: ClusterSpec) -> str:
    """FerretDB's honest name in our image; "" for the rest (a real mongo image is named from
    what it answers, after it is up)."""
    if spec.kind != "ferretdb" or spec.docker_image:
        return ""
    under = "PostgreSQL 15" if spec.backend == "postgresql" else "SQLite"
    from workbench.clusters import gobuild

    return f"FerretDB {gobuild.VERSION} on {under} (MongoDB protocol)"


def _check_supported(spec: ClusterSpec) -> None:
    if not isinstance(spec, FerretDBSpec) and spec.release != VERSIONS[spec.kind]:
        raise ClusterError(f"{spec.kind} {spec.release} (version = {spec.version!r}) is served by the "
                           f"local provider only: the images carry {spec.kind} "
                           f"{VERSIONS[spec.kind]}",
                           hint="leave out --provider docker, or leave version out of the preset")
    if isinstance(spec, FerretDBSpec):
        if spec.client_tls:
            raise ClusterError("client_tls for FerretDB is served by the local provider only",
                               hint="leave it out with --provider docker, or use the local provider")
        return
    heaps = max(_bytes(spec.heap), _bytes(spec.thrift_heap) if isinstance(spec, HBaseSpec) else 0)
    if spec.docker_memory and _bytes(spec.docker_memory) < heaps + (256 << 20):
        raise ClusterError(f"docker_memory = {spec.docker_memory!r} leaves no room beside the JVM heap "
                           f"({spec.heap}): the engine would kill the node",
                           hint="give each container at least its heap plus 256M")


def published_port(index: int) -> int:
    """On a bridge network, node K serves CQL on 9042 + K - 1, published at the same port on
    127.0.0.1 and advertised as 127.0.0.1 (system.peers_v2 carries the port): the driver finds
    every node at an address it can reach, with no translation table of its own."""
    return cassandra_local.CQL_PORT + index - 1
