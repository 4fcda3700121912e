"""One run over time in the experiment report and the lab report (experiments/timeline.py,
timeline_chart.py): the servers' series under the client's, the spike lines of results/spikes.py,
and nothing about servers for a run that has no server figures."""

from __future__ import annotations

import html
import re

from workbench.experiments.analysis import RunRecord
from workbench.experiments.plan import Step, Target
from workbench.experiments.timeline import RunTimeline, run_timeline
from workbench.experiments.timeline_chart import servers_section, timeline_html
from workbench.results.model import Interval, IntervalMeasurement, RunResult, ServerEventRecord

P99_MS = [10, 11, 9, 10, 38, 10, 10, 10, 25, 10]  # spikes at 5 s (a GC pause under it) and 9 s (none)


def _interval(second: int, p99_ms: float, servers: bool) -> Interval:
    figures = {"client": {"cpu": 0.4}}
    if servers:
        figures["127.0.0.1"] = {"cpu": 1.25, "compactions_pending": 2.0 if second in (4, 5) else 0.0}
        figures["127.0.0.2"] = {"cpu": 3.5 if second == 5 else 0.75}
    read = IntervalMeasurement(1000, p99_ms * 500, 100, int(p99_ms * 1200), {99.0: int(p99_ms * 1000)})
    failed = IntervalMeasurement(2, 900_000, 900_000, 900_000, {99.0: 900_000})
    return Interval(float(second), 1.0, 1000, 1000 * second, {"READ": read, "READ-FAILED": failed},
                    server=figures)


def _result(servers: bool = True) -> RunResult:
    intervals = [_interval(n, p, servers) for n, p in enumerate(P99_MS, 1)]
    events = [ServerEventRecord(4.5, "127.0.0.2", "gc", 0.412, "G1 Young"),
              ServerEventRecord(1.5, "127.0.0.1", "compaction", 3.8, "ycsb.usertable")] if servers else []
    return RunResult("run", "cassandra" if servers else "memory", 10_000, 10_000, 1000.0,
                     intervals=intervals, server_events=events)


def _record(result: RunResult) -> RunRecord:
    step = Step(Target("cassandra", None), "workloadc", ())
    return RunRecord(7, step, 1, result.throughput, result.runtime_ms, 0.0, None,
                     timeline=run_timeline(result))


def test_a_run_with_servers_has_each_nodes_series_under_the_clients_and_its_spike_lines():
    t = run_timeline(_result())
    assert t is not None and list(t.nodes) == ["127.0.0.1", "127.0.0.2", "client"]
    assert t.nodes["127.0.0.2"]["cpu"][4] == 3.5
    # the GC pause ended in the 5th second: its length is that second's longest pause
    assert t.nodes["127.0.0.2"]["gc_ms_max"] == [0, 0, 0, 0, 412, 0, 0, 0, 0, 0]
    assert t.nodes["127.0.0.1"]["compactions_pending"][3:5] == [2.0, 2.0]
    assert t.spikes == ["READ p99 38 ms at 5 s: GC pause 412 ms on 127.0.0.2; compaction on 127.0.0.1",
                        "READ p99 25 ms at 9 s: no server event overlaps it"]
    page = "\n".join(servers_section([_record(_result())]))
    charts = re.findall(r'data-chart="([^"]+)"', page)
    assert charts == ["run-client", "run-servers"]  # the servers' chart under the client's
    servers = page.split('data-chart="run-servers"')[1]
    for series in ("127.0.0.1 CPU cores", "127.0.0.2 CPU cores", "client CPU cores",
                   "127.0.0.2 GC pause ms, top 412", "127.0.0.1 compactions, top 2"):
        assert f'data-series="{series}"' in servers, series
    # the events above the servers' chart: a GC pause of 100 ms or more, a compaction
    assert t.marks == [[1.5, "C", "compaction on 127.0.0.1 at 1.5 s"],
                       [4.5, "G", "GC pause 412 ms on 127.0.0.2 at 4.5 s"]]
    assert ">G<title>GC pause 412 ms on 127.0.0.2 at 4.5 s</title></text>" in servers
    assert ("<li>READ p99 38 ms at 5 s: GC pause 412 ms on 127.0.0.2; compaction on 127.0.0.1</li>"
            in page)
    assert "<li>READ p99 25 ms at 9 s: no server event overlaps it</li>" in page


def test_a_run_with_servers_and_no_spike_says_so():
    result = _result()
    for interval in result.intervals:
        interval.measurements["READ"].percentiles[99.0] = 10_000
    page = "\n".join(timeline_html(run_timeline(result), "run 7"))
    said = html.escape("no spike (a second whose p99 is at least 2 times the run's median p99)")
    assert f"<p class=spikes>{said}</p>" in page
    assert "<li>" not in page


def test_a_memory_run_says_nothing_about_servers():
    result = _result(servers=False)
    assert run_timeline(result) is None
    assert servers_section([_record(result)]) == []


def test_the_lab_reports_json_form_gives_back_the_same_timeline():
    t = run_timeline(_result())
    assert RunTimeline.from_dict(t.as_dict()) == t


def test_the_terminal_report_prints_each_runs_spike_lines_or_no_spike():
    from io import StringIO

    from rich.console import Console

    from workbench.commands.experiment import _spike_lines

    out = StringIO()
    quiet = _record(_result())
    quiet.timeline.spikes = []
    _spike_lines([_record(_result()), quiet, _record(_result(servers=False))], Console(file=out, width=200))
    assert out.getvalue().splitlines() == [
        "run 7 (cassandra/workloadc, repetition 1): p99 spikes and the server events that overlapped them",
        "  READ p99 38 ms at 5 s: GC pause 412 ms on 127.0.0.2; compaction on 127.0.0.1",
        "  READ p99 25 ms at 9 s: no server event overlaps it",
        "run 7 (cassandra/workloadc, repetition 1): no spike"]
