"""HBase's steps on a cluster the workbench started, by small Java programs (tools/) on the
master's own conf/ and jars: the settle step between an experiment's runs (clusters/settle.py:
Admin.flush(TABLE), then Admin.getCompactionState(TABLE) until NONE, tools/HBaseFlush.java) and
`cluster flush|compact` (clusters/maintenance.py: flushRegionServer / majorCompactRegionServer,
tools/HBaseServers.java, locally or in the master's container). Locally they run from classes
compiled once into the cache (clusters/java_tools.py); in a container, from the source file,
which its Java launcher compiles in memory. Either needs a JDK, not only a JRE."""

from __future__ import annotations

import shutil
import subprocess
import time
from importlib import resources
from pathlib import Path
from typing import Any

from workbench.clusters import java_tools
from workbench.clusters.base import Cluster, Node
from workbench.clusters.maintenance import TIMEOUT_S, in_container, targets
from workbench.clusters.settle import classpath, java, last_line
from workbench.errors import ClusterError


def settle_hbase(cluster: Cluster, properties: dict[str, str], table: str, timeout: float) -> str:
    _settle_hbase(cluster, table, timeout)
    return f"{table} flushed, no compaction running"


def _settle_hbase(cluster: Cluster, table: str, timeout: float) -> None:
    master = next((n for n in cluster.nodes if n.name == "master"), None)
    if master is None:
        raise ClusterError(f"{cluster.name}: no master node to flush through")
    conf = master.dir / "conf"
    tool = resources.files("workbench.databases.hbase").joinpath("tools", "HBaseFlush.java")
    with resources.as_file(tool) as src:
        proc = java(master, [f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
                             f"-Dworkbench.log.file={master.dir / 'logs' / 'settle.log'}",
                             f"-Dhbase.log.dir={master.dir / 'logs'}",
                             f"-Djava.io.tmpdir={master.dir / 'tmp'}",
                             *_program(master, Path(src)), table, str(int(timeout))],
                    timeout + 60)
    if proc.returncode == 0:
        return
    out = last_line(proc)
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


def maintain_hbase(provider: Any, cluster: Cluster, node: str | None, action: str) -> list[str]:
    regionservers = [n for n in cluster.nodes if n.name.startswith("rs")]
    holders = regionservers or [n for n in cluster.nodes if n.name == "master"]  # standalone: its own
    return _hbase(provider, cluster, targets(cluster, node, holders), action, whole=node is None)


def _hbase(provider: Any, cluster: Cluster, nodes: list[Node], action: str, whole: bool) -> list[str]:
    master = cluster.node("master")
    tool = _tool_copy(master)
    conf = master.dir / "conf"
    where = [] if whole else [f"{n.address}:{cluster.spec.regionserver_port}" for n in nodes]
    # in a container: the source file, which its java compiles (the cache is the host's)
    program = (["-cp", classpath(master), str(tool)] if cluster.provider == "docker"
               else _program(master, tool))
    argv = [master.argv[0], f"@{conf / 'jvm.options'}", "-Xms64m", "-Xmx256m", *java_tools.FLAGS,
            f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
            f"-Dworkbench.log.file={master.dir / 'logs' / 'admin.log'}",
            f"-Djava.io.tmpdir={master.dir / 'tmp'}",
            *program, action, *where]
    started = time.monotonic()
    if cluster.provider == "docker":
        out = in_container(provider, cluster, master, argv, f"HBase's {action}")
    else:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                                  stdin=subprocess.DEVNULL, cwd=master.dir)
        except subprocess.TimeoutExpired:
            raise ClusterError(f"{cluster.name}: HBase's {action} did not answer within {TIMEOUT_S:.0f} s",
                               hint=f"`workbench cluster status {cluster.name}`") from None
        if proc.returncode != 0:
            lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
            if "jdk.compiler" in proc.stderr:
                raise ClusterError(f"{cluster.name}: HBase's {action} runs a Java source file, and this "
                                   "Java has no compiler",
                                   hint="install a JDK (Debian: openjdk-17-jdk-headless)")
            raise ClusterError(f"{cluster.name}: HBase's {action} failed: {(lines[-1:] or ['?'])[0][:300]}",
                               hint=f"see {master.dir / 'logs' / 'admin.log'}")
        out = proc.stdout
    servers = [ln.split(" ", 1)[1] for ln in out.splitlines() if ln.startswith(f"{action} ")]
    verb = "flushed" if action == "flush" else "major compaction requested"
    return [f"RegionServer {s}: {verb} ({time.monotonic() - started:.1f} s)" for s in servers]


def _program(master: Node, source: Path) -> list[str]:
    """How the master's java runs the tool `source`: from its classes, compiled once into the
    cache against the master's jars (clusters/java_tools.py), or from the source file where
    that cannot be (a JRE: its error then says a JDK is needed)."""
    cp = classpath(master)
    libs = cp.split(":", 1)[1] if ":" in cp else cp  # its jars, without the cluster's conf/
    return java_tools.program(master.argv[0], source, libs, cp)


def _tool_copy(master: Node) -> Path:
    """tools/HBaseServers.java copied under the master's folder, which its container also sees."""
    target = master.dir / "tmp" / "HBaseServers.java"
    target.parent.mkdir(parents=True, exist_ok=True)
    tool = resources.files("workbench.databases.hbase").joinpath("tools", "HBaseServers.java")
    with resources.as_file(tool) as src:
        shutil.copyfile(src, target)
    return target
