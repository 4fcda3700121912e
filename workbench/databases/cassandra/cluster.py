"""Cassandra nodes as local JVMs: per-node config, command line, and readiness.

Node K gets address first_address + K - 1 and its own directory with conf/ (cassandra.yaml,
logback.xml), data directories and logs/; the ports (7000 storage, 9042 CQL) are the same on
every address, JMX is 7199 + 100 * (last octet - 1) on 127.0.0.1. Node 1 is the seed and starts
first: every other node runs a gossip "shadow round" with it at start-up and exits ("Unable to
gossip with any peers") if the seed does not answer within the (shortened) ring delay. Once the
seed serves CQL the others start together; auto_bootstrap is off, as a new cluster has nothing
to stream. Ready means every node answers CQL, sees all other nodes as ring members, and the
driver reports all N hosts up.

A running cluster can grow and shrink (the provider's add_node and remove_node): node N+1 is
rendered as the others are, with tokens that split the ring's largest ranges for a fair share
(new_tokens) and auto_bootstrap on; it is in the cluster once every other node lists it in
system.peers_v2 with its tokens (Up/Normal) and it serves CQL. A node leaves through `nodetool
decommission`; it has left once no other node lists it.

The release is the spec's `version` (distributions.SERIES): every release reads the same
cassandra.yaml (a key only one of them knows must not go into templates/cassandra.yaml: 4.1
refuses unknown keys), and gets its own JVM flags (JVM_OPTIONS) and its own jamm agent.
"""

from __future__ import annotations

import logging
import re
import secrets
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from string import Template
from typing import Any

from workbench.clusters import distributions, gc_log, paths
from workbench.clusters.launch import NodePlan, NotReady, tcp_open, template_text
from workbench.clusters.specs import CLIENT_CA, data_home
from workbench.databases.cassandra.cluster_nodetool import jmx_port, nodetool
from workbench.databases.cassandra.cluster_spec import SUPERUSER, CassandraSpec
from workbench.errors import ClusterError

STORAGE_PORT, CQL_PORT = 7000, 9042
MAIN_CLASS = "org.apache.cassandra.service.CassandraDaemon"
DATA_SUBDIRS = ("data", "commitlog", "saved_caches", "hints", "cdc_raw")
# A node added to a running cluster (add_node) bootstraps alone; jvm.options already lets ranges
# move without the one-at-a-time checks (consistent.rangemovement=false, said again here so that
# its command line shows how it joined). Its ring delay is longer than the others' 1 s: after
# "sleeping RING_DELAY ms for pending range setup" a bootstrapping node must have heard of the
# seed through gossip, and on a busy 2-core machine 1 s was too short ("Unable to contact any
# seeds"). The same delay is how long a decommissioned node goes on serving CQL after it
# announced that it left, time for every client to hear REMOVED_NODE and stop sending to it.
BOOTSTRAP_FLAGS = ("-Dcassandra.consistent.rangemovement=false", "-Dcassandra.ring_delay_ms=5000")
# A node started with the cluster, after the first (its seed), asks the seed for the ring in a
# "shadow round" and gives up after RING_DELAY: "Unable to gossip with any peers", exit status 3.
# 1 s was too short for two nodes capped at half a core on a busy 2-core machine (the elasticity
# lesson, CI rehearsal 68: the seed answered 2.3 s after it was asked). The round ends as soon as
# the seed answers, so the longer delay costs nothing when it does.
PEER_FLAGS = ("-Dcassandra.ring_delay_ms=5000",)

# Release series -> its JVM @argfile in templates/. 5.0: upstream's jvm17-server.options. 4.1
# (officially Java 8 and 11) on Java 17: upstream's jvm11-server.options plus every java.*
# package of java.base opened, as Java 11's default --illegal-access=permit did: its jamm 0.3.2
# measures objects deep by reflection (InaccessibleObjectException at start-up without).
JVM_OPTIONS = {"5.0": "cassandra-jvm.options", "4.1": "cassandra-4.1-jvm.options"}


def ring_flags(index: int, bootstrap: bool) -> tuple[str, ...]:
    """The flags of node `index` that lengthen its ring delay (its files say 1 s): a node added to
    a running cluster, or one started with the cluster after its seed."""
    return BOOTSTRAP_FLAGS if bootstrap else PEER_FLAGS if index > 1 else ()


