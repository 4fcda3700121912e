"""The whole suite in two processes: the fast tier runs alongside the server tiers.

The server tiers start servers on fixed addresses and stay serial, and most of their time is
spent waiting for runs of set lengths and for JVMs. The fast tier (`-m "not servers and not
docker"`, about 6 minutes of one core) needs neither: a plain
`pytest` of the whole suite runs it at the same time, in a child pytest inside a network
namespace of its own with only `lo` up (`unshare -n`), where no test of it can meet a port of a
server the other process started, or hold one that a server needs. The child's report is
printed after this one, and the run fails if either failed.

Once the fast tier is done, the child runs the server tests of OWN_CLUSTERS, in its namespace
too: the lessons' and the demo's, which start and stop clusters of their own on the presets'
addresses (127.0.0.1-3 and the presets' ports) and use none of the session's servers, and the
three-node Cassandra tests (the child's own session cluster). In the
child's namespace those addresses are its own, so these tests overlap the parent's server tiers
instead of following them, and meet none of the parent's ports. (Their jars come from the cache,
which .ci/run fills before the tests: the namespace has no network.) The parent deselects them.

Only for the whole suite (no paths, no -m, -k or -n), where `unshare -n` works (as root);
otherwise, or with WORKBENCH_TESTS_SERIAL=1, one process runs everything, as before.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

CHILD = "WORKBENCH_TESTS_ALONGSIDE"  # set in the child: it never splits again
HEAVY = "servers or docker"
# The child's fast tier: two processes unless WORKBENCH_TESTS_CHILD_PROCESSES says otherwise. It
# waits more than it computes: under two busy loops, serial, it used 401 CPU-seconds in 23:33
# (0.29 of a core, rehearsal 61's CPU log), so a second process shortens it by about half and
# adds little CPU; the run as a whole is bound by its CPU-seconds (docs/CI-BUDGET.md). (Rehearsals
# 59 and 60, with two, had ten timing-bound tests fail; each was fixed at its cause since.)
CHILD_PROCESSES = os.environ.get("WORKBENCH_TESTS_CHILD_PROCESSES", "2")
# Server test files that start their own clusters on the presets' addresses and touch none of
# the session's servers (tests/conftest.py): run in the child after the fast tier (those under
# the run's testpaths; WORKBENCH_TESTS_OWN_CLUSTERS, comma-separated, names others: the tests of
# this module use it).
# A test's node ID names one test of a file. What runs here balances the two sides' minutes: a
# quiet run with WORKBENCH_TESTS_CPU_LOG (tests/support/cpu_log.py, 2026-11-29) had the parent's
# tiers at 35 minutes and the child's at 39 (12 of them the fast tier, which two busy loops
# stretch to 19), so the RegionServers' tests, Ray's, the data-dir test and the Clusters
# screen's real node (5.4 minutes, none on the presets' addresses) went back to the parent.
OWN_CLUSTERS = ("tests/e2e/test_lessons_servers.py", "tests/e2e/test_demo.py",
                # three-node faults and joins (about 4 minutes): the parent's tiers were the run's
                # critical path (35:35 against the child's 18:53 in the rehearsal of 2026-11-29)
                "tests/integration/test_cluster_cassandra.py",
                # and the three-node flush and compaction events, on the same three nodes
                "tests/integration/test_server_events_cluster3.py",
                # and every other test of those three nodes: one three-node cluster in the whole
                # run, not one on each side (a start of three JVMs and minutes of them idle)
                "tests/integration/test_differential.py::test_native_cql_and_cassandra_driver_agree_on_three_nodes_at_rf2",
                "tests/e2e/test_experiment_servers.py::test_elastic_speedup_adds_a_node_during_the_run_and_reports_the_join")


def own_clusters(config) -> tuple[str, ...]:
    named = os.environ.get("WORKBENCH_TESTS_OWN_CLUSTERS")
    files = tuple(f for f in named.split(",") if f) if named is not None else OWN_CLUSTERS
    roots = [Path(config.rootpath, p) for p in config.getini("testpaths")]
    return tuple(f for f in files
                 if any(Path(config.rootpath, f.split("::")[0]).is_relative_to(r) for r in roots))

def _namespaces_work() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    try:
        done = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def wanted(config) -> bool:
    if any(os.environ.get(name) for name in (CHILD, "WORKBENCH_TESTS_SERIAL", "PYTEST_XDIST_WORKER")):
        return False
    if (config.option.markexpr or "").strip() or config.option.keyword:
        return False
    if getattr(config.option, "numprocesses", None) is not None or config.getoption("usepdb", False):
        return False
    if getattr(config.option, "lf", False) or getattr(config.option, "failedfirst", False):
        return False  # the child runs without the cache
    if config.option.collectonly or config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return False  # paths given: the user chose what to run
    return _namespaces_work()


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start(config, fast_tier: str) -> None:
    """Start the fast tier in its own network namespace and keep the server tiers here."""
    folder = Path(tempfile.mkdtemp(prefix="workbench-fast-tier-"))
    from tests.support import alone  # (here: this file also runs as a script, the child's runner)

    # the lock that the `alone` tests of both processes take in turn (alone.py)
    os.environ[alone.LOCK] = str(folder / "alone.lock")
    env = dict(os.environ, **{CHILD: "1", "WORKBENCH_TESTS_SERIAL": "1",
                              "WORKBENCH_STORE": str(folder / "runs.db")})
    common = [*config.invocation_params.args, "-p", "no:cacheprovider", "--color=no"]
    if not any(arg.startswith("--tb") for arg in config.invocation_params.args):
        # failures in short form, here and in the child (the failing lines and the assertion's
        # message, not a long server test's whole source): a CI log cut to its head and tail once
        # kept a failed test's source and lost its message (the CI run after session 66)
        common.append("--tb=short")
        config.option.tbstyle = "short"
    xdist = config.pluginmanager.hasplugin("xdist") and int(CHILD_PROCESSES) > 1
    processes = ["-n", CHILD_PROCESSES, "--dist", "worksteal"] if xdist else []
    fast = [sys.executable, "-m", "pytest", *common, *processes, "-m", fast_tier,
            f"--basetemp={folder / 'tmp'}"]
    moved = own_clusters(config)
    own = [sys.executable, "-m", "pytest", *common, "-m", HEAVY, f"--basetemp={folder / 'tmp-own'}", *moved]
    runner = [sys.executable, str(Path(__file__).resolve()), json.dumps([fast, own] if moved else [fast])]
    with open(folder / "report.txt", "wb") as out:
        child = subprocess.Popen(
            ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *runner],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            cwd=config.invocation_params.dir, env=env, preexec_fn=_die_with_parent)
    config.option.markexpr = HEAVY
    config.pluginmanager.register(_Report(child, folder, moved), "workbench-fast-tier-alongside")


class _Report:
    """The parent's side: the child's process and folder (its report, store and basetemp)."""

    def __init__(self, child: subprocess.Popen, folder: Path, moved: tuple[str, ...]) -> None:
        self.child, self.folder, self.moved = child, folder, moved

    def pytest_report_header(self, config):
        also = f", then {', '.join(self.moved)}" if self.moved else ""
        return (f"the fast tier runs alongside, in a network namespace of its own (pid {self.child.pid})"
                f"{also}; its report follows this one")

    def pytest_collection_modifyitems(self, config, items):
        """OWN_CLUSTERS' tests run in the child. tests/integration first: the experiments' sweeps
        (e2e) measure how much a node does and compare steps run minutes apart, so they run once
        the fast tier, which takes a share of the processors for its first minutes, is likely
        done."""
        moved = [item for item in items if self.moved and item.nodeid.startswith(self.moved)]
        if moved:
            config.hook.pytest_deselected(items=moved)
            items[:] = [item for item in items if item not in moved]
        items.sort(key=lambda item: not item.nodeid.startswith("tests/integration/"))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        write = session.config.pluginmanager.get_plugin("terminalreporter").write_line
        try:
            code = self.child.wait()
        except KeyboardInterrupt:
            self.child.terminate()
            code = self.child.wait()
        write("")
        write(f"{'=' * 20} the fast tier, run alongside {'=' * 20}", bold=True)
        text = (self.folder / "report.txt").read_text(errors="replace")
        for line in text.rstrip("\n").splitlines():
            write(line)
        self.brief = brief(text)
        shutil.rmtree(self.folder, ignore_errors=True)  # its report is printed whole, pass or fail
        if code == pytest.ExitCode.OK and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK  # every test was in the fast tier
        if code not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            write(f"the fast tier failed (exit status {code}): see its report above", red=True)
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_unconfigure(self, config):
        if self.child.poll() is None:  # the session never finished (usage error)
            self.child.terminate()
            self.child.wait()
        if getattr(self, "brief", None):  # after the parent's last line: a log cut to its head
            # and tail keeps them (the CI run after session 68 lost two of the child's three)
            write = config.pluginmanager.get_plugin("terminalreporter").write_line
            write(f"{'=' * 10} failures run alongside, in brief (whole in the report above) {'=' * 10}",
                  red=True)
            for line in self.brief:
                write(line)


def brief(report: str, per_failure: int = 12, width: int = 1000) -> list[str]:
    """Each failure of a pytest report (its FAILED or ERROR line of the short summary), with
    where it failed (the last `file:line: in` of its traceback and the source line under it) and
    the first `per_failure` lines of its message (`E ...`), each cut at `width`."""
    messages: dict[str, list[str]] = {}
    title, where = None, []
    for line in report.splitlines():
        head = re.fullmatch(r"_+ (?:ERROR at \w+ of )?(\S+) _+", line)
        if head:
            title, where = head.group(1), []
            messages.setdefault(title, [])
        elif line.startswith("="):
            title = None
        elif title is None:
            continue
        elif re.match(r"\S+:\d+: in ", line):
            where = [line]
        elif line.startswith("    ") and len(where) == 1:
            where.append(line)
        elif line.startswith("E ") and len(messages[title]) < per_failure:
            messages[title] += ["  " + w[:width] for w in where] + ["  " + line[:width]]
            where = []
    out = []
    for line in report.splitlines():
        if re.match(r"(FAILED|ERROR) \S", line):
            dotted = line.split()[1].replace("::", ".")  # a class's test is titled Class.test
            out.append(line[:width])
            out += next((m for t, m in messages.items() if dotted.endswith("." + t)), [])
    return out


def child_main(runs: list[list[str]]) -> int:
    """In the child's namespace: the fast tier, then OWN_CLUSTERS' server tests, one after the
    other, each ending with the parent; the fast tier's exit status unless it passed."""
    codes = []
    for argv in runs:
        codes.append(subprocess.call(argv, preexec_fn=_die_with_parent))
        print(flush=True)
    fast, own = (*codes, pytest.ExitCode.NO_TESTS_COLLECTED)[:2]
    return fast if fast not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED) else own


if __name__ == "__main__":
    sys.exit(child_main(json.loads(sys.argv[1])))
