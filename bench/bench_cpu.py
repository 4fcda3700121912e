"""Client CPU per operation in steady state: the workbench (and, if given, YCSB and latte).

    workbench cluster up cassandra-single            # or hbase-standalone, with --db hbase
    python bench/bench_cpu.py --db cassandra [--cluster NAME] [--workloads a,c] [--lanes 16,64]
        [--short 10000] [--long 160000] [--repeat 2] [--clients native,python] [-p KEY=VALUE ...]
        [--ycsb-home DIR]  [--latte PATH] [--baseline DIR] [--fresh] [--servers]

For each workload and in-flight count, each client makes a short run and a long run of the same
workload on the same loaded table, in alternation, `--repeat` times. Steady-state CPU per
operation is (CPU of the long run - CPU of the short run) / (long - short operations): the
interpreter's (or the JVM's) start-up, imports and connection set-up are in both and cancel out.
CPU is user + system time of the client process and its threads (os.wait4), nothing of the
servers; each line also shows the two parts. Every run is a separate `workbench run --no-store`
(YCSB: `site.ycsb.Client -t`; latte: `latte run`), with this checkout's workbench first on
PYTHONPATH.

Each trial also shows `host`: the CPU milliseconds a fixed piece of pure Python took just before
it and just after it, in this process. On a shared host every client's CPU per operation moves
with it (the same code measured 1.5x apart within an hour of session 38); read figures of
different runs together with it.

--host-limit MS: measure on a host at its usual speed only, every client alike. Before a trial,
  wait (up to --host-wait seconds) until `host` is at most MS; a trial with `host` above MS before
  or after it is printed, marked `repeated`, and made again, up to --attempts times (the last is
  kept whatever its host). The summary counts the repeated trials per client.

--fresh: load the table(s) anew before every trial (dropping the last), so that each client's
  trial starts from the same table: on HBase, a table that has taken many updates answers reads
  more slowly (most likely the versions in its memstore until a flush), and a slower server makes every
  client's CPU per operation rise (fewer answers per wake-up). Without it, one table serves every
  trial, and later trials meet the updates of the earlier ones.

--servers: each workbench run names the cluster (`--cluster NAME`), so its servers' sampler
  (drive/server_sampler.py) reads the nodes beside it, as every `--cluster` run does: their
  processes, the database's own figures (Cassandra's virtual tables) and the JVMs' GC logs.
  Without it the sampler reads the client's own processes only. With --baseline, the sampler's
  cost before and after a change, in one invocation.
--servers-ab: each workbench client twice in every trial, alternated: as given (the sampler reads
  the client's own processes only) and as CLIENT+servers (named with --cluster, as --servers
  does): the whole cost of sampling a cluster's servers beside a loaded run, in one invocation.

--ycsb-home: a YCSB 0.17.0 installation with the binding (see bench_ycsb.py for how to build one).
--baseline: another checkout of the workbench (e.g. `git worktree add /tmp/base HEAD~1`); its
  runs of each client (named base:CLIENT) alternate with this checkout's, so a change is measured
  against what it changes in the same invocation.
--latte: a latte binary (Cassandra only), e.g. built in a temporary directory with
    CARGO_TARGET_DIR=/tmp/latte/target cargo install latte-cli --root /tmp/latte/root
  It runs bench/latte/ycsb.rn: YCSB's workload A (50% read of all ten fields, 50% update of
  one) or C (reads) on a table of the same shape and size (latte.usertable, loaded by latte),
  uniform keys, one request per operation, `-p LANES` in flight on one connection, `-t 1`.
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

from bench_ycsb import DBS, JAVA, ROOT, WORKLOADS, CpuTime, parse, run_process, ycsb_classpath

OK = ("Return=OK", "Return=NOT_FOUND")
LATTE_DIR = Path(__file__).resolve().parent / "latte"


def cpu_of(argv: list[str], env: dict | None = None) -> tuple[str, CpuTime, float]:
    """(stdout, CPU seconds, wall seconds) of one client run."""
    t0 = time.perf_counter()
    text, cpu = run_process(argv, env)
    return text, cpu, time.perf_counter() - t0


def run_latte(argv: list[str]) -> tuple[str, CpuTime, float]:
    """latte prints no YCSB lines: stdout, CPU and wall seconds of `latte run`."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryDirectory() as cwd:  # its report files
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"latte failed:\n{text[-3000:]}")
    return text, CpuTime(usage.ru_utime, usage.ru_stime), time.perf_counter() - t0


