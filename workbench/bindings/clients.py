"""Which database client a run's properties choose, named for the run's record.

A figure is the client's as much as the server's: cassandra-driver spends five times the CPU per
operation of the workbench's own CQL client, so two runs that differ in their client are not a
comparison of servers. Every run records `environment.client` (this name, whether the compiled
hot path ran, and the event loop); `runs show`, the exports, the Compare screen and the reports
show it and say when two runs differ in it.

The name comes from the binding's properties alone, parsed by the binding's own option parser,
so that a run is named before it starts (the run store's `running` row) and nothing here imports
a driver: versions come from the installed packages' metadata.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def client_name(db: str, properties: dict[str, str]) -> str:
    """"native CQL v4", "cassandra-driver 3.30.1", "native HBase RPC", "HBase Thrift (thriftpy2
    0.5.2, asyncio)", "pymongo 4.13.0 (asyncio)", "memory (in-process)". Raises the options
    parser's ConfigError for properties the binding would refuse."""
    if db == "cassandra":
        from workbench.bindings.cassandra_options import parse_options  # noqa: PLC0415

        opts = parse_options(properties)
        if opts.driver == "native":
            return f"native CQL v{opts.protocol_version}"
        return f"cassandra-driver {_version('cassandra-driver')} (CQL v{opts.protocol_version})"
    if db == "hbase":
        from workbench.bindings.hbase_options import client_of  # noqa: PLC0415

        client = client_of(properties)
        if client == "native":
            return "native HBase RPC"
        return f"HBase Thrift (thriftpy2 {_version('thriftpy2')}, asyncio)"
    if db == "mongodb":
        return f"pymongo {_version('pymongo')} (asyncio)"
    if db == "memory":
        return "memory (in-process)"
    return db


def client_record(db: str, properties: dict[str, str]) -> dict[str, Any]:
    """environment.client as a run records it before it starts: the client's name and whether the
    workbench's compiled hot path is in use (the event loop is added when the phase ends)."""
    from workbench import speedups  # noqa: PLC0415

    try:
        name = client_name(db, properties)
    except Exception as exc:  # the binding refuses these properties; the run will say so itself
        name = f"{db} (properties refused: {exc})"
    return {"name": name, "compiled": speedups.C is not None}
