"""The external provider: an existing Cassandra, HBase or MongoDB cluster, named by a cluster file.

    # mycluster.toml
    kind = "cassandra"                 # or "hbase"
    provider = "external"
    description = "the lab's cluster"
    hosts = ["10.1.0.11", "10.1.0.12"] # contact points (HBase: the Thrift gateway)
    port = 9042                        # default 9042 (Cassandra CQL) / 9090 (HBase Thrift)
    username = "bench"                 # Cassandra: PasswordAuthenticator login (optional)
    password = "..."                   # ... or, kept out of the file:
    # password_env = "LAB_CASSANDRA_PASSWORD"  # the environment variable that holds it
    tls = true                         # Cassandra: TLS on the client port ...
    ca_file = "/path/to/ca.pem"        # ... trusting this certificate
    thrift_transport = "framed"        # HBase: the gateway's transport (buffered, the default)
    thrift_protocol = "binary"         # HBase: and protocol (binary, the default, or compact)
    [replication]                      # Cassandra: the keyspace a load creates
    class = "NetworkTopologyStrategy"
    replication_factor = 3

    # a MongoDB-protocol server (MongoDB itself, FerretDB, ...): its URL, as YCSB's mongodb.url
    kind = "mongodb"
    provider = "external"
    url = "mongodb://bench@10.1.0.21:27017/ycsb?w=1&authSource=admin"  # no password in it
    password_env = "LAB_MONGO_PASSWORD"  # (or password = "..."), added to the URL when used
    tls = true                           # adds tls=true and tlsCAFile=ca_file to the URL
    ca_file = "/path/to/ca.pem"

`workbench cluster up FILE --provider external` only checks that the cluster answers (Cassandra
also says its release and node count, a MongoDB-protocol server its name and version, a FerretDB
named as FerretDB, never as the MongoDB release it emulates; HBase's Thrift1 cannot) and remembers it under
<state>/external/NAME/ (a 0700 directory, state.json 0600), so that `--cluster NAME` works as for
a cluster the workbench started; `down` forgets it. The password is never written there: the
state names the cluster file (or the environment variable), which is read again when a client
needs the login (the file as it is then: its password, or the variable it names then). The
workbench does not own these servers: pause, resume, kill, restart and logs are refused in one
line.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.clusters import paths
from workbench.clusters.base import Cluster, Node
from workbench.clusters.launch import tcp_open
from workbench.databases import database, databases, find, resolve
from workbench.errors import ClusterError

STATE_FILE = "state.json"
_KEYS = {"kind", "provider", "description", "hosts", "port", "username", "password", "password_env",
         "tls", "ca_file",
         "thrift_transport", "thrift_protocol",
         "replication", "name", "url"}


@dataclass(frozen=True)
class ExternalSpec:
    """An existing cluster: where its clients connect and how."""

    name: str
    kind: str
    hosts: tuple[str, ...]
    port: int = 0  # 0: the kind's default
    username: str = ""
    password: str = ""
    tls: bool = False
    ca_file: str = ""
    replication_class: str = "SimpleStrategy"
    replication_factor: int = 1
    description: str = ""
    thrift_transport: str = "buffered"
    thrift_protocol: str = "binary"
    password_env: str = ""  # the environment variable that holds the password
    source: str = ""  # the cluster file (absolute), read again for the password
    url: str = ""  # MongoDB: the connection string, without its password

    def __post_init__(self) -> None:
        # what each kind takes is its database's (databases/: external_port, external_keys)
        described = find(self.kind)
        if described is None or not described.external_port:
            kinds = [d.name for d in databases() if d.external_port]
            raise ClusterError(f"invalid cluster file: kind {self.kind!r} must be "
                               f"{', '.join(kinds[:-1])} or {kinds[-1]}")
        keys = described.external_keys
        if self.url and "url" not in keys:
            takers = " or ".join(f'kind = "{d.name}"' for d in databases() if "url" in d.external_keys)
            raise ClusterError(f"invalid cluster file: url is for {takers}",
                               hint=f"{described.title} takes hosts and port")
        if not self.hosts or not all(isinstance(h, str) and h for h in self.hosts):
            raise ClusterError("invalid cluster file: hosts must list at least one address")
        if not 0 <= self.port <= 65535:
            raise ClusterError(f"invalid cluster file: port {self.port} must be 1-65535")
        if (self.username and "username" not in keys) or (self.tls and "tls" not in keys):
            raise ClusterError(f"invalid cluster file: username and tls are not for {described.title}",
                               hint=f"{described.title}'s file takes: {', '.join(sorted(keys))}")
        for key, choices in (("thrift_transport", ("buffered", "framed")),
                             ("thrift_protocol", ("binary", "compact"))):
            if getattr(self, key) not in choices:
                raise ClusterError(f"invalid cluster file: {key} {getattr(self, key)!r} must be one of "
                                   f"{', '.join(choices)}")
            if key not in keys and getattr(self, key) != choices[0]:
                raise ClusterError(f"invalid cluster file: {key} is not for {described.title}",
                                   hint=f"{described.title}'s file takes: {', '.join(sorted(keys))}")
        if self.tls and not self.ca_file:
            raise ClusterError("invalid cluster file: tls = true needs ca_file, the certificate to trust")
        if self.replication_factor < 1:
            raise ClusterError("invalid cluster file: replication_factor must be 1 or more")

    def login_password(self) -> str:
        """The password: the one this spec holds, else the environment variable's value or the
        cluster file's, read now (the state file never holds it)."""
        if self.password:
            return self.password
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value is None:
                raise ClusterError(f"external cluster {self.name}: its password is in the environment "
                                   f"variable {self.password_env}, which is not set here",
                                   hint=f"export {self.password_env}=... (the cluster file "
                                        f"{self.source or '?'} names it)")
            return value
        if self.username and self.source:
            try:
                mine = load_file(self.source, self.name)
            except ClusterError as exc:
                raise ClusterError(f"external cluster {self.name}: its password is read from its cluster "
                                   f"file, which cannot be read now: {exc.message}",
                                   hint=f"put {self.source} back, or `workbench cluster down {self.name}` "
                                        "and `cluster up FILE` again") from None
            # the file as it is now: its password, or the variable it names now (never the file again)
            if mine.password or mine.password_env:
                return mine.login_password()
        return ""

    def credentials(self, run_dir: Path) -> tuple[str, str] | None:
        """The cluster file's own login (username, with its password read now), if it names one."""
        return (self.username, self.login_password()) if self.username else None

    def tls_ca(self, run_dir: Path) -> Path | None:
        """tls = true: the certificate the cluster file names (ca_file)."""
        return Path(self.ca_file) if self.tls else None

    @property
    def client_port(self) -> int:
        return self.port or database(self.kind).external_port

    def mongodb_url(self) -> str:
        """The URL a MongoDB client gets: the file's, with the login's password and TLS added."""
        from urllib.parse import quote

        url = self.url or f"mongodb://{','.join(f'{h}:{self.client_port}' for h in self.hosts)}/ycsb?w=1"
        scheme, _, rest = url.partition("://")
        if self.username and "@" not in rest.split("/", 1)[0]:
            rest = f"{quote(self.username, safe='')}@{rest}"
        password = self.login_password()
        if password:
            userinfo, _, hostpart = rest.partition("@")
            rest = f"{userinfo}:{quote(password, safe='')}@{hostpart}"
        if self.tls:
            base, _, query = rest.partition("?")
            if "/" not in base:
                base += "/"
            extra = f"tls=true&tlsCAFile={quote(self.ca_file, safe='/')}"
            rest = f"{base}?{query + '&' if query else ''}{extra}"
        return f"{scheme}://{rest}"

    @property
    def replication(self) -> dict[str, object] | None:
        if "replication" not in database(self.kind).external_keys:
            return None
        return {"class": self.replication_class, "replication_factor": self.replication_factor}


