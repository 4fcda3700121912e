"""`workbench load|run --cluster NAME` against a cluster the provider started: the CLI finds
its hosts and ports from the cluster's state and runs YCSB's workload on it for real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# each takes its fixture by name: needs() says which (lifetimes.py)
NAMED = [pytest.param(f, marks=pytest.mark.needs(f)) for f in ("cassandra_node", "hbase_server")]


@pytest.mark.servers
@pytest.mark.parametrize("fixture", NAMED)
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


@pytest.mark.servers
@pytest.mark.parametrize("fixture", NAMED)
def test_a_run_on_a_table_never_loaded_says_so_and_that_load_comes_first(request, suite_servers, fixture,
                                                                          tmp_path):
    cluster = request.getfixturevalue(fixture)
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    table = f"never_loaded_{os.getpid()}"
    store = tmp_path / "runs.db"

    def workbench(command: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "workbench", command, "--cluster", cluster.name,
                               "-p", f"table={table}", "-p", "recordcount=50", "-p", "operationcount=100",
                               *args, "--store", str(store), "-q"],
                              capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)

    done = workbench("run", "-P", "workloadc")
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("workbench: error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{table}' does not exist" in errors[0] or f"{table} does not exist" in errors[0], errors[0]
    assert "workbench load" in errors[0] and f"-p table={table}" in errors[0]
    # an insert-only run may start on a missing table: it creates it
    inserts = workbench("run", "-P", "workloada", "-p", "readproportion=0", "-p", "updateproportion=0",
                        "-p", "insertproportion=1")
    assert inserts.returncode == 0, inserts.stderr
    assert "[INSERT], Return=OK, 100" in inserts.stdout
    some = workbench("run", "-P", "workloadc", "-p", "operationcount=10")
    assert some.returncode == 0, some.stderr  # the table holds rows now (if not the load's keys)
    # a fresh table with one record (dropped first), whose record a delete-only run removes
    flag = "cassandra.drop=true" if cluster.kind == "cassandra" else "hbase.drop=true"
    one = ["-p", "recordcount=1", "-p", "operationcount=1"]
    drop = workbench("load", "-P", "workloada", "-p", flag, *one)
    assert drop.returncode == 0, drop.stderr
    drop = workbench("run", "-P", "workloada", "-p", "readproportion=0", "-p", "updateproportion=0",
                     "-p", "deleteproportion=1", *one)
    assert drop.returncode == 0 and "[DELETE], Return=OK, 1" in drop.stdout, drop.stdout + drop.stderr
    empty = workbench("run", "-P", "workloadc")
    assert empty.returncode == 2, empty.stdout + empty.stderr
    assert "is empty" in empty.stderr and "workbench load" in empty.stderr, empty.stderr
