"""CassandraSpec: a Cassandra cluster the workbench starts (a preset's kind = "cassandra"), as a
frozen dataclass checked when made; clusters/specs.py holds what every server's spec shares."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from workbench.clusters.specs import (
    CLIENT_CA,
    MIB,
    NAME,
    SIZE,
    check,
    check_data_dir,
    check_docker,
    check_version,
    release_of,
)

AUTHENTICATORS = ("AllowAllAuthenticator", "PasswordAuthenticator")
SUPERUSER = ("cassandra", "cassandra")  # what PasswordAuthenticator creates on a new cluster


@dataclass(frozen=True)
class CassandraSpec:
    """Cassandra 1..N nodes; node K (1-based) listens on first_address + K - 1."""

    name: str = "cassandra"
    nodes: int = 1
    heap: str = "1G"
    first_address: str = "127.0.0.1"
    commitlog_sync: str = "periodic"  # or "batch" for durable-write experiments
    commitlog_sync_period_ms: int = 10000
    commitlog_total_space: str = "256MiB"
    memtable_heap_space: str = "128MiB"
    memtable_offheap_space: str = "128MiB"
    concurrent_reads: int = 32
    concurrent_writes: int = 32
    num_tokens: int = 8
    replication_class: str = "SimpleStrategy"
    replication_factor: int = 1
    # Client security, as a production cluster has it: PasswordAuthenticator (the built-in
    # superuser cassandra/cassandra) and TLS on the CQL port with a certificate made at start-up.
    authenticator: str = "AllowAllAuthenticator"
    client_tls: bool = False
    # Where the nodes keep their data (sstables, commit log, caches, hints): "" = in the cluster's
    # own directory; an absolute path (a RAM-backed /dev/shm, another disk) = a folder
    # workbench-NAME-HASH inside it, removed with the cluster.
    data_dir: str = ""
    # Cores each server process may use (0 = no cap: every node shares the machine's cores):
    # local processes in a cgroup of the cpu controller each (clusters/cgroups.py), containers
    # by the engine's CPU quota (unless docker_cpus says otherwise). One machine standing for
    # several: with caps, a node added brings its own share of the cores.
    cpus: float = 0.0
    # The Docker provider only: per-container limits ("" / 0 = none) and networking ("host": every
    # node on its own loopback address, as local JVMs are; "bridge": a network of the cluster's
    # own, with the client port published on 127.0.0.1).
    docker_memory: str = ""
    docker_cpus: float = 0.0
    docker_network: str = "host"
    # Another image honouring the official cassandra image's environment contract, such as
    # "cassandra:5.0" (pulled if missing; needs a registry). "" = workbench/cassandra, built here.
    docker_image: str = ""
    # The release: "" = the default (5.0, pinned 5.0.9) or another series of
    # distributions.SERIES, e.g. "4.1" (pinned 4.1.10, run on Java 17 with the flags of
    # templates/cassandra-4.1-jvm.options). The Docker images carry the default only.
    version: str = ""
    start_timeout: float = 180.0
    kind: str = "cassandra"

    def __post_init__(self) -> None:
        check(bool(NAME.match(self.name)), "name", f"{self.name!r} must be a short word")
        check(1 <= self.nodes <= 9, "nodes", "must be between 1 and 9")
        check(bool(SIZE.match(self.heap)), "heap", f"{self.heap!r} must look like 512M or 1G")
        try:
            first = ipaddress.IPv4Address(self.first_address)
        except ValueError:
            first = None
        check(
            first is not None and first in ipaddress.IPv4Network("127.0.0.0/8")
            and int(first) + self.nodes - 1 < int(ipaddress.IPv4Address("127.0.0.255")),
            "first_address", "must be a loopback address 127.0.0.K with room for every node",
        )
        check(self.commitlog_sync in ("periodic", "batch"), "commitlog_sync",
               "must be 'periodic' or 'batch'")
        for field in ("commitlog_total_space", "memtable_heap_space", "memtable_offheap_space"):
            check(bool(MIB.match(getattr(self, field))), field, "must look like 256MiB")
        check(1 <= self.replication_factor <= self.nodes, "replication_factor",
               f"must be between 1 and the number of nodes ({self.nodes})")
        check(1 <= self.num_tokens <= 256, "num_tokens", "must be between 1 and 256")
        check(self.authenticator in AUTHENTICATORS, "authenticator",
               f"must be one of {', '.join(AUTHENTICATORS)}")
        check(isinstance(self.client_tls, bool), "client_tls", "must be true or false")
        check_data_dir(self.data_dir)
        check_docker(self)
        check_version(self)

    @property
    def release(self) -> str:
        """The pinned release the nodes run: "5.0.9", "4.1.10"."""
        return release_of(self)

    def address(self, index: int) -> str:
        """Address of node `index` (1-based)."""
        return str(ipaddress.IPv4Address(self.first_address) + index - 1)

    @property
    def replication(self) -> dict[str, object]:
        """Keyspace replication map, as used in CREATE KEYSPACE ... WITH replication = {...}."""
        return {"class": self.replication_class, "replication_factor": self.replication_factor}

    def credentials(self, run_dir: Path) -> tuple[str, str] | None:
        """PasswordAuthenticator's own superuser; no login with AllowAllAuthenticator."""
        return SUPERUSER if self.authenticator == "PasswordAuthenticator" else None

    def tls_ca(self, run_dir: Path) -> Path | None:
        """client_tls: the certificate made at start-up for every node (cluster.make_tls)."""
        return run_dir / CLIENT_CA if self.client_tls else None