def is_external_file(path: str) -> bool:
    """Whether `path` is a cluster file that says provider = "external"."""
    p = Path(path)
    if p.suffix != ".toml" or not p.is_file():
        return False
    try:
        return tomllib.loads(p.read_text()).get("provider") == "external"
    except (OSError, tomllib.TOMLDecodeError):
        return False


def load_file(path: str | Path, name: str | None = None) -> ExternalSpec:
    """The spec a cluster file describes; mistakes are one line naming the file and key."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ClusterError(f"no cluster file {path}", hint="give the path of a .toml file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ClusterError(f"{path}: not valid TOML: {exc}") from None
    for key in data:
        if key not in _KEYS:
            raise ClusterError(f"{path}: unknown key {key!r} for an external cluster",
                               hint=f"known keys: {', '.join(sorted(_KEYS))}")
    if data.get("provider", "external") != "external":
        raise ClusterError(f"{path}: key 'provider' is {data['provider']!r}, not external")
    hosts = data.get("hosts")
    if isinstance(hosts, str):
        hosts = [hosts]
    fields: dict[str, Any] = {
        "name": name or data.get("name") or path.stem, "kind": data.get("kind"),
        "hosts": tuple(hosts) if isinstance(hosts, list) else (), "description": data.get("description", ""),
    }
    for key, kind in (("port", int), ("username", str), ("password", str), ("password_env", str),
                      ("tls", bool), ("ca_file", str), ("thrift_transport", str), ("thrift_protocol", str)):
        if key in data:
            if not isinstance(data[key], kind) or (kind is int and isinstance(data[key], bool)):
                raise ClusterError(f"{path}: key {key!r} must be {kind.__name__}, not {data[key]!r}")
            fields[key] = data[key]
    if fields.get("ca_file"):
        ca = Path(os.path.expanduser(fields["ca_file"]))
        if not ca.is_absolute():
            ca = (path.parent / ca).resolve()
        fields["ca_file"] = str(ca)
    if "url" in data:
        fields.update(_mongodb_url_fields(path, data))
    if fields.get("password") and fields.get("password_env"):
        raise ClusterError(f"{path}: give password or password_env, not both",
                           hint="password_env names the environment variable that holds the password")
    fields["source"] = str(path.resolve())
    replication = data.get("replication", {})
    if not isinstance(replication, dict) or set(replication) - {"class", "replication_factor"}:
        raise ClusterError(f"{path}: key 'replication' must be a table of class and replication_factor")
    if "class" in replication:
        fields["replication_class"] = str(replication["class"])
    if "replication_factor" in replication:
        fields["replication_factor"] = replication["replication_factor"]
    try:
        return ExternalSpec(**fields)
    except ClusterError as exc:
        raise ClusterError(f"{path}: {exc.message}", hint=exc.hint) from None


def _mongodb_url_fields(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """url's hosts (for status and contact points) and login name; a password in it is refused."""
    from pymongo.errors import InvalidURI
    from pymongo.uri_parser import parse_uri

    url = data["url"]
    if not isinstance(url, str):
        raise ClusterError(f"{path}: key 'url' must be a string, not {url!r}")
    try:
        parsed = parse_uri(url, validate=True, warn=False)
    except (InvalidURI, ValueError) as exc:
        raise ClusterError(f"{path}: key 'url' is not a MongoDB URL: {exc}",
                           hint="mongodb://HOST:PORT/DATABASE?OPTIONS") from None
    if parsed.get("password"):
        raise ClusterError(f"{path}: key 'url' holds a password",
                           hint="put it in password_env (or password), which the state never keeps")
    if "hosts" in data or "port" in data:
        raise ClusterError(f"{path}: give url or hosts and port, not both")
    out: dict[str, Any] = {"url": url, "hosts": tuple(h for h, _ in parsed["nodelist"]) or ("",)}
    ports_seen = {p for _, p in parsed["nodelist"]}
    if len(ports_seen) == 1:
        out["port"] = ports_seen.pop()
    if parsed.get("username") and not data.get("username"):
        out["username"] = parsed["username"]
    return out


