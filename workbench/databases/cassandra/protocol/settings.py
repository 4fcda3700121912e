"""What the native CQL client is told: the contact points, the login, TLS, the timeouts, how
replicas are chosen and how a lost node is tried again. A frozen dataclass with no YCSB in it:
the Cassandra binding fills it from its properties (databases/cassandra/options.py,
`CassandraOptions.cql_settings`), and the session (session.py) reads nothing else.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass


@dataclass(frozen=True)
class CqlTls:
    """TLS to the native port: the CA to trust, a client certificate for mutual TLS, and how
    much of the server's certificate is checked (none, peer: its chain, identity: chain and
    host name)."""

    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    keypassword: str | None = None
    verify: str = "peer"  # "none" | "peer" | "identity"

    def context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if self.verify == "none":
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx.load_verify_locations(cafile=self.cafile)
            ctx.check_hostname = self.verify == "identity"
        if self.certfile:
            ctx.load_cert_chain(self.certfile, self.keyfile, self.keypassword)
        return ctx


@dataclass(frozen=True)
class CqlSettings:
    """One session's settings. `keyspace` is only read for its replication factor (the
    replica sets of token-aware routing); None routes every key to its token's owner alone."""

    hosts: tuple[str, ...]  # contact points, tried in order until one answers
    port: int = 9042
    keyspace: str | None = None
    protocol_version: int = 4  # 3 or 4
    username: str | None = None  # PasswordAuthenticator's login, when the node asks for one
    password: str | None = None
    connect_timeout_ms: int = 5000  # a connection and its STARTUP (and login)
    read_timeout_ms: int = 12000  # a request without an answer then fails (OperationTimedOut)
    tls: CqlTls | None = None
    shuffle_replicas: bool = True  # any live replica of a key at random, or its first on the ring
    reconnect_first_s: float = 0.25  # the wait before a lost node is tried again, doubled each time
    reconnect_max_s: float = 2.0  # up to this

    @property
    def where(self) -> str:
        return ",".join(self.hosts) + f":{self.port}"
