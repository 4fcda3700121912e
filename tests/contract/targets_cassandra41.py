"""The Cassandra binding (its default client) against Cassandra 4.1 in the contract suite: the
session's `cassandra41_node` (version = "4.1", pinned 4.1.10, run on Java 17). The same tests as
targets_cassandra.py, on the other pinned release."""

from __future__ import annotations

from targets_cassandra import SCAN_ORDER, overrides

__all__ = ["SCAN_ORDER", "SERVER", "target"]


SERVER = "cassandra41_node"  # the session fixture target() takes (tests/support/lifetimes.py)


def target(request) -> list[str]:
    return overrides(request.getfixturevalue(SERVER))
