"""Lifecycle edges of the local provider with real JVMs: a crashed workbench, Ctrl-C during
`cluster up`, a server that dies during start-up, and user errors at the command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.clusters import cgroups, java, processes
from workbench.clusters.base import get_provider
from workbench.clusters.launch import StartupError
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.errors import ClusterError

pytestmark = pytest.mark.servers
ROOT = Path(__file__).resolve().parents[2]


def start_cli_up(suite_servers, tmp_path, name: str, env: dict[str, str] | None = None,
                 *more: str) -> tuple[subprocess.Popen, dict]:
    """Run `workbench cluster up` in a child process; return it once its JVM is recorded."""
    address = suite_servers.addresses(1)
    preset = tmp_path / f"{name}.toml"
    preset.write_text(f'kind = "cassandra"\nheap = "512M"\nfirst_address = "{address}"\n')
    child = subprocess.Popen(
        [sys.executable, "-m", "workbench", "cluster", "--state-dir", str(suite_servers.state_dir),
         "up", str(preset), "--quiet", *more],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    state_file = suite_servers.state_dir / "clusters" / name / "state.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            nodes = json.loads(state_file.read_text())["nodes"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            nodes = []
        if nodes:
            return child, nodes[0]
        time.sleep(0.2)
    child.kill()
    raise AssertionError(f"no node recorded in {state_file}: {child.communicate()}")


def test_down_finds_the_nodes_after_the_workbench_crashed(suite_servers, tmp_path):
    # capped at half a core (--cpus): the JVM runs in a cpu cgroup of its own, which down removes
    # (where this machine has a cgroup cpu controller to write: test_cgroups.py tests the refusal)
    capped = cgroups.problem() is None
    cap = ["--cpus", "0.5"] if capped else []
    child, node = start_cli_up(suite_servers, tmp_path, "t-crash", None, *cap)
    child.send_signal(signal.SIGKILL)  # the workbench dies; its JVM runs on in its own session
    child.communicate()
    assert processes.is_ours(node["pid"], node["start_time"])
    if capped:
        assert node["cpus"] == 0.5 and cgroups.cap_of(node["pid"]) == 0.5
    group = cgroups.group_name(suite_servers.state_dir, "t-crash", "node1")
    provider = get_provider("local", state_dir=suite_servers.state_dir, progress=False)
    assert provider.status("t-crash").node("node1").status == "running"
    outcome = provider.down("t-crash")
    assert outcome["node1"] in ("stopped", "killed")
    assert not processes.is_ours(node["pid"], node["start_time"])
    assert "t-crash" not in provider.clusters()
    assert not (suite_servers.state_dir / "clusters" / "t-crash").exists()
    assert not any((root / cgroups.PARENT / group).exists() for root in (cgroups.V1, cgroups.V2))


def test_ctrl_c_during_up_leaves_no_jvm_behind(suite_servers, tmp_path):
    # The JVM holds still at its very start until a file it creates is removed (HotSpot's
    # PauseAtStartup, passed through the java launcher's JDK_JAVA_OPTIONS), so the node cannot
    # be ready when the signal comes, however fast or slow the machine is.
    paused = tmp_path / "jvm.paused"
    env = dict(os.environ, JDK_JAVA_OPTIONS="-XX:+UnlockDiagnosticVMOptions -XX:+PauseAtStartup "
                                            f"-XX:PauseAtStartupFile={paused}")
    child, node = start_cli_up(suite_servers, tmp_path, "t-interrupt", env)
    deadline = time.monotonic() + 60
    while not paused.exists():
        assert time.monotonic() < deadline and child.poll() is None, child.communicate()
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "interrupted" in err
    assert not processes.is_ours(node["pid"], node["start_time"])
    assert not (suite_servers.state_dir / "clusters" / "t-interrupt").exists()


def test_a_server_that_dies_during_start_up_names_its_log(suite_servers):
    provider = suite_servers.provider
    with pytest.raises(StartupError) as caught:
        provider.up(CassandraSpec(name="t-dies", heap="1M", first_address=suite_servers.addresses(1)))
    error = caught.value
    assert "node1 exited during start-up" in error.message
    assert error.log.name == "console.log" and str(error.log) in error.message
    assert "heap" in error.tail.lower()  # the JVM's own complaint, from the log's last lines
    assert provider.status("t-dies").node("node1").status == "down"
    provider.down("t-dies")
    assert "t-dies" not in provider.clusters()


def test_cli_user_errors_are_one_line_and_exit_2(suite_servers):
    base = [sys.executable, "-m", "workbench", "cluster", "--state-dir", str(suite_servers.state_dir)]
    for args, expected in ((["up", "no-such-preset"], "unknown cluster preset 'no-such-preset'"),
                           (["down", "no-such-cluster"], "no cluster named 'no-such-cluster'"),
                           (["kill", "no-such-cluster", "node1"], "no cluster named")):
        done = subprocess.run(base + args, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert expected in done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_unsupported_jdks_are_refused_by_name():
    jdks = [java.Jdk(home=Path("/opt/jdk-25"), major=25, version="25.0.1"),
            java.Jdk(home=Path("/opt/jdk-8"), major=8, version="1.8.0_392")]
    env = os.environ.pop("JAVA_HOME", None)
    try:
        with pytest.raises(ClusterError) as caught:
            java.choose(jdks)
    finally:
        if env is not None:
            os.environ["JAVA_HOME"] = env
    assert "25.0.1 at /opt/jdk-25" in str(caught.value) and "1.8.0_392" in str(caught.value)
    found = java.discover()
    assert java.choose(found).major in java.SUPPORTED  # this machine has a usable JDK