def host_ms() -> float:
    """CPU milliseconds of a fixed piece of pure Python (dict stores, arithmetic): the host's speed now."""
    t0 = time.process_time()
    d: dict[int, int] = {}
    for i in range(200_000):
        d[i & 1023] = i * 3 + len(d)
    return (time.process_time() - t0) * 1e3


def quiet_host(limit: float | None, wait_s: float) -> float:
    """`host` now, or, with a limit, once it is at most limit (checked every 5 s, up to wait_s)."""
    host = host_ms()
    deadline = time.monotonic() + wait_s
    while limit is not None and host > limit and time.monotonic() < deadline:
        time.sleep(5)
        host = host_ms()
    return host


class Clients:
    def __init__(self, args: argparse.Namespace) -> None:
        from workbench.drive.targets import binding_overrides, find_cluster

        self.args = args
        self.ycsb_class, binding, self.client_key, default_clients = DBS[args.db]
        self.cluster = find_cluster(args.cluster or {"cassandra": "cassandra-single",
                                                     "hbase": "hbase-standalone"}[args.db])
        if not all(host.startswith("127.") for host, _ in self.cluster.contact_points):
            raise SystemExit("benchmarks only target 127.0.0.0/8")
        self.overrides = binding_overrides(self.cluster) + list(args.p or [])
        self.clients = (args.clients or default_clients.split(",")[0]).split(",")
        self.stamp, self.loads = int(time.time()), 0
        self.table = f"bench_cpu_{self.stamp}"
        self.conf = Path(tempfile.mkdtemp(prefix="bench-cpu-conf-"))
        self.classpath = ycsb_classpath(Path(args.ycsb_home), binding) if args.ycsb_home else None
        host, port = self.cluster.contact_points[0]
        self.ycsb_props = ["columnfamily=family"]
        if args.db == "cassandra":
            self.ycsb_props = [f"hosts={host}", f"port={port}", "cassandra.keyspace=ycsb"]
        else:
            spec = self.cluster.spec
            (self.conf / "hbase-site.xml").write_text(
                "<?xml version=\"1.0\"?>\n<configuration>\n"
                f"  <property><name>hbase.zookeeper.quorum</name><value>{spec.address}</value></property>\n"
                "  <property><name>hbase.zookeeper.property.clientPort</name>"
                f"<value>{spec.zookeeper_port}</value></property>\n</configuration>\n")
        self.tools = [*self.clients, *([f"base:{c}" for c in self.clients] if args.baseline else []),
                      *([f"{c}+servers" for c in self.clients] if args.servers_ab else []),
                      *(["ycsb"] if self.classpath else []),
                      *(["latte"] if args.latte else [])]

    def common(self, workload: str, lanes: int, ops: int) -> list[str]:
        props = [f"table={self.table}", f"recordcount={self.args.records}", f"operationcount={ops}"]
        return ["-P", str(WORKLOADS / f"workload{workload}"), "-threads", str(lanes),
                *[a for p in props for a in ("-p", p)]]

    def workbench(self, client: str, workload: str, lanes: int, ops: int, phase: str = "run") -> list[str]:
        """client: a cassandra.driver / hbase.client value, optionally @LOOP (native@asyncio),
        optionally +servers (named with --cluster whatever --servers says)."""
        client, servers = client.removesuffix("+servers"), client.endswith("+servers")
        client, _, loop = client.partition("@")
        props = [*self.overrides, *([f"{self.client_key}={client}"] if self.client_key else []),
                 *([f"eventloop={loop}"] if loop else [])]
        named = ["--cluster", self.cluster.name] if (self.args.servers or servers) and phase == "run" else []
        return [sys.executable, "-m", "workbench", phase, "--no-store", "-q", *named,
                *[a for p in props for a in ("-p", p)], *self.common(workload, lanes, ops)]

    def run(self, tool: str, workload: str, lanes: int, ops: int) -> tuple[CpuTime, float]:
        """(CPU seconds, operations per second)."""
        if tool == "latte":
            reads = {"a": 50, "c": 100}[workload]
            text, cpu, wall = run_latte(self.latte("run", "-P", f"reads={reads}", "-d", str(ops), "-w", "0",
                                                   "-t", "1", "-p", str(lanes), "--connections", "1"))
            m = re.search(r"Throughput\s+\[op/s\]\s+([0-9.]+)", text)
            return cpu, float(m[1]) if m else ops / wall
        if tool == "ycsb":
            argv = [JAVA, "-cp", f"{self.conf}:{self.classpath}", "site.ycsb.Client", "-t",
                    "-db", self.ycsb_class, *[a for p in self.ycsb_props for a in ("-p", p)],
                    *self.common(workload, lanes, ops)]
        env = None
        if tool.startswith("base:"):  # the same client from the baseline checkout
            tool, env = tool[5:], {"PYTHONPATH": str(Path(self.args.baseline).resolve())}
        if tool != "ycsb":
            argv = self.workbench(tool, workload, lanes, ops)
        text, cpu, _ = cpu_of(argv, env)
        got = parse(text)
        failed = [k for k in got if k[1].startswith("Return=") and k[1] not in OK]
        if failed:
            raise SystemExit(f"{tool}: failed operations: {failed}\n{text[-2000:]}")
        return cpu, got[("OVERALL", "Throughput(ops/sec)")]

    def latte(self, command: str, *args: str) -> list[str]:
        host, port = self.cluster.contact_points[0]
        return [self.args.latte, command, str(LATTE_DIR / "ycsb.rn"), f"{host}:{port}",
                "-P", f"records={self.args.records}", *args, *(["-q"] if command != "schema" else [])]

    def load(self) -> None:
        t0 = time.perf_counter()
        if self.args.latte:  # its own table (latte.usertable), loaded by latte
            run_latte(self.latte("schema"))
            run_latte(self.latte("load"))
        run_process(self.workbench(self.clients[0], "a", 16, 0, phase="load"))  # ycsb.<table>
        print(f"load: {self.args.records:,} records into {self.table} in {time.perf_counter() - t0:.1f} s",
              flush=True)

    def reload(self) -> None:
        """--fresh: a new table (and latte's anew) for the next trial, the last one dropped."""
        self.drop()
        self.loads += 1
        self.table = f"bench_cpu_{self.stamp}_{self.loads}"
        self.load()

    def drop(self) -> None:
        host, port = self.cluster.contact_points[0]
        if self.args.db == "cassandra":
            from cassandra.cluster import Cluster

            cluster = Cluster([host], port=port)
            try:
                session = cluster.connect()
                session.execute(f"DROP TABLE IF EXISTS ycsb.{self.table}")
                if self.args.latte:
                    session.execute("DROP KEYSPACE IF EXISTS latte")
            finally:
                cluster.shutdown()
            return
        import happybase

        spec = self.cluster.spec
        conn = happybase.Connection(host, port, transport=spec.thrift_transport,
                                    protocol=spec.thrift_protocol)
        conn.delete_table(self.table, disable=True)
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", choices=["cassandra", "hbase"], default="cassandra")
    ap.add_argument("--cluster")
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--workloads", default="a,c")
    ap.add_argument("--lanes", default="16,64")
    ap.add_argument("--short", type=int, default=10_000)
    ap.add_argument("--long", type=int, default=160_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--clients", help="workbench cassandra.driver / hbase.client values, each "
                    "optionally with @uvloop or @asyncio (default: native, on the default loop)")
    ap.add_argument("-p", action="append", help="a property for every workbench run")
    ap.add_argument("--ycsb-home")
    ap.add_argument("--latte")
    ap.add_argument("--baseline", help="another workbench checkout to alternate with this one")
    ap.add_argument("--host-limit", type=float, help="repeat a trial whose host ms exceeded this")
    ap.add_argument("--host-wait", type=float, default=300.0)
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--fresh", action="store_true", help="load the table anew before every trial")
    ap.add_argument("--servers", action="store_true",
                    help="the workbench runs name the cluster: their sampler reads its nodes too")
    ap.add_argument("--servers-ab", action="store_true",
                    help="each client also as CLIENT+servers (named with --cluster), alternated")
    args = ap.parse_args()
    if args.servers and args.servers_ab:
        raise SystemExit("--servers-ab compares with and without --servers: give one of them")
    if args.latte and args.db != "cassandra":
        raise SystemExit("latte speaks CQL only: --latte needs --db cassandra")
    clients = Clients(args)
    clients.load()
    print(f"steady-state client CPU per operation: (CPU of {args.long:,} - CPU of {args.short:,} "
          f"operations) / {args.long - args.short:,}; PYTHONPATH={ROOT}"
          + (f", base: PYTHONPATH={Path(args.baseline).resolve()}" if args.baseline else ""))
    rows = []
    try:
        for workload in args.workloads.split(","):
            for lanes in (int(x) for x in args.lanes.split(",")):
                for rep in range(args.repeat):
                    turn = rep % len(clients.tools)
                    tools = clients.tools[turn:] + clients.tools[:turn]
                    for tool in tools:
                        for attempt in range(1, args.attempts + 1):
                            if args.fresh:
                                clients.reload()
                            host = quiet_host(args.host_limit, args.host_wait)
                            short, _ = clients.run(tool, workload, lanes, args.short)
                            long, rate = clients.run(tool, workload, lanes, args.long)
                            after = host_ms()
                            per_op = 1e6 / (args.long - args.short)
                            us = (long - short) * per_op
                            user = (long.user - short.user) * per_op
                            system = (long.system - short.system) * per_op
                            again = (args.host_limit is not None and max(host, after) > args.host_limit
                                     and attempt < args.attempts)
                            line = (f"workload {workload.upper()} {lanes:3d} in flight {tool:>14}: "
                                    f"{us:6.1f} us/op steady (user {user:.1f} + system {system:.1f}; "
                                    f"{short:.2f} s for {args.short:,}, {long:.2f} s for {args.long:,}), "
                                    f"{rate:,.0f} ops/s, host {host:.0f}/{after:.0f} ms")
                            print(line + (", repeated" if again else ""), flush=True)
                            if not again:
                                rows.append((workload, lanes, tool, us, rate, user, system, max(host, after),
                                             attempt - 1, rep))
                                break
    finally:
        clients.drop()
    print("\nmedians: workload, in flight, client, steady us/op (user, system), ops/s of the long runs, "
          "host ms (the higher of before and after)" + (", trials repeated" if args.host_limit else ""))
    for key in dict.fromkeys(r[:3] for r in rows):
        mine = [r for r in rows if r[:3] == key]
        us, rate, user, system, host = (statistics.median(r[k] for r in mine) for k in (3, 4, 5, 6, 7))
        print(f"  {key[0].upper()} {key[1]:3d} {key[2]:>14}  {us:6.1f} us/op ({user:5.1f}, {system:4.1f})"
              f"  {rate:8,.0f} ops/s  host {host:3.0f} ms"
              + (f"  {sum(r[8] for r in mine)} repeated" if args.host_limit else ""))
    if args.servers_ab:  # each trial's pair: the same workload, lanes and repetition, back to back
        print("\nthe sampler beside a loaded run: CLIENT+servers / CLIENT, us/op, each trial's pair")
        for workload, lanes, tool in dict.fromkeys(r[:3] for r in rows):
            if tool.endswith("+servers"):
                continue
            plain = {r[9]: r[3] for r in rows if r[:3] == (workload, lanes, tool)}
            named = {r[9]: r[3] for r in rows if r[:3] == (workload, lanes, tool + "+servers")}
            ratios = sorted(named[k] / plain[k] for k in plain.keys() & named.keys())
            if ratios:
                print(f"  {workload.upper()} {lanes:3d} {tool:>14}  median {statistics.median(ratios):.3f}"
                      f"  (each: {', '.join(f'{x:.3f}' for x in ratios)})")


if __name__ == "__main__":
    main()
