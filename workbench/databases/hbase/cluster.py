"""HBase as local JVMs, sharing one root directory on the local file system.

Standalone (regionservers = 0): the master (with its RegionServer and ZooKeeper) and the Thrift
gateway. Distributed (regionservers = N): ZooKeeper (QuorumPeerMain, on its own), the master, N
RegionServers rs1..rsN each on a loopback address of its own (rs1 beside the master) and the
gateway; each process has its own conf/ (hbase-site.xml names its address). The master starts
serving once all N have reported for duty; its balancer runs every balancer_period_s, so a
RegionServer added later (add_node) gets regions during a run, and one removed (remove_node) has
its regions moved away first by HBase's RegionMover (as graceful_stop.sh does), then stops.

Separate JVMs rather than one launcher class: a Java runtime without javac (the JRE the CI
installs) can run them, and each can be paused or killed on its own. Ready means HBase serves: a
table is created, a row put and read back through Thrift with happybase, and the table dropped.
Which RegionServers the master knows is read from ZooKeeper (its `dump` four-letter word lists
the /hbase/rs ephemeral nodes), which regions each holds from the gateway.
"""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from string import Template
from typing import Any

from workbench.clusters import gc_log, java_tools
from workbench.clusters.launch import NodePlan, NotReady, tcp_open, template_text
from workbench.clusters.specs import data_home
from workbench.databases.hbase.cluster_spec import HBaseSpec
from workbench.errors import ClusterError

MASTER_CLASS = "org.apache.hadoop.hbase.master.HMaster"
REGIONSERVER_CLASS = "org.apache.hadoop.hbase.regionserver.HRegionServer"
THRIFT_CLASS = "org.apache.hadoop.hbase.thrift.ThriftServer"
ZOOKEEPER_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
MOVER_CLASS = "org.apache.hadoop.hbase.util.RegionMover"
PROBE_TABLE = "workbench_ready_probe"
ZOOKEEPER_HEAP = "128M"
NODE_PREFIX = "rs"  # the nodes add_node and remove_node count: rs1, rs2, ...
INFO_OFFSET = 10  # an info server's port from its process's RPC port, as HBase's defaults are
STOP_LAST = ("zookeeper",)  # stopped once the others are gone: they need it to shut down


def describe(spec: HBaseSpec) -> str:
    """What the servers run: the pinned release, e.g. "2.5.8" (the cluster's server_version).
    2.6.1 and 2.5.8 start with the same flags and config (templates/hbase-jvm.options)."""
    return spec.release


def _home(run_dir: Path) -> Path:
    return run_dir / "hbase"


def _site(spec: HBaseSpec, run_dir: Path, address: str) -> str:
    home, data = _home(run_dir), data_home(spec, run_dir) / "hbase"
    extra = ""
    if spec.distributed:
        layout = (f"distributed on the local file system: ZooKeeper, the master, {spec.regionservers} "
                  "RegionServers and the Thrift gateway as JVMs of their own")
        extra = "".join(f"  <property><name>{k}</name><value>{v}</value></property>\n" for k, v in (
            # start serving once every RegionServer of the preset has reported for duty
            ("hbase.master.wait.on.regionservers.mintostart", spec.regionservers),
            ("hbase.balancer.period", int(spec.balancer_period_s * 1000)),
            ("zookeeper.session.timeout", 20000),  # a RegionServer killed is noticed in 20 s
        ))
    else:
        layout = "standalone: master, RegionServer and ZooKeeper in one JVM, the Thrift gateway in another"
    return Template(template_text("hbase-site.xml")).substitute(
        cluster_name=spec.name, layout=layout, node_dir=home, data_dir=data, address=address,
        zookeeper_address=spec.address,
        distributed="true" if spec.distributed else "false", distributed_properties=extra,
        zookeeper_port=spec.zookeeper_port, master_port=spec.master_port,
        regionserver_port=spec.regionserver_port, thrift_port=spec.thrift_port,
        master_info_port=master_info_port(spec), regionserver_info_port=regionserver_info_port(spec),
    )


def master_info_port(spec: HBaseSpec) -> int:
    """Where the master's info server (/jmx) listens, on spec.address: its RPC port + 10 (16010)."""
    return spec.master_port + INFO_OFFSET


def regionserver_info_port(spec: HBaseSpec) -> int:
    """Where each RegionServer's info server listens, on its own address (16030)."""
    return spec.regionserver_port + INFO_OFFSET


