"""Server events on a three-node Cassandra cluster (issue 54's check "a flush and a compaction
forced mid-run on Cassandra (1 node and 3 nodes) ... appear as events within 2 s of the server's
own log line about them, on the node that did them"): during one `workbench run`, node2 is
flushed once and node3 flushed twice and compacted; each node's flush events match its own
system.log's flush lines, and the compaction of the test's table is an event of node3 alone.
Runs in the child of a whole-suite run, with the other three-node tests (alongside.OWN_CLUSTERS)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.runs import run_while
from tests.support.server_logs import log_lines
from workbench.clusters.java import SERVER_FLAGS_ENV

pytestmark = pytest.mark.servers

ROOT = Path(__file__).resolve().parents[2]
TABLE = "events3.server_events3"


def _workbench(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=env)


def test_each_nodes_flushes_and_compaction_are_its_own_events(tmp_path, suite_servers, cassandra_cluster3):
    cluster = suite_servers.provider.status(cassandra_cluster3.name)  # as it is now
    nodes = {n.name: n for n in cluster.nodes}
    assert all(n.status == "running" for n in nodes.values()), nodes
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir),
               WORKBENCH_STORE=str(tmp_path / "runs.db"))
    keyspace, table = TABLE.split(".")
    common = ["--cluster", cluster.name, "-P", str(ROOT / "workbench" / "workloads" / "workloada"),
              "-p", "recordcount=2000", "-p", f"table={table}", "-p", f"cassandra.keyspace={keyspace}",
              "-threads", "4", "-q"]
    load = _workbench(env, "load", *common, "-p", "cassandra.drop=true")
    assert load.returncode == 0, load.stderr

    def steps(said: list[str]) -> None:
        time.sleep(3)
        for action, node in (("flush", "node2"), ("flush", "node3"), ("flush", "node3"),
                             ("compact", "node3")):
            done = _workbench(env, "cluster", action, cluster.name, node)
            assert done.returncode == 0, done.stderr
            said.append(done.stdout.strip())
            time.sleep(1)

    # the run ends once the steps are done and node3's compaction of the table has been seen
    address3 = nodes["node3"].address

    def compacted(events: list) -> bool:
        return any(node == address3 and kind == "compaction" and TABLE in detail
                   for _, node, kind, detail in events)

    doc, said = run_while(env, common, tmp_path / "run.json", steps, compacted)
    assert [s.split(":")[0] for s in said] == [f"{cluster.name} node2", *[f"{cluster.name} node3"] * 3]
    # the run names the flags its servers were started with (the suite's, tests/conftest.py)
    assert doc["manifest"]["cluster"]["jvm_flags"] == os.environ[SERVER_FLAGS_ENV], doc["manifest"]["cluster"]

    started = doc["started_at"]
    whole = [i for i in doc["intervals"] if i["duration_s"] > 0.5]
    first, last = started + 1.0, started + whole[-1]["elapsed_s"] - 1.0  # inside the sampled seconds
    events = [e for e in doc["server_events"] if first <= started + e["elapsed_s"] <= last]
    at = {n.address: name for name, n in nodes.items()}
    assert {e["node"] for e in events} <= set(at), events

    flushed_table: dict[str, int] = {}
    for name, node in nodes.items():
        lines = log_lines(node.log, first, last)
        flush_lines = [t for t, text in lines if text.startswith("Enqueuing flush of ")]
        flushed_table[name] = sum(1 for _, text in lines if text.startswith(f"Enqueuing flush of {TABLE}"))
        flushes = [started + e["elapsed_s"] for e in events if e["kind"] == "flush" and at[e["node"]] == name]
        # every flush event of this node is near a flush line of its own log, and the other way round
        for when in flushes:
            assert any(abs(when - t) <= 2.0 for t in flush_lines), (name, when, flush_lines)
        for t in flush_lines:
            assert any(abs(when - t) <= 2.0 for when in flushes), (name, t, flushes)
        compacted = [e for e in events if e["kind"] == "compaction" and TABLE in e["detail"]]
        began = [t for t, text in lines
                 if text.startswith("Compacting (") and TABLE.replace(".", "/") in text]
        mine = [e for e in compacted if at[e["node"]] == name]
        assert len(mine) == len(began), (name, began, mine)
        for t in began:
            assert any(abs(started + e["elapsed_s"] - t) <= 2.0 for e in mine), (name, t, mine)
    # the table was flushed where it was asked (node2 once, node3 twice and by its compaction),
    # and compacted on node3 alone
    assert flushed_table["node1"] == 0, flushed_table
    assert flushed_table["node2"] >= 1 and flushed_table["node3"] >= 2, flushed_table
    assert {at[e["node"]] for e in events if e["kind"] == "compaction" and TABLE in e["detail"]} == {"node3"}
