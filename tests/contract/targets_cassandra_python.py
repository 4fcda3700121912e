"""The Cassandra binding on cassandra-driver (`cassandra.driver=python`) in the contract suite.

The same node and settings as targets_cassandra.py, in a keyspace of its own. This driver runs
a lane's sequences as callback chains on its own thread, so it passes the suite separately.
"""

from __future__ import annotations

from targets_cassandra import SCAN_ORDER
from targets_cassandra import target as default_target

__all__ = ["SCAN_ORDER", "SERVER", "target"]


SERVER = "cassandra_node"  # the session fixture target() takes (tests/support/lifetimes.py)


def target(request) -> list[str]:
    return [*default_target(request), "cassandra.driver=python", "cassandra.keyspace=contract_py"]
