"""The wheel as a user installs it: built from the tracked files, installed into a fresh virtual
environment beside its declared dependencies only, and run from a directory that is not the
checkout: the memory demo, a local Cassandra up/load/run/down, the shipped experiments, a
shipped workload by name.

The dependencies are not copied in again from the package index: the distributions that the
wheel's requirements need (theirs too, as pip resolves them) are linked from the test
environment, which `.ci/run` installed from the index moments before (tests/support/wheel.py
link_dependencies), and `pip check` in the fresh environment then holds the wheel's declared
requirements, versions included, against them. Nothing else of the test environment is there:
an import the wheel does not declare fails. (Copying them, as `pip install` does, took three
minutes of a CI run under two busy loops.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.wheel import build_wheel, link_dependencies, tracked_files
from workbench.config import catalog

pytestmark = [pytest.mark.servers,  # a Cassandra JVM
              pytest.mark.skipif(tracked_files() is None, reason="needs a git checkout and git")]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """bin/ of a fresh venv holding the wheel and what it declares, nothing else of the test run."""
    work = tmp_path_factory.mktemp("wheel-install")
    wheel = build_wheel(work)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    linked = link_dependencies(wheel, site)
    assert any(name.startswith("cassandra-driver ") for name in linked), linked
    pip = [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check"]
    done = subprocess.run([*pip, "install", "-q", "--no-deps", "--no-compile", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    check = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr  # every declared requirement met
    return venv / "bin"


def run(bin_dir: Path, cwd: Path, *args: str, timeout: float = 600, **extra: str
        ) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(extra, PATH=f"{bin_dir}:{env.get('PATH', '')}")
    return subprocess.run(["workbench", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=timeout)


def test_the_installed_wheel_runs_from_any_directory(installed, tmp_path, suite_servers):
    here = tmp_path / "somewhere"
    here.mkdir()
    where = subprocess.run([str(installed / "python"), "-c", "import workbench; print(workbench.__file__)"],
                           capture_output=True, text=True, cwd=here, check=True).stdout
    assert str(installed.parent) in where  # the installed copy, not the checkout

    keys = run(installed, here, "keys", "-P", "workloada", "--samples", "2000")
    assert keys.returncode == 0 and "zipfian" in keys.stdout, keys.stderr

    listed = run(installed, here, "experiment", "list")
    assert listed.returncode == 0, listed.stderr
    for name in catalog.available("experiments"):
        assert name in listed.stdout

    demo = run(installed, here, "demo", "--db", "memory", "--no-tui", "--records", "500",
               "--operations", "2000", "--out", str(here / "demo"))
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert list((here / "demo").glob("*.txt")) or list((here / "demo").glob("*.csv"))

    state = str(suite_servers.state_dir)  # the suite's: its final check finds a JVM left behind
    up = run(installed, here, "cluster", "up", "cassandra-single", "--name", "wheel-cassandra",
             "--first-address", suite_servers.addresses(1), "--heap", "512M", "--quiet",
             WORKBENCH_STATE_DIR=state)
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        common = ["--cluster", "wheel-cassandra", "-P", "workloada", "-p", "recordcount=300",
                  "-p", "operationcount=600", "-threads", "4", "-q", "--no-store"]
        load = run(installed, here, "load", *common, WORKBENCH_STATE_DIR=state)
        assert load.returncode == 0, load.stderr[-3000:]
        assert "[INSERT], Operations, 300" in load.stdout
        done = run(installed, here, "run", *common, WORKBENCH_STATE_DIR=state)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "[OVERALL], Throughput(ops/sec)" in done.stdout
    finally:
        down = run(installed, here, "cluster", "down", "wheel-cassandra", WORKBENCH_STATE_DIR=state)
    assert down.returncode == 0, down.stderr
