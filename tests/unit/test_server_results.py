"""The servers' side of a run wherever its intervals go: the run store (written live and at the
end, read back), the JSON export (`intervals[].server`, `server_events`, `server_notes`), the
server CSV exports, `runs show`'s table per node and `runs compare`'s CPU line per node."""

from __future__ import annotations

import csv
import json
import re

import pytest

from workbench.cli import main
from workbench.config.spec import spec_from_args
from workbench.drive import phase as phase_module
from workbench.drive.phase import execute_phase
from workbench.metrics.server import NodeSample, ServerEvent
from workbench.results.model import Interval, RunResult, ServerEventRecord
from workbench.results.server_summary import node_summaries
from workbench.results.store import RunStore


class Node2:
    """A node at 1.5 cores with a GC pause, a compaction and queues every second."""

    name = "fake"

    def sample(self, now: float) -> list[NodeSample]:
        return [NodeSample("127.0.0.2", {"cpu": 1.5, "rss_bytes": 2e9, "queue.ReadStage.pending": 3,
                                         "queue.MutationStage.pending": 7},
                           (ServerEvent("127.0.0.2", now - 0.05, "gc", 0.040, "G1 Young"),
                            ServerEvent("127.0.0.2", now - 0.02, "compaction", 0.0, "ycsb.usertable")))]

    def close(self) -> None:
        pass


class Unreadable:
    name = "jmx"

    def sample(self, now: float):
        from workbench.metrics.server import SourceUnavailable

        raise SourceUnavailable("no JMX figures: the info server does not answer")

    def close(self) -> None:
        pass


def _record(monkeypatch, tmp_path):
    monkeypatch.setattr(phase_module, "sources_for", lambda cluster, db: [Node2(), Unreadable()])
    spec, props = spec_from_args([], ["db=memory", "recordcount=100", "operationcount=3000",
                                      "target=1000"], "run")
    store = tmp_path / "runs.db"
    done = execute_phase(spec, props.as_dict(), "run", store=store, status=False)
    return store, done


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A 3-second memory run with the fake node's figures, recorded live into a store: one for
    the module's tests that only read it."""
    with pytest.MonkeyPatch.context() as mp:
        return _record(mp, tmp_path_factory.mktemp("recorded"))


UNREADABLE = "jmx: no JMX figures: the info server does not answer"


def late(notes: list[str]) -> int:
    """The fake source's seconds skipped because its answer came after its second's tick (a
    loaded machine can delay the sampler's thread past its 0.2 s lead), as its note says; no
    other skip of it is allowed."""
    said = [n for n in notes if n.startswith("fake: ")]
    assert all(re.fullmatch(r"fake: (\d+) of \d+ seconds skipped \(\1 late\)", n) for n in said), said
    return sum(int(n.split()[1]) for n in said)


def not_asked(notes: list[str]) -> int:
    """Seconds the sampler did not ask at all, its thread woken more than a second late (a loaded
    machine: CI once saw 4 of 8), as its own note says."""
    said = [n for n in notes if n.startswith("sampler: ")]
    assert all(re.match(r"sampler: \d+ of \d+ seconds not asked \(its thread woke", n) for n in said), said
    return sum(int(n.split()[1]) for n in said)


def test_the_store_and_the_json_export_carry_the_servers_side(recorded, tmp_path):
    store, done = recorded
    with RunStore(store) as s:
        back = s.result(done.run_id)
        events = s.conn.execute("SELECT node, kind, seconds FROM server_events WHERE run_id = ?",
                                (done.run_id,)).fetchall()
    asked = len(events) // 2  # once a second: 3, or more for a run held behind (see below)
    assert asked + not_asked(done.result.server_notes) >= 3
    assert events == [("127.0.0.2", "gc", 0.04), ("127.0.0.2", "compaction", 0.0)] * asked
    assert back.server_events == done.result.server_events
    assert back.server_notes == done.result.server_notes
    assert [n for n in back.server_notes if not n.startswith(("fake: ", "sampler: "))] == [UNREADABLE]
    assert [i.server for i in back.intervals] == [i.server for i in done.result.intervals]
    out = tmp_path / "run.json"
    assert main(["runs", "export", str(done.run_id), "--store", str(store), "--export", f"json={out}"]) == 0
    run = json.loads(out.read_text())["run"]
    # 3,000 operations at 1,000 a second: three whole seconds, or more when a loaded machine
    # held the run behind its schedule (a last short one of 0.64 s seen under -n 3)
    whole = [i for i in run["intervals"] if i["duration_s"] > 0.9]
    assert len(whole) >= 3
    seen = [i["server"]["127.0.0.2"] for i in whole if "127.0.0.2" in i["server"]]
    assert all(f["cpu"] == 1.5 for f in seen)
    assert len(whole) - len(seen) <= late(run["server_notes"]) + not_asked(run["server_notes"])
    # at the time it was recorded (0.75 s when the sampler asked on time, later on a loaded machine
    # that woke it late: the placement itself is test_server_sampler's business)
    first = back.server_events[0]
    at = pytest.approx(first.elapsed_s, abs=0.001)
    assert run["server_events"][0] == {"elapsed_s": at, "node": "127.0.0.2", "kind": "gc", "seconds": 0.04,
                                       "detail": "G1 Young"}
    assert 0.6 < first.elapsed_s < whole[-1]["elapsed_s"]
    assert run["server_notes"] == back.server_notes


