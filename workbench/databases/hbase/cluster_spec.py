"""HBaseSpec: an HBase cluster the workbench starts (a preset's kind = "hbase"), standalone or with
RegionServers of their own, as a frozen dataclass checked when made; clusters/specs.py holds what
every server's spec shares."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from workbench.clusters.specs import (
    NAME,
    SIZE,
    check,
    check_data_dir,
    check_docker,
    check_version,
    release_of,
)

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
        check(bool(NAME.match(self.name)), "name", f"{self.name!r} must be a short word")
        for field in ("heap", "thrift_heap", "regionserver_heap"):
            check(bool(SIZE.match(getattr(self, field))), field, "must look like 512M or 1G")
        check(self.address.startswith("127."), "address", "must be a loopback address")
        check(isinstance(self.regionservers, int) and 0 <= self.regionservers <= 9, "regionservers",
               "must be 0 (standalone: the master's own RegionServer) to 9")
        check(1 <= self.balancer_period_s <= 3600, "balancer_period_s", "must be 1 to 3600 seconds")
        if self.regionservers:
            check(ipaddress.IPv4Address(self.address) + self.regionservers - 1
                   < ipaddress.IPv4Address("127.0.0.255"), "regionservers",
                   f"{self.regionservers} RegionServers from {self.address} run past 127.0.0.254")
        for field in ("zookeeper_port", "master_port", "regionserver_port", "thrift_port"):
            check(1024 <= getattr(self, field) <= 65535, field, "must be a port 1024-65535")
        for field, choices in THRIFT_CHOICES.items():
            check(getattr(self, field) in choices, field,
                   f"{getattr(self, field)!r} must be one of {', '.join(choices)}")
        check(self.thrift_server == "threadpool" or self.thrift_transport == "framed", "thrift_server",
               f"{self.thrift_server!r} serves the framed transport only: set thrift_transport = \"framed\"")
        check_data_dir(self.data_dir)
        check_docker(self)
        check_version(self)

    @property
    def distributed(self) -> bool:
        return self.regionservers > 0

    def node_address(self, index: int) -> str:
        """Address of RegionServer `index` (1-based; rs1 shares the master's address)."""
        return str(ipaddress.IPv4Address(self.address) + index - 1)

    @property
    def release(self) -> str:
        """The pinned release the servers run: "2.6.1", "2.5.8"."""
        return release_of(self)

    def credentials(self, run_dir: Path) -> tuple[str, str] | None:
        """None: the HBase the workbench starts asks no login (simple authentication)."""
        return None

    def tls_ca(self, run_dir: Path) -> Path | None:
        """None: its Thrift gateway and RPC port speak plain TCP."""
        return None
