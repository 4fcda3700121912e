"""The mongodb binding from the command line, against FerretDB servers the suite started: bad input
is one line and exit status 2 with nothing hanging, and the server killed mid-run is counted as
errors by kind while the run goes on, its results kept."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.runs import wait_until_running

pytestmark = pytest.mark.servers
WORKLOADA = str(Path(__file__).resolve().parents[2] / "workbench" / "workloads" / "workloada")


def workbench(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_STORE=str(tmp_path / "runs.db"))
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=tmp_path)


def one_line(proc: subprocess.CompletedProcess) -> str:
    """The one error line (progress lines, "recording run N", may come before it)."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("workbench: error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return errors[0]


def test_no_server_a_wrong_url_and_a_refused_login_are_one_line_each(ferretdb_secure, tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        nobody = probe.getsockname()[1]
    common = ["run", "-db", "mongodb", "-P", WORKLOADA, "-p", "operationcount=10"]
    began = time.monotonic()
    line = one_line(workbench(tmp_path, *common, "-p", f"mongodb.url=mongodb://127.0.0.1:{nobody}/ycsb",
                              "-p", "mongodb.connecttimeout=2000"))
    assert f"no MongoDB server answered at 127.0.0.1:{nobody}" in line
    assert time.monotonic() - began < 60  # no hang: the connect timeout, then out
    line = one_line(workbench(tmp_path, *common, "-p", "mongodb.url=http://127.0.0.1:27017/ycsb"))
    assert "mongodb.url" in line and "mongodb://HOST:PORT/DATABASE" in line
    line = one_line(workbench(tmp_path, *common, "-p", "mongodb.colour=blue"))
    assert "mongodb.colour" in line

    host, port = ferretdb_secure.contact_points[0]
    tls = f"tls=true&tlsCAFile={ferretdb_secure.tls_ca}"
    line = one_line(workbench(tmp_path, *common, "-p",
                              f"mongodb.url=mongodb://ferretdb:wrong@{host}:{port}/ycsb?authMechanism=PLAIN&{tls}"))
    assert "refused the credentials" in line
    # FerretDB 1.x knows PLAIN only: a mechanism it does not support is named, not hung on
    user, password = ferretdb_secure.credentials
    line = one_line(workbench(tmp_path, *common, "-p", f"mongodb.url=mongodb://{user}:{password}@{host}:{port}"
                              f"/ycsb?authMechanism=SCRAM-SHA-256&{tls}"))
    assert "SCRAM-SHA-256" in line or "mechanism" in line.lower(), line
    assert password not in line


@pytest.mark.parametrize("fault", ["kill", "pause"])
def test_the_server_lost_mid_run_is_counted_and_the_run_goes_on_after(suite_servers, tmp_path, fault):
    """Killed (then restarted) or frozen (then resumed) for 3 s: the requests it does not answer
    are ERRORs by kind (a frozen server's after mongodb.timeout), and the run goes on."""
    spec = dataclasses.replace(suite_servers.spec("ferretdb_server"), name=f"t-fdb-{fault}-{os.getpid()}")
    suite_servers.started.append(spec.name)
    provider = suite_servers.provider
    cluster = provider.up(spec)
    try:
        host, port = cluster.contact_points[0]
        props = ["-db", "mongodb", "-p", f"mongodb.url=mongodb://{host}:{port}/ycsb?w=1",
                 "-p", "recordcount=300"]
        load = workbench(tmp_path, "load", "-P", WORKLOADA, *props, "-p", "mongodb.drop=true", "-q")
        assert load.returncode == 0, load.stderr
        report = tmp_path / "run.json"
        proc = subprocess.Popen(
            [sys.executable, "-m", "workbench", "run", "-P", WORKLOADA, *props, "-p", "operationcount=0",
             "-p", "maxexecutiontime=12", "-p", "mongodb.timeout=1500", "-p", "mongodb.connecttimeout=1500",
             "-p", "status.interval=1", "-threads", "4", "--export", f"json={report}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
            env=dict(os.environ, WORKBENCH_STORE=str(tmp_path / "runs.db")))
        try:
            wait_until_running(proc, 20)
            getattr(provider, fault)(cluster.name, "ferretdb")
            # three status intervals with the server down or frozen: twice mongodb.timeout (a
            # freeze of 2 s against its 1.5 s left requests that waited 2.01 s and were answered)
            time.sleep(3.0)
        finally:
            if fault == "kill":
                provider.restart(cluster.name, "ferretdb")
            else:
                provider.resume(cluster.name, "ferretdb")
        out, err = proc.communicate(timeout=120)
    finally:
        provider.down(cluster.name)
    # pymongo 4.20's async client sometimes deadlocks after its server was killed and restarted
    # under load (seen 3 times in 11 under two busy loops, 2026-11-30): its lanes wait in its own
    # Condition.wait, whose re-acquire of the lock swallows every cancellation
    # (pymongo/_asyncio_lock.py), or its close never returns. The workbench's part is then to end
    # the run all the same, say where it was held, and keep what it measured; the run cannot go on.
    # A lane cancelled in that wait may end with the lock's RuntimeError instead (rehearsal 70:
    # then a traceback, no YCSB text): a failed phase, in one line that names pymongo's lock.
    deadlocked = "pymongo/_asyncio_lock.py" in err or "pymongo's client did not close" in err
    if deadlocked:
        print(f"pymongo's client deadlocked after the restart ({fault}); the run said: "
              f"{[line for line in err.splitlines() if 'pymongo' in line]}")
    # operations failed (exit status 1), the run itself completed; a deadlocked client's lanes are
    # ended by force, or fail (exit status 2, one line)
    failed = "ended by force" in err or "(pymongo/_asyncio_lock.py:" in err
    assert proc.returncode == (2 if failed else 1), err  # (a crash: 1, and no YCSB text below)
    assert not (failed and not deadlocked), err
    assert "[OVERALL], RunTime(ms)" in out and "Return=ERROR" in out, err[-4000:]
    assert "failed operations by kind:" in err
    if fault == "pause":
        assert "NetworkTimeout" in err, err  # answered by no one within mongodb.timeout
    intervals = json.loads(report.read_text())["run"]["intervals"]
    ops = [i["operations"] for i in intervals]
    low = min(range(len(ops) - 1), key=ops.__getitem__)
    # per-node figures: every command went to the one server, and its failures are counted there
    assert {node for i in intervals for node in i["nodes"]} == {f"{host}:{port}"}
    sent = sum(i["nodes"][f"{host}:{port}"][0] for i in intervals if i["nodes"])
    # (an operation that found no connection to take sent no command: no request to count)
    assert sum(ops) * 0.95 <= sent <= sum(ops) + 10
    assert sum(i["nodes"][f"{host}:{port}"][1] for i in intervals if i["nodes"]) > 0
    assert ops[low] < max(ops) / 10, ops  # the outage is visible
    if not deadlocked:
        assert max(ops[low + 1:]) > max(ops) / 3, ops  # and the run went on once the server was back
