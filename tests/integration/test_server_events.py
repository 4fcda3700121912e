"""Server events of a run on real servers (issue 54, 2 and 6): a flush and a compaction forced with
`workbench cluster flush|compact` during a `workbench run` are events of the run, on the node
that did them, within 2 s of the server's own log lines about them; the GC pauses the run
recorded are exactly the pauses of 1 ms or more in the node's GC log over the same seconds."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.runs import run_while
from tests.support.server_logs import allowed_gaps, few_skips, log_lines, noted_gaps
from workbench.clusters import gc_log

pytestmark = pytest.mark.servers

ROOT = Path(__file__).resolve().parents[2]


def _workbench(env: dict, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


@pytest.mark.alone  # flushes, a compaction and GC pauses under load, each within 2 s of its log (alone.py)
def test_cassandra_flush_compaction_and_gc_pauses_are_events_of_the_run(tmp_path, suite_servers,
                                                                        cassandra_node):
    node = cassandra_node.nodes[0]
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir),
               WORKBENCH_STORE=str(tmp_path / "runs.db"))
    common = ["--cluster", cassandra_node.name, "-P", str(ROOT / "workbench" / "workloads" / "workloada"),
              "-p", "recordcount=2000", "-p", "table=server_events", "-p", "cassandra.keyspace=events_test",
              "-threads", "4", "-q"]
    load = _workbench(env, "load", *common, "-p", "cassandra.drop=true")
    assert load.returncode == 0, load.stderr
    jcmd = Path(node.argv[0]).resolve().with_name("jcmd")

    def steps(said: list[str]) -> None:
        time.sleep(3)
        for action in ("flush", "flush", "compact"):
            done = _workbench(env, "cluster", action, cassandra_node.name, node.name)
            assert done.returncode == 0, done.stderr
            said.append(done.stdout.strip())
        if jcmd.exists():  # a full pause of its own, beside the young ones of the load
            subprocess.run([str(jcmd), str(node.pid), "GC.run"], capture_output=True, timeout=30)

    def compacted(events: list) -> bool:  # the compaction of the table ended and was seen
        return any(kind == "compaction" and "events_test.server_events" in detail
                   for _, _, kind, detail in events)

    doc, said = run_while(env, common, tmp_path / "run.json", steps, compacted)
    assert said[0] == f"{cassandra_node.name} {node.name}: flushed in " + said[0].split(" in ")[1]
    assert "compacted" in said[2]
    started = doc["started_at"]
    whole = [i for i in doc["intervals"] if i["duration_s"] > 0.5]
    first, last = started + 1.0, started + whole[-1]["elapsed_s"] - 1.0  # well inside the sampled seconds
    events = doc["server_events"]
    assert {e["node"] for e in events} == {node.address}
    of = {kind: [e for e in events if e["kind"] == kind] for kind in ("flush", "compaction", "gc")}

    lines = log_lines(node.log, first, last)
    flushed = [t for t, text in lines if text.startswith("Enqueuing flush of events_test.server_events")]
    assert len(flushed) == 2, lines
    for when in flushed:
        assert any(abs(started + e["elapsed_s"] - when) <= 2.0 for e in of["flush"]), (when, of["flush"])
    began = [(t, text) for t, text in lines
             if text.startswith("Compacting (") and "events_test/server_events" in text]
    ended = {text.split(")")[0]: t for t, text in lines if text.startswith("Compacted (")}
    assert began, lines
    mine = [e for e in of["compaction"] if "events_test.server_events" in e["detail"] and e["seconds"] > 0]
    # one compaction, one event (not a "started" one and an "ended" one)
    begun = [e for e in of["compaction"] if "events_test.server_events" in e["detail"]
             and first <= started + e["elapsed_s"] <= last]
    assert len(begun) == len(began), (began, begun)
    for when, text in began:
        end = ended[text.replace("Compacting", "Compacted").split(")")[0]]
        assert any(abs(started + e["elapsed_s"] - when) <= 2.0
                   and abs(started + e["elapsed_s"] + e["seconds"] - end) <= 2.0
                   for e in mine), (when, end, mine)

    # GC: the run's pauses are the log's pauses of 1 ms or more, ended in the same seconds
    tail = gc_log.GcLogTail(gc_log.beside(node.log), from_start=True)
    logged = sorted((p.started, p.ms) for p in tail.read() if p.ms >= 1.0 and first <= p.ended <= last)
    recorded = sorted((started + e["elapsed_s"], e["seconds"] * 1000) for e in of["gc"]
                      if first <= started + e["elapsed_s"] + e["seconds"] <= last)
    assert logged, "no GC pause in the run's seconds: the comparison says nothing"
    assert len(recorded) == len(logged), (recorded, logged)
    for (at, ms), (logged_at, logged_ms) in zip(recorded, logged, strict=True):
        assert abs(at - logged_at) < 0.005 and abs(ms - logged_ms) < 0.002, (recorded, logged)
    figures = [i["server"].get(node.address, {}) for i in whole[1:]]
    assert sum(f.get("gc_pauses", 0) for f in figures) >= len(logged)
    assert max(f.get("gc_pause_ms_max", 0) for f in figures) >= max(ms for _, ms in logged)
    staged = [f for f in figures if "queue.MutationStage.pending" in f and "compactions_pending" in f]
    assert len(staged) >= len(figures) - allowed_gaps(len(figures)), figures
    few_skips(doc["server_notes"], ("cql", "gc-log"))


def test_cassandra_flush_and_compact_refuse_what_is_not_there(suite_servers, cassandra_node):
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    for args, said in ((("flush", cassandra_node.name, "node9"),
                        f"cluster '{cassandra_node.name}' has no node 'node9'"),
                       (("compact", "no-such-cluster"), "no cluster named 'no-such-cluster'")):
        done = _workbench(env, "cluster", *args)
        assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) <= 2


@pytest.mark.alone  # flushes and compactions under load, each within 2 s of its log (alone.py)
def test_hbase_flush_and_compaction_show_in_jmx_events(tmp_path, suite_servers, hbase_server):
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir),
               WORKBENCH_STORE=str(tmp_path / "runs.db"))
    common = ["--cluster", hbase_server.name, "-P", str(ROOT / "workbench" / "workloads" / "workloada"),
              "-p", "recordcount=2000", "-p", "table=server_events", "-threads", "4", "-q"]
    load = _workbench(env, "load", *common, "-p", "hbase.drop=true")
    assert load.returncode == 0, load.stderr
    first = _workbench(env, "cluster", "flush", hbase_server.name)  # the load's rows: a store file
    assert first.returncode == 0, first.stderr

    def steps(said: list[str]) -> None:
        for action in ("flush", "compact"):  # the run's updates: a second file; then both merged
            done = _workbench(env, "cluster", action, hbase_server.name, "master")
            assert done.returncode == 0, done.stderr
            said.append(done.stdout.strip())

    # HBase's admin tools are JVMs too, and the compaction is done after its request returns (a
    # rehearsal under two busy loops had the flush in a 40-s run, not the compaction)
    key = f"master@{hbase_server.nodes[0].address}"

    def both(events: list) -> bool:
        kinds = {(node, kind) for _, node, kind, _ in events}
        return {(key, "flush"), (key, "compaction")} <= kinds

    doc, said = run_while(env, common, tmp_path / "run.json", steps, both)
    assert "flushed" in said[0] and "major compaction requested" in said[1]
    kinds = {(e["node"], e["kind"]) for e in doc["server_events"]}
    assert {(key, "flush"), (key, "compaction")} <= kinds, doc["server_events"]
    whole = [i for i in doc["intervals"] if i["duration_s"] > 0.5]
    figures = [i["server"].get(key, {}) for i in whole[2:]]
    read = [f for f in figures if "memstore_bytes" in f and "flushes_pending" in f]
    # a second may be lost while HBase renews its beans, or to a loaded machine: each one the run's
    # notes count (at most one in five late or busy: few_skips), but for the first and last (a
    # rehearsal under two busy loops had 13 of 48 seconds without /jmx figures; until then the
    # sampler filed what its thread, woken late, asked under the next second, and counted nothing)
    gaps = len(figures) - len(read)
    assert gaps <= 2 + noted_gaps(doc["server_notes"], "jmx"), (gaps, figures, doc["server_notes"])
    assert any(f.get("requests", 0) > 0 for f in figures)
    few_skips(doc["server_notes"], ("jmx", "gc-log"))
