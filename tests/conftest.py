"""Session-wide fixtures that start real servers through the local provider (tests/support/servers.py).

`cassandra_node`, `cassandra_cluster3`, `hbase_server`, `ferretdb_server` (FerretDB on PostgreSQL),
the secured variants and the second releases (`cassandra41_node`: Cassandra 4.1 on Java 17,
`hbase25_server`: HBase 2.5) each start once per test run, when a test first asks for them, and stop
after the last test of the run that needs them (lifetimes.py), or at the end of the session. The
session then fails if any server process started by the suite is still alive.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import sys
import tempfile

# Bytecode is cached (the .gitignore'd __pycache__/), whatever the environment says: with
# PYTHONDONTWRITEBYTECODE=1 (this sandbox sets it) pytest rewrote the asserts of every test module
# again in each of its processes (7 s of CPU each, measured with cProfile) and every `python -m
# workbench` a test starts compiled the package from source again.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import pytest  # noqa: E402

from tests.support import alone, alongside, cpu_log, lifetimes, marks  # noqa: E402
from tests.support.servers import SuiteDocker, SuiteServers  # noqa: E402
from workbench.clusters import processes  # noqa: E402
from workbench.clusters.java import SERVER_FLAGS_ENV  # noqa: E402
from workbench.databases.cassandra.cluster_spec import CassandraSpec  # noqa: E402
from workbench.databases.hbase.cluster_spec import HBaseSpec  # noqa: E402

SUITE_JVM_FLAGS = "-XX:TieredStopAtLevel=1"
_suite: SuiteServers | None = None
_docker: SuiteDocker | None = None
_lifetimes = lifetimes.Lifetimes()

# Every run a test makes is recorded (load, run, demo and the app record by default): into a
# store of this test run, never the user's own. Subprocesses inherit it.
if "WORKBENCH_STORE" not in os.environ:
    _store_dir = tempfile.mkdtemp(prefix="workbench-test-store-")
    os.environ["WORKBENCH_STORE"] = os.path.join(_store_dir, "runs.db")


# Every server JVM the suite starts (local and in containers, in this process and in the commands it
# runs) is C1 only (clusters/java.py WORKBENCH_SERVER_JVM_FLAGS): its nodes live for minutes at a
# few hundred operations a second, where C2's compilations cost more CPU than they save (quiet, by
# test file: 114-128 CPU-seconds with C2 against 71 with C1 for the three-node server-events test,
# 54 against 36 for the settle tests, 148 against 116 for `check` on servers; docs/CI-BUDGET.md).
os.environ.setdefault(SERVER_FLAGS_ENV, SUITE_JVM_FLAGS)

FAST_TIER = "not servers and not docker"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """The fast tier (`-m "not servers and not docker"`) runs on four processes when pytest-xdist
    is installed (the test extra has it): its tests wait on runs of set lengths more than they
    compute (two processes kept the 2 cores about 70% busy: 1,371 tests in 3:58, three in 3:11;
    on a slower host on 2026-11-30, 1,422 tests took 2:58 on three and 2:38 on four), and it
    must stay under 3 minutes on a 2-core machine. `-n 0` (or any -n), `--pdb`,
    or WORKBENCH_TESTS_SERIAL=1 keep one process. The other tiers start servers on fixed
    addresses and stay serial; a run of the whole suite runs the fast tier alongside them, in a
    process and a network namespace of its own (alongside.py)."""
    if alongside.wanted(config):
        alongside.start(config, FAST_TIER)
        return
    if " ".join((config.option.markexpr or "").split()) != FAST_TIER:
        return
    if os.environ.get("WORKBENCH_TESTS_SERIAL") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if getattr(config.option, "numprocesses", "absent") is None and not config.getoption("usepdb", False):
        config.option.numprocesses = 4
        if config.option.dist == "no":
            # a worker that runs out of tests takes some of the other's instead of idling while
            # it works through a queue of long ones (the tier's tests last from 0.01 to 30 s)
            config.option.dist = "worksteal"


@pytest.hookimpl(trylast=True)  # after alongside.py has taken its tests out and ordered the rest
def pytest_collection_modifyitems(config, items):
    marks.refuse_unmarked_server_tests(items)
    lifetimes.order(items)


def pytest_configure(config):
    config.pluginmanager.register(marks.CiSkips(), "workbench-ci-skips")
    cpu_log.register(config)  # WORKBENCH_TESTS_CPU_LOG=FILE: CPU seconds per test (cpu_log.py)


def pytest_collection_finish(session):
    _lifetimes.plan(session.items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """A test marked `alone` runs its call holding the suite-wide lock (tests/support/alone.py)."""
    if item.get_closest_marker("alone") is None:
        yield
        return
    reporter = item.config.pluginmanager.get_plugin("terminalreporter")

    said = []

    def busy() -> None:
        reporter.write_line(f"waiting for the other process's CPU-bound test ({item.nodeid})")
        reporter.flush()
        said.append(True)

    with alone.held(busy) as waited:
        if said:
            reporter.write_line(f"waited {waited:.1f} s for it")
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    stopped = _lifetimes.retire_after(item)  # the servers no test left in the run needs
    if stopped:
        item.config.pluginmanager.get_plugin("terminalreporter").write_line(
            f"stopped {', '.join(stopped)} after its last test ({item.nodeid})")


@pytest.fixture(autouse=True)
def _unmarked_tests_start_no_servers(request, tmp_path_factory, monkeypatch):
    """An unmarked test runs with an empty jar cache of its own and a tag in its environment
    that every process it starts inherits: it fails if it downloaded anything, or if a JVM or
    dockerd of its making is alive when it ends (stopped, as it should not have started)."""
    if marks.heavy(request.node):
        yield
        return
    tag = f"{os.getpid()}-{abs(hash(request.node.nodeid))}"
    cache = tmp_path_factory.mktemp("no-downloads")
    monkeypatch.setenv(marks.TAG, tag)
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(cache))
    yield
    started = marks.tagged_server_processes(tag)
    for pid, _ in started:
        began = processes.start_time(pid)
        if began is not None:
            processes.send(pid, began, signal.SIGKILL)
    fetched = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())
    problems = ([f"started pid {pid}: {cmd}" for pid, cmd in started]
                + ([f"downloaded into the jar cache: {', '.join(fetched[:5])}"] if fetched else []))
    if problems:
        pytest.fail(f"{request.node.nodeid} is not marked servers or docker but "
                    + "; ".join(problems), pytrace=False)


def _servers() -> SuiteServers:
    global _suite
    if _suite is None:
        _suite = SuiteServers()
    return _suite


def _serve(suite_servers: SuiteServers, key: str):
    """A session fixture's body: the cluster for `key`, stopped after its last user (lifetimes.py)
    or with every other cluster at the end of the session (pytest_sessionfinish: down_all)."""
    cluster = suite_servers.up(key)
    _lifetimes.started(key, lambda: suite_servers.provider.down(cluster.name))
    yield cluster


@pytest.fixture(scope="session")
def suite_servers() -> SuiteServers:
    """The provider and temporary state directory shared by the whole test run."""
    return _servers()


@pytest.fixture(scope="session")
def cassandra_node(suite_servers):
    """One Cassandra node (127.0.0.K:9042 on a free address, replication factor 1)."""
    yield from _serve(suite_servers, "cassandra_node")


@pytest.fixture(scope="session")
def cassandra_cluster3(suite_servers):
    """Three Cassandra nodes (three consecutive free 127.0.0.K), replication factor 2."""
    yield from _serve(suite_servers, "cassandra_cluster3")


@pytest.fixture(scope="session")
def cassandra_secure(suite_servers):
    """One Cassandra node that requires a login (PasswordAuthenticator) and TLS on CQL."""
    yield from _serve(suite_servers, "cassandra_secure")


@pytest.fixture(scope="session")
def cassandra41_node(suite_servers):
    """One Cassandra 4.1 node (version = "4.1": pinned 4.1.10, on Java 17) on a free 127.0.0.K."""
    yield from _serve(suite_servers, "cassandra41_node")


@pytest.fixture(scope="session")
def hbase_server(suite_servers):
    """Standalone HBase with its Thrift gateway on 127.0.0.1 (free ports)."""
    yield from _serve(suite_servers, "hbase_server")


@pytest.fixture(scope="session")
def hbase_cluster3(suite_servers):
    """HBase with ZooKeeper, the master and three RegionServers as JVMs of their own, rs1-rs3 on
    three consecutive loopback addresses (the next one free for an rs4 a test adds)."""
    yield from _serve(suite_servers, "hbase_cluster3")


@pytest.fixture(scope="session")
def hbase25_server(suite_servers):
    """Standalone HBase 2.5 (version = "2.5": pinned 2.5.8) and its gateway (free ports)."""
    yield from _serve(suite_servers, "hbase25_server")


@pytest.fixture(scope="session")
def ferretdb_server(suite_servers):
    """FerretDB on a private PostgreSQL (free ports on 127.0.0.1): the mongodb binding's server."""
    yield from _serve(suite_servers, "ferretdb_server")