class ExternalProvider:
    """Remembers existing clusters; starts and stops nothing."""

    name = "external"

    def __init__(self, state_dir: Path | None = None, progress: object = None, **_: object) -> None:
        self.root = (Path(state_dir) if state_dir else paths.state_dir()) / "external"

    # -- lifecycle -------------------------------------------------------------------------
    def up(self, spec: ExternalSpec) -> Cluster:
        """Check that the cluster answers, then remember it. Nothing is started."""
        if not isinstance(spec, ExternalSpec):
            raise ClusterError("the external provider takes a cluster file with provider = \"external\"",
                               hint="give the path of such a .toml file")
        if spec.password_env:  # refused now rather than at the first run
            spec = dataclasses.replace(spec, password=spec.login_password())
        check = resolve(database(spec.kind).external_check)  # the database's own health check
        version, nodes = check(spec)
        cluster = _cluster(spec, self.root / spec.name, version, nodes)
        _save(cluster)
        return self.status(spec.name)

    def down(self, name: str, keep_data: bool = False) -> dict[str, str]:
        """Forget the cluster (its servers are not touched)."""
        cluster = self._load(name)
        shutil.rmtree(cluster.run_dir, ignore_errors=True)
        return {n.name: "forgotten" for n in cluster.nodes}

    # -- inspection ------------------------------------------------------------------------
    def clusters(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob(f"*/{STATE_FILE}"))

    def status(self, name: str) -> Cluster:
        """The cluster, each contact point `up` if it accepts connections, else `unreachable`."""
        cluster = self._load(name)
        nodes = tuple(dataclasses.replace(n, status="up" if tcp_open(n.address, n.port, 2.0)
                                          else "unreachable") for n in cluster.nodes)
        return dataclasses.replace(cluster, nodes=nodes)

    def phase(self, name: str) -> str:
        self._load(name)
        return "remembered"

    def logs(self, name: str, node: str | None = None, lines: int = 50) -> dict[str, str]:
        self._load(name)
        raise _not_ours(name, "read its logs")

    # -- faults: not ours to inject ----------------------------------------------------------
    def pause(self, name: str, node: str) -> None:
        self._load(name)
        raise _not_ours(name, "pause a node")

    def resume(self, name: str, node: str) -> None:
        self._load(name)
        raise _not_ours(name, "resume a node")

    def kill(self, name: str, node: str) -> None:
        self._load(name)
        raise _not_ours(name, "kill a node")

    def restart(self, name: str, node: str) -> Cluster:
        self._load(name)
        raise _not_ours(name, "restart a node")

    def _load(self, name: str) -> Cluster:
        try:
            doc = json.loads((self.root / name / STATE_FILE).read_text())
        except FileNotFoundError:
            known = ", ".join(self.clusters()) or "none"
            raise ClusterError(f"no external cluster named {name!r} under {self.root}",
                               hint=f"known external clusters: {known}") from None
        spec = ExternalSpec(**{**doc["spec"], "hosts": tuple(doc["spec"]["hosts"])})
        return _cluster(spec, self.root / name, doc.get("server_version", ""), doc.get("nodes_seen", 0))


