"""The real `workbench` command in tmux: a run watched in the app, its target changed with a key
while it runs, its results read off the screen and from stdout after quitting; quitting leaves
no worker process behind. Against the memory binding and a real Cassandra node."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.tmux import Terminal

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")
ENDLESS = ["-p", "maxexecutiontime=600", "-p", "operationcount=100000000"]  # ended with s


pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="needs tmux to run the app in a real terminal (.ci/run installs it)")


def no_children_left(term: Terminal, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while term.alive_children():
        assert time.monotonic() < deadline, f"still alive after quitting: {term.alive_children()}"
        time.sleep(0.1)


def watch_target_change(term: Terminal) -> str:
    """Raise the target by 10% with +, then type one; the screen shows each."""
    term.wait_for("▶ running", "target 1,000", "READ")
    term.keys("+")
    term.wait_for("target 1,100")
    term.keys("t")
    term.wait_for("target rate in ops/s")
    term.type("1500")
    term.keys("Enter")
    screen = term.wait_for("target 1,500", "T target 1,500")
    assert re.search(r"\d+\.\ds T target 1,100", screen), screen
    return screen


def compose_and_run(term: Terminal, cluster: str | None = None) -> None:
    """On the Workload screen, by keys only: workload A (the first choice), the cluster if any,
    endless operations at a target of 1,000 ops/s on 4 lanes; then ctrl+r (load, then run)."""
    term.wait_for("where zipfian requests land", "Load+run")
    # Keys typed in the same instant as a Tab can reach the field being left (Textual moves
    # focus after the keys already read): wait for the ▸ that marks the field being edited.
    term.keys("Tab", "Tab", "Tab")  # workload -> file -> database -> cluster
    term.wait_for("▸ or cluster")
    if cluster:
        term.type(cluster)
        term.wait_for(f"--cluster {cluster}")
    # cluster -> 6 mix fields -> distribution -> zipfian constant -> records -> operations
    term.keys(*["Tab"] * 10)
    term.wait_for("▸ operations")
    term.type("100000000")
    term.keys(*["Tab"] * 4)  # -> max seconds -> fields -> field length -> lanes
    term.wait_for("▸ lanes")
    term.type("4")
    term.keys("Tab")  # -> target
    term.wait_for("▸ target")
    term.type("1000")
    term.wait_for("operationcount=100000000", "threadcount=4", "target=1000", "4 lanes", "✓ valid")
    term.keys("C-r")


def test_compose_and_run_in_the_app_on_memory(tmp_path):
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(tmp_path / "state"))
    with Terminal([], env) as term:
        compose_and_run(term)
        term.wait_for("memory workloada run")
        watch_target_change(term)
        term.keys("s")
        screen = term.wait_for("■ stopped")
        read_row = next(line for line in screen.splitlines() if line.strip().startswith("READ"))
        assert int(read_row.split()[2].replace(",", "")) > 0
        term.keys("q")
        assert term.exit_status() == 0
        no_children_left(term)


def test_run_in_the_app_on_memory(tmp_path):
    out = tmp_path / "stdout.txt"
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(tmp_path / "state"))
    args = ["run", "-P", WORKLOAD_A, "-db", "memory", "-threads", "4", "-target", "1000",
            "-p", "recordcount=1000", *ENDLESS, "--export", f"json={tmp_path / 'r.json'}",
            "--tui"]
    with Terminal(args, env, stdout=out) as term:
        watch_target_change(term)
        assert term.worker_processes(), "the lanes run in a worker process of the app"
        term.keys("s")
        screen = term.wait_for("■ stopped")
        read_row = next(line for line in screen.splitlines() if line.strip().startswith("READ"))
        assert int(read_row.split()[2].replace(",", "")) > 0  # READ service <count>
        term.keys("q")
        assert term.exit_status() == 0
        no_children_left(term)
    text = out.read_text()
    assert "[OVERALL], Throughput(ops/sec)" in text and "[READ], Operations" in text
    events = (tmp_path / "r.json").read_text()
    assert '"target"' in events and "1500" in events


@pytest.mark.servers
def test_run_in_the_app_on_a_real_cassandra_node(tmp_path, suite_servers, cassandra_node):
    out = tmp_path / "stdout.txt"
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    common = ["--cluster", cassandra_node.name, "-P", WORKLOAD_A, "-p", "recordcount=500",
              "-p", "table=app_tmux"]
    load = [sys.executable, "-m", "workbench", "load", *common, "-p", "cassandra.drop=true", "-q"]
    load = subprocess.run(load, env=env, capture_output=True, text=True, timeout=300)
    assert load.returncode == 0, load.stderr
    args = ["run", *common, "-threads", "4", "-target", "1000", *ENDLESS, "--tui"]
    with Terminal(args, env, stdout=out) as term:
        screen = watch_target_change(term)
        assert "cassandra" in screen
        term.keys("s")
        term.wait_for("■ stopped")
        term.keys("q")
        assert term.exit_status() == 0
        no_children_left(term)
    assert "[UPDATE], Return=OK" in out.read_text()


@pytest.mark.servers
def test_compose_and_run_in_the_app_on_a_real_cassandra_node(tmp_path, suite_servers, cassandra_node):
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    with Terminal([], env) as term:
        compose_and_run(term, cluster=cassandra_node.name)
        screen = term.wait_for(f"{cassandra_node.name} workloada run")
        assert "cassandra" in screen
        watch_target_change(term)
        term.keys("s")
        screen = term.wait_for("■ stopped")
        update_row = next(line for line in screen.splitlines() if line.strip().startswith("UPDATE"))
        assert int(update_row.split()[2].replace(",", "")) > 0
        term.keys("q")
        assert term.exit_status() == 0
        no_children_left(term)
