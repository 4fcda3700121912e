"""The process figures of a node (clusters/node_figures.py) against a real process: a busy
Python loop started here, a node of a local cluster as far as the reader knows. Its CPU over its
life, added up from the per-sample rates, is within 10% of what the process itself measured."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from workbench.clusters import processes
from workbench.clusters.base import Cluster, Node
from workbench.clusters.node_figures import (
    CLIENT,
    ClientProcesses,
    DockerContainers,
    LocalProcesses,
    container_figures,
    engine_time,
    node_keys,
    process_reader,
    read_proc,
)
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.drive.server_sampler import sources_for
from workbench.errors import ClusterError

BUSY = """
import os, sys, time
end = time.monotonic() + 20  # 1.5 s of CPU, however loaded the machine is
x = 0
while time.process_time() < 1.5 and time.monotonic() < end:
    x += 1
with open(sys.argv[1] + ".tmp", "w") as f:  # what it used, measured by itself
    f.write(repr(time.process_time()))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(30)
"""


def _cluster(tmp_path: Path, pid: int, provider: str = "local", name: str = "node1",
             address: str = "127.0.0.2") -> Cluster:
    node = Node(name, address, 9042, pid, processes.start_time(pid) or 0, tmp_path / "log",
                tmp_path / "console", tmp_path)
    return Cluster("t", "cassandra", CassandraSpec(name="t"), (node,), tmp_path, provider=provider)


def test_a_local_node_cpu_is_what_the_process_used(tmp_path):
    done = tmp_path / "used"
    child = subprocess.Popen([sys.executable, "-c", BUSY, str(done)])
    try:
        reader = LocalProcesses(_cluster(tmp_path, child.pid))
        total, last, rss = 0.0, time.time(), []
        while not done.exists():
            time.sleep(0.25)
            now = time.time()
            figures = reader.read(now)["127.0.0.2"]
            total += figures["cpu"] * (now - last)
            last = now
            rss.append(figures["rss_bytes"])
        time.sleep(0.3)
        now = time.time()
        total += reader.read(now)["127.0.0.2"]["cpu"] * (now - last)
        used = float(done.read_text())
        assert used > 1.0  # it was busy (a machine this loaded would make the test say nothing)
        assert total == pytest.approx(used, rel=0.10)
        assert all(5e6 < r < 500e6 for r in rss)
        child.kill()
        child.wait()
        assert reader.read(time.time()) == {}  # a node gone has no figures
    finally:
        child.kill()
        child.wait()


def test_a_recycled_pid_is_not_the_node(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        cluster = _cluster(tmp_path, child.pid)
        assert set(LocalProcesses(cluster).read(time.time())["127.0.0.2"]) >= {"cpu", "rss_bytes"}
        node = dataclasses.replace(cluster.nodes[0], start_time=1)  # as if the PID were reused
        stale = dataclasses.replace(cluster, nodes=(node,))
        assert LocalProcesses(stale).read(time.time()) == {}
    finally:
        child.kill()
        child.wait()


def test_nodes_sharing_an_address_are_told_apart():
    def node(name: str, address: str) -> Node:
        return Node(name, address, 1, 0, 0, Path("l"), Path("c"), Path("."))

    keys = node_keys((node("master", "127.0.0.1"), node("rs1", "127.0.0.1"), node("rs2", "127.0.0.2")))
    assert keys == {"master": "master@127.0.0.1", "rs1": "rs1@127.0.0.1", "rs2": "127.0.0.2"}


def test_the_client_is_this_process_and_its_workers(tmp_path):
    reader = ClientProcesses()
    wall, cpu = time.time(), time.process_time()
    while time.process_time() < cpu + 0.6:
        pass
    figures = reader.read(time.time())[CLIENT]
    used = (time.process_time() - cpu) / (time.time() - wall)  # this process's, as it measures it
    assert figures["cpu"] == pytest.approx(used, abs=0.05, rel=0.10)
    # a child that is not a worker process (say, a server this process started) is not the client
    child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: pass"])
    try:
        reader.read(time.time())
        began, before = time.monotonic(), read_proc(child.pid)[1]
        # the child busy for 0.3 s (on a loaded machine, slowly), over a second at least: this
        # process's own few milliseconds of reading /proc are then well under 0.1 of a core
        while read_proc(child.pid)[1] - before < 0.3 or time.monotonic() < began + 1.0:
            assert time.monotonic() < began + 60, "the busy child got no CPU in 60 s"
            time.sleep(0.2)
        client = reader.read(time.time())[CLIENT]["cpu"]
        spun = (read_proc(child.pid)[1] - before) / (time.monotonic() - began)
        assert client < 0.1 and client < spun, (client, spun)  # while this process slept
    finally:
        child.kill()
        child.wait()


def test_the_clients_cores_busy_counts_every_process_on_them():
    """A client pinned to one core that sleeps while another process spins on that core: its own
    CPU is about nothing, its core's busy time about all of it (whoever used it)."""
    core = min(os.sched_getaffinity(0))
    pin = lambda: os.sched_setaffinity(0, {core})  # noqa: E731
    client = subprocess.Popen([sys.executable, "-c", "import time; print(flush=True); time.sleep(60)"],
                              preexec_fn=pin, stdout=subprocess.PIPE)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=pin)
    try:
        client.stdout.readline()  # its interpreter's start-up (tens of ms of CPU) done: asleep now
        reader = ClientProcesses(client.pid)
        time.sleep(0.8)
        figures = reader.read(time.time())[CLIENT]
        assert figures["cpu"] < 0.05
        assert 0.8 <= figures["cores_busy"] <= 1.0  # one core: at most 1
    finally:
        for child in (client, spinner):
            child.kill()
            child.wait()
        client.stdout.close()


