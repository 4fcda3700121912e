"""The cluster provider protocol, the handles it returns, and the provider registry.

A provider starts a topology from a spec and hands back a `Cluster`: kind, nodes, contact points
and (Cassandra) the keyspace replication the preset asked for. Bindings only need the handle;
the CLI and the UI drive lifecycles through the same methods. Providers register by name, so a
Docker or external-hosts provider is one new module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from workbench.clusters.specs import ClusterSpec
from workbench.errors import ClusterError


@dataclass(frozen=True)
class Node:
    """One server process of a cluster (a Cassandra node, the HBase master, its Thrift gateway)."""

    name: str
    address: str
    port: int  # the port clients use (CQL, Thrift) or the main RPC port
    pid: int
    start_time: int  # /proc/PID/stat start time: tells our process from a recycled PID
    log: Path  # the server's own log
    console_log: Path  # whatever the JVM printed on stdout/stderr
    dir: Path
    argv: tuple[str, ...] = ()
    status: str = "unknown"  # running, paused, down (filled in by status())
    container: str = ""  # the Docker provider's container id (pid and start_time are then 0)
    cpus: float = 0.0  # the cores its cgroup lets it use (0: no cap)
    jvm_flags: tuple[str, ...] = ()  # started with these beside argv (java.py server_flags)


@dataclass(frozen=True)
class Cluster:
    """Handle on a started cluster."""

    name: str
    kind: str  # "cassandra" or "hbase"
    spec: ClusterSpec
    nodes: tuple[Node, ...]
    run_dir: Path
    provider: str = "local"
    clients: tuple[str, ...] = field(default=())  # node names that serve clients
    server_version: str = ""  # what the servers said they run ("" = the provider's pinned version)
    nodes_seen: int = 0  # an external cluster: the nodes its contact points know of

    @property
    def contact_points(self) -> list[tuple[str, int]]:
        """(host, port) pairs a client connects to: every CQL node, or the Thrift gateway."""
        serving = [n for n in self.nodes if not self.clients or n.name in self.clients]
        return [(n.address, n.port) for n in serving]

    @property
    def jvm_flags(self) -> tuple[str, ...]:
        """The extra JVM flags its servers were started with (clusters/java.py server_flags), which
        a node added to it takes too."""
        return next((n.jvm_flags for n in self.nodes if n.jvm_flags), ())

    @property
    def replication(self) -> dict[str, object] | None:
        """Keyspace replication map from the preset (Cassandra), None for HBase."""
        return getattr(self.spec, "replication", None)

    @property
    def credentials(self) -> tuple[str, str] | None:
        """(user, password) when the cluster requires a login: its spec says which (ClusterSpec)."""
        return self.spec.credentials(self.run_dir)

    @property
    def tls_ca(self) -> Path | None:
        """The PEM certificate to trust when the client port requires TLS: its spec says which."""
        return self.spec.tls_ca(self.run_dir)

    def node(self, name: str) -> Node:
        for node in self.nodes:
            if node.name == name:
                return node
        raise ClusterError(
            f"cluster {self.name!r} has no node {name!r}",
            hint=f"its nodes are {', '.join(n.name for n in self.nodes)}",
        )


class ClusterProvider(Protocol):
    """What every provider offers; `name` is the cluster name given at `up`."""

    def up(self, spec: ClusterSpec) -> Cluster: ...
    def status(self, name: str) -> Cluster: ...
    def clusters(self) -> list[str]: ...
    def logs(self, name: str, node: str | None = None, lines: int = 50) -> dict[str, str]: ...
    def down(self, name: str, keep_data: bool = False) -> None: ...
    def pause(self, name: str, node: str) -> None: ...
    def resume(self, name: str, node: str) -> None: ...
    def kill(self, name: str, node: str) -> None: ...
    def restart(self, name: str, node: str) -> Cluster: ...


# Provider name -> "module:Class"; imported on first use so unused providers cost nothing.
PROVIDERS: dict[str, str] = {"local": "workbench.clusters.local:LocalProvider",
                             "docker": "workbench.clusters.docker_provider:DockerProvider",
                             "external": "workbench.clusters.external:ExternalProvider"}


def get_provider(name: str = "local", **options: object) -> ClusterProvider:
    """An instance of the provider registered as `name`."""
    if name not in PROVIDERS:
        raise ClusterError(f"unknown cluster provider {name!r}",
                           hint=f"use one of {', '.join(PROVIDERS)}")
    module, _, cls = PROVIDERS[name].partition(":")
    return getattr(importlib.import_module(module), cls)(**options)


def all_providers(state_dir: Path | None = None, **options: object) -> list[ClusterProvider]:
    """One instance of every provider, in lookup order (local, docker, external). Listing their
    clusters reads state files only: no engine or server needs to answer."""
    found = []
    for name in PROVIDERS:
        extra = options if name != "external" else {}
        found.append(get_provider(name, state_dir=state_dir, **extra))
    return found


def owner(name: str, state_dir: Path | None = None, **options: object) -> ClusterProvider | None:
    """The provider that knows cluster `name` (local first), or None."""
    for provider in all_providers(state_dir, **options):
        if name in provider.clusters():
            return provider
    return None
