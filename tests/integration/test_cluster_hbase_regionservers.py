"""HBase with RegionServers of their own (ZooKeeper, the master, rs1-rs3, the gateway as JVMs of
their own), one killed and restarted, a RegionServer added and removed under load, and one
killed while it joins.

These tests start their own cluster (the `hbase_cluster3` fixture: free ports and loopback
addresses) and touch none of the session's other servers: in the full suite they run in the
fast tier's network namespace once it is done (tests/support/alongside.py OWN_CLUSTERS)."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.servers


def test_hbase_with_regionservers_of_their_own_serves_and_lists_them(hbase_cluster3, suite_servers):
    """ZooKeeper, the master, rs1-rs3 (each on its own address) and the gateway; the master has
    registered all three (their nodes in ZooKeeper); rs2 killed and restarted registers anew."""
    from workbench.databases.hbase import cluster as hbase_local

    spec = hbase_cluster3.spec
    status = suite_servers.provider.status(hbase_cluster3.name)
    assert [(n.name, n.address, n.status) for n in status.nodes] == [
        ("zookeeper", spec.address, "running"), ("master", spec.address, "running"),
        *((f"rs{i}", spec.node_address(i), "running") for i in (1, 2, 3)),
        ("thrift", spec.address, "running")]
    assert [s.split(",")[:2] for s in hbase_local.live_servers(spec)] == [
        [spec.node_address(i), str(spec.regionserver_port)] for i in (1, 2, 3)]
    # rs2 killed: its node stays in ZooKeeper until its session times out; restarted, the
    # restart returns once the new rs2 (a later start code) has registered, not on the old node
    provider = suite_servers.provider
    old = next(s for s in hbase_local.live_servers(spec) if s.startswith(spec.node_address(2) + ","))
    provider.kill(hbase_cluster3.name, "rs2")
    after = provider.restart(hbase_cluster3.name, "rs2")
    assert after.node("rs2").status == "running"
    codes = [int(s.split(",")[2]) for s in hbase_local.live_servers(spec)
             if s.startswith(spec.node_address(2) + ",")]
    assert max(codes) > int(old.split(",")[2]), (old, codes)


def test_a_regionserver_added_and_removed_under_load_takes_regions_and_gives_them_back(
        hbase_cluster3, suite_servers, tmp_path):
    """`add_node` on the running cluster while the native client runs workload A (8 lanes, 300
    ops/s) on a table of 12 regions: rs4 reports for duty, the balancer moves regions to it, and
    the client follows them (region lookups after a move, counted) and sends requests there (the
    run's per-node figures). `remove_node` moves its regions away again (RegionMover) and stops
    it. No operation fails; every stage is an event of the run, at the moment the provider got
    there; rs1-rs3 hold every region again afterwards."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from tests.support.runs import Drained, wait_until_running
    from workbench.clusters import ports
    from workbench.databases.hbase import cluster as hbase_local

    provider, name, spec = suite_servers.provider, hbase_cluster3.name, hbase_cluster3.spec
    rs4 = f"{spec.node_address(4)}:{spec.regionserver_port}"
    assert ports.is_free(spec.node_address(4), spec.regionserver_port), f"{rs4} is taken"
    workload = str(Path(__file__).resolve().parents[2] / "workbench" / "workloads" / "workloada")
    env = dict(os.environ, WORKBENCH_STORE=str(tmp_path / "runs.db"),
               WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    props = ["--cluster", name, "-P", workload, "-p", "table=elastic", "-p", "recordcount=3000"]
    load = subprocess.run([sys.executable, "-m", "workbench", "load", *props, "-q", "-p", "hbase.presplit=12",
                           "-threads", "4"], capture_output=True, text=True, env=env, timeout=300)
    assert load.returncode == 0, load.stderr[-2000:]
    before = hbase_local.regions_per_server(spec)
    assert sum(before.values()) == 12 and len(before) == 3 and rs4 not in before, before
    moments: dict[str, float] = {}
    provider.progress = lambda event: moments.setdefault(event.stage, time.time())
    report = tmp_path / "run.json"
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "run", *props,
                             "-p", "hbase.client=native", "-p", "operationcount=0",
                             "-p", "maxexecutiontime=600", "-p", "status.interval=1",
                             "-threads", "8", "-target", "300", "--export", f"json={report}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_until_running(proc, 200, timeout=120)
        Drained(proc)  # read on, so that its pipe never fills
        grown = provider.add_node(name)
        assert grown.node("rs4").address == spec.node_address(4) and grown.node("rs4").status == "running"
        held = hbase_local.regions_per_server(spec)
        assert held.get(rs4, 0) >= 1 and sum(held.values()) == 12, held
        time.sleep(4)  # requests to rs4's regions
        moments["remove"] = time.time()
        shrunk = provider.remove_node(name, "rs4")
        assert [n.name for n in shrunk.nodes] == ["zookeeper", "master", "rs1", "rs2", "rs3", "thrift"]
        moments["removed"] = time.time()
        after = hbase_local.regions_per_server(spec)
        assert rs4 not in after and sum(after.values()) == 12, after
        time.sleep(3)  # requests to rs1-rs3 only
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        provider.progress = False
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if "rs4" in [n.name for n in provider.status(name).nodes]:
            provider.remove_node(name, "rs4")  # leave the shared cluster as it was
    run = json.loads(report.read_text())["run"]
    assert run["outcome"] == "interrupted"
    failed = sum(n for op in run["measurements"] for status, n in op.get("returns", {}).items()
                 if status not in ("OK", "NOT_FOUND"))
    assert failed == 0, run["environment"].get("error_kinds")
    moved = run["environment"].get("client_counts", {})
    assert moved.get("region lookups after a move", 0) >= 1, moved  # it followed the regions
    events = [(run["started_at"] + e["elapsed_s"], e["value"]) for e in run["events"]
              if e["kind"] == "cluster"]
    values = [v for _, v in events]
    assert values[:2] == ["+ rs4 joining", "rs4 normal"], values
    assert values[-2:] == ["- rs4 leaving", "rs4 gone"], values
    # what the balancer gave it (add_node waits for its share: 3 of 12 on four, or 25 s here)
    got = r"rs4 holds [1-3] regions? of 12 after the balancer's moves"
    assert len(values) == 5 and re.fullmatch(got, values[2]), values
    for (at, _), stage in zip([events[0], events[1], events[3], events[4]],
                              ("join", "ready", "leave", "gone"), strict=True):
        assert abs(at - moments[stage]) < 1.0, (events, moments)
    # the native client's own per-node figures: requests to rs4 while it held regions, none after
    t0 = run["started_at"]
    served = [(i["nodes"] or {}).get(rs4, [0])[0] for i in run["intervals"]
              if moments["moved"] <= t0 + i["elapsed_s"] - i["duration_s"]
              and t0 + i["elapsed_s"] <= moments["leave"]]
    assert served and sum(served) > 0, served
    gone = [(i["nodes"] or {}).get(rs4, [0])[0] for i in run["intervals"]
            if t0 + i["elapsed_s"] - i["duration_s"] >= moments["removed"]]
    assert gone and sum(gone) == 0, gone


def test_a_regionserver_killed_while_it_joins_is_one_line_and_the_cluster_stays_as_it_was(
        hbase_cluster3, suite_servers):
    """`workbench cluster add-node` whose new RegionServer dies while it joins (SIGKILL, as an
    out-of-memory kill would): exit status 2 and one line naming the node and its log; the node is
    forgotten again (status lists what it listed before), and the journal says it did not join."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from workbench.clusters import journal

    provider, name = suite_servers.provider, hbase_cluster3.name
    before = [(n.name, n.pid) for n in provider.status(name).nodes]
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "cluster", "add-node", name],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            fresh = [n for n in provider.status(name).nodes if n.name == "rs4"]
            if fresh:
                os.kill(fresh[0].pid, signal.SIGKILL)  # our test's own child's child
                break
            time.sleep(0.05)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, (out, err)
    said = [line for line in err.splitlines() if line.startswith("workbench: error:")]
    assert len(said) == 1 and "hbase rs4 exited while it joined (removed again)" in said[0], err
    assert "Traceback" not in err
    assert [(n.name, n.pid) for n in provider.status(name).nodes] == before
    assert all(n.status == "running" for n in provider.status(name).nodes)
    marked = [e.value for e in journal.read(hbase_cluster3.run_dir, 0)[0]][-2:]
    assert marked[-1] == "rs4 did not join (stopped)", marked
