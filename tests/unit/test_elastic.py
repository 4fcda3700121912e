"""The elastic-speedup experiment's own parts: its file key, the thread that adds and removes the
node at the set time, a run cut at the join, and the report's section. The join itself on real
Cassandra nodes: tests/integration/test_cluster_cassandra.py (add and remove under load, the
events in the export) and tests/e2e/test_experiment_servers.py (the experiment end to end)."""

from __future__ import annotations

import re
import threading
import time
from types import SimpleNamespace

import pytest

from workbench.clusters import journal
from workbench.errors import ConfigError, WorkbenchError
from workbench.experiments import plan
from workbench.experiments.analysis import RunRecord
from workbench.experiments.elastic import NodeAdder, join_windows, streamed
from workbench.experiments.elastic_report import join_table, timeline_chart
from workbench.experiments.page import render_html
from workbench.results.model import Event, Interval, IntervalMeasurement, RunResult


def write(tmp_path, text: str):
    path = tmp_path / "grow.toml"
    path.write_text(text)
    return path


ELASTIC = '''databases = ["cassandra:cassandra-2"]
workloads = ["workloada"]
add_node_at_s = 10
min_measure_s = 40
[sweep]
rate = [90]
'''


def test_the_file_key_adds_a_node_to_cassandra_only_and_the_sweep_keeps_to_its_listed_rate(tmp_path):
    e = plan.load(str(write(tmp_path, ELASTIC)))
    assert e.add_node_at_s == 10.0 and e.added_rates() == []  # 90% is the load: no rates past it
    assert plan.load(str(write(tmp_path, ELASTIC.replace("[sweep]\nrate = [90]\n", "")))).added_rates() == []
    shipped = plan.load("elastic-speedup")
    assert shipped.add_node_at_s is not None and shipped.window_s("laptop") > shipped.add_node_at_s
    only = "every database must be Cassandra"
    for wrong, said in ((ELASTIC.replace("cassandra:cassandra-2", "hbase"), only),
                        (ELASTIC.replace("cassandra:cassandra-2", "memory"), only),
                        (ELASTIC.replace("add_node_at_s = 10", "add_node_at_s = -1"), "from 0 to 3600")):
        with pytest.raises(ConfigError) as caught:
            plan.load(str(write(tmp_path, wrong)))
        assert "add_node_at_s" in str(caught.value) and said in str(caught.value), str(caught.value)


class Cluster:
    """A provider's side of add_node and remove_node, as NodeAdder sees it: what was asked, when.
    (The real join is tested on real nodes; this is the thread's timing and clean-up.)"""

    def __init__(self, fails: bool = False, slow: float = 0.0) -> None:
        self.nodes, self.calls, self.fails, self.slow = ["node1", "node2"], [], fails, slow

    def status(self, name):
        return SimpleNamespace(nodes=[SimpleNamespace(name=n) for n in self.nodes])

    def add_node(self, name):
        self.calls.append(("add", time.monotonic()))
        time.sleep(self.slow)
        if self.fails:
            raise WorkbenchError("port 9042 of 127.0.0.3 is in use", "stop what uses it")
        self.nodes.append(f"node{len(self.nodes) + 1}")
        return self.status(name)

    def remove_node(self, name, node):
        self.calls.append(("remove", node))
        self.nodes.remove(node)


def test_the_node_joins_at_its_time_and_leaves_after_the_run_and_a_short_run_adds_none():
    said: list[str] = []
    cluster = Cluster()
    adder = NodeAdder(cluster, "c2", 0.2, said.append)
    started = time.monotonic()
    adder.start()
    while not cluster.calls:
        time.sleep(0.01)
    assert cluster.calls[0][1] - started >= 0.2
    adder.finish()
    assert [c[0] for c in cluster.calls] == ["add", "remove"] and cluster.calls[1][1] == "node3"
    assert cluster.nodes == ["node1", "node2"] and "node3 joined in" in said[-1]

    said.clear()
    cluster = Cluster()
    adder = NodeAdder(cluster, "c2", 60, said.append)
    adder.start()
    adder.finish()  # the run ended first
    assert cluster.calls == [] and said == ["    the run ended before 60 s: no node was added"]


