"""Shipped lessons end to end on the real servers they start, as a student runs them headless."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_demo import jvms_under
from workbench.lessons.progress import lesson_steps
from workbench.results.store import RunStore

ROOT = Path(__file__).resolve().parents[2]


def lesson(tmp_path: Path, name: str, *more: str) -> subprocess.CompletedProcess:
    """The lesson headless; `more` (-p ...) shortens its runs where the test does not need their
    length (-p STEP:KEY=VALUE a step's own setting, where the test asserts nothing it changes)."""
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(tmp_path / "state"),
               WORKBENCH_STORE=str(tmp_path / "runs.db"))
    return subprocess.run([sys.executable, "-m", "workbench", "lesson", "run", name, "--no-tui",
                           "--student", "t", *more], capture_output=True, text=True, timeout=900, env=env,
                          cwd=ROOT)


def verdicts(tmp_path: Path, name: str) -> dict[str, list[bool | None]]:
    with RunStore(tmp_path / "runs.db") as store:
        return {d.step: [c["passed"] for c in d.checks] for d in lesson_steps(store, name, "t")}


@pytest.mark.servers
def test_coordinated_omission_freezes_a_real_node_and_response_time_shows_the_stall(tmp_path):
    # The freeze stays at 5-9 s; 13 s runs leave 4 s after the thaw (the queue drains in about 1)
    done = lesson(tmp_path, "coordinated-omission", "-p", "recordcount=2000",
                  "-p", "steady:maxexecutiontime=5", "-p", "frozen:maxexecutiontime=13",
                  "-p", "closed:maxexecutiontime=13")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "at 5 s: pause node1" in done.stdout and "at 9 s: resume node1" in done.stdout
    found = verdicts(tmp_path, "coordinated-omission")
    assert list(found) == ["up", "load", "steady", "frozen", "closed", "down"]
    assert found["steady"] != [None]  # judged (on a busy machine it may say the rate queued)
    # The freeze is four seconds of a thirteen-second run at 1,000 reads/s: response time shows it,
    # service time and the closed loop do not, however busy the machine.
    assert found["frozen"] == [True, True, True] and found["closed"] == [True], done.stdout[-4000:]
    with RunStore(tmp_path / "runs.db") as store:
        events = store.result(lesson_steps(store, "coordinated-omission", "t")[3].run_id).events
    assert [e.value for e in events if e.kind == "fault"] == ["node1 paused (frozen)", "node1 resumed"]
    assert jvms_under(tmp_path / "state") == []


@pytest.mark.servers
def test_consistency_and_failure_kills_a_real_node_one_survives_quorum_and_all_fail(tmp_path):
    done = lesson(tmp_path, "consistency-and-failure", "-p", "maxexecutiontime=4", "-p", "recordcount=1000")
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    found = verdicts(tmp_path, "consistency-and-failure")
    assert list(found) == ["up", "load", "healthy", "kill", "one", "quorum", "all", "back", "recovered",
                           "down"]
    # Replication factor 2 and node3 dead: whatever the machine's load, ONE never needs node3,
    # QUORUM and ALL fail for the rows it holds a replica of, and QUORUM works once it is back
    # (on a loaded machine a request may still time out: far fewer than while it was dead).
    assert (found["one"], found["quorum"], found["all"]) == ([True], [True], [True]), done.stdout[-4000:]
    with RunStore(tmp_path / "runs.db") as store:
        figures = {d.step: d.figures for d in lesson_steps(store, "consistency-and-failure", "t")}
    assert figures["recovered"]["errors"] < figures["quorum"]["errors"] / 4, done.stdout[-4000:]
    assert jvms_under(tmp_path / "state") == []


@pytest.mark.servers
def test_write_path_measures_both_commit_logs_and_both_hbase_durabilities(tmp_path):
    done = lesson(tmp_path, "write-path", "-p", "maxexecutiontime=4", "-p", "recordcount=1000")
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    found = verdicts(tmp_path, "write-path")
    assert [s for s, v in found.items() if v] == ["batch", "skipwal"]
    # Judged on real figures (which way depends on this machine's disk, and a loaded machine's noise).
    assert None not in found["batch"] + found["skipwal"], done.stdout[-4000:]
    assert "stopping cassandra-single\n" in done.stdout and "stopping cassandra-single-batch\n" in done.stdout
    assert jvms_under(tmp_path / "state") == []