def series(spec: CassandraSpec) -> str:
    """The release series ("5.0", "4.1") of the spec's pinned release."""
    return spec.release.rsplit(".", 1)[0]


def describe(spec: CassandraSpec) -> str:
    """What the nodes run: the pinned release, e.g. "4.1.10" (the cluster's server_version)."""
    return spec.release


def jamm_agent(spec: CassandraSpec, lib: Path) -> Path:
    """The release's own jamm jar (5.0: jamm 0.4.0; 4.1: jamm 0.3.2), named by its lockfile."""
    [jamm] = [a for a in distributions.read_lock("cassandra", spec.version) if a.artifact == "jamm"]
    return lib / jamm.filename


def tokens(nodes: int, per_node: int, index: int) -> list[int]:
    """Evenly spaced Murmur3 tokens, interleaved so every node owns the same share."""
    total = nodes * per_node
    step = 2**64 // total
    return [-(2**63) + j * step for j in range(index - 1, total, nodes)]


def tls_dir(run_dir: Path) -> Path:
    """Where a client_tls cluster keeps its keystore and the certificate clients trust."""
    return run_dir / "tls"


def client_ca(run_dir: Path) -> Path:
    return run_dir / CLIENT_CA


def make_tls(spec: CassandraSpec, run_dir: Path, java: Path, private: bool = True) -> str:
    """A self-signed certificate for every node address (keytool, part of every JRE): a PKCS12
    keystore for the nodes and its certificate as PEM for clients. Returns the store password.
    `private`: the keystore's folder is 0700 and its files 0600 (not for a container whose
    server runs as another user, e.g. the official image's `cassandra`)."""
    folder = tls_dir(run_dir)
    if private:
        paths.private_dir(folder)
    else:
        folder.mkdir(parents=True, exist_ok=True)
    keystore, password = folder / "keystore.p12", secrets.token_hex(12)
    keystore.unlink(missing_ok=True)
    keytool = java.parent / "keytool"
    san = ",".join(f"ip:{spec.address(i)}" for i in range(1, spec.nodes + 1))
    steps = (
        ["-genkeypair", "-alias", "node", "-keyalg", "RSA", "-keysize", "2048", "-validity", "3650",
         "-dname", f"CN={spec.name}", "-ext", f"SAN={san}", "-storetype", "PKCS12",
         "-keystore", str(keystore), "-storepass", password, "-keypass", password],
        ["-exportcert", "-rfc", "-alias", "node", "-keystore", str(keystore),
         "-storepass", password, "-file", str(client_ca(run_dir))],
    )
    for args in steps:
        done = subprocess.run([str(keytool), *args], capture_output=True, text=True, check=False,
                              umask=0o077 if private else -1)
        if done.returncode:
            raise ClusterError(f"keytool could not make the cluster's TLS certificate: "
                               f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}",
                               hint=f"is {keytool} a working JDK/JRE keytool?")
    return password


def _encryption_yaml(spec: CassandraSpec, run_dir: Path, password: str | None) -> str:
    if not spec.client_tls or password is None:
        return ""
    return "\n".join((
        "client_encryption_options:",
        "  enabled: true",
        "  optional: false",
        f"  keystore: {tls_dir(run_dir) / 'keystore.p12'}",
        f"  keystore_password: {password}",
        "  store_type: PKCS12",
        "  require_client_auth: false",
    ))


def client_kwargs(spec: CassandraSpec, run_dir: Path | None) -> dict[str, Any]:
    """cassandra-driver Cluster arguments for the provider's own queries (readiness)."""
    kwargs: dict[str, Any] = {}
    if spec.authenticator == "PasswordAuthenticator":
        from cassandra.auth import PlainTextAuthProvider

        kwargs["auth_provider"] = PlainTextAuthProvider(*SUPERUSER)
    if spec.client_tls and run_dir is not None:
        import ssl

        context = ssl.create_default_context(cafile=str(client_ca(run_dir)))
        context.check_hostname = False  # the driver connects by address; the chain is checked
        kwargs["ssl_context"] = context
    return kwargs