def test_an_incomplete_run_keeps_the_server_events_written_live(monkeypatch, tmp_path):
    # as if the process had died before the end: the run's result never reaches the store
    monkeypatch.setattr(RunStore, "finish", lambda self, run_id, result, recorded=0: None)
    store, done = _record(monkeypatch, tmp_path)
    with RunStore(store) as s:
        assert s.row(done.run_id).status == "running"
        back = s.result(done.run_id)
    asked = len(back.server_events) // 2
    assert asked + not_asked(done.result.server_notes) >= 3
    kinds = [(e.kind, e.node) for e in back.server_events]
    assert kinds == [("gc", "127.0.0.2"), ("compaction", "127.0.0.2")] * asked
    assert any(i.server.get("127.0.0.2", {}).get("cpu") == 1.5 for i in back.intervals)


def test_the_server_csv_exports(recorded, tmp_path):
    store, done = recorded
    figures, events = tmp_path / "server.csv", tmp_path / "events.csv"
    assert main(["runs", "export", str(done.run_id), "--store", str(store), "--export",
                 f"server-csv={figures}", "--export", f"server-events={events}"]) == 0
    rows = list(csv.DictReader(figures.open()))
    node = [r for r in rows if r["node"] == "127.0.0.2"]
    assert len(node) >= 3 and {r["cpu"] for r in node} == {"1.5"}
    assert node[0]["queue.MutationStage.pending"] == "7.0"
    # no client source in this run: the client's row holds only the engine's own figures
    assert {r["node"] for r in rows} == {"127.0.0.2", "client"}
    assert all(r["cpu"] == "" and r["loop_lag_ms"] for r in rows if r["node"] == "client")
    assert list(csv.reader(figures.open()))[0][:4] == ["elapsed_s", "node", "cpu", "rss_bytes"]
    kinds = [(r["kind"], r["seconds"]) for r in csv.DictReader(events.open())]
    assert len(kinds) >= 6 and kinds == [("gc", "0.04"), ("compaction", "0.0")] * (len(kinds) // 2)


def test_runs_show_has_a_table_per_node_and_compare_a_cpu_line(recorded, capsys):
    store, done = recorded
    assert main(["runs", "show", str(done.run_id), "--store", str(store)]) == 0
    shown = capsys.readouterr().out
    table = shown[shown.index("servers (as they were sampled"):]
    row = next(line for line in table.splitlines() if line.strip().startswith("127.0.0.2"))
    assert row.split()[:4] == ["127.0.0.2", "1.50", "1.50", "2.0"]  # cpu mean, max, memory GB
    # the busiest queue; a pause of 40 ms at each of the fake node's answers (3, or more for a run
    # a loaded machine held behind), their total and the longest
    pauses = sum(1 for e in done.result.server_events if e.kind == "gc")
    assert pauses >= 3 and "MutationStage 7" in row and f" {pauses} " in row, row
    assert f" {40 * pauses} " in row and " 40 " in row, row
    assert "not seen: jmx: no JMX figures" in shown
    assert "gc on 127.0.0.2 40 ms (G1 Young)" in shown
    assert main(["runs", "compare", str(done.run_id), str(done.run_id), "--store", str(store)]) == 0
    compared = capsys.readouterr().out
    line = next(line for line in compared.splitlines() if "cpu 127.0.0.2 cores" in line)
    assert line.split()[-2:] == ["1.50", "1.50"]


def _run_with(server: list[dict], events: list[ServerEventRecord]) -> RunResult:
    intervals = [Interval(float(k + 1), 1.0, 10, 10 * (k + 1), server=s) for k, s in enumerate(server)]
    return RunResult("run", "cassandra", 3000, 30, 10.0, intervals=intervals, server_events=events)


def test_node_summaries_take_pauses_from_events_else_from_counts():
    run = _run_with([{"127.0.0.1": {"cpu": 1.0, "gc_pauses": 2, "gc_pause_ms_total": 30,
                                    "gc_pause_ms_max": 25, "compactions_pending": 2, "flushes_pending": 1}},
                     {"127.0.0.1": {"cpu": 3.0, "gc_pauses": 1, "gc_pause_ms_total": 50,
                                    "gc_pause_ms_max": 50}},
                     {"127.0.0.1": {"rss_bytes": 5e8}, "client": {"cpu": 0.5}}],
                    [ServerEventRecord(1.2, "127.0.0.3", "flush", 0.0, "")])
    first, third, client = node_summaries(run)
    assert (first.node, first.cpu_mean, first.cpu_max, first.rss_max) == ("127.0.0.1", 2.0, 3.0, 5e8)
    assert (first.gc_pauses, first.gc_ms_total, first.gc_ms_max) == (3, 80, 50)
    assert (first.compactions, first.flushes, first.busiest_queue) == (2, 1, None)
    assert (third.node, third.cpu_mean, third.flushes, third.gc_pauses) == ("127.0.0.3", None, 1, None)
    assert (client.node, client.cpu_mean) == ("client", 0.5)
