"""The native CQL client's policies on their own: the routing (a token map and the nodes up ->
the connection a request goes to), the replica sets of the token map, and the schedule of
attempts that brings a lost node back. No session and no socket: the connections are stand-ins
with a `broken` attribute and a name, a statement is its routing key's index."""

from __future__ import annotations

import asyncio
import collections
from types import SimpleNamespace

import pytest

from workbench.databases.cassandra.protocol.metadata import TokenMap, murmur3, replica_sets
from workbench.databases.cassandra.protocol.reconnect import ExponentialReconnection, Reconnector
from workbench.databases.cassandra.protocol.routing import TokenAwareRouting

RING = [-(2**62), 0, 2**62]  # three tokens: a key's token falls at the first >= it (wrapping round)
KEYED = SimpleNamespace(routing=0)  # a statement whose partition key is its first value
UNKEYED = SimpleNamespace(routing=None)


def routing(owners: list[int], up: list[bool], factor: int = 0, shuffle: bool = True) -> TokenAwareRouting:
    """Routing over nodes 0..n-1 (up or down), the ring's tokens owned by `owners`, each token
    with `factor` replicas (0: its owner alone, as when the keyspace is not known)."""
    conns = [SimpleNamespace(broken=None if ok else OSError(), name=i) for i, ok in enumerate(up)]
    tokens = TokenMap(RING if owners else [], owners, replica_sets(owners, factor) if factor else [])
    return TokenAwareRouting(conns, shuffle, tokens)


def _keys_by_position() -> dict[int, str]:
    keys: dict[int, str] = {}
    for i in range(300):
        t = murmur3(f"user{i}".encode())
        keys.setdefault(0 if t <= RING[0] else 1 if t <= RING[1] else 2 if t <= RING[2] else 0, f"user{i}")
    assert sorted(keys) == [0, 1, 2]
    return keys


def test_a_key_goes_to_the_owner_of_its_token_or_the_next_node_up():
    keys = _keys_by_position()
    assert [routing([0, 1, 2], [True] * 3).route(KEYED, (keys[at],)).name for at in (0, 1, 2)] == [0, 1, 2]
    assert routing([2, 0, 1], [True] * 3).route(KEYED, (keys[0],)).name == 2  # its owner, not its index
    assert routing([0, 1, 2], [True, False, True]).route(KEYED, (keys[1],)).name == 2  # node 1 down
    assert routing([0, 1, 2], [False, False, True]).route(KEYED, (keys[0],)).name == 2  # round the ring
    assert routing([0, 1, 2], [False, False, False]).route(KEYED, (keys[1],)) is None
    assert routing([0, 1, 2], [True] * 3).route(KEYED, (keys[1].encode(),)).name == 1  # bytes keys too


def test_replica_sets_are_the_distinct_hosts_from_each_token_on_round_the_ring():
    assert replica_sets([0, 1, 2], 2) == [(0, 1), (1, 2), (2, 0)]
    assert replica_sets([0, 0, 1, 2, 1], 2) == [(0, 1), (0, 1), (1, 2), (2, 1), (1, 0)]
    assert replica_sets([0, 1, 2], 5) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]  # no more than the hosts
    assert replica_sets([0, 1], 0) == [(0,), (1,)]


@pytest.mark.parametrize("shuffle", [True, False])
def test_a_key_goes_to_any_of_its_live_replicas_shuffled_or_its_first(shuffle):
    keys = _keys_by_position()
    policy = routing([0, 1, 2], [True, True, True], factor=2, shuffle=shuffle)
    for at, replicas in ((0, {0, 1}), (1, {1, 2}), (2, {2, 0})):
        seen = collections.Counter(policy.route(KEYED, (keys[at],)).name for _ in range(2000))
        if shuffle:  # both replicas, about half each; never the third node
            assert set(seen) == replicas and min(seen.values()) > 800, seen
        else:  # cassandra.replicas=first: the token's owner, always
            assert seen == {at: 2000}
    policy = routing([0, 1, 2], [True, False, True], factor=2, shuffle=shuffle)
    assert {policy.route(KEYED, (keys[1],)).name for _ in range(200)} == {2}  # the live replica
    assert {policy.route(KEYED, (keys[0],)).name for _ in range(200)} == {0}
    policy = routing([0, 1, 2], [False, True, False], factor=2, shuffle=shuffle)  # no replica of 2 up
    assert policy.route(KEYED, (keys[2],)).name == 1  # the next node up on the ring


