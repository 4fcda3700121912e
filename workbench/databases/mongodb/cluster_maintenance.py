"""FerretDB's settle step between an experiment's runs (clusters/settle.py): VACUUM (ANALYZE) and
CHECKPOINT through psql on the cluster's socket when it runs on PostgreSQL."""

from __future__ import annotations

import subprocess

from workbench.clusters.base import Cluster
from workbench.errors import ClusterError


def settle_ferretdb(cluster: Cluster, properties: dict[str, str], table: str, timeout: float) -> str:
    return _settle_ferretdb(cluster, timeout)


def _settle_ferretdb(cluster: Cluster, timeout: float) -> str:
    """PostgreSQL under FerretDB: VACUUM (ANALYZE) every table (no dead rows left by the load's
    drop, statistics fresh), then CHECKPOINT (every dirty page written). SQLite writes through its
    own journal: nothing to do."""
    from workbench.databases.mongodb import cluster_ferretdb as ferretdb_local  # noqa: PLC0415

    if cluster.spec.backend != "postgresql":
        return "nothing (FerretDB on SQLite has no background work to wait for)"
    psql = ferretdb_local.postgres_bin() / "psql"
    argv = [str(psql), "-X", "-q", "-v", "ON_ERROR_STOP=1",
            "-h", str(ferretdb_local.socket_dir(cluster.run_dir)), "-p", str(cluster.spec.postgres_port),
            "-U", "ferretdb", "-d", "postgres",
            "-c", "VACUUM (ANALYZE)", "-c", "CHECKPOINT"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterError(f"settle: psql failed on {cluster.name}: {exc}",
                           "is PostgreSQL's client (postgresql-client-15) installed?") from None
    if done.returncode != 0:
        raise ClusterError(f"settle: psql failed on {cluster.name}: {done.stderr.strip()[-200:]}",
                           f"see {cluster.node('postgres').log}")
    return "PostgreSQL vacuumed and checkpointed"
