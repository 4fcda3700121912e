"""The workbench against YCSB's own client (hbase20, cassandra-cql or mongodb), alternating on one cluster.

    workbench cluster up hbase-standalone        # or: cassandra-single, with --db cassandra;
                                                 # or: ferretdb-postgres, with --db mongodb
    python bench/bench_ycsb.py --ycsb-home DIR [--db hbase] [--cluster hbase-standalone]
        [--records 20000] [--operations 50000] [--lanes 16,64] [--workloads a,c]
        [--repeat 3] [--clients native,async]

DIR is a YCSB installation with the hbase20 (cassandra, mongodb) binding: YCSB's release layout
(DIR/lib and DIR/<binding>/lib), a binding tarball's (DIR/lib with core and binding jars), or a
directory of jars. No YCSB file is needed in this repository; to build one from YCSB's public
source (tag 0.17.0; `site.ycsb:core` is on Maven Central, the bindings are not):

    git clone -b 0.17.0 https://github.com/brianfrankcooper/YCSB /tmp/ycsb-src
    cd /tmp/ycsb-src && mvn -B -pl hbase20 -am package -DskipTests -Dcheckstyle.skip
    tar xzf hbase20/target/ycsb-hbase20-binding-0.17.0.tar.gz -C /tmp
    # then: --ycsb-home /tmp/ycsb-hbase20-binding-0.17.0

The cassandra binding's pom also names test-only artifacts from a JBoss repository (sigar);
delete its test-scoped dependencies and its <build> section in that temporary copy, then
`mvn -B -pl cassandra -am package -Dmaven.test.skip=true -Dcheckstyle.skip`.

The mongodb binding (site.ycsb.db.MongoDbClient) needs two changes in the temporary copy:
- its AsyncMongoDbClient's driver (com.allanbank:mongodb-async-driver 2.0.1) is only in
  allanbank.com's own http:// repository, which Maven refuses: delete that <dependency> and the
  pom's <repositories> section from mongodb/pom.xml, and the two classes that use the driver;
- its driver, mongo-java-driver 3.8.0 (3.12.14, the last 3.x, too), sends `buildinfo` as an
  OP_QUERY command when it connects, which FerretDB 1.24 refuses (error 352,
  UnsupportedOpQueryCommand): every operation then fails after the 30 s server selection
  timeout. YCSB's own later commit 58d58788 ("Upgrade MongoDB client version", #1758) moves the
  binding to mongodb-driver-sync 5.1.0; apply its MongoDbClient.java change and artifact name:

    git clone https://github.com/brianfrankcooper/YCSB /tmp/ycsb-git      # for the tag and the commit
    mkdir /tmp/ycsb-src && git -C /tmp/ycsb-git archive 0.17.0 | tar x -C /tmp/ycsb-src
    git -C /tmp/ycsb-git diff 0.17.0 58d58788 -- mongodb/src/main/java/site/ycsb/db/MongoDbClient.java \
        | patch -d /tmp/ycsb-src -p1
    cd /tmp/ycsb-src/mongodb && rm src/main/java/site/ycsb/db/AsyncMongoDbClient.java \
        src/test/java/site/ycsb/db/AsyncMongoDbClientTest.java      # and edit pom.xml as above
    sed -i 's#>mongo-java-driver<#>mongodb-driver-sync<#' pom.xml       # the artifact's new name
    cd /tmp/ycsb-src && mvn -B -q -pl mongodb -am package -DskipTests -Dcheckstyle.skip \
        -Dmongodb.version=5.1.0
    tar xzf mongodb/target/ycsb-mongodb-binding-0.17.0.tar.gz -C /tmp
    # then: --db mongodb --ycsb-home /tmp/ycsb-mongodb-binding-0.17.0

The patch changes how the client is made (MongoClients.create from the URL's settings instead of
new MongoClient(MongoClientURI); read preference and write concern still come from the URL) and
the upsert paths (mongodb.upsert=true), not reads, updates or plain inserts.

With --db mongodb the server is whatever the cluster is: the ferretdb-postgres preset starts
FerretDB 1.24.2 on PostgreSQL 15 (the MongoDB protocol; it is not MongoDB). Both clients get the
cluster's mongodb.url (database ycsb, w=1, YCSB's default on the server's address). FerretDB 1.24
finds a document by _id with a sequential scan, so keep --records in the thousands (2000) and
--operations to a few thousand. PostgreSQL is vacuumed (VACUUM (ANALYZE), then CHECKPOINT) before
every trial, outside the measured window: an update leaves a dead row that the next scans read
too, and each trial would otherwise start where the one before left the table.

1. Loads `--records` rows (YCSB's 10 x 100 B) into a fresh table with the workbench.
2. For each workload and lane count: one untimed trial of each client, then `--repeat`
   repetitions in which the clients take turns (the order rotates). Both run the same workload
   file, as separate processes, with `threads` = lanes and hdrhistogram.percentiles=50,95,99.
3. Prints, per trial and as medians: throughput (each tool's own [OVERALL] figure), client CPU
   per operation (the whole process, and minus a start-up trial of 100 operations), the servers'
   CPU per operation from /proc (HBase: the Thrift gateway, and the master/RegionServer JVM;
   Cassandra: every node; FerretDB: its process as the gateway, and PostgreSQL's postmaster with
   every child process, i.e. the backends serving FerretDB's connections, as the server), and
   p50/p95/p99 of READ and UPDATE.

Client CPU of a process comes from wait4's rusage (every thread, the JVM's JIT and GC too).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "workbench" / "workloads"
# per database: YCSB's class, the jar that holds it, the workbench property that picks a client
# ("": one client, named by the label), the workbench's clients
DBS = {
    "hbase": ("site.ycsb.db.hbase20.HBaseClient20", "hbase20-binding", "hbase.client",
              "native,async"),
    "cassandra": ("site.ycsb.db.CassandraCQLClient", "cassandra-binding", "cassandra.driver",
                  "native,python"),
    "mongodb": ("site.ycsb.db.MongoDbClient", "mongodb-binding", "", "pymongo"),
}
# per database: the cluster kinds it runs on, the default cluster, what gate/op and srv/op measure
CLUSTERS = {
    "hbase": (("hbase",), "hbase-standalone", "Thrift gateway", "master/RegionServer JVM"),
    "cassandra": (("cassandra",), "cassandra-single", "none", "every node"),
    "mongodb": (("ferretdb",), "ferretdb-postgres", "FerretDB", "PostgreSQL postmaster + children"),
}
STARTUP_OPS = 100
LINE = re.compile(r"^\[(?P<op>[A-Z-]+)\], (?P<metric>[^,]+), (?P<value>[-0-9.Ee]+)$")
HZ = os.sysconf("SC_CLK_TCK")
JAVA = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if "JAVA_HOME" in os.environ else "java"


def ycsb_classpath(home: Path, binding: str) -> str:
    """The jars of a YCSB installation with the binding (see the module docstring)."""
    dirs = [home / "lib", home / binding / "lib", home]
    jars = [j for d in dirs if d.is_dir() for j in sorted(d.glob("*.jar"))]
    names = " ".join(j.name for j in jars)
    if "core-" not in names or binding not in names:
        raise SystemExit(f"{home}: no YCSB core and {binding} jars under lib/, "
                         f"{binding}/lib/ or the directory itself (see --help)")
    return ":".join(str(j) for j in jars)


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a live process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def proc_tree_cpu(pid: int) -> float:
    """CPU seconds of a live process, of its children (live, or reaped: cutime/cstime) and of
    every live child's own reaped children. Enough for PostgreSQL, whose backends and auxiliary
    processes are the postmaster's children and fork nothing that outlives them."""
    def times(stat: str) -> tuple[int, float]:
        f = stat.rsplit(")", 1)[1].split()
        return int(f[1]), sum(int(x) for x in f[11:15]) / HZ  # ppid; utime stime cutime cstime

    total = times(Path(f"/proc/{pid}/stat").read_text())[1]
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and entry.name != str(pid):
            try:
                ppid, cpu = times(Path(entry.path, "stat").read_text())
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile: its time is in the parent's cutime now
            if ppid == pid:
                total += cpu
    return total