def _render_yaml(spec: CassandraSpec, index: int, data_dir: Path, run_dir: Path,
                 tls_password: str | None, listen: str = "", rpc: str = "", broadcast_rpc: str = "",
                 native_port: int = CQL_PORT, seed: str = "", initial_tokens: list[int] | None = None,
                 bootstrap: bool = False) -> str:
    """Node `index`'s cassandra.yaml. By default it listens and serves CQL on its own address;
    a node behind a published port (the Docker provider's bridge) names its listen address, its
    rpc_address, what it tells clients (broadcast_rpc), its CQL port and the seed's name. A node
    added to a running cluster brings its own tokens (`initial_tokens`) and bootstraps."""
    if spec.commitlog_sync == "periodic":
        extra = f"commitlog_sync_period: {spec.commitlog_sync_period_ms}ms"
    else:
        extra = ""
    return Template(template_text("cassandra.yaml")).substitute(
        node_name=f"node{index}",
        cluster_name=spec.name,
        num_tokens=spec.num_tokens,
        initial_token=",".join(map(str, initial_tokens or tokens(spec.nodes, spec.num_tokens, index))),
        auto_bootstrap="true" if bootstrap else "false",
        seeds=f"{seed or spec.address(1)}:{STORAGE_PORT}",
        listen_address=listen or spec.address(index),
        rpc_address=rpc or spec.address(index),
        broadcast_rpc=f"broadcast_rpc_address: {broadcast_rpc}" if broadcast_rpc else "",
        storage_port=STORAGE_PORT,
        native_port=native_port,
        data_dir=data_dir,
        commitlog_sync=spec.commitlog_sync,
        commitlog_sync_extra=extra,
        commitlog_total_space=spec.commitlog_total_space,
        memtable_heap_space=spec.memtable_heap_space,
        memtable_offheap_space=spec.memtable_offheap_space,
        concurrent_reads=spec.concurrent_reads,
        concurrent_writes=spec.concurrent_writes,
        authenticator=spec.authenticator,
        client_encryption=_encryption_yaml(spec, run_dir, tls_password),
    )


def plans(spec: CassandraSpec, run_dir: Path, lib: Path, java: Path) -> list[NodePlan]:
    """Render every node's config files and return how to start each node."""
    tls_password = make_tls(spec, run_dir, java) if spec.client_tls else None
    return [_node_plan(spec, index, run_dir, lib, java, tls_password) for index in range(1, spec.nodes + 1)]


def node_ports(address: str, spec: CassandraSpec | None = None) -> tuple[tuple[str, int, str], ...]:
    """(address, port, what) node at `address` binds: storage and CQL on its own address, JMX on
    127.0.0.1."""
    return ((address, STORAGE_PORT, "Cassandra storage"),
            (address, CQL_PORT, "Cassandra CQL"),
            ("127.0.0.1", jmx_port(address), "Cassandra JMX"))


def node_dirs(spec: CassandraSpec, run_dir: Path, name: str) -> tuple[Path, Path]:
    """(node directory: conf/ and logs/, data directory: data/, commitlog/, ...) of node `name`."""
    return run_dir / name, data_home(spec, run_dir) / name