@pytest.mark.servers
def test_saturation_sweeps_a_real_node_past_its_knee(tmp_path):
    done = lesson(tmp_path, "saturation", "-p", "maxexecutiontime=4")
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    found = verdicts(tmp_path, "saturation")
    assert [s for s, v in found.items() if v] == ["max", "r50", "r75", "r300"]
    # Three times the unthrottled throughput is more than the node does, however loaded the machine.
    assert found["r300"][0] is True and None not in found["r300"] + found["r50"], done.stdout[-4000:]
    with RunStore(tmp_path / "runs.db") as store:
        steps = {d.step: d for d in lesson_steps(store, "saturation", "t")}
        target = store.result(steps["r50"].run_id).properties["target"]
    assert int(target) == round(steps["max"].figures["throughput"] * 0.5)  # the share of the measured maximum
    assert jvms_under(tmp_path / "state") == []


@pytest.mark.servers
def test_cassandra_vs_hbase_repeats_each_mix_on_both_and_reads_welchs_test(tmp_path):
    # the warm-ups (30 s each) only make the figures a student reads warm: the test asserts
    # that every check is judged, not which way
    done = lesson(tmp_path, "cassandra-vs-hbase", "-p", "maxexecutiontime=3", "-p", "recordcount=2000",
                  "-p", "c_warm:maxexecutiontime=5", "-p", "h_warm:maxexecutiontime=5")
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    found = verdicts(tmp_path, "cassandra-vs-hbase")
    assert [s for s, v in found.items() if v] == ["h_b", "h_a"]
    assert None not in found["h_b"] + found["h_a"], done.stdout[-4000:]  # every test judged
    with RunStore(tmp_path / "runs.db") as store:
        labels = [r.label for r in sorted(store.list(), key=lambda r: r.id)]
        steps = {d.step: d for d in lesson_steps(store, "cassandra-vs-hbase", "t")}
    assert [f"lesson cassandra-vs-hbase h_b #{n}" in labels for n in (1, 2, 3)] == [True] * 3
    assert len(steps["c_b"].figures["reps.throughput"]) == 3
    assert "welch_p(c_b.throughput, h_b.throughput) = " in done.stdout
    assert jvms_under(tmp_path / "state") == []


@pytest.mark.servers
def test_hot_partitions_counts_requests_per_cassandra_node_and_inserts_per_hbase_region(tmp_path):
    # The Cassandra runs a second shorter (their thresholds hold from about 1,000 operations up);
    # the HBase loads keep their own pace (1,000 inserts a second, 10 s each: a second each
    # region is the target of, whatever the machine's load), and every run its 10,000 records,
    # the count the thresholds were worked out for.
    done = lesson(tmp_path, "hot-partitions", "-p", "maxexecutiontime=4")
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    found = verdicts(tmp_path, "hot-partitions")
    assert list(found) == ["up", "load", "uniform", "zipfian", "celebrity", "latest", "hbase_up", "ordered",
                           "hashed", "down"]
    # Each check is about where keys land (hashes, tokens, key order), not about speed: it holds
    # on a loaded machine as on an idle one.
    assert {s: v for s, v in found.items() if v} == {
        "load": [True], "uniform": [True], "zipfian": [True], "celebrity": [True], "latest": [True, True],
        "ordered": [True, True], "hashed": [True]}, done.stdout[-6000:]
    with RunStore(tmp_path / "runs.db") as store:
        figures = {d.step: d.figures for d in lesson_steps(store, "hot-partitions", "t")}
    assert figures["uniform"]["nodes.count"] == 3 and figures["celebrity"]["nodes.count"] == 3
    assert figures["ordered"]["regions.count"] == 4 and figures["hashed"]["regions.count"] == 4
    assert figures["ordered"]["operations"] == figures["hashed"]["operations"] == 10000
    assert "stopping cassandra-3\n" in done.stdout
    assert jvms_under(tmp_path / "state") == []
