"""The Cassandra binding on acsylla (`cassandra.driver=acsylla`, over ScyllaDB's C++ driver) in
the contract suite.

The same node and settings as targets_cassandra.py (the default driver, native), in a keyspace
of its own. acsylla runs the sockets on the C++ driver's thread and resolves awaitables on the
loop, so it passes the suite separately.
"""

from __future__ import annotations

from targets_cassandra import SCAN_ORDER
from targets_cassandra import target as default_target

__all__ = ["SCAN_ORDER", "target"]


def target(request) -> list[str]:
    return [*default_target(request), "cassandra.driver=acsylla", "cassandra.keyspace=contract_acsylla"]
