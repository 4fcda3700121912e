"""The HBase binding against a real HBase + Thrift gateway (the session's `hbase_server`).

Options, a transport/protocol mismatch, pre-split regions, client-side buffering, the WAL
setting, the asyncio client on a framed gateway and with fewer connections than lanes, and a
fault: the gateway is frozen (SIGSTOP) mid-run and thawed again.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import happybase
import pytest

from tests.support.runs import wait_until_running
from workbench.bindings.registry import make_binding
from workbench.clusters import ports
from workbench.config.keys import build_key_name
from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.databases.hbase.binding import HBaseBinding
from workbench.databases.hbase.cluster import probe
from workbench.databases.hbase.native import NativeBinding
from workbench.databases.hbase.schema import split_points
from workbench.errors import BindingError, ConfigError

pytestmark = pytest.mark.servers
ROOT = Path(__file__).resolve().parents[2]
WORKLOADA = str(ROOT / "workbench" / "workloads" / "workloada")
_names = itertools.count()


@pytest.fixture
def hbase(hbase_server):
    """(cluster, -p overrides for a fresh table on it)."""
    host, port = hbase_server.contact_points[0]
    table = f"hbase_it_{os.getpid()}_{next(_names)}"
    return hbase_server, ["db=hbase", f"hbase.host={host}", f"hbase.port={port}", f"table={table}"]


def run_phase(phase: str, overrides: list[str]):
    spec, _ = spec_from_args([WORKLOADA], overrides, phase)
    return asyncio.run(Controller(spec, phase).run())


def region_row_counts(cluster, table: str) -> list[int]:
    host, port = cluster.contact_points[0]
    conn = happybase.Connection(host, port, timeout=30000)
    try:
        t = conn.table(table)
        return [sum(1 for _ in t.scan(row_start=r["start_key"] or None, row_stop=r["end_key"] or None,
                                      filter=b"KeyOnlyFilter()"))
                for r in t.regions()]
    finally:
        conn.close()


def make(props: list[str], threads: int = 8, workers: int = 1) -> HBaseBinding:
    spec, _ = spec_from_args([], ["db=hbase", f"threadcount={threads}", *props], "run")
    return make_binding(spec, {"workers": workers})


def test_options_are_validated():
    with pytest.raises(ConfigError, match=r"'hbase\.hots'.*hbase\.host"):
        make(["hbase.hots=x"])
    for value in ("ASYNC_WAL", "FSYNC_WAL"):
        with pytest.raises(ConfigError, match=f"durability={value} cannot be expressed"):
            make([f"durability={value}"])
    with pytest.raises(ConfigError, match="hbase.transport"):
        make(["hbase.transport=zlib"])
    assert make([], threads=10, workers=3).options.pool == 4  # lanes of the busiest worker
    db = make(["hbase.pool=2", "durability=SKIP_WAL", "clientbuffering=true", "writebuffersize=1000"])
    assert (db.options.pool, db.options.wal, db.options.writebuffersize) == (2, False, 1000)
    assert any("write buffer" in n for n in db.notes()) and any("SKIP_WAL" in n for n in db.notes())
    assert make([]).notes() == []


def test_transport_mismatch_is_a_clear_error_not_a_hang(hbase):
    _, props = hbase
    spec, _ = spec_from_args([], [*props, "hbase.transport=framed", "hbase.timeout=2000"], "load")
    db = make_binding(spec, {"phase": "load"})
    t0 = time.monotonic()
    with pytest.raises(BindingError, match="hbase.transport / hbase.protocol match"):
        asyncio.run(db.prepare())
    assert time.monotonic() - t0 < 8.0  # framed waits for hbase.timeout


def test_the_client_is_chosen_by_hbase_client_and_retired_ones_name_their_replacement():
    assert type(make([])) is NativeBinding and make([]).options.client == "native"
    assert type(make(["hbase.client=async"])) is HBaseBinding
    with pytest.raises(ConfigError, match="hbase.client=happybase was retired") as refused:
        make(["hbase.client=happybase"])
    assert "hbase.client=native" in refused.value.hint and "hbase.client=async" in refused.value.hint
    with pytest.raises(ConfigError, match="hbase.protocol=compact was served by the happybase client"):
        make(["hbase.protocol=compact"])
    with pytest.raises(ConfigError, match="hbase.client"):
        make(["hbase.client=java"])


def test_fewer_connections_than_lanes_take_turns(hbase):
    """hbase.pool=2 with 8 lanes: lanes wait for a free connection; nothing fails or hangs, and
    no more than 2 connections are ever opened."""
    _, props = hbase
    assert run_phase("load", [*props, "recordcount=300", "threadcount=8"]).operations == 300
    spec, _ = spec_from_args([WORKLOADA], [*props, "recordcount=300", "operationcount=2000",
                                           "threadcount=8", "hbase.pool=2", "hbase.client=async"], "run")
    opened = []
    original = HBaseBinding.cleanup

    async def spy(self):
        if self.pool is not None:  # the worker's binding (the one that ran prepare() has none)
            opened.append(self.pool.opened)
        await original(self)

    HBaseBinding.cleanup = spy
    try:
        outcome = asyncio.run(Controller(spec, "run").run())
    finally:
        HBaseBinding.cleanup = original
    assert outcome.outcome == "completed", outcome.error
    assert sum(outcome.returns["READ"].values()) + sum(outcome.returns["UPDATE"].values()) == 2000
    assert set(outcome.returns["READ"]) == {"OK"} and set(outcome.returns["UPDATE"]) == {"OK"}
    assert opened == [2]


def test_the_asyncio_client_on_a_framed_gateway(hbase, tmp_path):
    """A second Thrift gateway, started -threadpool -f (framed) on the session's HBase with the
    provider's own command line: load, run and scan through it with hbase.transport=framed."""
    cluster, props = hbase
    thrift = cluster.node("thrift")
    port = next(p for p in range(thrift.port + 1, thrift.port + 10) if ports.is_free(thrift.address, p))
    argv = list(thrift.argv)
    at = argv.index("-p")
    argv[at + 1] = str(port)
    argv[argv.index("start"):argv.index("start")] = ["-f"]
    log = tmp_path / "framed-gateway.log"
    argv = [f"-Dworkbench.log.file={log}" if a.startswith("-Dworkbench.log.file=") else a for a in argv]
    with (tmp_path / "framed-gateway.console.log").open("wb") as out:
        gateway = subprocess.Popen(argv, cwd=thrift.dir, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not probe(thrift.address, port, 10000, transport="framed"):
            assert gateway.poll() is None, log.read_text()[-2000:]
            assert time.monotonic() < deadline, "the framed gateway did not serve within 120 s"
            time.sleep(0.2)
        framed = [p if not p.startswith("hbase.port=") else f"hbase.port={port}" for p in props]
        framed += ["hbase.transport=framed", "hbase.client=async"]
        load = run_phase("load", [*framed, "recordcount=300", "threadcount=4"])
        assert load.returns["INSERT"] == {"OK": 300}
        run = run_phase("run", [*framed, "recordcount=300", "operationcount=1000", "threadcount=4",
                                "readproportion=0.4", "updateproportion=0.4", "scanproportion=0.2",
                                "maxscanlength=50"])
        assert run.outcome == "completed", run.error
        for op in ("READ", "UPDATE", "SCAN"):
            assert set(run.returns[op]) == {"OK"}, run.returns
        # and the happybase client on the same gateway sees the rows the asyncio client wrote
        assert sum(region_row_counts(cluster, props[-1].removeprefix("table="))) == 300
    finally:
        gateway.terminate()
        try:
            gateway.wait(timeout=30)
        except subprocess.TimeoutExpired:
            gateway.kill()
            gateway.wait()


def test_presplit_creates_regions_with_balanced_keys(hbase):
    cluster, props = hbase
    zk = f"hbase.zookeeper={cluster.contact_points[0][0]}:{cluster.spec.zookeeper_port}"
    common = [*props, zk, "hbase.presplit=4", "recordcount=2000", "threadcount=8",
              "fieldcount=1", "fieldlength=10"]
    load = run_phase("load", common)
    assert load.returns["INSERT"] == {"OK": 2000}
    counts = region_row_counts(cluster, props[-1].removeprefix("table="))
    assert len(counts) == 4 and sum(counts) == 2000
    assert min(counts) >= 400, counts  # quantile split points: about 500 each


def test_split_points_balance_ordered_and_hashed_keys():
    for order, padding in (("ordered", 1), ("ordered", 8), ("hashed", 1)):
        spec, _ = spec_from_args([], [f"insertorder={order}", f"zeropadding={padding}",
                                      "recordcount=10000"], "load")
        points = split_points(spec, 8)
        keys = sorted(build_key_name(k, padding, order == "ordered") for k in range(10000))
        edges = [0, *(keys.index(p) for p in points), len(keys)]
        shares = [b - a for a, b in itertools.pairwise(edges)]
        assert len(shares) == 8 and max(shares) - min(shares) <= 2, (order, shares)


def test_clientbuffering_flushes_at_cleanup_and_the_cli_prints_the_note(hbase, tmp_path):
    cluster, props = hbase
    args = [a for p in [*props, "recordcount=300", "clientbuffering=true", "writebuffersize=60000"]
            for a in ("-p", p)]
    done = subprocess.run([sys.executable, "-m", "workbench", "load", "-P", WORKLOADA, *args,
                           "-threads", "4", "-q"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "workbench: note: clientbuffering=true: INSERT and UPDATE latencies measure" in done.stderr
    returns = dict(line.split(", ")[1:] for line in done.stdout.splitlines()
                   if line.startswith("[INSERT], Return="))
    # ~1.1 kB rows, 60 kB buffer: most puts are buffered, a few flush it and wait for the server.
    assert int(returns["Return=BATCHED_OK"]) > 250 and 0 < int(returns.get("Return=OK", 0)) < 10
    assert sum(region_row_counts(cluster, props[-1].removeprefix("table="))) == 300


def test_durability_skip_wal_bypasses_the_write_ahead_log(hbase):
    cluster, props = hbase
    wals = cluster.node("master").dir / "data" / "WALs"

    def wal_bytes() -> int:
        return sum(f.stat().st_size for f in wals.glob("*/*") if not f.name.endswith(".meta"))

    growth = {}
    for durability in ("SKIP_WAL", "SYNC_WAL"):
        before = wal_bytes()
        table = f"{props[-1]}_{durability.lower()}"
        load = run_phase("load", [*props[:-1], table, "recordcount=400", "threadcount=4",
                                  f"durability={durability}"])
        assert load.returns["INSERT"] == {"OK": 400}
        growth[durability] = wal_bytes() - before
    assert growth["SKIP_WAL"] < 20_000 < 300_000 < growth["SYNC_WAL"], growth


def freeze_mid_run(hbase, suite_servers, tmp_path, client: str, node: str):
    """Load 500 rows, start a 10 s workload A run with hbase.timeout=1500 and the given client,
    freeze `node` (SIGSTOP) for 3 s once it runs, thaw it. (seconds taken, stdout, stderr,
    return code, operations per interval)."""
    cluster, props = hbase
    assert run_phase("load", [*props, "recordcount=500", "threadcount=4"]).operations == 500
    provider = suite_servers.provider
    report = tmp_path / "run.json"
    args = [a for p in [*props, "recordcount=500", "operationcount=0", "maxexecutiontime=10",
                        "hbase.timeout=1500", "status.interval=1", f"hbase.client={client}"]
            for a in ("-p", p)]
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "run", "-P", WORKLOADA, *args,
                             "-threads", "4", "--export", f"json={report}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        wait_until_running(proc, 100)
        time.sleep(1.0)
        provider.pause(cluster.name, node)
        time.sleep(3.0)
    finally:
        provider.resume(cluster.name, node)
    out, err = proc.communicate(timeout=90)
    ops = [i["operations"] for i in json.loads(report.read_text())["run"]["intervals"]]
    return time.monotonic() - t0, out, err, proc.returncode, ops


def test_gateway_frozen_mid_run_errors_counted_report_written(hbase, suite_servers, tmp_path):
    # reads and updates through the gateway (native bypasses it)
    took, out, err, code, ops = freeze_mid_run(hbase, suite_servers, tmp_path, "async", "thrift")
    assert took < 30  # 10 s of run, then a bounded stop: no hang
    assert code == 1, err  # operations failed (bench.py: 1), the run itself completed
    assert "[OVERALL], RunTime(ms)" in out and "Return=ERROR" in out
    assert "failed operations by kind: TimeoutError=" in err  # a socket timeout
    low = min(range(len(ops) - 1), key=ops.__getitem__)
    assert ops[low] < max(ops) / 10, ops  # the freeze is visible
    assert max(ops[low + 1:]) > max(ops) / 3, ops  # and the run went on once the gateway thawed


def test_native_client_regionserver_frozen_mid_run_errors_counted_run_goes_on(hbase, suite_servers,
                                                                              tmp_path):
    """hbase.client=native talks to the RegionServer itself: freezing it (SIGSTOP on the master
    JVM, which hosts it) fails the calls in flight with TimeoutError after hbase.timeout, and the
    run goes on once it thaws, on a fresh connection."""
    _, _, err, code, ops = freeze_mid_run(hbase, suite_servers, tmp_path, "native", "master")
    assert code == 1, err  # operations failed, the run itself completed
    assert "failed operations by kind: TimeoutError=" in err
    low = min(range(len(ops) - 1), key=ops.__getitem__)
    assert ops[low] < max(ops) / 10, ops
    # and it went on once the RegionServer thawed (under two busy loops a thawed HBase came back to
    # 1,881 of 6,272 ops/s within 6 s: a fifth, not a third)
    assert max(ops[low + 1:]) > max(ops) / 5, ops


def split_region(cluster, table: str, row: str) -> str:
    """Split `table`'s region at `row` through HBase's Admin API (tools/HBaseSplit.java, run on the
    cluster's own conf/ and jars); its output line."""
    from workbench.clusters import settle

    master = cluster.node("master")
    conf = master.dir / "conf"
    proc = settle.java(master, [f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
                                 f"-Dworkbench.log.file={master.dir / 'logs' / 'split.log'}",
                                 f"-Dhbase.log.dir={master.dir / 'logs'}",
                                 f"-Djava.io.tmpdir={master.dir / 'tmp'}", "-cp", settle.classpath(master),
                                 str(Path(__file__).parent / "tools" / "HBaseSplit.java"), table, row, "60"],
                        120)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    return proc.stdout.strip()


def test_native_client_follows_a_region_split_mid_run_and_counts_it(hbase, tmp_path):
    """The table's one region is split in two while the native client reads and updates it (8
    lanes, 400 ops/s): requests to the parent region answer NotServingRegionException, the client
    looks the regions up again and sends them anew to the daughter that holds their row. No
    operation fails; the run counts what it did (client_counts), and its per-region figures show
    both daughters serving."""
    cluster, props = hbase
    table = dict(p.split("=", 1) for p in props)["table"]
    assert run_phase("load", [*props, "recordcount=2000", "threadcount=8"]).operations == 2000
    report = tmp_path / "run.json"
    args = [a for p in [*props, "recordcount=2000", "operationcount=0", "maxexecutiontime=600",
                        "status.interval=1", "hbase.client=native", "target=400"] for a in ("-p", p)]
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "run", "-P", WORKLOADA, *args,
                             "-threads", "8", "--export", f"json={report}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        wait_until_running(proc, 300)
        said = split_region(cluster, table, "user5")
        assert said.endswith(": 2 regions"), said
        time.sleep(3.0)  # requests to both daughters, on the regions looked up again
        proc.send_signal(2)  # SIGINT: the run stops and reports what it did
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    run = json.loads(report.read_text())["run"]
    failed = sum(n for op in run["measurements"] for status, n in op.get("returns", {}).items()
                 if status not in ("OK", "NOT_FOUND"))
    assert failed == 0, (run["environment"].get("error_kinds"), err[-2000:])
    moved = run["environment"].get("client_counts", {})
    assert moved.get("requests retried after a move", 0) >= 1, (moved, err[-2000:])
    assert 1 <= moved.get("region lookups after a move", 0) <= moved["requests retried after a move"]
    served = {name for i in run["intervals"][-2:] for name, (requests, _) in (i["regions"] or {}).items()
              if requests}
    assert len(served) == 2 and all(name.startswith(f"{table},") for name in served), served
