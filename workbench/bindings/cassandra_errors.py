"""Driver-independent failure names for the Cassandra binding: `QueryFailed` and `kind_of`.

The drivers' session modules (cassandra_native.py, cassandra_acsylla.py, cassandra_python.py)
and the binding (cassandra.py) use them; they live here so that no driver module imports the
binding that imports it back.
"""

from __future__ import annotations

# Driver exception class name -> the name cassandra-driver (and the report) uses.
_KINDS = {
    "CassErrorLibRequestTimedOut": "OperationTimedOut",
    "CassErrorLibNoHostsAvailable": "NoHostAvailable",
    "CassErrorServerInvalidQuery": "InvalidRequest",
    "CassErrorServerSyntaxError": "SyntaxException",
    "CassErrorServerServerError": "ServerError",
    "CassErrorServerBadCredentials": "AuthenticationFailed",
}


class QueryFailed(Exception):
    """A request the driver reported as failed; `kind` names why, `message` says what the
    server or the driver said (may be empty)."""

    def __init__(self, kind: str, message: str = "") -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind, self.message = kind, message


def kind_of(exc: BaseException) -> str:
    """A short, driver-independent name for a driver error (ReadTimeout, Unavailable, ...)."""
    name = type(exc).__name__
    if name in _KINDS:
        return _KINDS[name]
    for prefix in ("CassErrorServer", "CassErrorLib", "CassError", "CassException"):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix):]
    return name.removesuffix("ErrorMessage")