class CpuTime(float):
    """CPU seconds, user + system (a float), with each part as .user and .system."""

    def __new__(cls, user: float, system: float) -> CpuTime:
        self = super().__new__(cls, user + system)
        self.user, self.system = user, system
        return self


def run_process(argv: list[str], env: dict | None = None) -> tuple[str, CpuTime]:
    """(stdout, CPU seconds of the process and its threads); exits on failure."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        # this checkout's workbench, whatever an editable install points at
        env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read()
        if proc.returncode != 0 or "[OVERALL], Throughput" not in text:
            raise SystemExit(f"{argv[0]} failed ({proc.returncode}):\n{err.read()[-3000:]}\n{text[-2000:]}")
    return text, CpuTime(usage.ru_utime, usage.ru_stime)


def parse(text: str) -> dict[tuple[str, str], float]:
    out = {}
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if m:
            out[(m["op"], m["metric"])] = float(m["value"])
    return out


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        from workbench.drive.targets import binding_overrides, find_cluster

        self.args = args
        self.db = args.db
        self.ycsb_class, binding, self.client_key, _ = DBS[args.db]
        self.cluster = cluster = find_cluster(args.cluster)
        kinds = CLUSTERS[args.db][0]
        if cluster.kind not in kinds or cluster.provider != "local":
            raise SystemExit(f"{args.cluster}: a {' or '.join(kinds)} cluster the local provider "
                             "started is needed")
        if not all(host.startswith("127.") for host, _ in cluster.contact_points):
            raise SystemExit("benchmarks only target 127.0.0.0/8")
        self.overrides = binding_overrides(cluster)
        self.pids = {n.name: n.pid for n in cluster.nodes}
        self.classpath = ycsb_classpath(Path(args.ycsb_home).expanduser().resolve(), binding)
        self.conf = Path(tempfile.mkdtemp(prefix="bench-ycsb-conf-"))
        self.table = f"bench_ycsb_{int(time.time())}"
        self.ycsb_props = ["columnfamily=family"]
        if args.db == "cassandra":
            hosts = ",".join(h for h, _ in cluster.contact_points)
            self.ycsb_props = [f"hosts={hosts}", f"port={cluster.contact_points[0][1]}",
                               "cassandra.keyspace=ycsb"]
            return
        if args.db == "mongodb":
            from workbench.databases.mongodb import mongodb_url

            self.url = mongodb_url(cluster)  # the workbench gets the same in self.overrides
            self.ycsb_props = [f"mongodb.url={self.url}"]
            return
        spec = cluster.spec
        (self.conf / "hbase-site.xml").write_text(
            "<?xml version=\"1.0\"?>\n<configuration>\n"
            f"  <property><name>hbase.zookeeper.quorum</name><value>{spec.address}</value></property>\n"
            "  <property><name>hbase.zookeeper.property.clientPort</name>"
            f"<value>{spec.zookeeper_port}</value></property>\n</configuration>\n")

    def common(self, workload: str, lanes: int, ops: int) -> list[str]:
        props = [f"table={self.table}", f"recordcount={self.args.records}", f"operationcount={ops}",
                 "hdrhistogram.percentiles=50,95,99"]
        return ["-P", str(WORKLOADS / f"workload{workload}"), "-threads", str(lanes),
                *[a for p in props for a in ("-p", p)]]

    def argv(self, tool: str, workload: str, lanes: int, ops: int, phase: str = "run") -> list[str]:
        if tool == "ycsb":
            return [JAVA, "-cp", f"{self.conf}:{self.classpath}", "site.ycsb.Client", "-t",
                    "-db", self.ycsb_class, *[a for p in self.ycsb_props for a in ("-p", p)],
                    *self.common(workload, lanes, ops)]
        props = [*self.overrides, *([f"{self.client_key}={tool}"] if self.client_key else [])]
        return [sys.executable, "-m", "workbench", phase, "--no-store",
                *[a for p in props for a in ("-p", p)], *self.common(workload, lanes, ops)]

    def trial(self, tool: str, workload: str, lanes: int, ops: int) -> dict:
        self.settle()
        gateway0, server0 = self.server_cpu()
        text, cpu = run_process(self.argv(tool, workload, lanes, ops))
        gateway1, server1 = self.server_cpu()
        gateway, server = gateway1 - gateway0, server1 - server0
        got = parse(text)
        row = {"tool": tool, "ops/s": got[("OVERALL", "Throughput(ops/sec)")], "cpu": cpu,
               "client us/op": cpu / ops * 1e6, "gateway us/op": gateway / ops * 1e6,
               "server us/op": server / ops * 1e6}
        for op in ("READ", "UPDATE"):
            for p in (50, 95, 99):
                row[f"{op} p{p}"] = got.get((op, f"{p}thPercentileLatency(us)"), float("nan"))
        failed = [k for k in got if k[1].startswith("Return=") and k[1] not in
                  ("Return=OK", "Return=NOT_FOUND")]
        if failed:
            raise SystemExit(f"{tool}: failed operations: {failed}\n{text[-2000:]}")
        return row

    def server_cpu(self) -> tuple[float, float]:
        """(gateway, servers) CPU seconds: HBase's Thrift gateway and master JVM; Cassandra: 0 and
        every node; FerretDB, and PostgreSQL's postmaster with its children (0 on SQLite)."""
        if self.db == "hbase":
            return proc_cpu(self.pids["thrift"]), proc_cpu(self.pids["master"])
        if self.db == "mongodb":
            postgres = self.pids.get("postgres")
            return proc_cpu(self.pids["ferretdb"]), proc_tree_cpu(postgres) if postgres else 0.0
        return 0.0, sum(proc_cpu(pid) for pid in self.pids.values())

    def settle(self) -> None:
        """FerretDB on PostgreSQL: VACUUM (ANALYZE) and CHECKPOINT before every trial (not
        measured), so that no trial scans the dead rows of the one before it."""
        if self.db == "mongodb" and "postgres" in self.pids:
            from workbench.clusters.settle import settle

            settle(self.cluster, keyspace="", table=self.table)

    def load(self) -> None:
        argv = self.argv(self.args.clients.split(",")[0], "a", 16, 0, phase="load")
        t0 = time.perf_counter()
        run_process(argv)
        print(f"load: {self.args.records} records into {self.table} in {time.perf_counter() - t0:.1f} s",
              flush=True)

    def drop(self) -> None:
        if self.db == "mongodb":
            from pymongo import MongoClient

            client = MongoClient(self.url)
            try:
                client.get_default_database().drop_collection(self.table)
            finally:
                client.close()
            return
        if self.db == "cassandra":
            from cassandra.cluster import Cluster

            host, port = self.cluster.contact_points[0]
            cluster = Cluster([host], port=port)
            try:
                cluster.connect().execute(f"DROP TABLE IF EXISTS ycsb.{self.table}")
            finally:
                cluster.shutdown()
            return
        import happybase

        host, port = self.cluster.contact_points[0]
        spec = self.cluster.spec
        conn = happybase.Connection(host, port, transport=spec.thrift_transport,
                                    protocol=spec.thrift_protocol)
        conn.delete_table(self.table, disable=True)
        conn.close()


