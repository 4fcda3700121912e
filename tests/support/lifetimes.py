"""How long the session's servers live: each stops after the last test of the run that needs it,
not at the end of the session.

A started server that no test needs any more still costs the machine: measured idle 4-5 minutes
after `cluster up` (2026-11-29), a Cassandra 5.0 node took 3% of a core (its threads' run time in
/proc/PID/task/*/schedstat: gossip, the batchlog and optional tasks, the commit log's sync; the
ticks of /proc/PID/stat said 7-8%, they charge a whole tick to a thread that wakes at one),
standalone HBase 15% and its Thrift gateway 4% by ticks, 2.3% and 1% by their threads' run time
(2026-11-30: the RPC client's 10-ms timer wheel, the RegionServer's chores, the metrics every
second), and 0.5-1.5 GB each, for the rest of the run.
The session's fixtures (conftest.py) register how to stop each server early; after a test's
teardown, `retire_after` stops every server whose last user that test was.

A test needs a server when it names its fixture (directly or through another fixture), or when it
takes it by `request.getfixturevalue` and says so with `@pytest.mark.needs("fixture_name")` (the
binding contract's targets, and tests parametrized by a fixture's name). The tests of the servers
that few tests use (`GROUPED`: the other releases, the three-node cluster, the secured node, the
container node) run together, where the first of them stands in the run, so that each server
stops minutes after it started instead of idling between the tests of other files.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

SESSION_SERVERS = frozenset({"cassandra_node", "cassandra_cluster3", "cassandra_secure", "cassandra41_node",
                             "hbase_server", "hbase_cluster3", "hbase25_server", "ferretdb_server",
                             "ferretdb_secure", "docker_cassandra", "docker_hbase"})
# JVMs (or a container) that few tests use, in this order: the other releases' tests first,
# wherever the first of them stands
GROUPED = ("cassandra41_node", "hbase25_server", "cassandra_cluster3", "cassandra_secure", "docker_cassandra")


def needs(item: pytest.Item) -> frozenset[str]:
    """The session servers `item` uses."""
    named = set(getattr(item, "fixturenames", ()))
    named.update(arg for mark in item.iter_markers("needs") for arg in mark.args)
    return frozenset(named & SESSION_SERVERS)


def order(items: list[pytest.Item]) -> None:
    """For each server of GROUPED, move its tests to just after the first of them (stable)."""
    for server in GROUPED:
        first = next((i for i, item in enumerate(items) if server in needs(item)), None)
        if first is None:
            continue
        later = items[first + 1:]
        items[first + 1:] = ([item for item in later if server in needs(item)]
                             + [item for item in later if server not in needs(item)])


class Lifetimes:
    """The last user of each server in the run, and what stops each server."""

    def __init__(self) -> None:
        self.last: dict[str, str] = {}  # fixture -> node ID of the last test that needs it
        self.stops: dict[str, Callable[[], None]] = {}  # fixture -> stops its server (once started)

    def plan(self, items: list[pytest.Item]) -> None:
        self.last = {server: item.nodeid for item in items for server in needs(item)}

    def started(self, fixture: str, stop: Callable[[], None]) -> None:
        self.stops[fixture] = stop

    def retire_after(self, item: pytest.Item) -> list[str]:
        """Stop the servers whose last user `item` was; their fixture names."""
        done = []
        for server in sorted(needs(item)):
            if self.last.get(server) == item.nodeid and server in self.stops:
                self.stops.pop(server)()
                done.append(server)
        return done
