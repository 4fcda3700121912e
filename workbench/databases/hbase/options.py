"""The HBase binding's properties, parsed once into a frozen HBaseOptions.

`hbase.*` keys and YCSB's bare hbase2 names (columnfamily, clientbuffering, writebuffersize,
durability) are checked here: an unknown `hbase.*` key or a bad value is a ConfigError that
names the key and what would be valid. Nothing here imports a driver.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.errors import ConfigError

# Thrift1 mutations carry one flag, writeToWAL, which the gateway turns into SYNC_WAL (true)
# or SKIP_WAL (false) on every Put and Delete; a table's own durability is then never used.
DURABILITY_WAL = {"USE_DEFAULT": True, "SYNC_WAL": True, "SKIP_WAL": False}
NOT_EXPRESSIBLE = ("ASYNC_WAL", "FSYNC_WAL")

DEFAULTS = {
    "hbase.client": "native",
    "hbase.host": "127.0.0.1",
    "hbase.port": "9090",
    "hbase.transport": "buffered",
    "hbase.protocol": "binary",
    "hbase.timeout": "10000",
    "hbase.pool": "",  # empty: the lanes of this worker (threadcount / workers)
    "hbase.presplit": "1",
    "hbase.drop": "false",
    "hbase.zookeeper": "",  # empty: <hbase.host>:2181 (only pre-splitting needs it)
    "columnfamily": "family",
    "clientbuffering": "false",
    "writebuffersize": str(12 * 1024 * 1024),
    "durability": "USE_DEFAULT",
}
BARE_KEYS = ("columnfamily", "clientbuffering", "writebuffersize", "durability")

BUFFER_NOTE = (
    "clientbuffering=true: INSERT and UPDATE latencies measure appending to the client's write "
    "buffer, not the server; the buffer goes to HBase every {size} bytes and at cleanup, so "
    "server time shows up in the few operations that flush it and in CLEANUP"
)


@dataclass(frozen=True)
class HBaseOptions:
    """Everything the binding needs to know, validated."""

    client: str
    host: str
    port: int
    transport: str
    protocol: str
    timeout_ms: int
    pool: int
    presplit: int
    drop: bool
    zookeeper: tuple[str, int]
    family: str
    clientbuffering: bool
    writebuffersize: int
    durability: str

    @property
    def wal(self) -> bool:
        return DURABILITY_WAL[self.durability]

    def describe(self) -> str:
        return (f"HBase Thrift gateway at {self.host}:{self.port} "
                f"(transport={self.transport}, protocol={self.protocol}, client={self.client})")


def _choice(key: str, value: str, choices: tuple[str, ...]) -> str:
    lowered = value.strip().lower()
    if lowered not in choices:
        raise ConfigError(f"{key}={value!r} is not valid", f"use one of: {', '.join(choices)}")
    return lowered


def _number(key: str, value: str, low: int, high: int = 2**31 - 1) -> int:
    try:
        n = int(value.strip(), 10)
    except ValueError:
        n = low - 1
    if not low <= n <= high:
        raise ConfigError(f"{key}={value!r} is not valid", f"use an integer from {low} to {high}")
    return n


def _durability(value: str) -> str:
    name = value.strip().upper()
    if name in NOT_EXPRESSIBLE:
        raise ConfigError(
            f"durability={value} cannot be expressed through HBase's Thrift1 gateway",
            "its mutations only say write-to-WAL or not: use SYNC_WAL (or USE_DEFAULT, which the "
            "gateway turns into SYNC_WAL) or SKIP_WAL",
        )
    if name not in DURABILITY_WAL:
        valid = ", ".join([*DURABILITY_WAL, *NOT_EXPRESSIBLE])
        raise ConfigError(f"durability={value!r} is not valid", f"YCSB's values are: {valid}")
    return name


CLIENTS = ("native", "async")
RETIRED_CLIENTS = {
    "happybase": ("hbase.client=happybase was retired",
                  "use hbase.client=native (the default) or hbase.client=async (the asyncio Thrift "
                  "client, through the same gateway happybase used)"),
}


def client_of(properties: dict[str, str]) -> str:
    """Which client serves the binding: hbase.client (native, the default, or async)."""
    chosen = properties.get("hbase.client", "").strip() or DEFAULTS["hbase.client"]
    if chosen.lower() in RETIRED_CLIENTS:
        raise ConfigError(*RETIRED_CLIENTS[chosen.lower()])
    return _choice("hbase.client", chosen, CLIENTS)


def client_name(properties: dict[str, str]) -> str:
    """The client a run with these properties uses, for its record (bindings/clients.py)."""
    from workbench.bindings.clients import version  # noqa: PLC0415

    if client_of(properties) == "native":
        return "native HBase RPC"
    return f"HBase Thrift (thriftpy2 {version('thriftpy2')}, asyncio)"


def binding_target(properties: dict[str, str]) -> str:
    """Where the binding class of these properties lives ("module:Class"): the registry's client
    factory for `hbase`, so that no binding module imports another to choose its client."""
    if client_of(properties) == "native":
        return "workbench.databases.hbase.native:NativeBinding"
    return "workbench.databases.hbase.binding:HBaseBinding"


def parse_options(spec: Any, properties: dict[str, str], context: dict[str, Any]) -> HBaseOptions:
    """Validate the binding's properties; unknown `hbase.*` keys are errors."""
    for key in properties:
        if key.startswith("hbase.") and key not in DEFAULTS:
            valid = ", ".join(k for k in DEFAULTS if k.startswith("hbase."))
            raise ConfigError(f"unknown HBase property {key!r}",
                              f"valid ones: {valid}, plus {', '.join(BARE_KEYS)}")
    p = {**DEFAULTS, **{k: v for k, v in properties.items() if k in DEFAULTS}}
    workers = max(int(context.get("workers", 1) or 1), 1)
    lanes = max(-(-int(getattr(spec, "threadcount", 1)) // workers), 1)
    host = p["hbase.host"].strip()
    zk_host, _, zk_port = (p["hbase.zookeeper"].strip() or f"{host}:2181").rpartition(":")
    family = p["columnfamily"].strip()
    if not family or ":" in family:
        raise ConfigError(f"columnfamily={family!r} is not a column family name",
                          "use a short name without ':' (YCSB's default is 'family')")
    client = client_of(properties)
    if p["hbase.protocol"].strip().lower() == "compact":
        raise ConfigError("hbase.protocol=compact was served by the happybase client, which was "
                          "retired",
                          "start the Thrift gateway with the binary protocol (its default: no -c) "
                          "and leave hbase.protocol out")
    protocol = _choice("hbase.protocol", p["hbase.protocol"], ("binary",))
    return HBaseOptions(
        client=client,
        host=host,
        port=_number("hbase.port", p["hbase.port"], 1, 65535),
        transport=_choice("hbase.transport", p["hbase.transport"], ("buffered", "framed")),
        protocol=protocol,
        timeout_ms=_number("hbase.timeout", p["hbase.timeout"], 1),
        pool=_number("hbase.pool", p["hbase.pool"], 1, 1024) if p["hbase.pool"].strip() else lanes,
        presplit=_number("hbase.presplit", p["hbase.presplit"], 1, 10000),
        drop=_choice("hbase.drop", p["hbase.drop"], ("true", "false")) == "true",
        zookeeper=(zk_host or host, _number("hbase.zookeeper", zk_port or "x", 1, 65535)),
        family=family,
        clientbuffering=_choice("clientbuffering", p["clientbuffering"], ("true", "false")) == "true",
        writebuffersize=_number("writebuffersize", p["writebuffersize"], 1),
        durability=_durability(p["durability"]),
    )
