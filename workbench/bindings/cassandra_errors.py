"""Driver-independent failure names for the Cassandra binding: `QueryFailed` and `kind_of`.

The drivers' session modules (cassandra_native.py, cassandra_python.py)
and the binding (cassandra.py) use them; they live here so that no driver module imports the
binding that imports it back.
"""

from __future__ import annotations


class QueryFailed(Exception):
    """A request the driver reported as failed; `kind` names why, `message` says what the
    server or the driver said (may be empty)."""

    def __init__(self, kind: str, message: str = "") -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind, self.message = kind, message


def kind_of(exc: BaseException) -> str:
    """A short, driver-independent name for a driver error (ReadTimeout, Unavailable, ...)."""
    return type(exc).__name__.removesuffix("ErrorMessage")
