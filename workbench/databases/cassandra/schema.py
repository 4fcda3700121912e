"""CQL text for every operation shape, and schema creation with the Python driver.

The schema is YCSB's: keyspace `ycsb`, table `usertable (y_id varchar PRIMARY KEY, field0 varchar,
...)` with the field columns the workload defines. Identifiers are always double-quoted, so a
`fieldnameprefix` with capitals works and matches what the statements ask for. Creation runs in
the parent before the workers start, through cassandra-driver (blocking: call it in a thread),
which waits for schema agreement so every worker's session sees the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.errors import BindingError

KEY = "y_id"
DDL_TIMEOUT_S = 60.0  # schema changes on a busy laptop node can take many seconds


def quote(name: str) -> str:
    """A CQL identifier, case preserved."""
    return '"' + name.replace('"', '""') + '"'


class Cql:
    """CQL strings for one keyspace.table; shapes are tuples of field names."""

    def __init__(self, keyspace: str, table: str) -> None:
        self.target = f"{quote(keyspace)}.{quote(table)}"

    def read(self, fields: Sequence[str]) -> str:
        cols = ", ".join(map(quote, fields))
        return f"SELECT {cols} FROM {self.target} WHERE {KEY} = ?"

    def scan(self, fields: Sequence[str]) -> str:
        cols = ", ".join(map(quote, (KEY, *fields)))
        return f"SELECT {cols} FROM {self.target} WHERE token({KEY}) >= token(?) LIMIT ?"

    def insert(self, fields: Sequence[str]) -> str:
        cols = ", ".join(map(quote, (KEY, *fields)))
        marks = ", ".join("?" * (len(fields) + 1))
        return f"INSERT INTO {self.target} ({cols}) VALUES ({marks})"

    def update(self, fields: Sequence[str]) -> str:
        sets = ", ".join(f"{quote(f)} = ?" for f in fields)
        return f"UPDATE {self.target} SET {sets} WHERE {KEY} = ?"

    def delete(self) -> str:
        return f"DELETE FROM {self.target} WHERE {KEY} = ?"


def replication_cql(replication: dict[str, Any]) -> str:
    items = ", ".join(f"'{k}': '{v}'" for k, v in replication.items())
    return "{" + items + "}"


def connect_failure(exc: BaseException) -> str:
    """Why cassandra-driver could not connect, per host and short: NoHostAvailable's text is a
    tuple repr with the server's whole message inside."""
    errors = getattr(exc, "errors", None)
    if not isinstance(errors, dict) or not errors:
        return f"{type(exc).__name__}: {exc}"
    parts = []
    for host, error in errors.items():
        text = str(error)
        if "[" in text and "]" in text:  # "... Error from server: code=0100 [Bad credentials] ..."
            text = text[text.index("[") + 1:text.index("]")]
        parts.append(f"{host} {type(error).__name__} ({text})" if text else f"{host} {type(error).__name__}")
    return "; ".join(parts)


def _connect(cluster: Any, purpose: str) -> Any:
    """A session of `cluster`, or a BindingError saying why not (the cluster shut down)."""
    from cassandra import DriverException
    from cassandra.cluster import NoHostAvailable

    try:
        return cluster.connect()
    except (NoHostAvailable, DriverException, OSError) as exc:
        cluster.shutdown()
        raise BindingError(f"cannot connect to Cassandra at {', '.join(cluster.contact_points)}:"
                           f"{cluster.port} {purpose}: {connect_failure(exc)}",
                           "is the server up? check hosts, port, credentials and cassandra.useSSL") from None


def nothing_loaded(cluster: Any, keyspace: str, table: str) -> str | None:
    """"Cassandra table ks.t does not exist" / "... is empty", or None when it holds a row or
    when the cluster cannot tell now. The probe reads at ONE (any replica knows whether rows
    exist); a replica down or timing out makes it None: the run goes on, and its operations
    meet the cluster as it is, each failure counted the YCSB way."""
    from cassandra import ConsistencyLevel, DriverException
    from cassandra.cluster import NoHostAvailable
    from cassandra.query import SimpleStatement

    session = _connect(cluster, "to look for the loaded records")
    try:
        meta = cluster.metadata.keyspaces.get(keyspace)
        if meta is None or table not in meta.tables:
            return f"Cassandra table {keyspace}.{table} does not exist"
        probe = SimpleStatement(f"SELECT {KEY} FROM {quote(keyspace)}.{quote(table)} LIMIT 1",
                                consistency_level=ConsistencyLevel.ONE)
        try:
            row = session.execute(probe, timeout=DDL_TIMEOUT_S).one()
        except (DriverException, NoHostAvailable):  # ReadTimeout, Unavailable, OperationTimedOut
            return None
        return None if row is not None else f"Cassandra table {keyspace}.{table} is empty"
    finally:
        cluster.shutdown()


def ensure_schema(cluster: Any, keyspace: str, table: str, fields: Sequence[str],
                  replication: dict[str, Any], drop: bool) -> list[str]:
    """Create the keyspace and table if missing (drop the table first when asked), add missing
    field columns. `cluster` is a cassandra.cluster.Cluster (not connected). Returns notes."""
    from cassandra import DriverException
    from cassandra.protocol import ErrorMessage

    notes: list[str] = []
    session = _connect(cluster, "to create the schema")
    try:
        run = lambda cql: session.execute(cql, timeout=DDL_TIMEOUT_S)  # noqa: E731
        ks, target = quote(keyspace), f"{quote(keyspace)}.{quote(table)}"
        run(f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {replication_cql(replication)}")
        if drop:
            run(f"DROP TABLE IF EXISTS {target}")
        cols = ", ".join(f"{quote(f)} varchar" for f in fields)
        run(f"CREATE TABLE IF NOT EXISTS {target} ({KEY} varchar PRIMARY KEY, {cols})")
        cluster.refresh_schema_metadata(max_schema_agreement_wait=DDL_TIMEOUT_S)
        rows = session.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s",
                               (keyspace,))
        have = dict(rows.one()[0])
        want = {k: str(v) for k, v in replication.items()}
        if _normal(have) != _normal(want):
            notes.append(f"keyspace {keyspace} already existed with replication {have}; "
                         f"cassandra.replication.* only apply when it is created")
        meta = cluster.metadata.keyspaces[keyspace].tables[table]
        if [c.name for c in meta.partition_key] != [KEY] or meta.clustering_key:
            raise BindingError(
                f"table {keyspace}.{table} exists with another primary key than ({KEY})",
                "drop it with -p cassandra.drop=true (load phase) or choose another cassandra.keyspace")
        for name in fields:
            if name not in meta.columns:
                run(f"ALTER TABLE {target} ADD {quote(name)} varchar")
                notes.append(f"added column {name} to the existing table {keyspace}.{table}")
    except (DriverException, ErrorMessage) as exc:
        raise BindingError(f"creating keyspace {keyspace} and table {table} failed: {exc}",
                           "check cassandra.replication.* and the user's permissions") from None
    finally:
        cluster.shutdown()
    return notes


def _normal(replication: dict[str, str]) -> dict[str, str]:
    out = dict(replication)
    out["class"] = out.get("class", "").rsplit(".", 1)[-1]
    return out