def _conf(spec: HBaseSpec, run_dir: Path, conf: Path, address: str) -> None:
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "hbase-site.xml").write_text(_site(spec, run_dir, address))
    (conf / "log4j2.properties").write_text(template_text("log4j2.properties"))
    (conf / "jvm.options").write_text(template_text("hbase-jvm.options"))
    # Hadoop's metrics refresh what /jmx serves once a period (10 s by default): once a second,
    # for the run's per-second server figures (databases/hbase/figures.py)
    (conf / "hadoop-metrics2-hbase.properties").write_text("*.period=1\n")


def _argv(java: Path, lib: Path, conf: Path, tmp: Path, logs: Path, heap: str, log: Path,
          main: list[str]) -> tuple[str, ...]:
    return (
        str(java), f"@{conf / 'jvm.options'}", f"-Xms{heap}", f"-Xmx{heap}",
        f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
        f"-Dworkbench.log.file={log}",
        f"-Dhbase.log.dir={logs}",
        f"-Djava.io.tmpdir={tmp}",  # Jetty and Hadoop write scratch files here
        gc_log.flag(gc_log.beside(log)),  # the run's GC pauses (gc_log.py)
        "-cp", f"{conf}:{lib}/*", *main,
    )


def plans(spec: HBaseSpec, run_dir: Path, lib: Path, java: Path) -> list[NodePlan]:
    """Render the configs and return how to start each process."""
    home = _home(run_dir)
    conf, logs = home / "conf", home / "logs"
    data = data_home(spec, run_dir) / "hbase"  # the HBase root directory and ZooKeeper's data
    for sub in ("conf", "logs", "tmp"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    for sub in ("data", "zookeeper"):
        (data / sub).mkdir(parents=True, exist_ok=True)
    _conf(spec, run_dir, conf, spec.address)

    def argv(heap: str, log: Path, main: list[str]) -> tuple[str, ...]:
        return _argv(java, lib, conf, home / "tmp", logs, heap, log, main)

    a = spec.address
    master_log, thrift_log = logs / "master.log", logs / "thrift.log"
    master_ports = ((a, spec.master_port, "HBase master"), (a, master_info_port(spec), "HBase master /jmx"))
    if not spec.distributed:
        master_ports = ((a, spec.zookeeper_port, "HBase ZooKeeper"), *master_ports,
                        *node_ports(a, spec))
    master = NodePlan("master", a, spec.master_port, home, master_log, logs / "master.console.log",
                      argv(spec.heap, master_log, [MASTER_CLASS, "start"]), master_ports)
    thrift = NodePlan(
        "thrift", a, spec.thrift_port, home, thrift_log, logs / "thrift.console.log",
        argv(spec.thrift_heap, thrift_log,
             [THRIFT_CLASS, "-b", a, "-p", str(spec.thrift_port), *thrift_flags(spec), "start"]),
        ((a, spec.thrift_port, "HBase Thrift"),),
    )
    if not spec.distributed:
        return [master, thrift]
    zoo = home / "zoo.cfg"
    zoo.write_text("".join(f"{k}={v}\n" for k, v in (
        ("dataDir", data / "zookeeper"), ("clientPort", spec.zookeeper_port), ("clientPortAddress", a),
        ("tickTime", 2000), ("initLimit", 10), ("syncLimit", 5), ("maxClientCnxns", 0),
        ("admin.enableServer", "false"),  # its HTTP admin server would take port 8080
        ("4lw.commands.whitelist", "ruok,srvr,dump"),  # dump: the RegionServers' ephemeral nodes
    )))
    zk_log = logs / "zookeeper.log"
    zookeeper = NodePlan("zookeeper", a, spec.zookeeper_port, home, zk_log, logs / "zookeeper.console.log",
                         argv(ZOOKEEPER_HEAP, zk_log, [ZOOKEEPER_CLASS, str(zoo)]),
                         ((a, spec.zookeeper_port, "HBase ZooKeeper"),))
    servers = [regionserver_plan(spec, i, run_dir, lib, java) for i in range(1, spec.regionservers + 1)]
    return [zookeeper, master, *servers, thrift]


def regionserver_plan(spec: HBaseSpec, index: int, run_dir: Path, lib: Path, java: Path) -> NodePlan:
    """RegionServer `index` on spec.node_address(index), its own conf/ and logs under rs<index>/."""
    name, address = f"{NODE_PREFIX}{index}", spec.node_address(index)
    node_dir = _home(run_dir) / name
    conf, logs = node_dir / "conf", node_dir / "logs"
    for sub in ("logs", "tmp"):
        (node_dir / sub).mkdir(parents=True, exist_ok=True)
    _conf(spec, run_dir, conf, address)
    log = logs / "regionserver.log"
    return NodePlan(name, address, spec.regionserver_port, node_dir, log, logs / "regionserver.console.log",
                    _argv(java, lib, conf, node_dir / "tmp", logs, spec.regionserver_heap, log,
                          [REGIONSERVER_CLASS, "start"]),
                    node_ports(address, spec))


def node_ports(address: str, spec: HBaseSpec) -> tuple[tuple[str, int, str], ...]:
    return ((address, spec.regionserver_port, "HBase RegionServer"),
            (address, regionserver_info_port(spec), "HBase RegionServer /jmx"))


def node_dirs(spec: HBaseSpec, run_dir: Path, name: str) -> tuple[Path, ...]:
    """The RegionServer's own folder (conf/, logs/, tmp/); its data is in the shared root."""
    return (_home(run_dir) / name,)


def thrift_flags(spec: HBaseSpec) -> list[str]:
    """The gateway's server type, transport and protocol as ThriftServer's flags."""
    return [f"-{spec.thrift_server}", *(["-f"] if spec.thrift_transport == "framed" else []),
            *(["-c"] if spec.thrift_protocol == "compact" else [])]


def launch_groups(spec: HBaseSpec, run_dir: Path) -> list[list[str]]:
    # The gateway only talks to ZooKeeper on its first request: it can start with the master.
    if not spec.distributed:
        return [["master", "thrift"]]
    return [["zookeeper"], ["master", *(f"{NODE_PREFIX}{i}" for i in range(1, spec.regionservers + 1)),
                            "thrift"]]


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
    """ZooKeeper: it answers `ruok`. A RegionServer alone (restarted): the master lists it again.
    Otherwise: a create/put/get/drop through the gateway (the master serves once it has every
    RegionServer of the preset)."""
    if names == ["zookeeper"]:
        _wait(lambda: four_letters(spec, "ruok") == "imok", deadline, check, "zookeeper",
              "did not answer ruok")
        return
    servers = [n for n in names if n.startswith(NODE_PREFIX)]
    if servers and not final and len(servers) == len(names):
        # A RegionServer killed before its restart leaves its node in ZooKeeper until its session
        # times out (up to 20 s): the new one is the one whose start code (its start, in ms)
        # is after this call, which follows its launch by milliseconds (a second of slack).
        since_ms = int(time.time() * 1000) - 1000
        for name in servers:
            address = spec.node_address(int(name[len(NODE_PREFIX):]))
            _wait(lambda a=address: registered(spec, a, since_ms), deadline, check, name,
                  "did not report for duty to the master")
        return
    while time.monotonic() < deadline:
        check()
        remaining = max(1000, int((deadline - time.monotonic()) * 1000))
        if probe(spec.address, spec.thrift_port, min(30000, remaining), spec.thrift_transport,
                 spec.thrift_protocol):
            return
        time.sleep(0.5)
    raise NotReady("master", "did not complete a create/put/get through Thrift")


def _wait(ready: Callable[[], bool], deadline: float, check: Callable[[], None], node: str,
          what: str) -> None:
    while time.monotonic() < deadline:
        check()
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise NotReady(node, what)


# -- ZooKeeper: which RegionServers the master knows ---------------------------------------------

def four_letters(spec: HBaseSpec, word: str, timeout: float = 3.0) -> str:
    """ZooKeeper's answer to a four-letter word (ruok, srvr, dump); OSError if it does not answer."""
    with socket.create_connection((spec.address, spec.zookeeper_port), timeout=timeout) as sock:
        sock.sendall(word.encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace").strip()


def live_servers(spec: HBaseSpec) -> list[str]:
    """The RegionServers registered in ZooKeeper ("host,port,startcode", /hbase/rs/...): those
    the master accepted and has not seen leave."""
    return sorted(set(re.findall(r"/hbase/rs/(\S+)", four_letters(spec, "dump"))))


def registered(spec: HBaseSpec, address: str, since_ms: int = 0) -> bool:
    """Has the RegionServer on `address` registered (one that started at since_ms or later)?"""
    return registered_in(live_servers(spec), address, spec.regionserver_port, since_ms)


def registered_in(servers: list[str], address: str, port: int, since_ms: int = 0) -> bool:
    """Is one of `servers` ("host,port,startcode") on address:port, started at since_ms or later?"""
    for server in servers:
        host, _, rest = server.partition(",")
        found_port, _, code = rest.partition(",")
        started = int(code) if code.isdigit() else 0
        if host == address and found_port == str(port) and (not since_ms or started >= since_ms):
            return True
    return False


def regions_per_server(spec: HBaseSpec, timeout_ms: int = 10000) -> dict[str, int]:
    """"address:port" -> how many regions of the user tables it holds, as the gateway says."""
    import happybase

    conn = happybase.Connection(spec.address, spec.thrift_port, timeout=timeout_ms,
                                transport=spec.thrift_transport, protocol=spec.thrift_protocol)
    try:
        counts: dict[str, int] = {}
        for table in conn.tables():
            for region in conn.table(table).regions():
                where = f"{region['server_name'].decode()}:{region['port']}"
                counts[where] = counts.get(where, 0) + 1
        return counts
    finally:
        conn.close()


# -- growing and shrinking: RegionServers ----------------------------------------------------------

JOINING = "reporting for duty to the master, then taking regions from the balancer"
JOINED = "is registered with the master"
LEAVING = "leaving: HBase's RegionMover moves its regions to {rest}"
LEFT_BY_ITSELF = False  # the master lists a RegionServer until it has stopped


def node_address(spec: HBaseSpec, index: int) -> str:
    return spec.node_address(index)


def client_kwargs(spec: HBaseSpec, run_dir: Path | None) -> dict[str, Any]:
    return {}


def check_removal(spec: HBaseSpec, nodes: list[Any], target: Any) -> None:
    """Only a RegionServer leaves, and not the last one."""
    servers = [n for n in nodes if n.name.startswith(NODE_PREFIX)]
    if not target.name.startswith(NODE_PREFIX):
        raise ClusterError(f"{target.name} of cluster {spec.name!r} is not a RegionServer: only those "
                           f"({', '.join(n.name for n in servers) or 'none'}) can be removed",
                           hint=f"`workbench cluster down {spec.name}` stops the whole cluster")
    if len(servers) == 1:
        raise ClusterError(f"{target.name} is the last RegionServer of cluster {spec.name!r}: its "
                           "regions would have nowhere to go",
                           hint=f"`workbench cluster add-node {spec.name}` first")


def join_plan(spec: HBaseSpec, index: int, run_dir: Path, lib: Path, java: Path, others: list[str],
              client: dict[str, Any]) -> NodePlan:
    """RegionServer `index`, rendered as `up` renders the others: it reports for duty to the
    running master, which gives it regions at its next balancer run."""
    if not spec.distributed:
        raise ClusterError(f"cluster {spec.name!r} is standalone HBase: its only RegionServer lives "
                           "in the master's JVM, and another cannot join it",
                           hint="start HBase with RegionServers of their own: `workbench cluster up hbase-3`")
    try:
        live_servers(spec)
    except OSError as exc:
        raise ClusterError(f"cannot ask ZooKeeper of {spec.name!r} ({spec.address}:{spec.zookeeper_port}) "
                           f"which RegionServers run: {exc.strerror or exc}",
                           hint=f"is it serving? `workbench cluster status {spec.name}`") from None
    return regionserver_plan(spec, index, run_dir, lib, java)


def wait_joined(spec: HBaseSpec, name: str, address: str, others: list[str], deadline: float,
                check: Callable[[], None], run_dir: Path | None = None) -> float:
    """Block until the master has registered RegionServer `name` (its node in ZooKeeper; NotReady
    at the deadline), then until the balancer, which moves a few regions each balancer_period_s,
    has given it its share (the user tables' regions over the RegionServers, rounded down): from
    then on clients send it its share of the requests. At most three periods and ten seconds
    for that (a busy master may balance later); the cluster runs either way."""
    _wait(lambda: registered(spec, address), deadline, check, name, "did not report for duty to the master")
    where = f"{address}:{spec.regionserver_port}"
    until = min(deadline, time.monotonic() + 3 * spec.balancer_period_s + 10)
    while time.monotonic() < until:
        check()
        try:
            counts, servers = regions_per_server(spec), len(live_servers(spec))
        except Exception:  # the gateway or ZooKeeper busy: ask again
            counts, servers = {}, 0
        total = sum(counts.values())
        if servers and (not total or counts.get(where, 0) >= max(1, total // servers)):
            break
        time.sleep(1.0)
    return time.monotonic()


def after_join(spec: HBaseSpec, name: str, address: str, deadline: float, check: Callable[[], None],
               client: dict[str, Any]) -> str | None:
    """What the balancer gave it, for the runs' records; None if the gateway does not answer."""
    try:
        counts = regions_per_server(spec)
    except Exception:
        return None
    total, held = sum(counts.values()), counts.get(f"{address}:{spec.regionserver_port}", 0)
    if not total:
        return f"{name} joined; the cluster has no table regions to move to it"
    return f"{name} holds {held} region{'s' if held != 1 else ''} of {total} after the balancer's moves"


def still_member(spec: HBaseSpec, address: str, others: list[str], client: dict[str, Any]) -> bool:
    try:
        return registered(spec, address)
    except OSError as exc:
        raise ClusterError(f"cannot ask ZooKeeper of {spec.name!r} ({spec.address}:{spec.zookeeper_port}) "
                           f"which RegionServers run: {exc.strerror or exc}",
                           hint=f"is it serving? `workbench cluster status {spec.name}`") from None


def mover_argv(spec: HBaseSpec, node: Any, deadline: float) -> list[str]:
    """HBase's RegionMover moving the RegionServer's regions to the others (unload), one at a
    time with an acknowledgement that each is online where it went, on the node's own java,
    jars and conf/ (the same paths inside its container, for the Docker provider)."""
    conf = node.dir / "conf"
    java, lib = node.argv[0], node.argv[node.argv.index("-cp") + 1].split(":", 1)[1]
    return [java, *java_tools.FLAGS, f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
            f"-Dworkbench.log.file={node.dir / 'logs' / 'regionmover.log'}",
            f"-Djava.io.tmpdir={node.dir / 'tmp'}", "-Xmx256M", "-cp", f"{conf}:{lib}", MOVER_CLASS,
            "-r", f"{node.address}:{spec.regionserver_port}", "-o", "unload", "-m", "4",
            "-f", str(node.dir / "tmp" / "unloaded-regions"),
            "-t", str(max(30, int(deadline - time.monotonic())))]


def mover_failed(node: Any, code: int, output: str) -> ClusterError:
    last = output.strip().splitlines()[-1:] or ["(no output)"]
    return ClusterError(f"{node.name}: HBase's RegionMover failed (exit status {code}): {last[0][:300]}",
                        hint=f"its log: {node.dir / 'logs' / 'regionmover.log'}")


def leave(spec: HBaseSpec, node: Any, deadline: float, say: Callable[[str], None]) -> None:
    """Move the RegionServer's regions to the others (mover_argv); the caller then stops it.
    (`say`, for what the move decides on the way: RegionMover decides nothing to tell.)"""
    try:
        done = subprocess.run(mover_argv(spec, node, deadline), capture_output=True, text=True,
                              timeout=max(30.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise ClusterError(f"{node.name}: HBase's RegionMover did not move its regions away in time",
                           hint=f"its log: {node.dir / 'logs' / 'regionmover.log'}") from None
    if done.returncode != 0:
        raise mover_failed(node, done.returncode, done.stderr or done.stdout)


def wait_left(spec: HBaseSpec, address: str, others: list[str], deadline: float,
              run_dir: Path | None = None) -> None:
    """Block until the master no longer lists the RegionServer at `address`."""
    while time.monotonic() < deadline:
        try:
            if not registered(spec, address):
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise ClusterError(f"the RegionServer at {address} is still registered in ZooKeeper",
                       hint="see its log (`workbench cluster logs`)")


# -- what the database's descriptor names (__init__.py) -----------------------------------
def listens_on(spec: HBaseSpec) -> list[tuple[str, int, str]]:
    """The client and peer ports a local cluster of this spec needs free."""
    a = spec.address
    return [(a, spec.zookeeper_port, "HBase ZooKeeper"), (a, spec.master_port, "HBase master"),
            (a, spec.regionserver_port, "HBase RegionServer"), (a, spec.thrift_port, "HBase Thrift")]


def shape(spec: HBaseSpec) -> tuple[str, str]:
    """(processes, where clients connect) of a preset not started: the master and the Thrift
    gateway; distributed, ZooKeeper and the RegionServers too."""
    processes = 2 + (1 + spec.regionservers if spec.distributed else 0)
    return str(processes), f"{spec.address}:{spec.thrift_port}"


def resizable(cluster: Any, verb: str) -> Any:
    """This module, for HBase with RegionServers of their own (clusters/resize.py); standalone
    HBase is one JVM: one line."""
    import sys

    if not cluster.spec.distributed:
        raise ClusterError(f"{verb}: {cluster.name!r} is standalone HBase (one master with its "
                           "RegionServer in one JVM); RegionServers can be added to and removed from "
                           "HBase with RegionServers of their own",
                           hint="`workbench cluster up hbase-3` (a master and three RegionServers)")
    return sys.modules[__name__]
