"""FerretDBSpec: a FerretDB server the workbench starts (a preset's kind = "ferretdb"), on a private
PostgreSQL or on SQLite, as a frozen dataclass checked when made; clusters/specs.py holds what
every server's spec shares."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from workbench.clusters.specs import (
    CLIENT_CA,
    NAME,
    check,
    check_data_dir,
    check_docker,
)

FERRETDB_BACKENDS = ("postgresql", "sqlite")
_PG_SIZE = re.compile(r"^\d+(kB|MB|GB)$")
FERRETDB_USER = "ferretdb"  # FerretDB's login (login = true): PostgreSQL's role, password made at initdb
FERRETDB_PASSWORD = Path("postgres.password")  # under run_dir


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
        check(bool(NAME.match(self.name)), "name", f"{self.name!r} must be a short word")
        check(self.backend in FERRETDB_BACKENDS, "backend",
               f"{self.backend!r} must be one of {', '.join(FERRETDB_BACKENDS)}")
        check(self.address.startswith("127."), "address", "must be a loopback address")
        for field in ("port", "postgres_port"):
            check(1024 <= getattr(self, field) <= 65535, field, "must be a port 1024-65535")
        check(self.port != self.postgres_port, "postgres_port", "must differ from port")
        check(bool(_PG_SIZE.match(self.shared_buffers)), "shared_buffers",
               f"{self.shared_buffers!r} must look like 128MB or 1GB")
        for field in ("postgres_fsync", "login", "client_tls"):
            check(isinstance(getattr(self, field), bool), field, "must be true or false")
        check(not self.login or self.backend == "postgresql", "login",
               "needs backend = \"postgresql\" (FerretDB checks logins against PostgreSQL)")
        check_data_dir(self.data_dir)
        check_docker(self)

    @property
    def heap(self) -> str:
        """The server's memory as the reports show it (PostgreSQL's shared_buffers)."""
        return self.shared_buffers if self.backend == "postgresql" else ""

    def credentials(self, run_dir: Path) -> tuple[str, str] | None:
        """login: PostgreSQL's role and the password made at initdb (kept in run_dir)."""
        return (FERRETDB_USER, (run_dir / FERRETDB_PASSWORD).read_text().strip()) if self.login else None

    def tls_ca(self, run_dir: Path) -> Path | None:
        """client_tls: the certificate made at start-up (cluster_ferretdb.make_tls)."""
        return run_dir / CLIENT_CA if self.client_tls else None
