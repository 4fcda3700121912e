"""The Cassandra binding's properties: YCSB's cassandra-cql names where they exist, parsed once.

Every `cassandra.*` key must be one of PROPERTIES: a misspelt key is a ConfigError that names it
and lists the valid ones (YCSB silently ignores it, which is how runs end up at the wrong
consistency level).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from workbench.bindings.properties import bounded_int as _int
from workbench.databases.cassandra.protocol.settings import CqlSettings, CqlTls
from workbench.errors import ConfigError

# name -> (default, help); docs/CLIENTS.md's property table is this dict.
PROPERTIES: dict[str, tuple[str, str]] = {
    "hosts": ("127.0.0.1", "comma-separated contact points"),
    "port": ("9042", "CQL native port"),
    "cassandra.keyspace": ("ycsb", "keyspace (created if missing)"),
    "cassandra.readconsistencylevel": ("QUORUM", "consistency of reads and scans"),
    "cassandra.writeconsistencylevel": ("QUORUM", "consistency of inserts, updates, deletes"),
    "cassandra.username": ("", "PasswordAuthenticator user"),
    "cassandra.password": ("", "PasswordAuthenticator password"),
    "cassandra.connecttimeoutmillis": ("5000", "connect timeout (ms)"),
    "cassandra.readtimeoutmillis": ("12000", "request timeout (ms); then the operation is an ERROR"),
    "cassandra.useSSL": ("false", "TLS to the native port"),
    "cassandra.ssl.cafile": ("", "PEM file of the CA (or server certificate) to trust"),
    "cassandra.ssl.certfile": ("", "PEM client certificate chain (mutual TLS)"),
    "cassandra.ssl.keyfile": ("", "PEM client private key (mutual TLS)"),
    "cassandra.ssl.keypassword": ("", "password of the client private key"),
    "cassandra.ssl.verify": ("peer", "none | peer (certificate chain) | identity (chain + host)"),
    "cassandra.protocolversion": ("4", "native protocol version: 3, 4 or 5"),
    "cassandra.driver": ("native", "load driver: native (the workbench's own CQL client on the event "
                                   "loop) or python (cassandra-driver, the reference)"),
    "cassandra.replicas": ("shuffle", "which of a key's replicas coordinates its request: shuffle (any "
                                      "live one at random, as the DataStax drivers do by default) or "
                                      "first (the key's first replica on the ring)"),
    "cassandra.drop": ("false", "true: drop and recreate the table before a load"),
    "cassandra.replication.class": ("SimpleStrategy", "replication strategy of a new keyspace"),
    "cassandra.replication.factor": ("1", "replication factor of a new keyspace"),
}
CONSISTENCY = ("ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM",
               "LOCAL_ONE")
_NAME = re.compile(r"^[A-Za-z0-9_]{1,48}$")


@dataclass(frozen=True)
class CassandraOptions:
    """The parsed properties (see PROPERTIES for meaning and defaults)."""

    hosts: tuple[str, ...]
    port: int
    keyspace: str
    read_consistency: str
    write_consistency: str
    username: str | None
    password: str | None
    connect_timeout_ms: int
    read_timeout_ms: int
    use_ssl: bool
    ssl_cafile: str | None
    ssl_certfile: str | None
    ssl_keyfile: str | None
    ssl_keypassword: str | None
    ssl_verify: str
    protocol_version: int
    driver: str
    replicas: str  # "shuffle" | "first"
    drop: bool
    replication: dict[str, str]

    @property
    def where(self) -> str:
        return ",".join(self.hosts) + f":{self.port}"

    def cql_settings(self) -> CqlSettings:
        """What the native CQL client (protocol/session.py) is told of these properties."""
        tls = CqlTls(cafile=self.ssl_cafile, certfile=self.ssl_certfile, keyfile=self.ssl_keyfile,
                     keypassword=self.ssl_keypassword, verify=self.ssl_verify) if self.use_ssl else None
        return CqlSettings(
            hosts=self.hosts, port=self.port, keyspace=self.keyspace, protocol_version=self.protocol_version,
            username=self.username, password=self.password, connect_timeout_ms=self.connect_timeout_ms,
            read_timeout_ms=self.read_timeout_ms, tls=tls, shuffle_replicas=self.replicas == "shuffle")


def _choice(key: str, text: str, choices: tuple[str, ...], upper: bool = False) -> str:
    value = text.strip().upper() if upper else text.strip().lower()
    if value not in choices:
        raise ConfigError(f"{key}={text!r} is not valid", f"choose one of: {', '.join(choices)}")
    return value


def _file(key: str, text: str) -> str | None:
    path = text.strip()
    if path and not os.path.isfile(path):
        raise ConfigError(f"{key}={path!r}: no such file", "give the path of a PEM file")
    return path or None


def client_name(properties: dict[str, str]) -> str:
    """The client a run with these properties uses, for its record (bindings/clients.py)."""
    from workbench.bindings.clients import version  # noqa: PLC0415

    opts = parse_options(properties)
    if opts.driver == "native":
        return f"native CQL v{opts.protocol_version}"
    return f"cassandra-driver {version('cassandra-driver')} (CQL v{opts.protocol_version})"


def parse_options(properties: dict[str, str]) -> CassandraOptions:
    """Validate the binding's properties; ConfigError names the key at fault."""
    unknown = sorted(k for k in properties if k.startswith("cassandra.") and k not in PROPERTIES)
    if unknown:
        valid = ", ".join(k for k in PROPERTIES if k.startswith("cassandra."))
        raise ConfigError(f"unknown Cassandra property {unknown[0]!r}", f"valid ones: hosts, port, {valid}")
    p = {k: properties.get(k, default) for k, (default, _) in PROPERTIES.items()}
    hosts = tuple(h.strip() for h in p["hosts"].split(",") if h.strip())
    if not hosts:
        raise ConfigError("hosts is empty", "give a comma-separated list, e.g. hosts=127.0.0.1")
    keyspace = p["cassandra.keyspace"].strip()
    if not _NAME.match(keyspace):
        raise ConfigError(f"cassandra.keyspace={keyspace!r} is not a valid keyspace name",
                          "use up to 48 letters, digits and underscores")
    use_ssl = _choice("cassandra.useSSL", p["cassandra.useSSL"], ("true", "false")) == "true"
    verify = _choice("cassandra.ssl.verify", p["cassandra.ssl.verify"], ("none", "peer", "identity"))
    cafile = _file("cassandra.ssl.cafile", p["cassandra.ssl.cafile"])
    if use_ssl and verify != "none" and not cafile:
        raise ConfigError("cassandra.useSSL=true verifies the server but cassandra.ssl.cafile is not set",
                          "set cassandra.ssl.cafile=PEM, or cassandra.ssl.verify=none")
    strategy = p["cassandra.replication.class"].strip()
    if not re.match(r"^[A-Za-z][A-Za-z0-9_.]*$", strategy):
        raise ConfigError(f"cassandra.replication.class={strategy!r} is not a strategy class name",
                          "e.g. SimpleStrategy or NetworkTopologyStrategy")
    protocol = _int("cassandra.protocolversion", p["cassandra.protocolversion"], 3, 5)
    if p["cassandra.driver"].strip().lower() == "acsylla":
        raise ConfigError("cassandra.driver=acsylla was retired",
                          "use cassandra.driver=native (the default) or cassandra.driver=python "
                          "(cassandra-driver, the reference)")
    driver = _choice("cassandra.driver", p["cassandra.driver"], ("native", "python"))
    if driver == "native" and protocol == 5:
        # The native driver does not write v5's checksummed frames.
        raise ConfigError(f"cassandra.protocolversion=5 is not available with cassandra.driver={driver}",
                          "use cassandra.protocolversion=4, or cassandra.driver=python for v5")
    return CassandraOptions(
        hosts=hosts,
        port=_int("port", p["port"], 1, 65535),
        keyspace=keyspace,
        read_consistency=_choice("cassandra.readconsistencylevel",
                                 p["cassandra.readconsistencylevel"], CONSISTENCY[1:], upper=True),
        write_consistency=_choice("cassandra.writeconsistencylevel",
                                  p["cassandra.writeconsistencylevel"], CONSISTENCY, upper=True),
        username=p["cassandra.username"] or None,
        password=p["cassandra.password"] or None,
        connect_timeout_ms=_int("cassandra.connecttimeoutmillis", p["cassandra.connecttimeoutmillis"],
                                1, 3_600_000),
        read_timeout_ms=_int("cassandra.readtimeoutmillis", p["cassandra.readtimeoutmillis"],
                             1, 3_600_000),
        use_ssl=use_ssl,
        ssl_cafile=cafile,
        ssl_certfile=_file("cassandra.ssl.certfile", p["cassandra.ssl.certfile"]),
        ssl_keyfile=_file("cassandra.ssl.keyfile", p["cassandra.ssl.keyfile"]),
        ssl_keypassword=p["cassandra.ssl.keypassword"] or None,
        ssl_verify=verify,
        protocol_version=protocol,
        driver=driver,
        replicas=_choice("cassandra.replicas", p["cassandra.replicas"], ("shuffle", "first")),
        drop=_choice("cassandra.drop", p["cassandra.drop"], ("true", "false")) == "true",
        replication={
            "class": strategy,
            "replication_factor": str(_int("cassandra.replication.factor",
                                           p["cassandra.replication.factor"], 1, 99)),
        },
    )