def test_the_clients_wait_for_a_core_counts_every_thread_that_was_ready_to_run():
    """A client of two threads that never sleep (hashing releases the GIL, so both are ready to run
    all the time), pinned to one core beside a process that spins on it: the client runs at most
    one core's worth and its threads wait for the rest. Run time plus waiting is about two: both
    threads were ready the whole time (the main thread's alone would say one)."""
    core = min(os.sched_getaffinity(0))
    pin = lambda: os.sched_setaffinity(0, {core})  # noqa: E731
    code = ("import hashlib, threading\n"
            "data = bytes(20_000_000)\n"
            "def spin():\n"
            "    while True: hashlib.sha256(data).digest()\n"
            "threading.Thread(target=spin, daemon=True).start()\n"
            "print(flush=True)\n"
            "spin()\n")
    client = subprocess.Popen([sys.executable, "-c", code], preexec_fn=pin, stdout=subprocess.PIPE)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=pin)
    try:
        client.stdout.readline()
        reader = ClientProcesses(client.pid)
        time.sleep(0.8)
        figures = reader.read(time.time())[CLIENT]
        assert figures["cpu"] <= 0.8, figures  # the spinner took its share of the one core
        assert 1.7 <= figures["cpu"] + figures["cpu_wait"] <= 2.1, figures
    finally:
        for child in (client, spinner):
            child.kill()
            child.wait()
        client.stdout.close()


def test_docker_statistics_become_figures():
    stats = {"cpu_stats": {"cpu_usage": {"total_usage": 3_500_000_000}},
             "memory_stats": {"usage": 900_000_000, "stats": {"anon": 600_000_000, "inactive_file": 1}},
             "blkio_stats": {"io_service_bytes_recursive": [
                 {"major": 8, "minor": 0, "op": "read", "value": 4096},
                 {"major": 8, "minor": 0, "op": "write", "value": 8192},
                 {"major": 8, "minor": 16, "op": "Write", "value": 8}]}}
    assert container_figures(stats) == ((3.5, 4096, 8200), 600_000_000.0)
    v1 = {"cpu_stats": {"cpu_usage": {"total_usage": 0}},
          "memory_stats": {"usage": 1000, "stats": {"total_inactive_file": 400}}, "blkio_stats": {}}
    assert container_figures(v1) == ((0.0, 0, 0), 600.0)


def test_an_external_cluster_says_its_processes_are_not_here(tmp_path):
    cluster = _cluster(tmp_path, 1, provider="external")
    assert process_reader(cluster) == ("no process figures: an external cluster's processes are "
                                       "not on this machine")
    sources = sources_for(cluster, "no-such-db")
    with pytest.raises(Exception, match="not on this machine"):
        sources[1].sample(time.time())