def test_a_join_that_fails_is_one_line_and_a_join_still_going_at_the_end_is_waited_for():
    said: list[str] = []
    cluster = Cluster(fails=True)
    adder = NodeAdder(cluster, "c2", 0, said.append)
    adder.start()
    adder.finish()
    assert said[-1].startswith("    the node did not join: port 9042 of 127.0.0.3 is in use")
    assert [c[0] for c in cluster.calls] == ["add"]  # nothing to remove

    said.clear()
    cluster = Cluster(slow=0.5)
    adder = NodeAdder(cluster, "c2", 0, said.append)
    adder.start()
    while not cluster.calls:
        time.sleep(0.01)
    ending = threading.Thread(target=adder.finish)
    ending.start()
    ending.join()
    assert said[0] == "    the run ended while the node joined: waiting for the join to finish"
    assert [c[0] for c in cluster.calls] == ["add", "remove"] and cluster.nodes == ["node1", "node2"]


class JournaledCluster(Cluster):
    """add_node writes the journal as the providers do (clusters/resize.py): joining, normal, and
    what the bootstrap streamed a moment after."""

    def __init__(self, run_dir) -> None:
        super().__init__()
        self.run_dir = run_dir

    def add_node(self, name):
        node = f"node{len(self.nodes) + 1}"
        journal.append(self.run_dir, f"+ {node} joining")
        journal.append(self.run_dir, f"{node} normal")
        journal.append(self.run_dir, f"{node} received 1,234 bytes in 0.5 s of streaming")
        return super().add_node(name)


def test_what_the_join_streamed_after_the_run_last_read_the_journal_is_an_event_of_that_run(tmp_path):
    journal.append(tmp_path, "node9 received 5 bytes in 0.1 s of streaming")  # an earlier join's
    adder = NodeAdder(JournaledCluster(tmp_path), "c2", 0, lambda line: None, tmp_path)
    adder.start()
    adder.finish()
    assert adder.moved == "node3 received 1,234 bytes in 0.5 s of streaming"
    run = joined_run()
    run.events = run.events[:3]  # the run's last read came between "normal" and the figure
    [late] = adder.late_events(run)
    assert (late.elapsed_s, late.kind, late.value) == (30.0, "cluster", adder.moved)  # at the run's end
    run.events.append(late)
    assert streamed(run, "node3") == "received 1,234 bytes in 0.5 s of streaming"
    assert adder.late_events(run) == []  # the run has it: nothing twice
    plain = NodeAdder(JournaledCluster(tmp_path), "c2", 0, lambda line: None)  # no journal named
    plain.start()
    plain.finish()
    assert plain.moved is None and plain.late_events(joined_run()) == []


def interval(end: float, ops: int, p99: int, warmup: bool = False, failed: int = 0) -> Interval:
    m = IntervalMeasurement(count=ops, average_us=p99 / 3, min_us=10, max_us=p99 * 2, percentiles={99.0: p99})
    returns = {"READ": {"OK": ops - failed, "NOT_FOUND": 1}, "UPDATE": {"WriteTimeout": failed}}
    return Interval(elapsed_s=end, duration_s=1.0, operations=ops, total_operations=0, warmup=warmup,
                    target=900.0, measurements={"READ": m, "Intended-READ": m}, returns=returns)


def joined_run() -> RunResult:
    """A paced run: 5 s of warm-up, then 1,000 ops/s before the join (p99 2 ms), 600 during it
    (p99 40 ms; 6 updates timed out), 950 after (p99 3 ms); node3 joining at 12.0 s, normal at
    20.0 s. NOT_FOUND reads are not failures (results/model.py is_error)."""
    intervals = [interval(t, 1000, 2000, warmup=True, failed=50) for t in range(1, 6)]  # not counted
    intervals += [interval(t, 1000, 2000) for t in range(6, 13)]
    intervals += [interval(t, 600, 40000, failed=3 if t in (14, 15) else 0) for t in range(13, 21)]
    intervals += [interval(t, 950, 3000) for t in range(21, 31)]
    events = [Event(5.0, "measuring", 5.0), Event(12.0, "cluster", "+ node3 joining"),
              Event(20.0, "cluster", "node3 normal"),
              Event(20.1, "cluster", "node3 received 1,234,567 bytes in 6.5 s of streaming")]
    return RunResult(phase="run", db="cassandra", runtime_ms=25000, operations=20000, throughput=800.0,
                     intervals=intervals, events=events, started_at=1.0e9, warmup_s=5.0)


