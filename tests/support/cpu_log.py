"""CPU seconds per test, of the test run's own processes only: where the CI budget goes.

With WORKBENCH_TESTS_CPU_LOG=FILE, each pytest process of the run (the parent, and the child of
alongside.py) moves itself into a cgroup of its own (cgroup v1 `cpuacct`, or v2), which every
process it starts afterwards inherits: the JVMs of local clusters, `workbench` subprocesses, Ray.
Around each test it reads the group's CPU time and appends one tab-separated line to FILE:
the process (parent or child), the test's node ID, its wall seconds and the CPU seconds its
processes used meanwhile. Busy loops or other tenants of the machine are not counted, so the
figures of a rehearsal under two busy loops are the tests' own. Containers run in the Docker
engine's cgroups and are not counted.

    WORKBENCH_TESTS_CPU_LOG=/tmp/cpu.tsv CI=true bash .ci/run
    sort -t$'\\t' -k4 -nr /tmp/cpu.tsv | head -30

Off by default. Where no writable cgroup exists (no root, no cpuacct), it says so once and logs
nothing. Where `cpuacct` is mounted together with `cpu` (cgroup v1 `cpu,cpuacct`, or v2), the
group is also a scheduling group of its own: the run then competes with other tenants as one
group, which changes what a rehearsal under busy loops measures (on the machines of
docs/CI-BUDGET.md the two are separate hierarchies). The groups are removed at the end of the
session (emptied first: their processes move back to the group the session started in).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

ENV = "WORKBENCH_TESTS_CPU_LOG"
_V1 = Path("/sys/fs/cgroup/cpuacct")
_V2 = Path("/sys/fs/cgroup")


class CpuLog:
    def __init__(self, out: Path, side: str) -> None:
        self.out, self.side = out, side
        self.group: Path | None = None
        self.home: Path | None = None
        self.v2 = False

    def start(self) -> str | None:
        """Move this process into a cgroup of its own; None, or why it could not."""
        name = f"workbench-tests-{self.side}-{os.getpid()}"
        if (_V1 / "cpuacct.usage").exists():
            base = _V1
        elif (_V2 / "cgroup.controllers").exists():
            base, self.v2 = _V2, True
        else:
            return "no cpuacct cgroup (v1) or cgroup v2 on this machine"
        group = base / name
        try:
            self.home = base / self._current(base)
            group.mkdir(exist_ok=True)
            (group / "cgroup.procs").write_text(str(os.getpid()))
        except OSError as e:
            try:
                group.rmdir()  # made, but this process could not join it
            except OSError:
                pass
            return f"cannot make a cgroup under {base}: {e}"
        self.group = group
        return None

    @staticmethod
    def _current(base: Path) -> str:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if (base.name == "cpuacct" and "cpuacct" in controllers.split(",")) or \
                    (base.name != "cpuacct" and controllers == ""):
                return path.lstrip("/")
        return ""

    def cpu_s(self) -> float:
        assert self.group is not None
        if self.v2:
            for line in (self.group / "cpu.stat").read_text().splitlines():
                key, value = line.split()
                if key == "usage_usec":
                    return int(value) / 1e6
            return 0.0
        return int((self.group / "cpuacct.usage").read_text()) / 1e9

    def record(self, nodeid: str, wall_s: float, cpu_s: float) -> None:
        with open(self.out, "a") as f:
            f.write(f"{self.side}\t{nodeid}\t{wall_s:.1f}\t{cpu_s:.1f}\n")

    def stop(self) -> None:
        """Empty the group into the one the session started in, then remove it."""
        if self.group is None or self.home is None:
            return
        try:
            for pid in (self.group / "cgroup.procs").read_text().split():
                try:
                    (self.home / "cgroup.procs").write_text(pid)
                except OSError:
                    pass  # gone meanwhile
            self.group.rmdir()
        except OSError:
            pass  # a process still in it: the group stays, empty once it ends

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        wall, cpu = time.monotonic(), self.cpu_s()
        yield
        self.record(item.nodeid, time.monotonic() - wall, self.cpu_s() - cpu)

    def pytest_sessionfinish(self, session):
        self.stop()


def register(config) -> None:
    out = os.environ.get(ENV)
    if not out or config.pluginmanager.has_plugin("workbench-cpu-log"):
        return
    if os.environ.get("PYTEST_CURRENT_TEST"):
        return  # a pytest that a test started (tests/unit/test_alongside.py's): its test's time
    side = "child" if os.environ.get("WORKBENCH_TESTS_ALONGSIDE") else "parent"
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the xdist controller's group holds its workers' time: one log per process tree
    log = CpuLog(Path(out), side)
    why = log.start()
    if why is not None:
        print(f"{ENV}: no CPU log: {why}")
        return
    config.pluginmanager.register(log, "workbench-cpu-log")


def pytest_configure(config):
    """As a plugin of its own (`-p tests.support.cpu_log`): what tests/conftest.py does."""
    register(config)
