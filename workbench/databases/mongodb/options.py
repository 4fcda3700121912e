"""The MongoDB binding's properties: YCSB 0.17.0's mongodb names, parsed once into MongoOptions.

As in YCSB, the connection string carries everything the driver knows (read preference, write
concern, pool size, TLS, credentials) and its path names the database. YCSB's legacy properties
(mongodb.writeConcern, mongodb.readPreference, mongodb.maxconnections) still work, but where YCSB
silently ignores one that the URL also sets (its default URL says w=1, so writeConcern=majority
did nothing), here a property set twice is refused. An unknown `mongodb.*` key is a ConfigError
naming it; a URL pymongo cannot parse is a BindingError naming what is wrong in it. Nothing here
connects to anything (a mongodb+srv:// URL's DNS lookup waits for the binding's init).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from workbench.bindings.properties import bounded_int as _int  # the same message as every database's
from workbench.errors import BindingError, ConfigError

DEFAULT_URL = "mongodb://127.0.0.1:27017/ycsb?w=1"
DEFAULT_DATABASE = "ycsb"  # YCSB's, when the URL names none (or names admin)
MAX_BATCH = 100_000  # MongoDB's maxWriteBatchSize: a larger bulk write is split by the driver anyway

# name -> (default, help); docs/CLIENTS.md's property table is this dict.
PROPERTIES: dict[str, tuple[str, str]] = {
    "mongodb.url": (DEFAULT_URL, "connection string: hosts, /database (default ycsb), ?options "
                                 "(w, journal, readPreference, maxPoolSize, tls, credentials)"),
    "mongodb.upsert": ("false", "true: an insert replaces the document with upsert, so a load "
                                "can be repeated over earlier records"),
    "batchsize": ("1", "inserts per bulk write; above 1 they queue in the client (BATCHED_OK)"),
    "mongodb.drop": ("false", "true: drop the collection before a load"),
    "mongodb.connecttimeout": ("5000", "ms to find and connect to the server "
                                       "(serverSelectionTimeoutMS, connectTimeoutMS)"),
    "mongodb.timeout": ("10000", "ms a request may wait for its answer (socketTimeoutMS), then it is "
                                 "an ERROR (NetworkTimeout); 0: no limit, as YCSB's driver"),
    "mongodb.writeConcern": ("", "YCSB's legacy name for the URL's w/journal: unacknowledged, "
                                 "acknowledged, journaled, replica_acknowledged, majority"),
    "mongodb.readPreference": ("", "YCSB's legacy name for the URL's readPreference: primary, "
                                   "primary_preferred, secondary, secondary_preferred, nearest"),
    "mongodb.maxconnections": ("", "YCSB's legacy name for the URL's maxPoolSize"),
}
# Why mongodb.timeout is on by default (10 s, as hbase.timeout), although a socket timeout makes
# pymongo's asyncio client send each request through asyncio.wait_for (a task and a timer per
# request: 864 instead of 762 Python calls per read, +13% of the client's work): without it, the
# reads in flight on a frozen server are never answered, and the run's stop cancels them
# uncounted, so a run across a 8-second freeze ended with no error at all (tried on FerretDB).
# With it, they are ERRORs (NetworkTimeout), as Cassandra's and HBase's timeouts make them.
# mongodb.timeout=0 gives YCSB's behaviour (its Java driver waits without a limit) and the CPU back.

# Keys YCSB knew that mean nothing to pymongo 4, and what to do instead.
REFUSED = {
    "mongodb.threadsAllowedToBlockForConnectionMultiplier":
        "pymongo 4 has no wait-queue multiplier (waitQueueMultiple was removed): leave it out",
    "mongodb.database": "the database is the path of mongodb.url, e.g. mongodb://127.0.0.1:27017/mydb",
}
# Legacy value -> client options (YCSB's OptionsSupport table).
WRITE_CONCERNS: dict[str, dict[str, Any]] = {
    "errors_ignored": {"w": 0},
    "unacknowledged": {"w": 0},
    "acknowledged": {"w": 1},
    "journaled": {"journal": True},
    "replica_acknowledged": {"w": 2},
    "majority": {"w": "majority"},
}
READ_PREFERENCES = {
    "primary": "primary",
    "primary_preferred": "primaryPreferred",
    "secondary": "secondary",
    "secondary_preferred": "secondaryPreferred",
    "nearest": "nearest",
}
URL_FIX = "write mongodb://HOST:PORT/DATABASE?OPTIONS, e.g. mongodb.url=" + DEFAULT_URL


@dataclass(frozen=True)
class MongoOptions:
    """The parsed properties (see PROPERTIES for meaning and defaults)."""

    url: str
    database: str
    hosts: str  # "host:port,..." for messages (never the credentials)
    upsert: bool
    batchsize: int
    drop: bool
    # Keyword arguments for AsyncMongoClient on top of the URL: timeouts and the legacy properties.
    client_options: tuple[tuple[str, Any], ...]

    @property
    def where(self) -> str:
        return f"{self.hosts}/{self.database}"


def _bool(key: str, text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ConfigError(f"{key}={text!r} is not true or false", "write true or false")
    return value == "true"


def _choice(key: str, text: str, table: dict[str, Any]) -> Any:
    value = text.strip().lower()
    if value not in table:
        raise ConfigError(f"{key}={text!r} is not valid", f"choose one of: {', '.join(table)}")
    return table[value]


def _unknown_url_option(url: str) -> str | None:
    """The first option of the URL's query that pymongo does not know, if any."""
    try:
        from pymongo.common import URI_OPTIONS_ALIAS_MAP, URI_OPTIONS_VALIDATOR_MAP
    except ImportError:  # a pymongo that moved them: the generic message will do
        return None
    known = set(URI_OPTIONS_VALIDATOR_MAP) | {a for names in URI_OPTIONS_ALIAS_MAP.values() for a in names}
    for pair in url.partition("?")[2].replace(";", "&").split("&"):
        name = pair.partition("=")[0]
        if name and name.lower() not in known:
            return name
    return None