def _node_plan(spec: CassandraSpec, index: int, run_dir: Path, lib: Path, java: Path,
               tls_password: str | None, initial_tokens: list[int] | None = None,
               bootstrap: bool = False) -> NodePlan:
    """Render node `index`'s config files and return how to start it."""
    name, address = f"node{index}", spec.address(index)
    node_dir, data_dir = node_dirs(spec, run_dir, name)
    conf, logs = node_dir / "conf", node_dir / "logs"
    for sub in ("conf", "logs"):
        (node_dir / sub).mkdir(parents=True, exist_ok=True)
    for sub in DATA_SUBDIRS:
        (data_dir / sub).mkdir(parents=True, exist_ok=True)
    yaml = _render_yaml(spec, index, data_dir, run_dir, tls_password, initial_tokens=initial_tokens,
                        bootstrap=bootstrap)
    if tls_password is None:
        (conf / "cassandra.yaml").write_text(yaml)
    else:  # it holds the keystore's password
        paths.private_dir(conf)
        paths.write_private(conf / "cassandra.yaml", yaml)
    (conf / "logback.xml").write_text(template_text("logback.xml"))
    (conf / "jvm.options").write_text(template_text(JVM_OPTIONS[series(spec)]))
    argv = [
        str(java),
        f"@{conf / 'jvm.options'}",
        f"-Xms{spec.heap}",
        f"-Xmx{spec.heap}",
        f"-javaagent:{jamm_agent(spec, lib)}",
        f"-Dcassandra.config=file://{conf / 'cassandra.yaml'}",
        f"-Dlogback.configurationFile={conf / 'logback.xml'}",
        f"-Dcassandra.storagedir={data_dir / 'data'}",
        f"-Dcassandra.logdir={logs}",
        f"-Dcassandra.jmx.local.port={jmx_port(address)}",
        f"-Djava.io.tmpdir={node_dir}",
        gc_log.flag(gc_log.beside(logs / "system.log")),  # the run's GC pauses (gc_log.py)
        "-Dcassandra.superuser_setup_delay_ms=0",  # PasswordAuthenticator: the superuser at once
        *ring_flags(index, bootstrap),
        "-cp",
        f"{conf}:{lib}/*",
        MAIN_CLASS,
    ]
    return NodePlan(name, address, CQL_PORT, node_dir, logs / "system.log", logs / "console.log",
                    tuple(argv), node_ports(address))


def launch_groups(spec: CassandraSpec, run_dir: Path) -> list[list[str]]:
    """Which nodes to start together, in order (see the module docstring)."""
    names = [f"node{i}" for i in range(1, spec.nodes + 1)]
    return [names[:1], names[1:]] if len(names) > 1 else [names]


# A probe reads one system table: without the driver's schema and token metadata, which it would
# otherwise read from the node at every connect (a node just started answers those slowly).
PROBE = {"schema_metadata_enabled": False, "token_metadata_enabled": False}


def _query(address: str, cql: str, timeout: float = 5.0, port: int = CQL_PORT, **client: Any) -> list:
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    from cassandra.cluster import Cluster as Driver
    from cassandra.policies import WhiteListRoundRobinPolicy

    # An execution profile, not the driver's legacy keyword arguments (deprecated since 3.x).
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([address]),
                               request_timeout=timeout)
    driver = Driver([address], port=port, protocol_version=4, connect_timeout=timeout,
                    control_connection_timeout=timeout, execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                    **PROBE, **client)
    try:
        return list(driver.connect().execute(cql, timeout=timeout))
    finally:
        driver.shutdown()


def node_serves(address: str, peers_expected: int, port: int = CQL_PORT, **client: Any) -> bool:
    """True if the node answers CQL and knows `peers_expected` other ring members."""
    if not tcp_open(address, port):
        return False
    try:
        _query(address, "SELECT release_version FROM system.local", port=port, **client)
        peers = _query(address, "SELECT peer, native_address FROM system.peers_v2", port=port, **client)
    except Exception:  # any driver error means "not yet"
        return False
    return sum(1 for p in peers if p.native_address) >= peers_expected


def driver_sees_all(addresses: list[str], port: int = CQL_PORT, expected: int = 0, **client: Any) -> bool:
    """True if the driver, given these contact points, finds `expected` hosts (default: one per
    address), all up. It learns each host's address and port from system.peers_v2."""
    from cassandra.cluster import Cluster as Driver

    driver = Driver(addresses, port=port, protocol_version=4, connect_timeout=5,
                    schema_metadata_enabled=False, **client)
    try:
        driver.connect()
        hosts = driver.metadata.all_hosts()
        return len(hosts) == (expected or len(addresses)) and all(h.is_up for h in hosts)
    except Exception:
        return False
    finally:
        driver.shutdown()