def test_a_docker_node_is_read_from_the_engines_pushed_statistics(tmp_path):
    """Each container's statistics followed as the engine pushes them (stream=True): a read takes
    the newest answer; one that finds the answer the last read took waits, WAIT_S at most, for the
    engine's next push; its CPU rate is over the engine's own times."""
    class NotFound(Exception):
        pass

    class Api:
        def __init__(self) -> None:
            self.calls = []
            self.pushed = threading.Event()

        def stats(self, container, stream=False, decode=False, one_shot=None):
            self.calls.append((container, stream, decode, one_shot))
            if container == "gone":
                raise NotFound(container)
            return self._push()

        def _push(self):
            # two answers 2 s apart on the engine's clock, 3 s of CPU between them
            for second, cpu_ns in ((1, 1_000_000_000), (3, 4_000_000_000)):
                yield {"read": f"2026-11-29T10:00:0{second}.500000000Z",
                       "cpu_stats": {"cpu_usage": {"total_usage": cpu_ns}},
                       "memory_stats": {"usage": 10, "stats": {"anon": 7}}, "blkio_stats": {}}
                self.pushed.wait(5)
                self.pushed.clear()

    class Client:
        api = Api()

        def close(self) -> None:
            pass

    def container(name: str, address: str, cid: str) -> Node:
        return Node(name, address, 9042, 0, 0, tmp_path / "l", tmp_path / "c", tmp_path, container=cid)

    cluster = Cluster("d", "cassandra", CassandraSpec(name="d"),
                      (container("node1", "127.0.0.2", "abc"), container("node2", "127.0.0.3", "gone")),
                      tmp_path, provider="docker")
    reader = DockerContainers(cluster, Client())  # both followed from here on, before a read
    deadline = time.monotonic() + 10
    while len(Client.api.calls) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    while reader.read(time.time()) != {"127.0.0.2": {"rss_bytes": 7.0}}:  # no rate yet; node2 gone
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert reader.read(time.time()) == {"127.0.0.2": {"rss_bytes": 7.0}}  # the same answer: no rate
    # the engine's next answer pushed while a read waits for it: that read has its rate
    reader.WAIT_S = 10.0
    threading.Timer(0.05, Client.api.pushed.set).start()
    got = reader.read(time.time())["127.0.0.2"]
    assert got["cpu"] == pytest.approx(1.5)  # 3 s of CPU over the engine's 2 s
    assert {c[1:] for c in Client.api.calls} == {(True, True, None)}  # stream=True, decode=True
    assert engine_time("2026-11-29T10:00:01.123456789Z") == pytest.approx(
        engine_time("2026-11-29T10:00:01Z") + 0.123456789)
    assert engine_time("0001-01-01T00:00:00Z") is None
    Client.api.pushed.set()


def test_a_docker_engine_that_does_not_answer_does_not_hold_up_the_runs_start(tmp_path, monkeypatch):
    """The reader starts following its containers on a thread of its own: made while the engine's
    connection hangs, it is there at once; closed, nothing is followed after."""
    from workbench.clusters import engine

    release, asked = threading.Event(), threading.Event()

    class Api:
        calls = 0

        def stats(self, *args, **kwargs):
            Api.calls += 1
            return iter(())

    class Client:
        api = Api()
        closed = False

        def close(self) -> None:
            Client.closed = True

    def connect(timeout: float):
        asked.set()
        assert release.wait(30), "never released"
        return Client()

    monkeypatch.setattr(engine, "connect", connect)
    node = Node("node1", "127.0.0.2", 9042, 0, 0, tmp_path / "l", tmp_path / "c", tmp_path, container="abc")
    cluster = Cluster("d", "cassandra", CassandraSpec(name="d"), (node,), tmp_path, provider="docker")
    made: list[DockerContainers] = []
    maker = threading.Thread(target=lambda: made.append(DockerContainers(cluster)), daemon=True)
    maker.start()
    maker.join(20)
    assert made, "the reader waited for the engine"
    assert asked.wait(20)  # connecting meanwhile
    release.set()
    made[0].close()  # waits for the connection in progress: the client it made is closed
    assert Client.closed
    with pytest.raises(ClusterError, match="closed"):
        made[0].read(time.time())


def test_resident_memory_from_stat_is_what_status_calls_vmrss():
    """read_proc takes a process's resident memory from /proc/PID/stat's rss (pages), not from
    status (costlier to make, read every second beside a run): the same figure, in bytes."""
    import os

    def vmrss() -> int:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))

    before, (_, _, rss, _), after = vmrss(), read_proc(os.getpid()), vmrss()
    assert 0.9 * min(before, after) <= rss <= 1.1 * max(before, after), (before, rss, after)