def test_without_a_ring_or_a_key_requests_go_round_robin_over_the_nodes_up():
    policy = routing([], [True, False, True])
    assert [policy.route(KEYED, ("k",)).name for _ in range(4)] == [2, 0, 2, 0]
    policy = routing([0, 1, 2], [True, True, True])  # a statement without a partition key
    assert [policy.route(UNKEYED, ("k",)).name for _ in range(4)] == [1, 2, 0, 1]
    assert routing([], [False, False]).route(KEYED, ("k",)) is None


def test_one_connection_is_used_while_it_is_up_and_the_ring_can_change_under_the_routing():
    assert routing([], [True]).route(KEYED, ("k",)).name == 0
    assert routing([], [False]).route(KEYED, ("k",)) is None
    keys = _keys_by_position()
    policy = routing([], [True, True, True])
    policy.use(TokenMap(RING, [0, 1, 2], []))  # the ring read again
    assert policy.route(KEYED, (keys[1],)).name == 1
    policy.conns[1] = None  # the session's list, changed in place: node 1 lost
    assert policy.route(KEYED, (keys[1],)).name == 2 and policy.any().name == 0


def test_a_lost_node_is_tried_again_after_waits_that_double_up_to_a_ceiling():
    policy = ExponentialReconnection(0.25, 2.0)
    waits = policy.schedule()
    assert [next(waits) for _ in range(6)] == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    waits = policy.schedule(at_once=True)  # the node said it is up: at once, then as before
    assert [next(waits) for _ in range(4)] == [0.0, 0.25, 0.5, 1.0]


def test_the_reconnector_tries_until_a_connection_is_made_and_stops_when_the_node_is_not_wanted(monkeypatch):
    slept: list[float] = []
    sleep = asyncio.sleep

    async def no_wait(seconds):
        slept.append(seconds)
        await sleep(0)

    monkeypatch.setattr("workbench.databases.cassandra.protocol.reconnect.asyncio.sleep", no_wait)

    async def scenario():
        tries, made, wanted = [], [], {0: True, 1: True}

        async def open_(index):
            tries.append(index)
            if tries.count(index) < 3:
                raise ConnectionRefusedError("not yet")
            return SimpleNamespace(name=index, close=lambda: made.append(("closed", index)))

        def connected(index, conn):
            made.append(("connected", conn.name))

        async def leave_while_opening(index):
            tries.append(index)
            wanted[index] = False
            return SimpleNamespace(name=index, close=lambda: made.append(("closed", index)))

        again = Reconnector(ExponentialReconnection(0.25, 2.0), open_, wanted.__getitem__, connected)
        again.start(0)
        again.start(0)  # one attempt loop a node
        assert 0 in again and len(again.tasks) == 1
        await again.tasks[0]
        assert made == [("connected", 0)] and slept == [0.25, 0.5, 1.0] and 0 not in again
        leaving = Reconnector(ExponentialReconnection(0.25, 2.0), leave_while_opening, wanted.__getitem__,
                              connected)
        leaving.start(1, at_once=True)
        await leaving.tasks[1]  # it left the cluster while its connection was being made
        assert made[-1] == ("closed", 1) and slept[-1] == 1.0  # (no wait before the first attempt)
        leaving.start(1)  # not wanted: no attempt at all
        assert 1 not in leaving and tries.count(1) == 1

    asyncio.run(scenario())
