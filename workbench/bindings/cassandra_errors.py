"""Driver-independent failure names for the Cassandra binding: `QueryFailed` (the protocol
layer's, protocols/cql.py, which cassandra_python.py raises too) and `kind_of`.
"""

from __future__ import annotations

from workbench.protocols.cql import QueryFailed

__all__ = ["QueryFailed", "kind_of"]


def kind_of(exc: BaseException) -> str:
    """A short, driver-independent name for a driver error (ReadTimeout, Unavailable, ...)."""
    return type(exc).__name__.removesuffix("ErrorMessage")
