"""Cluster specs: what a provider is asked to start, as frozen dataclasses, one per server in its
database's folder (databases/cassandra/cluster_spec.py: CassandraSpec; hbase's HBaseSpec;
mongodb's FerretDBSpec), and what they share: the checks of their common fields, the protocol the
providers read them by (ClusterSpec), where a cluster's data lives.

Presets (presets/clusters/*.toml) are parsed into these by presets.py; the CLI and the Python API
can also build them directly, e.g. `CassandraSpec(name="c3", nodes=3, replication_factor=2)`.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePath
from typing import Any, Protocol

from workbench.databases import resolve, servers
from workbench.errors import ClusterError

SIZE = re.compile(r"^\d+(M|G)$")
MIB = re.compile(r"^\d+MiB$")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$")


def check(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise ClusterError(f"invalid cluster spec: {field} {message}")


CLIENT_CA = Path("tls") / "ca.pem"  # under run_dir: the certificate clients of a TLS cluster trust


def check_version(spec: Any) -> None:
    """A version names a pinned release (distributions.SERIES): "" (the default), a series such
    as "4.1", or the pinned release itself ("4.1.10")."""
    from workbench.clusters import distributions  # its downloads need urllib: not at import

    check(isinstance(spec.version, str), "version", f'must be a string such as "4.1", not {spec.version!r}')
    series = distributions.SERIES[spec.kind]
    try:
        distributions.resolve(spec.kind, spec.version)
    except ClusterError as exc:
        fix = " or ".join(f'"{v}"' for v in series)
        raise ClusterError(f"invalid cluster spec: version {spec.version!r}: {exc.message}",
                           hint=f"set version to {fix}, or leave it out for "
                                f"{distributions.VERSIONS[spec.kind]}") from None


def release_of(spec: Any) -> str:
    from workbench.clusters import distributions

    return distributions.resolve(spec.kind, spec.version)


def check_docker(spec: Any) -> None:
    check(0 <= getattr(spec, "cpus", 0.0) <= 64, "cpus", "must be 0 (no cap) to 64 cores a process")
    check(spec.docker_memory == "" or bool(SIZE.match(spec.docker_memory)), "docker_memory",
           f"{spec.docker_memory!r} must look like 512M or 2G (or be empty: no limit)")
    check(0 <= spec.docker_cpus <= 64, "docker_cpus", "must be 0 (no limit) to 64")
    check(spec.docker_network in ("host", "bridge"), "docker_network", "must be 'host' or 'bridge'")


def check_data_dir(value: str) -> None:
    check(value == "" or PurePath(value).is_absolute(), "data_dir",
           f"{value!r} must be an absolute directory (or empty: the cluster's own directory)")


class ClusterSpec(Protocol):
    """What every server's spec (its database folder's cluster_spec.py, named by the server's
    descriptor: `spec`) has, which the providers read; each has its own fields beside these."""

    name: str
    kind: str
    data_dir: str
    docker_memory: str
    docker_cpus: float
    docker_network: str

    def credentials(self, run_dir: Path) -> tuple[str, str] | None:
        """(user, password) a client logs in with, None when the server asks no login; run_dir is
        the cluster's own folder (a password made at start-up is kept there)."""
        ...

    def tls_ca(self, run_dir: Path) -> Path | None:
        """The PEM certificate a client trusts when the client port requires TLS, else None."""
        ...


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