def fmt_row(r: dict, startup: float) -> str:
    run_us = (r["cpu"] - startup) / r["ops"] * 1e6
    return (f"{r['tool']:>9}  {r['ops/s']:7.0f}  {r['client us/op']:6.0f}  {run_us:6.0f}  "
            f"{r['gateway us/op']:7.0f}  {r['server us/op']:6.0f}  "
            + "  ".join(f"{r[f'{op} p{p}']:6.0f}" for op in ("READ", "UPDATE") for p in (50, 95, 99)))


HEADER = ("     tool    ops/s  cli/op  run/op  gate/op  srv/op   R p50   R p95   R p99   U p50   U p95"
          "   U p99")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ycsb-home", required=True, help="a YCSB installation with the binding")
    ap.add_argument("--db", choices=sorted(DBS), default="hbase")
    ap.add_argument("--cluster", help="a cluster `workbench cluster up` started "
                    "(default hbase-standalone / cassandra-single / ferretdb-postgres)")
    ap.add_argument("--records", type=int, default=20_000)
    ap.add_argument("--operations", type=int, default=50_000)
    ap.add_argument("--lanes", default="16,64")
    ap.add_argument("--workloads", default="a,c")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clients", help="workbench hbase.client / cassandra.driver values "
                    "(default native,async / native,python; mongodb: one, pymongo)")
    args = ap.parse_args()
    _, default_cluster, gate, srv = CLUSTERS[args.db]
    args.cluster = args.cluster or default_cluster
    args.clients = args.clients or DBS[args.db][3]
    bench = Bench(args)
    tools = ["ycsb", *[c for c in args.clients.split(",") if c]]
    bench.load()
    summary = []
    try:
        for workload in args.workloads.split(","):
            for lanes in (int(x) for x in args.lanes.split(",")):
                print(f"\nworkload {workload.upper()}, {lanes} in flight, {args.operations} operations"
                      " per trial;"
                      f" per op in us: cli = client process, run = minus start-up, gate = {gate},"
                      f" srv = {srv}; latencies in us", flush=True)
                startup = {}
                for tool in tools:  # start-up cost, and an untimed warm-up of each client
                    startup[tool] = bench.trial(tool, workload, lanes, STARTUP_OPS)["cpu"]
                    bench.trial(tool, workload, lanes, args.operations)
                print(HEADER)
                rows = []
                for rep in range(args.repeat):
                    order = tools[rep % len(tools):] + tools[:rep % len(tools)]
                    for tool in order:
                        r = bench.trial(tool, workload, lanes, args.operations)
                        r["ops"], r["rep"] = args.operations, rep
                        rows.append(r)
                        print(fmt_row(r, startup[tool]), flush=True)
                summary.append((workload, lanes, rows, startup))
    finally:
        bench.drop()
    print("\nmedians (per-pair ratios: each repetition's workbench trial over its YCSB trial)")
    print("workload lanes     tool    ops/s  cli/op  run/op  gate/op  srv/op   R p99   U p99  x YCSB")
    for workload, lanes, rows, startup in summary:
        ycsb = {r["rep"]: r["ops/s"] for r in rows if r["tool"] == "ycsb"}
        for tool in tools:
            mine = [r for r in rows if r["tool"] == tool]

            def med(key: str, rs: list = mine) -> float:
                return statistics.median(r[key] for r in rs)

            run_us = statistics.median((r["cpu"] - startup[tool]) / r["ops"] * 1e6 for r in mine)
            ratio = statistics.median(r["ops/s"] / ycsb[r["rep"]] for r in mine)
            print(f"{workload.upper():>8} {lanes:5d}  {tool:>9}  {med('ops/s'):7.0f}  "
                  f"{med('client us/op'):6.0f}  {run_us:6.0f}  {med('gateway us/op'):7.0f}  "
                  f"{med('server us/op'):6.0f}  "
                  f"{med('READ p99'):6.0f}  {med('UPDATE p99'):6.0f}  {ratio:6.2f}")


if __name__ == "__main__":
    main()
