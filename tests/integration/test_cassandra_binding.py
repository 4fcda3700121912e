"""The Cassandra binding against a real node (the session's `cassandra_node`), with both drivers.

Options, schema creation (custom field names, missing columns, drop), consistency levels and
error mapping (a keyspace with more replicas than nodes makes QUORUM and ALL unavailable), both
load drivers end to end, and faults: the node frozen (SIGSTOP) and killed mid-run under
`workbench run`; the run ends, counts the errors by kind, writes its report and exits with 1.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cassandra.cluster import Cluster as Driver

from tests.support.runs import wait_until_running
from workbench.bindings.base import READ, UPDATE, Status
from workbench.clusters.local import LocalProvider
from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.databases.cassandra.binding import CassandraBinding, kind_of
from workbench.errors import BindingError, ConfigError

pytestmark = pytest.mark.servers
ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = ROOT / "workbench" / "workloads"
DRIVERS = ("native", "python")
_names = itertools.count()


@pytest.fixture
def node(cassandra_node) -> tuple[str, int]:
    return cassandra_node.contact_points[0]


def fresh_keyspace() -> str:
    return f"it_{os.getpid()}_{next(_names)}"


def props_for(node: tuple[str, int], *extra: str) -> list[str]:
    host, port = node
    return ["db=cassandra", f"hosts={host}", f"port={port}", *extra]


def binding(overrides: list[str], phase: str = "run") -> CassandraBinding:
    spec, _ = spec_from_args([], overrides, "run")
    return CassandraBinding(spec, dict(spec.binding_properties), {"phase": phase, "worker": 0, "workers": 1})


def columns(node: tuple[str, int], keyspace: str, table: str = "usertable") -> list[str]:
    driver = Driver([node[0]], port=node[1], protocol_version=4)
    try:
        driver.connect()
        return list(driver.metadata.keyspaces[keyspace].tables[table].columns)
    finally:
        driver.shutdown()


def test_options_are_validated_and_default_like_ycsb():
    opts = binding(["db=cassandra"]).options
    assert (opts.hosts, opts.port, opts.keyspace, opts.driver, opts.protocol_version) == (
        ("127.0.0.1",), 9042, "ycsb", "native", 4)
    assert (opts.read_consistency, opts.write_consistency) == ("QUORUM", "QUORUM")
    assert opts.replication == {"class": "SimpleStrategy", "replication_factor": "1"}
    with pytest.raises(ConfigError, match=r"'cassandra\.readconsistency'.*cassandra\.readconsistencylevel"):
        binding(["db=cassandra", "cassandra.readconsistency=ONE"])
    with pytest.raises(ConfigError, match="cassandra.writeconsistencylevel='QUOROM'"):
        binding(["db=cassandra", "cassandra.writeconsistencylevel=QUOROM"])
    with pytest.raises(ConfigError, match="cassandra.protocolversion"):
        binding(["db=cassandra", "cassandra.protocolversion=6"])
    with pytest.raises(ConfigError, match="cassandra.ssl.cafile is not set"):
        binding(["db=cassandra", "cassandra.useSSL=true"])
    with pytest.raises(ConfigError, match="no such file"):
        binding(["db=cassandra", "cassandra.useSSL=true", "cassandra.ssl.cafile=/nonexistent.pem"])
    with pytest.raises(ConfigError, match="protocolversion=5 is not available with cassandra.driver=native"):
        binding(["db=cassandra", "cassandra.protocolversion=5", "cassandra.driver=native"])
    # a retired driver: one line naming what replaced it
    with pytest.raises(ConfigError, match="cassandra.driver=acsylla was retired") as refused:
        binding(["db=cassandra", "cassandra.driver=acsylla"])
    assert "cassandra.driver=native" in refused.value.hint and "cassandra.driver=python" in refused.value.hint
    with pytest.raises(ConfigError, match="cassandra.driver"):
        binding(["db=cassandra", "cassandra.driver=java"])
    opts = binding(["db=cassandra", "hosts=127.0.0.2, 127.0.0.3", "cassandra.readconsistencylevel=local_one",
                    "cassandra.replication.factor=3", "cassandra.driver=python"]).options
    assert opts.hosts == ("127.0.0.2", "127.0.0.3")
    assert (opts.read_consistency, opts.driver) == ("LOCAL_ONE", "python")
    assert opts.replication["replication_factor"] == "3"


def test_driver_error_kinds_use_the_python_driver_names():
    import cassandra
    from cassandra.protocol import ReadTimeoutErrorMessage

    assert kind_of(cassandra.OperationTimedOut()) == "OperationTimedOut"
    assert kind_of(ReadTimeoutErrorMessage(0x1200, "", {})) == "ReadTimeout"


@pytest.mark.parametrize("driver", DRIVERS)
async def test_unreachable_server_is_a_clear_binding_error(driver):
    with socket.socket() as s:  # a port on which nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = binding(["db=cassandra", "hosts=127.0.0.1", f"port={port}", f"cassandra.driver={driver}",
                  "cassandra.connecttimeoutmillis=1000"])
    t0 = time.monotonic()
    with pytest.raises(BindingError, match=f"cannot connect to Cassandra at 127.0.0.1:{port}"):
        await db.init()
    assert time.monotonic() - t0 < 10


def test_unreachable_server_fails_the_cli_with_one_line_and_status_2(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.run([sys.executable, "-m", "workbench", "load", "-db", "cassandra",
                           "-p", "hosts=127.0.0.1", "-p", f"port={port}", "-p", "recordcount=10", "-q"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"cannot connect to Cassandra at 127.0.0.1:{port}" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("driver", DRIVERS)
async def test_tls_against_a_plain_text_port_is_a_binding_error_not_a_hang(node, driver, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)
    db = binding(props_for(node, "cassandra.useSSL=true", f"cassandra.ssl.cafile={cert}",
                           f"cassandra.ssl.certfile={cert}", f"cassandra.ssl.keyfile={key}",
                           "cassandra.connecttimeoutmillis=2000", f"cassandra.driver={driver}"))
    t0 = time.monotonic()
    with pytest.raises(BindingError, match="cannot connect to Cassandra"):
        await db.init()
    assert time.monotonic() - t0 < 15


def test_bad_replication_class_is_a_binding_error(node):
    db = binding(props_for(node, f"cassandra.keyspace={fresh_keyspace()}",
                           "cassandra.replication.class=NoSuchStrategy"), "load")
    with pytest.raises(BindingError, match="creating keyspace .* failed"):
        asyncio.run(db.prepare())


async def test_schema_follows_the_workload_and_drop_only_applies_to_load(node):
    ks = fresh_keyspace()
    base = props_for(node, f"cassandra.keyspace={ks}", "fieldcount=3", "fieldnameprefix=Col")
    await binding(base, "load").prepare()
    assert columns(node, ks) == ["y_id", "Col0", "Col1", "Col2"]
    db = binding(base)
    await db.init()
    try:
        assert await db.insert("usertable", "k1", {"Col0": "a", "Col1": "b", "Col2": "c"}) is Status.OK
        assert await db.read("usertable", "k1", None) == (Status.OK, {"Col0": "a", "Col1": "b", "Col2": "c"})
        # a workload with more fields adds columns to the existing table and says so
        wider = binding([*base[:-2], "fieldcount=4", "fieldnameprefix=Col"], "load")
        await wider.prepare()
        assert columns(node, ks)[-1] == "Col3" and any("added column Col3" in n for n in wider.notes())
        # drop=true on a run keeps the data (and says why); on a load it starts clean
        keep = binding([*base, "cassandra.drop=true"], "run")
        await keep.prepare()
        assert any("applies to the load phase" in n for n in keep.notes())
        assert (await db.read("usertable", "k1", None))[0] is Status.OK
        await binding([*base, "cassandra.drop=true"], "load").prepare()
        db2 = binding(base)
        await db2.init()
        try:
            assert await db2.read("usertable", "k1", None) == (Status.NOT_FOUND, None)
        finally:
            await db2.cleanup()
    finally:
        await db.cleanup()


@pytest.mark.parametrize("driver", DRIVERS)
async def test_consistency_levels_apply_and_unavailable_is_an_error_by_kind(node, driver):
    # Three replicas wanted, one node: ONE works, QUORUM and ALL are Unavailable.
    ks = "it_rf3"
    base = props_for(node, f"cassandra.keyspace={ks}", "cassandra.replication.factor=3",
                     f"cassandra.driver={driver}")
    await binding(base, "load").prepare()
    one = binding([*base, "cassandra.writeconsistencylevel=ONE", "cassandra.readconsistencylevel=ALL"])
    await one.init()
    try:
        row = {f"field{i}": str(i) for i in range(10)}
        assert await one.insert("usertable", "rf3", row) is Status.OK
        assert await one.read("usertable", "rf3", None) == (Status.ERROR, None)
        assert await one.scan("usertable", "rf3", 5, None) == (Status.ERROR, [])
        assert one.error_kinds() == {"Unavailable": 2}
    finally:
        await one.cleanup()
    quorum = binding([*base, "cassandra.readconsistencylevel=ONE"])  # writes at the default QUORUM
    await quorum.init()
    try:
        assert await quorum.read("usertable", "rf3", ["field3"]) == (Status.OK, {"field3": "3"})
        assert await quorum.update("usertable", "rf3", {"field3": "x"}) is Status.ERROR
        assert await quorum.delete("usertable", "rf3") is Status.ERROR
        assert quorum.error_kinds() == {"Unavailable": 2}
    finally:
        await quorum.cleanup()


@pytest.mark.parametrize("driver", ["python", "native"])
async def test_a_step_the_driver_cannot_bind_is_an_error_and_its_sequence_goes_on(node, driver):
    # Requests are bound as the chain sends them: the first from our loop, the others in the
    # driver's callbacks (cassandra-driver: on its own thread; native: in the answer's callback
    # on the loop). Either way a value the driver cannot bind is that step's ERROR, and the steps
    # after it still run.
    base = props_for(node, f"cassandra.keyspace={fresh_keyspace()}", f"cassandra.driver={driver}")
    await binding(base, "load").prepare()
    db = binding(base)
    await db.init()
    try:
        bad = (UPDATE, "k", {"field0": 5})  # 5: not text

        async def run(*steps):
            out = await asyncio.wait_for(db.sequence("usertable", steps, lambda: True), 30)
            assert all(t0 <= t1 for _, t0, t1, _ in out)
            return [status for status, _, _, _ in out], out[-1][3]

        # the first request is sent from our loop, the others from the driver's thread
        assert await run(bad, (UPDATE, "k", {"field0": "a"}), (READ, "k", ["field0"])) == (
            [Status.ERROR, Status.OK, Status.OK], {"field0": "a"})
        assert await run((UPDATE, "k", {"field0": "b"}), bad, (READ, "k", ["field0"])) == (
            [Status.OK, Status.ERROR, Status.OK], {"field0": "b"})
        assert sum(db.error_kinds().values()) == 2  # counted by the kind the driver raised
    finally:
        await db.cleanup()


def run_phase(phase: str, files: list[str], overrides: list[str]):
    spec, _ = spec_from_args(files, overrides, phase)
    return asyncio.run(Controller(spec, phase).run())


def failures(outcome) -> dict:
    return {op: c for op, c in outcome.returns.items() if set(c) - {"OK"}}


@pytest.mark.parametrize("driver, protocol", [("python", "4"), ("python", "5"), ("native", "3")])
def test_drivers_and_protocols_run_workloads_with_integrity(node, driver, protocol):
    common = props_for(node, f"cassandra.keyspace={fresh_keyspace()}", f"cassandra.driver={driver}",
                       f"cassandra.protocolversion={protocol}", "recordcount=300", "operationcount=600",
                       "threadcount=8", "dataintegrity=true", "writeallfields=true", "maxscanlength=10")
    load = run_phase("load", [str(WORKLOADS / "workloada")], common)
    assert load.returns["INSERT"] == {"OK": 300}
    for letter in "aef":  # updates, token-range scans with inserts, read-modify-write
        result = run_phase("run", [str(WORKLOADS / f"workload{letter}")], common)
        assert result.outcome == "completed" and result.operations == 600, (letter, result.error)
        assert failures(result) == {}, (letter, failures(result))
        if "READ" in result.returns:
            assert result.returns["VERIFY"] == {"OK": result.returns["READ"]["OK"]}


def workbench_run(tmp_path: Path, overrides: list[str], *flags: str) -> subprocess.Popen:
    args = [a for p in overrides for a in ("-p", p)]
    return subprocess.Popen([sys.executable, "-m", "workbench", "run", "-P", str(WORKLOADS / "workloada"),
                             *args, *flags, "--export", f"json={tmp_path / 'run.json'}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)


def check_fault_report(proc: subprocess.Popen, t_fault: float, tmp_path: Path, kind: str) -> list[int]:
    """Assert what every fault run must show; returns operations per interval."""
    out, err = proc.communicate(timeout=60)
    # the fault came after the run started: maxexecutiontime (<= 10 s) plus a bounded stop
    assert time.monotonic() - t_fault < 25, "the run must end soon after maxexecutiontime"
    assert proc.returncode == 1, (proc.returncode, err[-3000:])  # 1: operations failed (bench.py)
    assert "[OVERALL], RunTime(ms)" in out and "Return=ERROR" in out
    assert "failed operations by kind: " in err and f"{kind}=" in err, err[-2000:]
    run = json.loads((tmp_path / "run.json").read_text())["run"]
    assert run["outcome"] == "completed" and run["environment"]["error_kinds"][kind] > 0
    ops = [i["operations"] for i in run["intervals"]]
    return ops


# Paced, each operation waits for its slot; unpaced, lanes run sequences (Binding.sequence),
# which on cassandra-driver are callback chains on the driver's thread.
@pytest.mark.parametrize("driver,paced", [("python", False), ("native", True), ("native", False)])
def test_node_frozen_mid_run_times_out_counts_errors_and_recovers(cassandra_node, tmp_path, driver, paced):
    node = cassandra_node.contact_points[0]
    common = props_for(node, f"cassandra.keyspace={fresh_keyspace()}", "recordcount=500",
                       f"cassandra.driver={driver}")
    assert run_phase("load", [], [*common, "threadcount=8"]).operations == 500
    provider = LocalProvider(state_dir=cassandra_node.run_dir.parent.parent, progress=False)
    name = cassandra_node.nodes[0].name
    # Paced, 32 lanes: 1000 ops/s is reachable while each operation takes up to 30 ms, as on
    # a machine whose cores two busy loops pin (8 lanes reached 430-650 ops/s there).
    proc = workbench_run(tmp_path, [*common, "operationcount=0", "maxexecutiontime=10",
                                    "cassandra.readtimeoutmillis=1000", "status.interval=1"],
                         *(["-threads", "32", "-target", "1000"] if paced else ["-threads", "8"]))
    try:
        # paced: 700 of 1000 ops/s, every lane connected; unpaced, any steady rate: a loaded
        # machine's unpaced python-driver run took 5 of its 10 s to reach 700 ops/s (CI
        # rehearsal), and the thaw then left it 1 s to show it went on
        wait_until_running(proc, 700 if paced else 200)
        time.sleep(1.0)
        provider.pause(cassandra_node.name, name)
        t_fault = time.monotonic()
        time.sleep(3.0)
    finally:
        provider.resume(cassandra_node.name, name)
    ops = check_fault_report(proc, t_fault, tmp_path, "OperationTimedOut")
    low = min(range(len(ops) - 1), key=ops.__getitem__)
    assert ops[low] < max(ops) / 10, ops  # the freeze is visible
    assert max(ops[low + 1:]) > max(ops) / 3, ops  # and the run went on once the node thawed


@pytest.mark.parametrize("driver", ["python", "native"])
def test_node_killed_mid_run_with_two_workers_ends_and_counts_errors(cassandra_node, tmp_path, driver):
    node = cassandra_node.contact_points[0]
    common = props_for(node, f"cassandra.keyspace={fresh_keyspace()}", "recordcount=500",
                       f"cassandra.driver={driver}")
    assert run_phase("load", [], [*common, "threadcount=8"]).operations == 500
    provider = LocalProvider(state_dir=cassandra_node.run_dir.parent.parent, progress=False)
    name = cassandra_node.nodes[0].name
    # 16 lanes a worker: each worker's 500 ops/s is reachable while an operation takes up to
    # 30 ms (with 4 lanes a worker, two busy loops on the cores held the run to 430-650 ops/s,
    # and its 8 s ended before it reached 700: CI rehearsal, session 39).
    proc = workbench_run(tmp_path, [*common, "operationcount=0", "maxexecutiontime=10",
                                    "cassandra.readtimeoutmillis=1000", "status.interval=1"],
                         "-threads", "32", "-target", "1000", "--workers", "2")
    try:
        wait_until_running(proc, 700)  # both workers (500 ops/s each) are connected
        time.sleep(1.0)
        provider.kill(cassandra_node.name, name)
        check_fault_report(proc, time.monotonic(), tmp_path, "NoHostAvailable")
    finally:
        if proc.poll() is None:
            proc.kill()
        provider.restart(cassandra_node.name, name)  # the node serves the other tests again