def wait_ready(spec: CassandraSpec, names: list[str], final: bool, deadline: float,
               check: Callable[[], None], run_dir: Path | None = None,
               where: Callable[[int], tuple[str, int]] | None = None) -> None:
    """Block until the named nodes serve CQL; when `final`, until every node knows all the
    others and the driver sees all N hosts up. check() raises if a node died. `where(K)` is the
    (address, port) a client reaches node K at (default: its own address, port 9042; a bridged
    Docker node: 127.0.0.1 and its published port)."""
    logging.getLogger("cassandra").setLevel(logging.CRITICAL)  # refusals are expected here
    where = where or (lambda index: (spec.address(index), CQL_PORT))
    expected = spec.nodes - 1 if final else 0
    pending = list(names)
    client = client_kwargs(spec, run_dir)

    def serves(node: str) -> bool:
        address, port = where(int(node[4:]))
        return node_serves(address, expected, port=port, **client)

    while time.monotonic() < deadline:
        check()
        pending = [n for n in pending if not serves(n)]
        if not pending:
            points = [where(i) for i in range(1, spec.nodes + 1)]
            addresses = list(dict.fromkeys(address for address, _ in points))
            if not final or spec.nodes == 1 or driver_sees_all(addresses, port=points[0][1],
                                                                  expected=spec.nodes, **client):
                return
        time.sleep(0.5)
    raise NotReady(pending[0] if pending else names[0],
                   "did not answer CQL with all nodes in the ring")


# -- adding and removing nodes of a running cluster ---------------------------------------------------

def ring(address: str, port: int = CQL_PORT, **client: Any) -> dict[int, str]:
    """Token -> the address of the node that owns it, as the node at `address` sees the ring."""
    local = _query(address, "SELECT broadcast_address, tokens FROM system.local", port=port, **client)
    peers = _query(address, "SELECT peer, tokens FROM system.peers_v2", port=port, **client)
    owners = {}
    for row in local:
        owners.update((int(t), str(row.broadcast_address or address)) for t in row.tokens or ())
    for row in peers:
        owners.update((int(t), str(row.peer)) for t in row.tokens or ())
    return owners


