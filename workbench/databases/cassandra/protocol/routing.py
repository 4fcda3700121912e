"""Which connection a CQL request goes to: the load-balancing policy of the native client, as
the DataStax drivers name it (cassandra/policies.py: TokenAwarePolicy over a DC-aware round
robin, YCSB's choice). With a token map (metadata.py) a request goes to a live replica of
its partition key: any of them at random (cassandra.replicas=shuffle, the drivers' default) or
the first in ring order; when none is up, to the next node up on the ring. Without a token map,
or a statement without a routing key, round robin over the nodes up. Nodes down (no connection,
or a broken one) are skipped; None when no node is up.

The session (session.py) owns the connections: `conns` is its list, one entry per host
index, read here as it changes. With workbench._speedups built, a chain's step over a session of
one connection skips route() (csrc/cql.c reads `conns` from the route's object).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from typing import Any

from workbench.databases.cassandra.protocol.connection import CqlConnection
from workbench.databases.cassandra.protocol.cql import Statement
from workbench.databases.cassandra.protocol.metadata import NO_TOKENS, TokenMap, murmur3

_below = random.Random().randrange  # the replica a shuffled request goes to (not the lanes' streams)


class TokenAwareRouting:
    """Token-aware routing over one datacenter's connections (see the module's docstring)."""

    __slots__ = ("conns", "ring", "owners", "replicas", "shuffle", "_rr")

    def __init__(self, conns: list[CqlConnection | None], shuffle: bool = True,
                 tokens: TokenMap = NO_TOKENS) -> None:
        self.conns = conns
        self.shuffle = shuffle
        self._rr = 0
        self.use(tokens)

    def use(self, tokens: TokenMap) -> None:
        """Route by this token map from now on (the ring was read again)."""
        self.ring, self.owners, self.replicas = tokens.ring, tokens.owners, tokens.replicas

    def any(self) -> CqlConnection | None:
        """The first live connection (set-up requests: PREPARE, the system tables)."""
        for conn in self.conns:
            if conn is not None and conn.broken is None:
                return conn
        return None

    def route(self, stmt: Statement, params: Sequence[Any]) -> CqlConnection | None:
        """The connection this request goes to, or None when no node is up."""
        conns = self.conns
        if len(conns) == 1:
            conn = conns[0]
            return conn if conn is not None and conn.broken is None else None
        ring = self.ring
        if ring and stmt.routing is not None:
            key = params[stmt.routing]
            at = bisect.bisect_left(ring, murmur3(key.encode() if isinstance(key, str) else key))
            owners, n = self.owners, len(ring)
            replicas = self.replicas[at % n] if self.replicas else ()
            if len(replicas) > 1:
                live = [c for c in (conns[h] for h in replicas) if c is not None and c.broken is None]
                if live:
                    return live[_below(len(live))] if self.shuffle and len(live) > 1 else live[0]
            for step in range(n):
                conn = conns[owners[(at + step) % n]]
                if conn is not None and conn.broken is None:
                    return conn
            return None
        for _ in range(len(conns)):
            self._rr = (self._rr + 1) % len(conns)
            conn = conns[self._rr]
            if conn is not None and conn.broken is None:
                return conn
        return None
