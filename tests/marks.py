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
