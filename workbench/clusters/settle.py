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
  program (tools/HBaseFlush.java) against the cluster's own conf/ and jars, compiled once into
  the cache (clusters/java_tools.py): a JDK, not only a JRE.

Each is its database's (databases/<name>/cluster_maintenance.py, named by the server's descriptor:
`settle`); this module runs the one a cluster's kind names, and holds what the Java ones share
(java, classpath, last_line). They only use what a local cluster already has: its Java, its jars
and its configuration.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Mapping

from workbench.clusters import java_tools
from workbench.clusters.base import Cluster, Node
from workbench.databases import resolve, server
from workbench.errors import ClusterError


def settle(cluster: Cluster, *, table: str, properties: Mapping[str, str] | None = None,
           timeout: float = 600.0, say: Callable[[str], None] | None = None, compact: bool = False) -> float:
    """Flush `table` and wait until no compaction of it runs; the seconds it took. `properties`:
    the runs' binding properties, where each database's step finds the rest of its table's name
    (Cassandra's keyspace). `compact`: a major compaction of it too, where the server has one
    (`compact` of its descriptor; the settle step where it has none), so that what is measured
    next meets the same files each time.

    Raises ClusterError (one line) when the cluster is not local, a tool fails or the deadline
    passes with compactions still running."""
    if cluster.provider != "local":
        raise ClusterError(f"settle = flush needs a cluster the workbench started locally, not a "
                           f"{cluster.provider} one", 'use settle = "none" for this experiment')
    started = time.monotonic()
    served = server(cluster.kind)
    step = (compact and served.compact) or served.settle  # the server's own step (databases/)
    if not step:
        raise ClusterError(f"settle = flush does not know how to flush a {cluster.kind} cluster")
    done = resolve(step)(cluster, dict(properties or {}), table, timeout)
    seconds = time.monotonic() - started
    if say:
        say(f"  settled: {done} ({seconds:.1f} s)")
    return seconds


def classpath(node: Node) -> str:
    argv = list(node.argv)
    try:
        return argv[argv.index("-cp") + 1]
    except (ValueError, IndexError):
        raise ClusterError(f"{node.name}: its command line has no class path to run tools with",
                           "restart the cluster with this version of the workbench") from None


def java(node: Node, args: list[str], timeout: float) -> subprocess.CompletedProcess:
    conf = node.dir / "conf"
    argv = [node.argv[0], f"@{conf / 'jvm.options'}", "-Xms64m", "-Xmx256m", *java_tools.FLAGS, *args]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, cwd=node.dir)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"{node.name}: settling did not finish within {timeout:.0f} s",
                           "the node may be overloaded or paused; check `workbench cluster status`") from None
    except OSError as exc:
        raise ClusterError(f"{node.name}: cannot run {node.argv[0]}: {exc.strerror or exc}") from None


def last_line(proc: subprocess.CompletedProcess) -> str:
    lines = [ln.strip() for ln in (proc.stdout + "\n" + proc.stderr).splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("See 'nodetool help")]
    return lines[-1] if lines else f"exit status {proc.returncode}"