def test_a_run_is_cut_at_the_join_into_three_windows_each_with_its_interval():
    join = join_windows(joined_run())
    assert join.node == "node3" and join.joining_s == 12.0 and join.duration_s == 8.0
    before, during, after = join.windows
    assert [w.name for w in join.windows] == ["before", "during", "after"]
    assert (before.start_s, before.end_s, during.end_s, after.end_s) == (5.0, 12.0, 20.0, 30.0)
    assert before.throughput.n == 7 and before.throughput.mean == 1000 and before.p99_us.mean == 2000
    assert during.throughput.n == 8 and during.throughput.mean == 600 and during.p99_us.mean == 40000
    assert after.throughput.n == 10 and after.throughput.mean == 950 and after.p99_us.mean == 3000
    assert (before.errors, during.errors, after.errors) == (0, 6, 0)  # the warm-up's are not counted
    assert streamed(joined_run(), "node3") == "received 1,234,567 bytes in 6.5 s of streaming"
    quiet = joined_run()
    quiet.events = quiet.events[:1]
    assert join_windows(quiet) is None


def test_a_join_that_began_in_the_warm_up_counts_none_of_the_warm_ups_failures():
    """node3 starts joining at 2.5 s, in the warm-up: the warm-up intervals ending at 3, 4 and 5 s
    lie inside the 'during' window by their middles, so only the warm-up filter keeps their 50
    failed updates each out of its count (6 measured failures, not 156)."""
    run = joined_run()
    run.events = [Event(2.5, "cluster", "+ node3 joining"), *run.events[2:]]
    before, during, after = join_windows(run).windows
    assert (during.start_s, during.end_s) == (2.5, 20.0)
    assert (before.errors, during.errors, after.errors) == (0, 6, 0)


def test_the_join_tables_intervals_are_the_ones_worked_out_by_hand():
    """The 'during' window's eight seconds: 500 and 700 ops/s in turn, p99 20, 40, 80, 40 ms over
    and over. The interval is Student's t on the logarithms (experiments/stats.py cell), by hand:
      ops/s: logs 6.2146 and 6.5511, mean 6.3829 (geometric mean 591.6), sd 0.17986 (7 df),
        t(0.975, 7) = 2.3646, half-width 2.3646 * 0.17986 / sqrt(8) = 0.15037:
        591.6 * exp(-0.15037) = 509.0 and 591.6 * exp(0.15037) = 687.6;
      p99: logs ln 20, ln 40, ln 80 with weights 2, 4, 2: mean ln 40, sd 0.52397,
        half-width 2.3646 * 0.52397 / sqrt(8) = 0.43805: 40 * 0.64532 = 25.8 and 40 * 1.54965 = 62.0;
        the arithmetic mean 45 ms."""
    run = joined_run()
    during = [i for i in run.intervals if 13 <= i.elapsed_s <= 20]
    for k, i in enumerate(during):
        i.operations = (500, 700)[k % 2]
        m = IntervalMeasurement(count=i.operations, average_us=1000, min_us=10, max_us=100000,
                                percentiles={99.0: (20000, 40000, 80000, 40000)[k % 4]})
        i.measurements = {"READ": m, "Intended-READ": m}
    window = join_windows(run).windows[1]
    assert window.throughput.n == 8 and window.throughput.mean == 600
    assert round(window.throughput.ci_low, 1) == 509.0 and round(window.throughput.ci_high, 1) == 687.6
    assert round(window.p99_us.ci_low / 1000, 1) == 25.8 and round(window.p99_us.ci_high / 1000, 1) == 62.0
    header, rows = join_table([record(run)])
    row = dict(zip(header, rows[0], strict=True))
    assert row["during: ops/s (95% CI)"] == "600 (509 – 688)"
    assert row["during: p99 (95% CI)"] == "45 ms (25.8 – 62)"


def test_a_join_not_normal_before_the_run_ended_has_no_after_window():
    run = joined_run()
    run.events = run.events[:2]
    join = join_windows(run)
    assert join.normal_s is None and join.duration_s is None and not join.failed
    assert join.windows[1].end_s == 30.0 and join.windows[2].throughput is None
    assert join_table([record(run)])[1][0][3] == "not normal before the run ended"
    run.events.append(Event(20.0, "cluster", "node3 did not join (stopped)"))  # killed while it joined
    assert join_windows(run).failed
    assert join_table([record(run)])[1][0][3] == "did not join (stopped again)"