@pytest.fixture(scope="session")
def ferretdb_secure(suite_servers):
    """FerretDB that asks for a login (PLAIN, checked by PostgreSQL) and serves TLS only."""
    yield from _serve(suite_servers, "ferretdb_secure")


@pytest.fixture(scope="session")
def docker_suite(suite_servers) -> SuiteDocker:
    """The run's Docker engine (the user's, or a private dockerd started here) with the images
    built, and a DockerProvider under the run's state directory. Skips, saying why, only when
    no engine answers and none can be started (no dockerd, not root)."""
    global _docker
    if _docker is None:
        _docker = SuiteDocker(suite_servers)
    if not _docker.start():
        pytest.skip(_docker.reason)
    return _docker


def _docker_cluster(docker_suite, spec, key: str):
    provider = docker_suite.provider
    cluster = provider.up(spec)

    def stop() -> None:  # after its last user, unless the session's end stopped it already
        if cluster.name in provider.clusters():
            provider.down(cluster.name)

    _lifetimes.started(key, stop)
    yield cluster
    if cluster.name in provider.clusters():  # not stopped after its last user already
        provider.down(cluster.name)


@pytest.fixture(scope="session")
def docker_cassandra(docker_suite, suite_servers):
    """One Cassandra node in a container, host networking on a free 127.0.0.K."""
    spec = CassandraSpec(name="t-dk-cassandra", nodes=1, heap="512M", docker_memory="1G",
                         docker_cpus=1.5, first_address=suite_servers.addresses(1))
    yield from _docker_cluster(docker_suite, spec, "docker_cassandra")