def client_name(properties: dict[str, str]) -> str:
    """The client a run uses, for its record (bindings/clients.py)."""
    from workbench.bindings.clients import version  # noqa: PLC0415

    return f"pymongo {version('pymongo')} (asyncio)"


def parse_url(url: str) -> tuple[str, str | None, dict[str, Any]]:
    """(hosts for messages, the URL's database or None, its options by lower-case name).

    BindingError with the cause when pymongo would refuse the URL."""
    url = url.strip()
    if url.startswith("mongodb+srv://"):
        # pymongo resolves SRV and TXT records while parsing: leave that to the client's init.
        rest = url.removeprefix("mongodb+srv://").partition("?")
        host, _, path = rest[0].rpartition("@")[2].partition("/")
        return host, unquote_plus(path).partition(".")[0] or None, {}
    from pymongo.errors import PyMongoError
    from pymongo.uri_parser import parse_uri

    try:
        parsed = parse_uri(url, warn=False)
    except (PyMongoError, ValueError) as exc:
        cause = str(exc).split("\n")[0]
        if cause.startswith("Unknown option"):
            name = _unknown_url_option(url)
            cause = f"unknown option {name!r}" if name else cause
        raise BindingError(f"mongodb.url={url!r} is not a valid MongoDB connection string: {cause}",
                           URL_FIX) from None
    hosts = ",".join(f"{h}:{p}" for h, p in parsed["nodelist"])
    options = {k.lower(): v for k, v in parsed["options"].items()}
    return hosts, parsed["database"], options


def parse_options(properties: dict[str, str]) -> MongoOptions:
    """Validate the binding's properties; ConfigError or BindingError names the key at fault."""
    for key in properties:
        if key in REFUSED:
            raise ConfigError(f"{key} is not supported by the MongoDB binding", REFUSED[key])
    unknown = sorted(k for k in properties if k.startswith("mongodb.") and k not in PROPERTIES)
    if unknown:
        valid = ", ".join(k for k in PROPERTIES if k.startswith("mongodb."))
        raise ConfigError(f"unknown MongoDB property {unknown[0]!r}", f"valid ones: batchsize, {valid}")
    p = {k: properties.get(k, default) for k, (default, _) in PROPERTIES.items()}
    url = p["mongodb.url"].strip()
    hosts, database, url_options = parse_url(url)
    explicit_url = "mongodb.url" in properties

    # YCSB's rule: the URL's database, unless it names none or admin (then ycsb).
    if not database or database == "admin":
        database = DEFAULT_DATABASE

    extra: dict[str, Any] = {}

    def add(key: str, options: dict[str, Any]) -> None:
        """Options from a property: refused if an explicit URL sets them too (YCSB ignored
        the property then, silently); over the default URL, the property wins."""
        for name, value in options.items():
            if explicit_url and name.lower() in url_options and key in properties:
                raise ConfigError(f"{key} and mongodb.url both set {name}",
                                  f"keep one of them (the URL says {name}={url_options[name.lower()]})")
            if key in properties or name.lower() not in url_options:
                extra[name] = value

    connect_ms = _int("mongodb.connecttimeout", p["mongodb.connecttimeout"], 1, 3_600_000)
    add("mongodb.connecttimeout", {"serverSelectionTimeoutMS": connect_ms, "connectTimeoutMS": connect_ms})
    timeout_ms = _int("mongodb.timeout", p["mongodb.timeout"], 0, 3_600_000)
    add("mongodb.timeout", {"socketTimeoutMS": timeout_ms} if timeout_ms else {})
    if p["mongodb.writeConcern"].strip():
        add("mongodb.writeConcern",
            _choice("mongodb.writeConcern", p["mongodb.writeConcern"], WRITE_CONCERNS))
    if p["mongodb.readPreference"].strip():
        add("mongodb.readPreference", {"readPreference": _choice(
            "mongodb.readPreference", p["mongodb.readPreference"], READ_PREFERENCES)})
    if p["mongodb.maxconnections"].strip():
        add("mongodb.maxconnections", {"maxPoolSize": _int(
            "mongodb.maxconnections", p["mongodb.maxconnections"], 1, 100_000)})

    return MongoOptions(
        url=url,
        database=database,
        hosts=hosts,
        upsert=_bool("mongodb.upsert", p["mongodb.upsert"]),
        batchsize=_int("batchsize", p["batchsize"], 1, MAX_BATCH),
        drop=_bool("mongodb.drop", p["mongodb.drop"]),
        client_options=tuple(extra.items()),
    )
