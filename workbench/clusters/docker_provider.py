"""The Docker provider: the same presets as containers, through docker-py only.

    provider = DockerProvider()                # engine from DOCKER_HOST or the default socket
    cluster = provider.up(presets.load("cassandra-3"))
    provider.kill(cluster.name, "node3"); provider.restart(cluster.name, "node3")
    provider.down(cluster.name)                # removes what carries the cluster's labels

`up` builds the images if needed (`images.build`, a no-op when they are current), then starts
one container per node and waits exactly as the local provider does (the same readiness code).
What is created is planned per database by docker_plans.py (a planner for Cassandra, HBase and
FerretDB, chosen by the spec's kind, returns typed ClusterPlan/ContainerPlan values); this
module executes plans: the docker-py calls, readiness waiting, the state file.

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

from workbench.clusters import engine, images, java, journal, maintenance, paths, ports, resize
from workbench.clusters import state as store
from workbench.clusters.base import Cluster, Node
from workbench.clusters.docker_plans import (
    NODE_LABEL,
    STATE_LABEL,
    ClusterPlan,
    ContainerPlan,
    Naming,
    planner_for,
    published_port,
)
from workbench.clusters.launch import NotReady, StartupError, best_log, start_cluster, tail
from workbench.clusters.progress import OnProgress, report
from workbench.clusters.specs import ClusterSpec, data_home
from workbench.databases import server
from workbench.errors import ClusterError

__all__ = ["NODE_LABEL", "STATE_LABEL", "DockerProvider", "published_port", "run_options"]


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


def run_options(plan: ContainerPlan) -> dict[str, Any]:
    """The keyword arguments of docker-py's containers.run(plan.image, ...) for a plan."""
    options: dict[str, Any] = {
        "name": plan.container_name, "command": list(plan.command),
        "environment": dict(plan.environment),
        "volumes": {m.source: {"bind": m.target, "mode": m.mode} for m in plan.mounts},
        "labels": dict(plan.labels), "detach": True, "init": False,
    }
    if plan.memory is not None:
        options["mem_limit"] = plan.memory
    if plan.nano_cpus is not None:
        options["nano_cpus"] = plan.nano_cpus
    networking = plan.networking
    if networking.mode == "host":
        options["network_mode"] = "host"
    elif networking.mode == "container":
        options["network_mode"] = f"container:{networking.name}"
    else:
        options["network"] = networking.name
        options["hostname"] = plan.container_name
        options["ports"] = {p.key: (p.host_address, p.host_port) for p in plan.published}
        if networking.extra_hosts:
            options["extra_hosts"] = dict(networking.extra_hosts)
    return options


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

    def _naming(self, cluster: str) -> Naming:
        return Naming(cluster, self.tag)

    def _filters(self, cluster: str) -> dict[str, Any]:
        return {"label": [f"{engine.LABEL}={cluster}", f"{STATE_LABEL}={self.tag}"]}

    def _object_name(self, cluster: str, what: str) -> str:
        return self._naming(cluster).object_name(what)

    # -- lifecycle -------------------------------------------------------------------------
    @_engine_errors
    def up(self, spec: ClusterSpec) -> Cluster:
        """Start the cluster `spec` describes as containers; return once it serves clients."""
        planner = planner_for(spec)
        planner.check(spec)
        run_dir = store.cluster_dir(self.root, spec.name)
        reuse = self._clear_previous(spec, run_dir)
        self._image(spec)
        cluster = Cluster(spec.name, spec.kind, spec, (), run_dir, self.name,
                          clients=planner.clients, server_version=planner.server_version(spec))
        plans: dict[str, ContainerPlan] = {}
        flags = java.server_flags() if server(spec.kind).needs_java else ()  # refused before any start

        def prepare() -> list[list[str]]:
            plan = planner.plan(spec, run_dir, self._naming(spec.name))
            plans.update((container.name, container) for container in plan.containers)
            for container in plan.containers:
                for address, port, what in container.ports_to_check():
                    ports.require_free(address, port, what)
            if plan.network:
                self._network(plan)
            return [list(group) for group in plan.groups]

        cluster = start_cluster(cluster, prepare, lambda name: self._start(plans[name], flags),
                                self._wait_ready, lambda current, keep: self._abort(current, keep_files=keep),
                                reuse, self.progress)
        served = planner.served_version(spec, run_dir)
        if served is not None:  # the servers said what they are, once up
            store.save(dataclasses.replace(cluster, server_version=served), "running")
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

    def _network(self, plan: ClusterPlan) -> None:
        if not self.client.networks.list(names=[plan.network]):
            self.client.networks.create(plan.network, driver="bridge", labels=dict(plan.labels))

    def _start(self, plan: ContainerPlan, flags: tuple[str, ...] = ()) -> Node:
        """Start one container; a JVM server's with `flags` (java.server_flags) in the environment
        every JVM reads, JAVA_TOOL_OPTIONS (the images build their own command lines); a restart
        starts the same container, so it keeps them."""
        client = self.client
        for volume in plan.volumes:
            if not client.volumes.list(filters={"name": volume}):
                client.volumes.create(volume, labels=dict(plan.labels))
        if flags:
            tool_options = ("JAVA_TOOL_OPTIONS", " ".join(flags))
            plan = dataclasses.replace(plan, environment=(*plan.environment, tool_options))
        container = client.containers.run(plan.image, **run_options(plan))
        return Node(plan.name, plan.address, plan.port, 0, 0, plan.log, plan.console_log, plan.dir,
                    plan.command, container=container.id, jvm_flags=flags)

    def _wait_ready(self, cluster: Cluster, names: list[str], final: bool, deadline: float) -> None:
        planner_for(cluster.spec).wait_ready(cluster.spec, names, final, deadline,
                                             lambda: self._check_alive(cluster), cluster.run_dir)

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

    def lost(self) -> dict[str, list[tuple[str, str]]]:
        """Clusters started under this state directory whose state file is gone but whose
        containers an engine that answers still holds, found by their labels: name -> [(node,
        container status)]. Empty when no engine answers (nothing to find, nothing to say)."""
        try:
            found = self.client.containers.list(all=True, filters={"label": f"{STATE_LABEL}={self.tag}"})
        except Exception:  # noqa: BLE001 - no engine, or one that does not answer
            return {}
        known = set(self.clusters())
        out: dict[str, list[tuple[str, str]]] = {}
        for container in found:
            name = container.labels.get(engine.LABEL, "")
            if name and name not in known:
                out.setdefault(name, []).append((container.labels.get(NODE_LABEL, container.name),
                                                 container.status))
        return {name: sorted(nodes) for name, nodes in sorted(out.items())}

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
        journal.fault(self._load(name).run_dir, node, "pause")

    @_engine_errors
    def resume(self, name: str, node: str) -> None:
        container = self._target(name, node)
        if container.status == "paused":
            container.unpause()
            journal.fault(self._load(name).run_dir, node, "resume")

    @_engine_errors
    def kill(self, name: str, node: str) -> None:
        """Crash a node (SIGKILL through the engine), as a power failure would."""
        container = self._running(name, node)
        if container.status == "paused":
            container.unpause()
        container.kill()
        journal.fault(self._load(name).run_dir, node, "kill")
        container.wait(timeout=30)

    @_engine_errors
    def restart(self, name: str, node: str) -> Cluster:
        """Stop the node if it runs, start its container again, wait until it serves."""
        cluster, _ = self._loaded(name)
        target = cluster.node(node)
        container = self._target(name, node)
        journal.fault(cluster.run_dir, node, "restarting")
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
        journal.fault(cluster.run_dir, node, "restart")
        return self.status(name)

    # -- growing and shrinking (Cassandra nodes, HBase RegionServers): resize.py -------------------
    @_engine_errors
    def add_node(self, name: str, cpus: float | None = None) -> Cluster:
        """Start node N+1 of a running cluster in a container of its own (host network) and
        return once it has joined (resize.add_node)."""
        return resize.add_node(self, name, cpus)

    @_engine_errors
    def remove_node(self, name: str, node: str) -> Cluster:
        """Move a node's data to the others, then stop and remove its container (resize)."""
        return resize.remove_node(self, name, node)

    def join_plan(self, cluster: Cluster, kind, index: int, others: list[str], client: dict,
                  cpus: float | None) -> ContainerPlan:
        spec = cluster.spec
        if spec.docker_network != "host":
            raise ClusterError(f"cluster {cluster.name!r} runs on a bridge network of its own: nodes are "
                               "added and removed on the host's network only (each node on its own "
                               "loopback address)",
                               hint='start it with docker_network = "host" (the default)')
        naming = self._naming(cluster.name)
        plan = planner_for(spec).joining(spec, index, cluster.run_dir, naming, others, client)
        for address, port, what in plan.ports_to_check():
            ports.require_free(address, port, what)
        return plan

    def launch_joining(self, cluster: Cluster, plan: ContainerPlan, cpus: float | None) -> Node:
        if cpus is not None:  # its own cap instead of the cluster's
            plan = dataclasses.replace(plan, nano_cpus=int(cpus * 1e9) if cpus > 0 else None)
        # the cluster's JVM flags, as its other nodes were started (not this command's environment)
        return self._start(plan, cluster.jvm_flags)

    def check_alive(self, cluster: Cluster) -> None:
        self._check_alive(cluster)

    def leave(self, cluster: Cluster, kind, node: Node, others: list[str], deadline: float) -> None:
        """The move of its data (nodetool decommission, RegionMover) run in the node's container."""
        planner = planner_for(cluster.spec)
        container = self._running(cluster.name, node.name)

        def run(argv: list, what: str) -> None:
            code, output = container.exec_run(maintenance.tool_argv(node, argv))
            if code != 0:
                lines = [ln.strip() for ln in output.decode(errors="replace").splitlines()
                         if ln.strip() and not ln.startswith("See 'nodetool help")]
                # what it said, not the last line of a stack trace ("at ...")
                said = [ln for ln in lines if not ln.startswith(("at ", "..."))]
                last = said[-1:] or lines[-1:] or ["(no output)"]
                raise ClusterError(f"{node.name}: {what} failed in its container (exit status {code}): "
                                   f"{last[0][:300]}",
                                   hint=f"`workbench cluster logs {cluster.name} {node.name}`")

        planner.leave(cluster.spec, node, deadline, run,
                      lambda said: report(self.progress, "leave", f"{cluster.name}: {node.name}: {said}"))

    def forget(self, cluster: Cluster, node: Node | None, phase: str, keep_log: bool) -> str:
        """Stop the node's container (SIGTERM, SIGKILL after stop_timeout), remove it and its data
        volume, drop it from the state file and remove its files (keep_log: its logs)."""
        if node is None:
            return "not started"
        from requests import RequestException

        self._save_console(node)
        container, outcome = self._container(node), "not running"
        if container is not None:
            if container.status in ("running", "paused", "restarting"):
                if container.status == "paused":
                    container.unpause()
                container.kill(signal="SIGTERM")
                try:
                    container.wait(timeout=self.stop_timeout)
                    outcome = "stopped"
                except RequestException:
                    container.kill()
                    container.wait(timeout=30)
                    outcome = "killed"
            container.remove(force=True, v=False)
        volume = self._naming(cluster.name).object_name(f"{node.name}-data")
        for found in self.client.volumes.list(filters={"name": volume}):
            if found.name == volume:
                found.remove(force=True)
        resize.drop(cluster, node, phase, keep_log)
        return outcome

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
