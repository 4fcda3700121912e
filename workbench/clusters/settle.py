"""The settle step between an experiment's runs: data flushed to disk, no compaction running.

A run that follows a load (or another run) on a database still busy flushing memtables and
compacting what the previous one wrote measures that background work as much as its own. Published
YCSB studies flush and wait by hand between runs; `settle = "flush"` in an experiment file does it
for every run:

- Cassandra: `nodetool flush KEYSPACE TABLE` on every node (Cassandra's own NodeTool class, from the
  jars the node runs, over its local JMX port), then `nodetool compactionstats` on every node until
  no compaction is pending or active.
- FerretDB on PostgreSQL: VACUUM (ANALYZE) and CHECKPOINT through psql on the cluster's socket.
- HBase: Admin.flush(TABLE), then Admin.getCompactionState(TABLE) until NONE, by a small Java
  program run from source (tools/HBaseFlush.java) against the cluster's own conf/ and jars. The
  Java launcher compiles it in memory, which needs a JDK (the jdk.compiler module), not only a JRE.

Both only use what a local cluster already has: its Java, its jars and its configuration.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from workbench.clusters.base import Cluster, Node
from workbench.databases import resolve, server
from workbench.databases.cassandra.cluster import jmx_port
from workbench.errors import ClusterError

NODETOOL_CLASS = "org.apache.cassandra.tools.NodeTool"
POLL_S = 0.5
_PENDING = re.compile(r"^pending tasks\s*:?\s*(\d+)", re.MULTILINE)


def settle(cluster: Cluster, *, keyspace: str, table: str, timeout: float = 600.0,
           say: Callable[[str], None] | None = None) -> float:
    """Flush `table` and wait until no compaction of it runs; the seconds it took.

    Raises ClusterError (one line) when the cluster is not local, a tool fails or the deadline
    passes with compactions still running."""
    if cluster.provider != "local":
        raise ClusterError(f"settle = flush needs a cluster the workbench started locally, not a "
                           f"{cluster.provider} one", 'use settle = "none" for this experiment')
    started = time.monotonic()
    step = server(cluster.kind).settle  # the server's own step (databases/)
    if not step:
        raise ClusterError(f"settle = flush does not know how to flush a {cluster.kind} cluster")
    done = resolve(step)(cluster, keyspace, table, timeout)
    seconds = time.monotonic() - started
    if say:
        say(f"  settled: {done} ({seconds:.1f} s)")
    return seconds


# The servers' settle steps, named by their descriptors: (cluster, keyspace, table, timeout) ->
# what was settled.
def settle_cassandra(cluster: Cluster, keyspace: str, table: str, timeout: float) -> str:
    _settle_cassandra(cluster, keyspace, table, time.monotonic() + timeout)
    return f"{keyspace}.{table} flushed, no compaction running"


def settle_hbase(cluster: Cluster, keyspace: str, table: str, timeout: float) -> str:
    _settle_hbase(cluster, table, timeout)
    return f"{table} flushed, no compaction running"


def settle_ferretdb(cluster: Cluster, keyspace: str, table: str, timeout: float) -> str:
    return _settle_ferretdb(cluster, timeout)


def _settle_ferretdb(cluster: Cluster, timeout: float) -> str:
    """PostgreSQL under FerretDB: VACUUM (ANALYZE) every table (no dead rows left by the load's
    drop, statistics fresh), then CHECKPOINT (every dirty page written). SQLite writes through its
    own journal: nothing to do."""
    from workbench.databases.mongodb import cluster_ferretdb as ferretdb_local

    if cluster.spec.backend != "postgresql":
        return "nothing (FerretDB on SQLite has no background work to wait for)"
    psql = ferretdb_local.postgres_bin() / "psql"
    argv = [str(psql), "-X", "-q", "-v", "ON_ERROR_STOP=1",
            "-h", str(ferretdb_local.socket_dir(cluster.run_dir)), "-p", str(cluster.spec.postgres_port),
            "-U", "ferretdb", "-d", "postgres",
            "-c", "VACUUM (ANALYZE)", "-c", "CHECKPOINT"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterError(f"settle: psql failed on {cluster.name}: {exc}",
                           "is PostgreSQL's client (postgresql-client-15) installed?") from None
    if done.returncode != 0:
        raise ClusterError(f"settle: psql failed on {cluster.name}: {done.stderr.strip()[-200:]}",
                           f"see {cluster.node('postgres').log}")
    return "PostgreSQL vacuumed and checkpointed"


def _classpath(node: Node) -> str:
    argv = list(node.argv)
    try:
        return argv[argv.index("-cp") + 1]
    except (ValueError, IndexError):
        raise ClusterError(f"{node.name}: its command line has no class path to run tools with",
                           "restart the cluster with this version of the workbench") from None


def _java(node: Node, args: list[str], timeout: float) -> subprocess.CompletedProcess:
    conf = node.dir / "conf"
    argv = [node.argv[0], f"@{conf / 'jvm.options'}", "-Xms64m", "-Xmx256m", *args]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, cwd=node.dir)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"{node.name}: settling did not finish within {timeout:.0f} s",
                           "the node may be overloaded or paused; check `workbench cluster status`") from None
    except OSError as exc:
        raise ClusterError(f"{node.name}: cannot run {node.argv[0]}: {exc.strerror or exc}") from None


def _last_line(proc: subprocess.CompletedProcess) -> str:
    lines = [ln.strip() for ln in (proc.stdout + "\n" + proc.stderr).splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("See 'nodetool help")]
    return lines[-1] if lines else f"exit status {proc.returncode}"


def nodetool(node: Node, args: list[str], deadline: float) -> str:
    """Run `nodetool ARGS` against a local Cassandra node (its JMX port); its output. One line
    (ClusterError) if it fails."""
    remaining = max(deadline - time.monotonic(), 5.0)
    proc = _java(node, [f"-Duser.home={node.dir}",  # nodetool keeps its history under ~/.cassandra
                        f"-Dlogback.configurationFile={node.dir / 'conf' / 'logback.xml'}",
                        f"-Dcassandra.logdir={node.dir / 'logs'}",
                        "-cp", _classpath(node), NODETOOL_CLASS,
                        "-h", "127.0.0.1", "-p", str(jmx_port(node.address)), *args], remaining)
    if proc.returncode != 0:
        raise ClusterError(f"{node.name}: nodetool {args[0]} failed: {_last_line(proc)}",
                           "is the node up? `workbench cluster status`")
    return proc.stdout


def compactions_busy(compactionstats: str) -> bool:
    """Whether `nodetool compactionstats` output shows pending or running compactions."""
    match = _PENDING.search(compactionstats)
    pending = int(match.group(1)) if match else 0
    return pending > 0 or "Active compaction remaining time" in compactionstats


def _settle_cassandra(cluster: Cluster, keyspace: str, table: str, deadline: float) -> None:
    for node in cluster.nodes:
        nodetool(node, ["flush", keyspace, table], deadline)
    waiting = list(cluster.nodes)
    while waiting:
        waiting = [n for n in waiting if compactions_busy(nodetool(n, ["compactionstats"], deadline))]
        if waiting and time.monotonic() > deadline:
            raise ClusterError(f"compactions still running on {', '.join(n.name for n in waiting)} "
                               "when the settle step's time was up",
                               "give the nodes more heap or the experiment fewer records")
        if waiting:
            time.sleep(POLL_S)


def _settle_hbase(cluster: Cluster, table: str, timeout: float) -> None:
    master = next((n for n in cluster.nodes if n.name == "master"), None)
    if master is None:
        raise ClusterError(f"{cluster.name}: no master node to flush through")
    conf = master.dir / "conf"
    tool = resources.files("workbench.databases.hbase").joinpath("tools", "HBaseFlush.java")
    with resources.as_file(tool) as src:
        proc = _java(master, [f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
                              f"-Dworkbench.log.file={master.dir / 'logs' / 'settle.log'}",
                              f"-Dhbase.log.dir={master.dir / 'logs'}",
                              f"-Djava.io.tmpdir={master.dir / 'tmp'}",
                              "-cp", _classpath(master), str(Path(src)), table, str(int(timeout))],
                     timeout + 60)
    if proc.returncode == 0:
        return
    out = _last_line(proc)
    if proc.returncode == 3:
        raise ClusterError(f"{cluster.name}: cannot flush: {out}", "load the experiment's data first")
    if proc.returncode == 4:
        raise ClusterError(f"{cluster.name}: {out} when the settle step's time was up",
                           "give HBase more heap or the experiment fewer records")
    if "jdk.compiler" in proc.stderr or "javac" in proc.stderr:
        raise ClusterError(f"{cluster.name}: settling HBase runs a Java source file, and this Java has "
                           "no compiler", "install a JDK (Debian: openjdk-17-jdk-headless)")
    raise ClusterError(f"{cluster.name}: flushing {table} failed: {out}",
                       "see the master's log: workbench cluster logs " + cluster.name)
