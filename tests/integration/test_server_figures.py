"""The servers' side of a run on a real Cassandra node (issue 54, 1): `workbench run --cluster`
samples the node's JVM once a second, and its JSON export carries `intervals[].server[address]
["cpu"]`; added up over the run, that CPU is within 10% of what /proc says the JVM used over the
same seconds (read here, by the test, on its own clock)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.server_logs import allowed_gaps, cpu_at, few_skips
from workbench.drive.server_sampler import LEAD_S

pytestmark = pytest.mark.servers

ROOT = Path(__file__).resolve().parents[2]


def _jvm_cpu(pid: int) -> tuple[int, float]:
    """(start time, user + system seconds) of a process, read here from /proc/PID/stat (not with
    the code under test)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[19]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_run_on_a_cassandra_node_records_its_cpu(tmp_path, suite_servers, cassandra_node):
    # the node as it is now: a test before this one may have killed and restarted it (a new pid;
    # the session fixture still holds the first one's)
    node = suite_servers.provider.status(cassandra_node.name).nodes[0]
    assert node.status == "running", node
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir),
               WORKBENCH_STORE=str(tmp_path / "runs.db"))
    common = ["--cluster", cassandra_node.name, "-P", str(ROOT / "workbench" / "workloads" / "workloada"),
              "-p", "recordcount=2000", "-p", "table=server_figures", "-threads", "16", "-q"]
    load = subprocess.run([sys.executable, "-m", "workbench", "load", *common, "-p", "cassandra.drop=true"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert load.returncode == 0, load.stderr

    samples: list[tuple[float, float]] = []
    stop = threading.Event()

    failed: list[BaseException] = []

    def watch() -> None:
        try:
            while not stop.is_set():
                started, cpu = _jvm_cpu(node.pid)
                assert started == node.start_time, "the JVM the test watches is not the node's"
                samples.append((time.time(), cpu))
                stop.wait(0.05)
        except BaseException as exc:  # said by the test, not lost on the thread
            failed.append(exc)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out = tmp_path / "run.json"
    try:
        run = subprocess.run([sys.executable, "-m", "workbench", "run", *common,
                              "-p", "operationcount=100000000", "-p", "maxexecutiontime=10",
                              "--export", f"json={out}"],
                             capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    finally:
        stop.set()
        watcher.join()
    assert not failed, failed
    assert run.returncode == 0, run.stderr
    doc = json.loads(out.read_text())["run"]
    whole = [i for i in doc["intervals"] if i["duration_s"] > 0.5]
    assert len(whole) >= 8
    # A second whose process answer came late has no CPU figure (a loaded machine's; the notes
    # count it): the node's other sources (CQL, a late GC log's pauses) may still fill it
    def cpu_of(i: dict) -> bool:
        return "cpu" in i["server"].get(node.address, {})

    figures = [i["server"][node.address] for i in whole if cpu_of(i)]
    assert len(figures) >= len(whole) - allowed_gaps(len(whole)), whole
    assert all(f["cpu"] > 0 and f["rss_bytes"] > 100e6 for f in figures)
    clients = [i["server"]["client"] for i in whole if "cpu" in i["server"].get("client", {})]
    assert len(clients) >= len(whole) - allowed_gaps(len(whole)) and all(c["cpu"] > 0 for c in clients)
    # second k's figures cover the time between the asks before seconds k-1 and k: from the
    # second interval on, exactly the seconds [1 - LEAD_S, N - LEAD_S] of the run's clock, less
    # the seconds whose figures came late
    started = doc["started_at"]

    def used(k: int) -> float:  # what /proc says the JVM used in second k of the run
        return cpu_at(samples, started + k - LEAD_S) - cpu_at(samples, started + k - 1 - LEAD_S)

    ks = [round(i["elapsed_s"]) for i in whole[1:] if cpu_of(i)]
    recorded = sum(i["server"][node.address]["cpu"] for i in whole[1:] if cpu_of(i))
    seen = sum(used(k) for k in ks)
    assert seen > 2.0  # the node was busy: the comparison says something
    assert recorded == pytest.approx(seen, rel=0.10)
    few_skips(doc["server_notes"], ("process", "client"))
