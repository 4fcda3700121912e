"""The Cassandra binding on the workbench's own CQL client (`cassandra.driver=native`) in the
contract suite.

The same node and settings as targets_cassandra.py, in a keyspace of its own. This driver runs
a lane's sequences as callback chains on the event loop, so it passes the suite separately.
"""

from __future__ import annotations

from targets_cassandra import SCAN_ORDER
from targets_cassandra import target as default_target

__all__ = ["SCAN_ORDER", "target"]


def target(request) -> list[str]:
    return [*default_target(request), "cassandra.driver=native", "cassandra.keyspace=contract_native"]
