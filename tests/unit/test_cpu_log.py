"""tests/support/cpu_log.py: each test's CPU seconds are its own processes', children included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import cpu_log

ROOT = Path(__file__).resolve().parents[2]

PROBE = '''
import subprocess, sys, time

def test_spins_in_a_child():
    subprocess.run([sys.executable, "-c",
                    "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.6: pass"],
                   check=True)

def test_sleeps():
    time.sleep(0.4)
'''


def _writable_cgroup() -> bool:
    probe = cpu_log.CpuLog(Path(os.devnull), "probe")
    try:
        return probe.start() is None
    finally:
        probe.stop()


def test_each_test_is_logged_with_the_cpu_of_the_processes_it_started(tmp_path):
    if not _writable_cgroup():  # probed when the test runs, not while the suite is collected
        pytest.skip("needs a cgroup it may create (cgroup v1 cpuacct or v2, as root)")
    (tmp_path / "test_probe.py").write_text(PROBE)
    log = tmp_path / "cpu.tsv"
    # a pytest of its own: not one a test started, nor an xdist worker (as under the fast tier),
    # nor alongside.py's child (where CI runs this test): the parent's side of a run
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_CURRENT_TEST", "WORKBENCH_TESTS_ALONGSIDE")
           and not k.startswith("PYTEST_XDIST")}
    env[cpu_log.ENV] = str(log)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "tests.support.cpu_log", "-o", "addopts=", str(tmp_path / "test_probe.py")],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split("\t")[1].split("::")[1]: line.split("\t") for line in log.read_text().splitlines()}
    assert set(rows) == {"test_spins_in_a_child", "test_sleeps"}, rows
    side, _, wall, cpu = rows["test_spins_in_a_child"]
    assert side == "parent" and float(cpu) >= 0.5, rows  # the child's spin, counted
    _, _, wall, cpu = rows["test_sleeps"]
    assert float(wall) >= 0.4 and float(cpu) < 0.2, rows  # waiting is no CPU
    # the group is gone with the session
    assert not [p for p in Path("/sys/fs/cgroup/cpuacct").glob("workbench-tests-parent-*")
                if (p / "cgroup.procs").exists() and not (p / "cgroup.procs").read_text().strip()]


def test_a_pytest_that_a_test_started_logs_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(cpu_log.ENV, str(tmp_path / "cpu.tsv"))
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/x.py::test_y (call)")

    class Config:
        class pluginmanager:  # noqa: N801 - pytest's attribute name
            registered: list = []

            @classmethod
            def has_plugin(cls, name):
                return False

            @classmethod
            def register(cls, plugin, name):
                cls.registered.append(name)

    cpu_log.register(Config)
    assert Config.pluginmanager.registered == []
