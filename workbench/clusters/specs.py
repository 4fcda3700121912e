"""Cluster specs: what a provider is asked to start, as frozen dataclasses.

Presets (presets/clusters/*.toml) are parsed into these by presets.py; the CLI and the Python API
can also build them directly, e.g. `CassandraSpec(name="c3", nodes=3, replication_factor=2)`.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path, PurePath

from workbench.databases import resolve, servers
from workbench.errors import ClusterError

_SIZE = re.compile(r"^\d+(M|G)$")
_MIB = re.compile(r"^\d+MiB$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$")


def _check(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise ClusterError(f"invalid cluster spec: {field} {message}")


AUTHENTICATORS = ("AllowAllAuthenticator", "PasswordAuthenticator")
SUPERUSER = ("cassandra", "cassandra")  # what PasswordAuthenticator creates on a new cluster


def _check_version(spec: CassandraSpec | HBaseSpec) -> None:
    """A version names a pinned release (distributions.SERIES): "" (the default), a series such
    as "4.1", or the pinned release itself ("4.1.10")."""
    from workbench.clusters import distributions  # its downloads need urllib: not at import

    _check(isinstance(spec.version, str), "version", f'must be a string such as "4.1", not {spec.version!r}')
    series = distributions.SERIES[spec.kind]
    try:
        distributions.resolve(spec.kind, spec.version)
    except ClusterError as exc:
        fix = " or ".join(f'"{v}"' for v in series)
        raise ClusterError(f"invalid cluster spec: version {spec.version!r}: {exc.message}",
                           hint=f"set version to {fix}, or leave it out for "
                                f"{distributions.VERSIONS[spec.kind]}") from None


def _release(spec: CassandraSpec | HBaseSpec) -> str:
    from workbench.clusters import distributions

    return distributions.resolve(spec.kind, spec.version)


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
        _check(bool(_NAME.match(self.name)), "name", f"{self.name!r} must be a short word")
        _check(1 <= self.nodes <= 9, "nodes", "must be between 1 and 9")
        _check(bool(_SIZE.match(self.heap)), "heap", f"{self.heap!r} must look like 512M or 1G")
        try:
            first = ipaddress.IPv4Address(self.first_address)
        except ValueError:
            first = None
        _check(
            first is not None and first in ipaddress.IPv4Network("127.0.0.0/8")
            and int(first) + self.nodes - 1 < int(ipaddress.IPv4Address("127.0.0.255")),
            "first_address", "must be a loopback address 127.0.0.K with room for every node",
        )
        _check(self.commitlog_sync in ("periodic", "batch"), "commitlog_sync",
               "must be 'periodic' or 'batch'")
        for field in ("commitlog_total_space", "memtable_heap_space", "memtable_offheap_space"):
            _check(bool(_MIB.match(getattr(self, field))), field, "must look like 256MiB")
        _check(1 <= self.replication_factor <= self.nodes, "replication_factor",
               f"must be between 1 and the number of nodes ({self.nodes})")
        _check(1 <= self.num_tokens <= 256, "num_tokens", "must be between 1 and 256")
        _check(self.authenticator in AUTHENTICATORS, "authenticator",
               f"must be one of {', '.join(AUTHENTICATORS)}")
        _check(isinstance(self.client_tls, bool), "client_tls", "must be true or false")
        _check_data_dir(self.data_dir)
        _check_docker(self)
        _check_version(self)

    @property
    def release(self) -> str:
        """The pinned release the nodes run: "5.0.9", "4.1.10"."""
        return _release(self)

    def address(self, index: int) -> str:
        """Address of node `index` (1-based)."""
        return str(ipaddress.IPv4Address(self.first_address) + index - 1)

    @property
    def replication(self) -> dict[str, object]:
        """Keyspace replication map, as used in CREATE KEYSPACE ... WITH replication = {...}."""
        return {"class": self.replication_class, "replication_factor": self.replication_factor}


THRIFT_CHOICES = {
    "thrift_server": ("threadpool", "hsha", "nonblocking", "threadedselector"),
    "thrift_transport": ("buffered", "framed"),
    "thrift_protocol": ("binary", "compact"),
}


@dataclass(frozen=True)
class HBaseSpec:
    """HBase and its Thrift gateway: standalone (regionservers = 0: master, RegionServer and
    ZooKeeper in one JVM), or distributed on the local file system (regionservers = N: ZooKeeper,
    the master and N RegionServers as JVMs of their own, RegionServer K on address(K))."""

    name: str = "hbase"
    heap: str = "1G"
    thrift_heap: str = "512M"
    address: str = "127.0.0.1"
    zookeeper_port: int = 2181
    master_port: int = 16000
    regionserver_port: int = 16020
    thrift_port: int = 9090
    # Distributed: how many RegionServers (rs1..rsN on address, address+1, ...: each its own
    # loopback address on regionserver_port), each with regionserver_heap; 0 = standalone.
    # balancer_period_s: how often the master balances regions (HBase's 300 s is long for a run:
    # a RegionServer added during one would get no region before it ended).
    regionservers: int = 0
    regionserver_heap: str = "768M"
    balancer_period_s: float = 10.0
    # How the Thrift gateway serves: its server type (HBase's -threadpool, -hsha, -nonblocking,
    # -threadedselector), transport (-f: framed) and protocol (-c: compact). `--cluster` hands
    # the transport and protocol to the binding. Measured on 2 cores (BENCHMARKS.md): threadpool
    # costs the gateway the least CPU per operation, so it is the default.
    thrift_server: str = "threadpool"
    thrift_transport: str = "buffered"
    thrift_protocol: str = "binary"
    data_dir: str = ""  # as for Cassandra: the HBase root directory and ZooKeeper's data
    cpus: float = 0.0  # as for Cassandra: cores each process (the server, the gateway) may use
    # The Docker provider only: per-container limits ("" / 0 = none) and networking ("host": every
    # node on its own loopback address, as local JVMs are; "bridge": a network of the cluster's
    # own, with the client port published on 127.0.0.1).
    docker_memory: str = ""
    docker_cpus: float = 0.0
    docker_network: str = "host"
    # The release: "" = the default (2.6, pinned 2.6.1) or "2.5" (pinned 2.5.8); the Docker
    # images carry the default only.
    version: str = ""
    start_timeout: float = 180.0
    kind: str = "hbase"

    def __post_init__(self) -> None:
        _check(bool(_NAME.match(self.name)), "name", f"{self.name!r} must be a short word")
        for field in ("heap", "thrift_heap", "regionserver_heap"):
            _check(bool(_SIZE.match(getattr(self, field))), field, "must look like 512M or 1G")
        _check(self.address.startswith("127."), "address", "must be a loopback address")
        _check(isinstance(self.regionservers, int) and 0 <= self.regionservers <= 9, "regionservers",
               "must be 0 (standalone: the master's own RegionServer) to 9")
        _check(1 <= self.balancer_period_s <= 3600, "balancer_period_s", "must be 1 to 3600 seconds")
        if self.regionservers:
            _check(ipaddress.IPv4Address(self.address) + self.regionservers - 1
                   < ipaddress.IPv4Address("127.0.0.255"), "regionservers",
                   f"{self.regionservers} RegionServers from {self.address} run past 127.0.0.254")
        for field in ("zookeeper_port", "master_port", "regionserver_port", "thrift_port"):
            _check(1024 <= getattr(self, field) <= 65535, field, "must be a port 1024-65535")
        for field, choices in THRIFT_CHOICES.items():
            _check(getattr(self, field) in choices, field,
                   f"{getattr(self, field)!r} must be one of {', '.join(choices)}")
        _check(self.thrift_server == "threadpool" or self.thrift_transport == "framed", "thrift_server",
               f"{self.thrift_server!r} serves the framed transport only: set thrift_transport = \"framed\"")
        _check_data_dir(self.data_dir)
        _check_docker(self)
        _check_version(self)

    @property
    def distributed(self) -> bool:
        return self.regionservers > 0

    def node_address(self, index: int) -> str:
        """Address of RegionServer `index` (1-based; rs1 shares the master's address)."""
        return str(ipaddress.IPv4Address(self.address) + index - 1)

    @property
    def release(self) -> str:
        """The pinned release the servers run: "2.6.1", "2.5.8"."""
        return _release(self)


FERRETDB_BACKENDS = ("postgresql", "sqlite")
_PG_SIZE = re.compile(r"^\d+(kB|MB|GB)$")


@dataclass(frozen=True)
class FerretDBSpec:
    """FerretDB (a MongoDB-protocol server) on a private PostgreSQL, or on SQLite files.

    Not MongoDB: every figure measured on it is named "FerretDB ... on PostgreSQL ..."."""

    name: str = "ferretdb"
    backend: str = "postgresql"  # or "sqlite": one file per collection, no second process
    address: str = "127.0.0.1"
    port: int = 27017  # the MongoDB wire protocol
    postgres_port: int = 27432  # the private PostgreSQL (127.0.0.1 only), not Debian's 5432
    shared_buffers: str = "128MB"  # PostgreSQL's cache
    postgres_fsync: bool = True  # false: PostgreSQL acknowledges writes before they reach the disk
    # Client security: login = true makes clients log in (user ferretdb, the password made at
    # initdb, PLAIN mechanism: FerretDB 1.x passes it on to PostgreSQL); client_tls = true serves
    # TLS only, with a certificate made at start-up (<run_dir>/tls/ca.pem to trust).
    login: bool = False
    client_tls: bool = False
    data_dir: str = ""  # as for Cassandra: PostgreSQL's cluster or the SQLite files
    docker_memory: str = ""
    docker_cpus: float = 0.0
    docker_network: str = "host"
    # Another image honouring the official mongo image's contract (port 27017, MONGO_INITDB_*),
    # such as "mongo:7.0" (pulled if missing; needs a registry). "" = workbench/ferretdb, built here.
    docker_image: str = ""
    start_timeout: float = 60.0
    kind: str = "ferretdb"

    def __post_init__(self) -> None:
        _check(bool(_NAME.match(self.name)), "name", f"{self.name!r} must be a short word")
        _check(self.backend in FERRETDB_BACKENDS, "backend",
               f"{self.backend!r} must be one of {', '.join(FERRETDB_BACKENDS)}")
        _check(self.address.startswith("127."), "address", "must be a loopback address")
        for field in ("port", "postgres_port"):
            _check(1024 <= getattr(self, field) <= 65535, field, "must be a port 1024-65535")
        _check(self.port != self.postgres_port, "postgres_port", "must differ from port")
        _check(bool(_PG_SIZE.match(self.shared_buffers)), "shared_buffers",
               f"{self.shared_buffers!r} must look like 128MB or 1GB")
        for field in ("postgres_fsync", "login", "client_tls"):
            _check(isinstance(getattr(self, field), bool), field, "must be true or false")
        _check(not self.login or self.backend == "postgresql", "login",
               "needs backend = \"postgresql\" (FerretDB checks logins against PostgreSQL)")
        _check_data_dir(self.data_dir)
        _check_docker(self)

    @property
    def heap(self) -> str:
        """The server's memory as the reports show it (PostgreSQL's shared_buffers)."""
        return self.shared_buffers if self.backend == "postgresql" else ""


def _check_docker(spec: CassandraSpec | HBaseSpec | FerretDBSpec) -> None:
    _check(0 <= getattr(spec, "cpus", 0.0) <= 64, "cpus", "must be 0 (no cap) to 64 cores a process")
    _check(spec.docker_memory == "" or bool(_SIZE.match(spec.docker_memory)), "docker_memory",
           f"{spec.docker_memory!r} must look like 512M or 2G (or be empty: no limit)")
    _check(0 <= spec.docker_cpus <= 64, "docker_cpus", "must be 0 (no limit) to 64")
    _check(spec.docker_network in ("host", "bridge"), "docker_network", "must be 'host' or 'bridge'")


def _check_data_dir(value: str) -> None:
    _check(value == "" or PurePath(value).is_absolute(), "data_dir",
           f"{value!r} must be an absolute directory (or empty: the cluster's own directory)")


ClusterSpec = CassandraSpec | HBaseSpec | FerretDBSpec


def data_home(spec: ClusterSpec, run_dir: Path) -> Path:
    """Where the cluster's data lives: its run directory, or workbench-NAME-HASH under data_dir
    (HASH of the run directory: two state roots with a cluster of the same name, say a user's and
    a test run's, never share, nor remove, each other's data)."""
    if not spec.data_dir:
        return run_dir
    tag = hashlib.sha256(str(run_dir).encode()).hexdigest()[:8]
    return Path(spec.data_dir) / f"workbench-{spec.name}-{tag}"
def spec_type(kind: str) -> type | None:
    """The spec class of a preset's kind: its server's (databases/), None for a kind no server has."""
    found = next((s for s in servers() if s.kind == kind and s.spec), None)
    return resolve(found.spec) if found is not None else None