@pytest.fixture(scope="session")
def docker_hbase(docker_suite, suite_servers):
    """Standalone HBase and its gateway in two containers (host networking, free ports)."""
    spec = dataclasses.replace(HBaseSpec(name="t-dk-hbase", heap="768M", thrift_heap="256M"),
                               **suite_servers.hbase_ports())
    yield from _docker_cluster(docker_suite, spec, "docker_hbase")


def pytest_sessionfinish(session, exitstatus):
    """No JVM, container or dockerd started by the suite may outlive it (checked after every
    fixture is torn down)."""
    if "_store_dir" in globals():
        shutil.rmtree(_store_dir, ignore_errors=True)
    if _docker is not None:
        left = _docker.stop()
        if left:
            session.config.pluginmanager.get_plugin("terminalreporter").write_line(
                "Docker objects started by the test suite were still there at the end (now removed): "
                + ", ".join(left), red=True)
            session.exitstatus = 1
    if _suite is None:
        return
    _suite.down_all()  # clusters a test started itself and did not stop
    survivors = _suite.survivors()
    if survivors:
        _suite.kill_survivors()
        lines = "\n".join(f"  pid {pid}: {cmd}" for pid, cmd in survivors)
        session.config.pluginmanager.get_plugin("terminalreporter").write_line(
            f"JVMs started by the test suite were still alive at the end (now killed):\n{lines}",
            red=True)
        session.exitstatus = 1
    else:
        shutil.rmtree(_suite.state_dir, ignore_errors=True)
