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


def version(package: str) -> str:
    """An installed package's version, from its metadata (nothing imported)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def client_name(db: str, properties: dict[str, str]) -> str:
    """"native CQL v4", "cassandra-driver 3.30.1", "native HBase RPC", "HBase Thrift (thriftpy2
    0.5.2, asyncio)", "pymongo 4.13.0 (asyncio)", "memory (in-process)": the database
    descriptor's client_name (each database's options.py, databases/<name>/). Raises the options
    parser's ConfigError for properties the binding would refuse."""
    from workbench.databases import find  # noqa: PLC0415

    described = find(db)
    if described is None:  # a binding registered at run time (tests), not a database
        return db
    if not described.client_name:
        return described.description
    return described.load("client_name")(properties)


def client_record(db: str, properties: dict[str, str]) -> dict[str, Any]:
    """environment.client as a run records it before it starts: the client's name and whether the
    workbench's compiled hot path is in use (the event loop is added when the phase ends)."""
    from workbench import speedups  # noqa: PLC0415

    try:
        name = client_name(db, properties)
    except Exception as exc:  # the binding refuses these properties; the run will say so itself
        name = f"{db} (properties refused: {exc})"
    return {"name": name, "compiled": speedups.C is not None}
