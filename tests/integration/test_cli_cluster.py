"""`workbench load|run --cluster NAME` against a cluster the provider started: the CLI finds
its hosts and ports from the cluster's state and runs YCSB's workload on it for real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.servers
@pytest.mark.parametrize("fixture", ["cassandra_node", "hbase_server"])
def test_load_and_run_on_a_named_cluster(request, suite_servers, fixture):
    cluster = request.getfixturevalue(fixture)
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    common = ["--cluster", cluster.name, "-P", str(ROOT / "workbench" / "workloads" / "workloada"),
              "-p", "recordcount=300", "-p", "operationcount=600", "-p", "table=cli_cluster",
              "-threads", "4", "-q"]
    drop = "cassandra.drop=true" if cluster.kind == "cassandra" else "hbase.drop=true"
    load = subprocess.run([sys.executable, "-m", "workbench", "load", *common, "-p", drop],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert load.returncode == 0, load.stderr
    assert "[INSERT], Return=OK, 300" in load.stdout
    run = subprocess.run([sys.executable, "-m", "workbench", "run", *common],
                         capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr
    reads = int(run.stdout.split("[READ], Return=OK, ")[1].split()[0])
    updates = int(run.stdout.split("[UPDATE], Return=OK, ")[1].split()[0])
    assert reads + updates == 600
