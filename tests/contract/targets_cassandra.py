"""The Cassandra binding in the contract suite: one real node from the provider fixtures.

Every test gets a clean table: `cassandra.drop=true` makes the load-phase prepare() that each
test starts with drop and recreate `contract.usertable`. Scans come back in token order.
"""

from __future__ import annotations

SCAN_ORDER = "token"


SERVER = "cassandra_node"  # the session fixture target() takes (tests/support/lifetimes.py)


def target(request) -> list[str]:
    """-p overrides pointing the binding at the session's single Cassandra node."""
    return overrides(request.getfixturevalue(SERVER))


def overrides(node) -> list[str]:
    """-p overrides pointing the binding at a single-node Cassandra cluster."""
    host, port = node.contact_points[0]
    return [
        "db=cassandra",
        f"hosts={host}",
        f"port={port}",
        "cassandra.keyspace=contract",
        "cassandra.drop=true",
        # one replica: QUORUM is ONE here; say so rather than rely on the arithmetic
        "cassandra.readconsistencylevel=ONE",
        "cassandra.writeconsistencylevel=ONE",
        # each test connects twice (a table dropped and made anew, then the run's session): on a
        # machine with two busy loops and the other tier's servers beside, 5 s was once too short
        "cassandra.connecttimeoutmillis=30000",
    ]