def _not_ours(name: str, what: str) -> ClusterError:
    return ClusterError(f"{name} is an external cluster: the workbench does not own its servers and "
                        f"cannot {what}", hint="fault injection and logs need a cluster the workbench "
                        "started (`workbench cluster up PRESET`)")


def _cluster(spec: ExternalSpec, run_dir: Path, version: str, nodes_seen: int) -> Cluster:
    nodes = tuple(Node(name=f"host{i}", address=h, port=spec.client_port, pid=0, start_time=0,
                       log=Path(os.devnull), console_log=Path(os.devnull), dir=run_dir)
                  for i, h in enumerate(spec.hosts, 1))
    return Cluster(spec.name, spec.kind, spec, nodes, run_dir, provider="external",
                   server_version=version, nodes_seen=nodes_seen)


def _save(cluster: Cluster) -> None:
    """The state: everything but the password (ExternalSpec.login_password reads it again)."""
    spec = dataclasses.asdict(cluster.spec)
    del spec["password"]
    doc = {"name": cluster.name, "kind": cluster.kind, "provider": "external", "spec": spec,
           "server_version": cluster.server_version, "nodes_seen": cluster.nodes_seen}
    paths.private_dir(cluster.run_dir.parent)
    paths.private_dir(cluster.run_dir)
    paths.write_private(cluster.run_dir / STATE_FILE, json.dumps(doc, indent=2))


def reason(exc: Exception) -> str:
    """An exception in one short line, for a check's message."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."
