"""Cassandra nodes as local JVMs: per-node config, command line, and readiness.

Node K gets address first_address + K - 1 and its own directory with conf/ (cassandra.yaml,
logback.xml), data directories and logs/; the ports (7000 storage, 9042 CQL) are the same on
every address, JMX is 7199 + 100 * (last octet - 1) on 127.0.0.1. Node 1 is the seed and starts
first: every other node runs a gossip "shadow round" with it at start-up and exits ("Unable to
gossip with any peers") if the seed does not answer within the (shortened) ring delay. Once the
seed serves CQL the others start together; auto_bootstrap is off, as a new cluster has nothing
to stream. Ready means every node answers CQL, sees all other nodes as ring members, and the
driver reports all N hosts up.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from string import Template

from workbench.clusters.launch import NodePlan, NotReady, tcp_open, template_text
from workbench.clusters.specs import CassandraSpec

STORAGE_PORT, CQL_PORT = 7000, 9042
MAIN_CLASS = "org.apache.cassandra.service.CassandraDaemon"


def jmx_port(address: str) -> int:
    return 7199 + 100 * (int(address.rsplit(".", 1)[1]) - 1)


def tokens(nodes: int, per_node: int, index: int) -> list[int]:
    """Evenly spaced Murmur3 tokens, interleaved so every node owns the same share."""
    total = nodes * per_node
    step = 2**64 // total
    return [-(2**63) + j * step for j in range(index - 1, total, nodes)]


def _render_yaml(spec: CassandraSpec, index: int, node_dir: Path) -> str:
    if spec.commitlog_sync == "periodic":
        extra = f"commitlog_sync_period: {spec.commitlog_sync_period_ms}ms"
    else:
        extra = ""
    return Template(template_text("cassandra.yaml")).substitute(
        node_name=f"node{index}",
        cluster_name=spec.name,
        num_tokens=spec.num_tokens,
        initial_token=",".join(map(str, tokens(spec.nodes, spec.num_tokens, index))),
        seeds=f"{spec.address(1)}:{STORAGE_PORT}",
        address=spec.address(index),
        storage_port=STORAGE_PORT,
        native_port=CQL_PORT,
        node_dir=node_dir,
        commitlog_sync=spec.commitlog_sync,
        commitlog_sync_extra=extra,
        commitlog_total_space=spec.commitlog_total_space,
        memtable_heap_space=spec.memtable_heap_space,
        memtable_offheap_space=spec.memtable_offheap_space,
        concurrent_reads=spec.concurrent_reads,
        concurrent_writes=spec.concurrent_writes,
    )


def plans(spec: CassandraSpec, run_dir: Path, lib: Path, java: Path) -> list[NodePlan]:
    """Render every node's config files and return how to start each node."""
    result = []
    for index in range(1, spec.nodes + 1):
        name, address = f"node{index}", spec.address(index)
        node_dir = run_dir / name
        conf, logs = node_dir / "conf", node_dir / "logs"
        for sub in ("conf", "logs", "data", "commitlog", "saved_caches", "hints", "cdc_raw"):
            (node_dir / sub).mkdir(parents=True, exist_ok=True)
        (conf / "cassandra.yaml").write_text(_render_yaml(spec, index, node_dir))
        (conf / "logback.xml").write_text(template_text("logback.xml"))
        (conf / "jvm.options").write_text(template_text("cassandra-jvm.options"))
        argv = [
            str(java),
            f"@{conf / 'jvm.options'}",
            f"-Xms{spec.heap}",
            f"-Xmx{spec.heap}",
            f"-javaagent:{lib / 'jamm-0.4.0.jar'}",
            f"-Dcassandra.config=file://{conf / 'cassandra.yaml'}",
            f"-Dlogback.configurationFile={conf / 'logback.xml'}",
            f"-Dcassandra.storagedir={node_dir / 'data'}",
            f"-Dcassandra.logdir={logs}",
            f"-Dcassandra.jmx.local.port={jmx_port(address)}",
            f"-Djava.io.tmpdir={node_dir}",
            "-cp",
            f"{conf}:{lib}/*",
            MAIN_CLASS,
        ]
        checks = [
            (address, STORAGE_PORT, "Cassandra storage"),
            (address, CQL_PORT, "Cassandra CQL"),
            ("127.0.0.1", jmx_port(address), "Cassandra JMX"),
        ]
        result.append(NodePlan(name, address, CQL_PORT, node_dir, logs / "system.log",
                               logs / "console.log", tuple(argv), tuple(checks)))
    return result


def launch_groups(spec: CassandraSpec, run_dir: Path) -> list[list[str]]:
    """Which nodes to start together, in order (see the module docstring)."""
    names = [f"node{i}" for i in range(1, spec.nodes + 1)]
    return [names[:1], names[1:]] if len(names) > 1 else [names]


def _query(address: str, cql: str, timeout: float = 5.0) -> list:
    from cassandra.cluster import Cluster as Driver
    from cassandra.policies import WhiteListRoundRobinPolicy

    driver = Driver([address], port=CQL_PORT, protocol_version=4, connect_timeout=timeout,
                    control_connection_timeout=timeout,
                    load_balancing_policy=WhiteListRoundRobinPolicy([address]))
    try:
        return list(driver.connect().execute(cql, timeout=timeout))
    finally:
        driver.shutdown()


def node_serves(address: str, peers_expected: int) -> bool:
    """True if the node answers CQL and knows `peers_expected` other ring members."""
    if not tcp_open(address, CQL_PORT):
        return False
    try:
        _query(address, "SELECT release_version FROM system.local")
        peers = _query(address, "SELECT peer, native_address FROM system.peers_v2")
    except Exception:  # any driver error means "not yet"
        return False
    return sum(1 for p in peers if p.native_address) >= peers_expected


def _driver_sees_all(addresses: list[str]) -> bool:
    from cassandra.cluster import Cluster as Driver

    driver = Driver(addresses, port=CQL_PORT, protocol_version=4, connect_timeout=5)
    try:
        driver.connect()
        hosts = driver.metadata.all_hosts()
        return len(hosts) == len(addresses) and all(h.is_up for h in hosts)
    except Exception:
        return False
    finally:
        driver.shutdown()


def wait_ready(spec: CassandraSpec, names: list[str], final: bool, deadline: float,
               check: Callable[[], None]) -> None:
    """Block until the named nodes serve CQL; when `final`, until every node knows all the
    others and the driver sees all N hosts up. check() raises if a node died."""
    logging.getLogger("cassandra").setLevel(logging.CRITICAL)  # refusals are expected here
    expected = spec.nodes - 1 if final else 0
    pending = list(names)
    while time.monotonic() < deadline:
        check()
        pending = [n for n in pending if not node_serves(spec.address(int(n[4:])), expected)]
        if not pending:
            everyone = [spec.address(i) for i in range(1, spec.nodes + 1)]
            if not final or spec.nodes == 1 or _driver_sees_all(everyone):
                return
        time.sleep(0.5)
    raise NotReady(pending[0] if pending else names[0],
                   "did not answer CQL with all nodes in the ring")
