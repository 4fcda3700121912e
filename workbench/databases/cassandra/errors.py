"""Driver-independent failure names for the Cassandra binding: `QueryFailed` (the protocol
layer's, databases/cassandra/protocol/cql.py, which python_driver.py raises too) and `kind_of`.
"""

from __future__ import annotations

from workbench.databases.cassandra.protocol.cql import QueryFailed

__all__ = ["QueryFailed", "kind_of"]


def kind_of(exc: BaseException) -> str:
    """A short, driver-independent name for a driver error (ReadTimeout, Unavailable, ...)."""
    return type(exc).__name__.removesuffix("ErrorMessage")
