"""Honest marks: the fixtures behind `-m servers` and `-m docker` may be used only by tests that
carry the mark, so that `-m "not servers and not docker"` (the fast tier) starts no JVM or
dockerd and downloads nothing. conftest.py checks it when the tests are collected
(refuse_unmarked_server_tests), and again while each unmarked test runs: the test's processes
inherit TAG in their environment, and a JVM or Docker engine carrying it is found afterwards
(tagged_server_processes)."""

from __future__ import annotations

import os

import pytest

SERVER_FIXTURES = {"suite_servers", "cassandra_node", "cassandra_cluster3", "cassandra_secure",
                   "cassandra41_node", "hbase_server", "hbase25_server", "docker_suite",
                   "docker_cassandra", "docker_hbase"}
SERVER_PROGRAMS = {"java", "dockerd", "containerd"}
TAG = "WORKBENCH_TEST_UNMARKED"


def heavy(item) -> bool:
    return any(item.get_closest_marker(mark) for mark in ("servers", "docker"))


def refuse_unmarked_server_tests(items) -> None:
    wrong = [item.nodeid for item in items
             if not heavy(item) and SERVER_FIXTURES & set(getattr(item, "fixturenames", ()))]
    if wrong:
        raise pytest.UsageError("these tests use the suite's servers but are not marked servers "
                                "(or docker): " + ", ".join(wrong))


def tagged_server_processes(tag: str) -> list[tuple[int, str]]:
    """(pid, command) of live JVMs and Docker engines whose environment has TAG=tag."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() not in SERVER_PROGRAMS:
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found.append((int(pid), f.read().replace(b"\0", b" ").decode(errors="replace")[:160]))
        except OSError:
            continue
    return found


# --- CI cannot pass by skipping -------------------------------------------------------------
# Locally a servers, docker or Ray test skips when this machine lacks what it needs (jars and no
# Maven Central, no Docker engine, a port taken, no network namespace), and says why. Under CI
# (CI=true, as CI runs .ci/run) .ci/run has installed everything, so such a skip means the tier
# did not run: it is reported as a failure naming the reason, never counted as a pass.

TIERS = ("fast", "servers", "docker", "ray")


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def tier(node) -> str:
    """The tier of a test (an item, or its report: both carry its marks among their keywords):
    docker, ray (tests/integration/test_ray.py), servers or fast."""
    if "docker" in node.keywords:
        return "docker"
    if node.nodeid.split("::")[0].endswith("test_ray.py"):
        return "ray"
    return "servers" if "servers" in node.keywords else "fast"


def skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def refuse_skip_under_ci(item, report) -> None:
    """Turn the skip of a servers, docker or Ray test into a failure under CI (in place)."""
    if not (under_ci() and report.skipped and tier(item) != "fast" and not hasattr(report, "wasxfail")):
        return
    report.outcome = "failed"
    report.longrepr = (f"CI=true: this {tier(item)} test would have been skipped ({skip_reason(report)}); "
                       "under CI every server, Docker and Ray test must run: install what it names "
                       "(.ci/run does) or fix the machine")


def refuse_module_skip_under_ci(report) -> None:
    """A test module skipped whole at collection (importorskip) fails under CI, naming why."""
    if under_ci() and report.skipped:
        report.outcome = "failed"
        report.longrepr = (f"CI=true: {report.nodeid} would have been skipped whole "
                           f"({skip_reason(report)}); under CI no test module may skip")


class TierCounts:
    """How many tests of each tier passed, failed and were skipped, for one summary line at the
    end. A test's outcome is the worst of its phases (a failed teardown fails a passed test)."""

    RANK = {"passed": 0, "skipped": 1, "failed": 2}

    def __init__(self) -> None:
        self.tests: dict[str, tuple[str, str]] = {}  # node ID -> (tier, outcome)

    def add(self, report) -> None:
        outcome = "skipped" if report.skipped else report.outcome
        if outcome == "passed" and report.when != "call":
            return
        known = self.tests.get(report.nodeid)
        if known is None or self.RANK[outcome] > self.RANK[known[1]]:
            self.tests[report.nodeid] = (tier(report), outcome)

    def line(self) -> str:
        parts = []
        for name in TIERS:
            outcomes = [o for t, o in self.tests.values() if t == name]
            if outcomes:
                parts.append(f"{name} " + ", ".join(f"{outcomes.count(o)} {o}" for o in self.RANK
                                                     if outcomes.count(o)))
        return "tests run by tier: " + ("; ".join(parts) if parts else "none")


class CiSkips:
    """The plugin (conftest.py registers it): skips refused under CI, and the tiers' line."""

    def __init__(self) -> None:
        self.tiers = TierCounts()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        refuse_skip_under_ci(item, outcome.get_result())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector):
        outcome = yield
        if isinstance(collector, pytest.Module):
            refuse_module_skip_under_ci(outcome.get_result())

    def pytest_runtest_logreport(self, report) -> None:  # also where xdist's reports arrive
        self.tiers.add(report)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        terminalreporter.write_line(self.tiers.line())
