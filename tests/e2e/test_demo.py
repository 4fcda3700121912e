"""The README's main command, end to end on real servers, and Ctrl-C during it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def jvms_under(path: Path) -> list[int]:
    """PIDs of java processes whose command line mentions path (the demo's own state dir)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "java" in cmd.split(" ")[0] and str(path) in cmd:
            found.append(int(proc.name))
    return found


def demo_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["WORKBENCH_STATE_DIR"] = str(tmp_path / "state")
    return env


@pytest.mark.servers
def test_demo_runs_both_databases_and_leaves_nothing_behind(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "demo", "--records", "2000", "--operations", "3000",
         "--threads", "8", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env=demo_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = proc.stdout
    assert "cassandra" in table and "hbase" in table and "throughput (ops/s)" in table
    assert "READ p99 (us)" in table and "UPDATE p95 (us)" in table
    for db in ("cassandra", "hbase"):
        for run in ("workloada-load", "workloada-run", "workloadc-run"):
            text = (out / f"{db}-{run}.txt").read_text()
            assert text.startswith("[OVERALL], RunTime(ms), ")
            assert (out / f"{db}-{run}.csv").read_text().startswith("measurement,")
    assert "[INSERT], Return=OK, 2000" in (out / "cassandra-workloada-load.txt").read_text()
    assert "[INSERT], Return=OK, 2000" in (out / "hbase-workloada-load.txt").read_text()
    assert jvms_under(tmp_path / "state") == []


@pytest.mark.servers
def test_ctrl_c_during_the_demo_leaves_no_server_running(tmp_path):
    state = tmp_path / "state"
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "demo", "--db", "cassandra", "--records", "200000",
         "--operations", "100000", "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=demo_env(tmp_path),
    )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not jvms_under(state):
            time.sleep(0.5)
        assert jvms_under(state), "the demo never started Cassandra"
        time.sleep(20)  # inside start-up or the load: either way Ctrl-C must clean up
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode != 0
        assert "Traceback" not in stderr, stderr[-2000:]
        assert jvms_under(state) == []
    finally:  # a failure here must not leave a node on the default ports for the tests after it
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in jvms_under(state):
            os.kill(pid, signal.SIGKILL)


def test_the_demos_runs_last_the_seconds_asked_by_default(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "demo", "--db", "memory", "--no-tui", "--records", "500",
         "--seconds", "2", "--threads", "2", "--out", str(out), "--no-store"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=demo_env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    for run in ("workloada-run", "workloadc-run"):
        first = (out / f"memory-{run}.txt").read_text().splitlines()[0]
        runtime_ms = float(first.rsplit(",", 1)[1])
        assert 2000 <= runtime_ms < 10_000, first  # ended by the clock, not by a count
    assert "[INSERT], Return=OK, 500" in (out / "memory-workloada-load.txt").read_text()
    for bad in (["--seconds", "0"], ["--operations", "0"]):
        refused = subprocess.run([sys.executable, "-m", "workbench", "demo", "--db", "memory", "--no-tui",
                                  *bad, "--out", str(out)], capture_output=True, text=True, timeout=120,
                                 cwd=ROOT, env=demo_env(tmp_path))
        assert refused.returncode == 2 and refused.stderr.startswith("workbench: error:"), refused.stderr