def record(run: RunResult) -> RunRecord:
    step = plan.Step(plan.Target("cassandra", "cassandra-2"), "workloada", (("rate", 90),))
    r = RunRecord(7, step, 1, run.throughput, run.runtime_ms, run.started_at, 900.0)
    r.join = join_windows(run)
    r.streamed = streamed(run, "node3")
    r.series = [(i.elapsed_s, i.throughput, float(i.measurements["Intended-READ"].percentiles[99.0]))
                for i in run.intervals if not i.warmup]
    r.marks = [(e.elapsed_s, str(e.value)) for e in run.events if e.kind == "cluster"]
    return r


def test_the_report_has_the_join_table_the_shared_cores_note_and_each_run_over_time(tmp_path):
    e = plan.load(str(write(tmp_path, ELASTIC)))
    records = [record(joined_run())]
    header, rows = join_table(records)
    assert header[:5] == ["step", "rep", "node", "join (s)", "streamed"]
    row = dict(zip(header, rows[0], strict=True))
    assert row["join (s)"] == "8.0" and row["streamed"] == "received 1,234,567 bytes in 6.5 s of streaming"
    assert row["before: s"] == "7" and row["during: ops/s (95% CI)"].startswith("600 (")
    # p99 in milliseconds, its interval too (it said "2,565 (2,009,885 – 3,016,680 us)")
    assert re.fullmatch(r"40 ms \([\d.]+ – [\d.]+\)", row["during: p99 (95% CI)"]), row
    assert (row["before: failed"], row["during: failed"], row["after: failed"]) == ("0", "6", "0")
    # the calibration runs (rate=max), where no node is added, are not rows of the join table
    calibration = record(joined_run())
    calibration.step = plan.Step(plan.Target("cassandra", "cassandra-2"), "workloada", (("rate", "max"),))
    calibration.join = None
    assert join_table([calibration, *records])[1] == rows
    chart = timeline_chart(records[0])
    assert chart.count('class=event') == 4  # joining and normal, each a line and its label
    assert "+ node3 joining" in chart and "node3 normal" in chart and " received " not in chart
    page = render_html(e, "laptop", records)
    assert "<h2>Elastic speedup: a node added while the run goes on</h2>" in page
    assert "nodes of a local cluster share this host" in page and page.count('data-chart="elastic"') == 1


def test_the_elasticity_lesson_reads_the_join_from_the_runs_figures_and_judges_it():
    from workbench.config import catalog
    from workbench.lessons.figures import run_figures
    from workbench.lessons.model import load
    from workbench.lessons.runner import judge

    figures = run_figures(joined_run())
    assert figures["join.seconds"] == 8.0
    assert (figures["join.before.throughput"], figures["join.during.throughput"],
            figures["join.after.throughput"]) == (1000, 600, 950)
    assert (figures["join.before.p99"], figures["join.during.p99"], figures["join.after.p99"]) == (2, 40, 3)
    failed = (figures["join.before.errors"], figures["join.during.errors"], figures["join.after.errors"])
    assert failed == (0, 6, 0)
    lesson = load(catalog.available("lessons")["elasticity"])
    grow = lesson.step("grow")

    def verdicts(**changed):
        measured = {"grow": {**figures, **changed}}
        return [judge(check, measured).passed for check in grow.checks]
    assert verdicts() == [True, True, True]  # the join ended; no failure; its cost shows
    assert verdicts(**{"join.during.p99": 1.5}) == [True, True, False]  # a join that cost nothing visible
    assert verdicts(errors=figures["operations"] * 0.001) == [True, True, True]  # one in a thousand
    assert verdicts(errors=figures["operations"] * 0.002) == [True, False, True]
    unjoined = {k: v for k, v in figures.items() if not k.startswith("join.")}
    # no join: the join and its cost not judged, the errors still are
    assert [judge(c, {"grow": unjoined}).passed for c in grow.checks] == [None, True, None]
    # the gain: three warm nodes against two (max3 against max), and the cold node right after
    # the join (950 ops/s) against three warm ones
    max3 = lesson.step("max3")

    def gains(two: float, three: float) -> list[bool | None]:
        measured = {"grow": figures, "max": {"throughput": two}, "max3": {"throughput": three}}
        return [judge(check, measured).passed for check in max3.checks]
    assert gains(1007, 1485) == [True, True]  # this machine, 2026-11-28
    assert gains(1007, 1100) == [False, True] and gains(1007, 900) == [False, False]