def new_tokens(owners: dict[int, str], count: int) -> list[int]:
    """`count` tokens for a node joining the ring `owners` (token -> node), without the token
    allocator (which makes a node wait 30 s first): each splits one of the largest ranges, taken
    from the nodes in turn (of ranges of one size, from the node that has given the fewest so far),
    at the point that gives the new node a fair share (1/(N+1) of the ring) from them all. A range
    (a, b] belongs to b's node; the new token t splits it: (a, t] is the new node's."""
    ordered = sorted(owners)
    full = 2**64
    ranges = []  # (size, index): range i runs from ordered[i - 1] to ordered[i]
    for i, token in enumerate(ordered):
        size = (token - ordered[i - 1]) % full or full  # one token: the whole ring
        ranges.append((size, i))
    given: dict[str, int] = {}
    chosen = []
    left = sorted(ranges, key=lambda r: -r[0])
    while left and len(chosen) < count:
        size = left[0][0]
        same = [r for r in left if r[0] == size]
        best = min(same, key=lambda r: (given.get(owners[ordered[r[1]]], 0), r[1]))
        left.remove(best)
        owner = owners[ordered[best[1]]]
        given[owner] = given.get(owner, 0) + 1
        chosen.append(best)
    taken = sum(size for size, _ in chosen)
    share = min(full // (len(set(owners.values())) + 1), taken * 15 // 16)
    # each new token sits share/taken of the way into its range
    cut = [(ordered[i - 1] + 2**63 + size * share // taken) % full - 2**63 for size, i in chosen]
    return sorted(set(cut) - set(owners))


def tls_password(run_dir: Path) -> str:
    """The keystore password a client_tls cluster's nodes were given (from node1's config)."""
    text = (run_dir / "node1" / "conf" / "cassandra.yaml").read_text()
    for line in text.splitlines():
        key, _, value = line.strip().partition(":")
        if key == "keystore_password":
            return value.strip()
    raise ClusterError(f"no keystore password in {run_dir / 'node1' / 'conf' / 'cassandra.yaml'}")


def added_plan(spec: CassandraSpec, index: int, run_dir: Path, lib: Path, java: Path,
               owners: dict[int, str]) -> NodePlan:
    """Render node `index`, which joins the running cluster whose ring is `owners`, and return how
    to start it: as plans() renders the others, with tokens of its own and auto_bootstrap on. A
    client_tls cluster's node uses the cluster's keystore, whose certificate names the addresses
    of the nodes `up` started: clients that check the host (cassandra.ssl.verify=identity)
    refuse an added node; those that check the chain (the default) take it."""
    password = tls_password(run_dir) if spec.client_tls else None
    return _node_plan(spec, index, run_dir, lib, java, password,
                      initial_tokens=new_tokens(owners, spec.num_tokens), bootstrap=True)


def listed_by(address: str, peer: str, port: int = CQL_PORT, **client: Any) -> bool | None:
    """How the node at `address` lists `peer` in system.peers_v2: True = with tokens and a
    client address (a ring member: Normal), False = not at all, None = not yet (joining)."""
    rows = _query(address, f"SELECT tokens, native_address FROM system.peers_v2 WHERE peer = '{peer}'",
                  port=port, **client)
    if not rows:
        return False
    return True if rows[0].tokens and rows[0].native_address else None


def bootstrap_streamed(address: str, port: int = CQL_PORT, **client: Any) -> tuple[int, float] | None:
    """(bytes received, seconds) of the bootstrap streams of the node at `address`, from its
    system_views.streaming (Cassandra 4.1 and later); None when it does not say."""
    try:
        rows = _query(address, "SELECT * FROM system_views.streaming", port=port, **client)
    except Exception:  # an older release, or no answer: the figure is not known
        return None
    mine = [r for r in rows if "bootstrap" in str(getattr(r, "operation", "")).lower()]
    if not mine:
        return None
    received = sum(int(getattr(r, "bytes_received", 0) or 0) for r in mine)
    seconds = max(float(getattr(r, "duration_millis", 0) or 0) for r in mine) / 1000
    return received, seconds


def wait_joined(spec: CassandraSpec, name: str, address: str, others: list[str], deadline: float,
                check: Callable[[], None], run_dir: Path | None = None) -> float:
    """Block until node `name` at `address` is Up/Normal: it serves CQL and knows the others, every
    other node lists it as a ring member, and the driver sees every node up. check() raises if a
    node died. Returns when it served CQL (time.monotonic()). NotReady at the deadline."""
    logging.getLogger("cassandra").setLevel(logging.CRITICAL)
    client = client_kwargs(spec, run_dir)
    serving = 0.0
    while time.monotonic() < deadline:
        check()
        if not serving and node_serves(address, len(others), **client):
            serving = time.monotonic()
        if serving:
            try:
                normal = all(listed_by(other, address, **client) for other in others)
            except Exception:  # a driver error: not yet
                normal = False
            if normal and driver_sees_all([*others, address], **client):
                return serving
        time.sleep(0.5)
    raise NotReady(name, "did not join the ring (Up/Normal on every other node)")


def wait_left(spec: CassandraSpec, address: str, others: list[str], deadline: float,
              run_dir: Path | None = None) -> None:
    """Block until no other node lists the node at `address` in its peers: it has left the ring."""
    logging.getLogger("cassandra").setLevel(logging.CRITICAL)
    client = client_kwargs(spec, run_dir)
    while True:
        try:
            if not any(listed_by(other, address, **client) is not False for other in others):
                return
        except Exception:
            pass
        if time.monotonic() > deadline:
            raise ClusterError(f"{address} is still listed as a ring member by the other nodes",
                               hint="see `nodetool status` on another node")
        time.sleep(0.5)


# -- the local provider's add_node and remove_node (local.py), as hbase/cluster.py has them ----------

NODE_PREFIX = "node"
JOINING = "joining the ring: bootstrapping, streaming its share of the data"
JOINED = "is Up/Normal on every other node"


def node_address(spec: CassandraSpec, index: int) -> str:
    return spec.address(index)


def join_plan(spec: CassandraSpec, index: int, run_dir: Path, lib: Path, java: Path, others: list[str],
              client: dict[str, Any]) -> NodePlan:
    """Node `index` with tokens of its own, taken from the ring `others[0]` reports."""
    return added_plan(spec, index, run_dir, lib, java, ring_of(spec, others, client))


def ring_of(spec: CassandraSpec, others: list[str], client: dict[str, Any]) -> dict[int, str]:
    """The token ring as `others[0]` reports it, for a node that joins; one line if it cannot."""
    try:
        return ring(others[0], **client)
    except Exception as exc:
        raise ClusterError(f"cannot read the token ring from {others[0]}: {type(exc).__name__}",
                           hint=f"is it serving? `workbench cluster status {spec.name}`") from None


def after_join(spec: CassandraSpec, name: str, address: str, deadline: float, check: Callable[[], None],
               client: dict[str, Any]) -> str | None:
    """What the bootstrap streamed, for the runs' records (None where the node does not say)."""
    moved = bootstrap_streamed(address, **client)
    if moved is None:
        return None
    return f"{name} received {moved[0]:,} bytes in {moved[1]:.1f} s of streaming"


def check_removal(spec: CassandraSpec, nodes: list[Any], target: Any) -> None:
    """The seed stays; the others must still hold replication_factor replicas of every row."""
    if target.address == spec.address(1):
        raise ClusterError(f"{target.name} is the seed of cluster {spec.name!r}: every other node gossips "
                           "with it at start-up, so it stays", hint="remove another node")
    if spec.replication_factor > len(nodes) - 1:
        raise ClusterError(f"cluster {spec.name!r} keeps {spec.replication_factor} replicas of each row: "
                           f"its {len(nodes)} nodes cannot become {len(nodes) - 1}",
                           hint=f"`workbench cluster add-node {spec.name}` first")


def still_member(spec: CassandraSpec, address: str, others: list[str], client: dict[str, Any]) -> bool:
    return any(listed_by(other, address, **client) is not False for other in others)


# A node leaves by `nodetool decommission` (the provider runs it: cluster_maintenance.py's nodetool
# for a local node, in its container for Docker): it streams its data to the others and leaves the ring by
# itself, before it stops.
LEFT_BY_ITSELF = True
_TOO_FEW = re.compile(r"replication factor in keyspace (\S+) \(RF = (\d+), N = (\d+)\)")


def decommission(nodetool: Callable[[list[str]], object], say: Callable[[str], None]) -> None:
    """`nodetool decommission` through `nodetool(args)` (which raises ClusterError with its
    output). Cassandra refuses to go below the replication factor of any keyspace, its own
    included: system_distributed and system_traces keep 3 replicas, so a cluster of three cannot
    become two. The user's keyspaces were checked first (check_removal); when only a system
    keyspace stands in the way, the decommission is forced (`--force`), as an operator would,
    and `say` tells why. Any other refusal stays one line."""
    try:
        nodetool(["decommission"])
    except ClusterError as exc:
        found = _TOO_FEW.search(exc.message)
        if found is None or not found.group(1).startswith("system"):
            raise
        keyspace, rf, left = found.groups()
        say(f"Cassandra's own keyspace {keyspace} keeps {rf} replicas and {left} nodes would be "
            f"{int(left) - 1}: decommissioning with --force (it is under-replicated from now on)")
        nodetool(["decommission", "--force"])


def leave(spec: CassandraSpec, node: Any, deadline: float, say: Callable[[str], None]) -> None:
    """A local node leaves: `decommission` through nodetool from its own jars."""
    decommission(lambda args: nodetool(node, args, deadline), say)


LEAVING = "leaving the ring (nodetool decommission: streaming its data to {rest})"


# -- what the database's descriptor names (__init__.py) -----------------------------------
def listens_on(spec: CassandraSpec) -> list[tuple[str, int, str]]:
    """The client and peer ports a local cluster of this spec needs free."""
    out = []
    for i in range(1, spec.nodes + 1):
        a = spec.address(i)
        out += [(a, STORAGE_PORT, "Cassandra storage"), (a, CQL_PORT, "Cassandra CQL"),
                ("127.0.0.1", jmx_port(a), "Cassandra JMX")]
    return out


def shape(spec: CassandraSpec) -> tuple[str, str]:
    """(processes, where clients connect) of a preset not started."""
    return str(spec.nodes), spec.first_address


def resizable(cluster: Any, verb: str) -> Any:
    """This module: every Cassandra cluster grows and shrinks by nodes (clusters/resize.py)."""
    import sys

    return sys.modules[__name__]
