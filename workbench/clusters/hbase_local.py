"""Standalone HBase as local JVMs: the master (with its RegionServer and ZooKeeper) and the
Thrift gateway, sharing one conf/ directory (hbase-site.xml, log4j2.properties).

Two JVMs rather than one launcher class: a Java runtime without javac (the JRE the CI installs)
can run them, and each can be paused or killed on its own. Ready means HBase serves: a table is
created, a row put and read back through Thrift with happybase, and the table dropped again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from string import Template

from workbench.clusters.launch import NodePlan, NotReady, tcp_open, template_text
from workbench.clusters.specs import HBaseSpec, data_home

MASTER_CLASS = "org.apache.hadoop.hbase.master.HMaster"
THRIFT_CLASS = "org.apache.hadoop.hbase.thrift.ThriftServer"
PROBE_TABLE = "workbench_ready_probe"


def describe(spec: HBaseSpec) -> str:
    """What the servers run: the pinned release, e.g. "2.5.8" (the cluster's server_version).
    2.6.1 and 2.5.8 start with the same flags and config (templates/hbase-jvm.options)."""
    return spec.release


def plans(spec: HBaseSpec, run_dir: Path, lib: Path, java: Path) -> list[NodePlan]:
    """Render the shared config and return how to start the master and the Thrift gateway."""
    home = run_dir / "hbase"
    conf, logs = home / "conf", home / "logs"
    data = data_home(spec, run_dir) / "hbase"  # the HBase root directory and ZooKeeper's data
    for sub in ("conf", "logs", "tmp"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    for sub in ("data", "zookeeper"):
        (data / sub).mkdir(parents=True, exist_ok=True)
    (conf / "hbase-site.xml").write_text(Template(template_text("hbase-site.xml")).substitute(
        cluster_name=spec.name, node_dir=home, data_dir=data, address=spec.address,
        zookeeper_port=spec.zookeeper_port, master_port=spec.master_port,
        regionserver_port=spec.regionserver_port, thrift_port=spec.thrift_port,
    ))
    (conf / "log4j2.properties").write_text(template_text("log4j2.properties"))
    (conf / "jvm.options").write_text(template_text("hbase-jvm.options"))

    def argv(heap: str, log: Path, main: list[str]) -> tuple[str, ...]:
        return (
            str(java), f"@{conf / 'jvm.options'}", f"-Xms{heap}", f"-Xmx{heap}",
            f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
            f"-Dworkbench.log.file={log}",
            f"-Dhbase.log.dir={logs}",
            f"-Djava.io.tmpdir={home / 'tmp'}",  # Jetty and Hadoop write scratch files here
            "-cp", f"{conf}:{lib}/*", *main,
        )

    a = spec.address
    master_log, thrift_log = logs / "master.log", logs / "thrift.log"
    master = NodePlan(
        "master", a, spec.master_port, home, master_log, logs / "master.console.log",
        argv(spec.heap, master_log, [MASTER_CLASS, "start"]),
        ((a, spec.zookeeper_port, "HBase ZooKeeper"), (a, spec.master_port, "HBase master"),
         (a, spec.regionserver_port, "HBase RegionServer")),
    )
    thrift = NodePlan(
        "thrift", a, spec.thrift_port, home, thrift_log, logs / "thrift.console.log",
        argv(spec.thrift_heap, thrift_log,
             [THRIFT_CLASS, "-b", a, "-p", str(spec.thrift_port), *thrift_flags(spec), "start"]),
        ((a, spec.thrift_port, "HBase Thrift"),),
    )
    return [master, thrift]


def thrift_flags(spec: HBaseSpec) -> list[str]:
    """The gateway's server type, transport and protocol as ThriftServer's flags."""
    return [f"-{spec.thrift_server}", *(["-f"] if spec.thrift_transport == "framed" else []),
            *(["-c"] if spec.thrift_protocol == "compact" else [])]


def launch_groups(spec: HBaseSpec, run_dir: Path) -> list[list[str]]:
    # The gateway only talks to ZooKeeper on its first request: both can start at once.
    return [["master", "thrift"]]


def probe(address: str, port: int, timeout_ms: int = 30000, transport: str = "buffered",
          protocol: str = "binary") -> bool:
    """A real round trip: create a table, put a row, read it back, drop the table."""
    import happybase

    if not tcp_open(address, port):
        return False
    try:
        conn = happybase.Connection(address, port, timeout=timeout_ms, transport=transport,
                                    protocol=protocol)
    except Exception:
        return False
    try:
        if PROBE_TABLE.encode() not in conn.tables():
            conn.create_table(PROBE_TABLE, {"f": {}})
        table = conn.table(PROBE_TABLE)
        table.put(b"probe", {b"f:c": b"ok"})
        ok = table.row(b"probe") == {b"f:c": b"ok"}
        conn.delete_table(PROBE_TABLE, disable=True)
        return ok
    except Exception:  # master still initialising, region not yet online, ...
        return False
    finally:
        conn.close()


def wait_ready(spec: HBaseSpec, names: list[str], final: bool, deadline: float,
               check: Callable[[], None], run_dir: Path | None = None) -> None:
    while time.monotonic() < deadline:
        check()
        remaining = max(1000, int((deadline - time.monotonic()) * 1000))
        if probe(spec.address, spec.thrift_port, min(30000, remaining), spec.thrift_transport,
                 spec.thrift_protocol):
            return
        time.sleep(0.5)
    raise NotReady("master", "did not complete a create/put/get through Thrift")
