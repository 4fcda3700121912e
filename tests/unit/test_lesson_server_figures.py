"""A lesson step's servers' side (issue 54, 5): server.* figures over the cluster's nodes (the
client's own processes left out), spikes.* (the seconds whose p99 stood out and the server events
that overlapped them), the checks that read them, and the settle action that needs a cluster."""

from __future__ import annotations

import pytest

from workbench.lessons import checks
from workbench.lessons.figures import run_figures, server_figures, spike_figures
from workbench.lessons.model import LessonError, load
from workbench.results.model import Interval, IntervalMeasurement, RunResult
from workbench.results.model import ServerEventRecord as Event


def _second(end: float, p99_us: int, server: dict | None = None, warmup: bool = False) -> Interval:
    read = IntervalMeasurement(100, p99_us / 2, 100, p99_us, {50.0: p99_us // 4, 99.0: p99_us})
    return Interval(end, 1.0, 100, int(100 * end), {"READ": read}, server=server or {}, warmup=warmup)


def _result(intervals, events=()) -> RunResult:
    return RunResult("run", "cassandra", 1000 * len(intervals), 100 * len(intervals), 100.0,
                     intervals=intervals, server_events=list(events))


def test_server_figures_add_up_the_nodes_and_leave_the_client_out():
    intervals = [
        _second(1.0, 2000, {"127.0.0.1": {"cpu": 0.5, "compactions_pending": 2, "flushes_pending": 1},
                            "127.0.0.2": {"cpu": 1.25}, "client": {"cpu": 1.9}}),
        _second(2.0, 2000, {"127.0.0.1": {"cpu": 0.75, "compactions_pending": 3},
                            "127.0.0.2": {"cpu": 0.5, "compactions_pending": 1}}),
    ]
    events = [Event(0.2, "127.0.0.1", "gc", 0.012), Event(1.5, "127.0.0.2", "gc", 0.040),
              Event(1.6, "127.0.0.2", "gc", 0.003), Event(0.5, "client", "gc", 0.5),
              Event(0.1, "127.0.0.1", "compaction", 1.2), Event(1.9, "127.0.0.1", "flush")]
    found = server_figures(_result(intervals, events))
    # compactions as `runs show` counts them per node: 127.0.0.1's one begun, 127.0.0.2's (no
    # events of it) the most it had pending at once
    assert found == pytest.approx({
        "server.gc_pauses": 3, "server.gc_pause_ms_max": 40, "server.gc_pause_ms_total": 55,
        "server.compactions": 2, "server.flushes": 1, "server.cpu_max": 1.25,
        "server.compactions_pending": 3, "server.flushes_pending": 1})
    assert set(found) <= set(checks.figure_paths())
    # a run with no servers' side (the memory binding) has none of them: a check is not judged
    assert server_figures(_result([_second(1.0, 2000)])) == {}


def test_spikes_count_the_slow_seconds_and_what_overlapped_each():
    # median p99 2 ms: 5 ms at 3 s (a GC pause and a flush overlap it), 9 ms at 5 s (a compaction
    # begun at 3.5 s that lasted 1.2 s), 4 ms at 7 s (nothing of the servers' overlaps it; the
    # client's own pause does not count), and a warm-up second at 50 ms that is no spike
    intervals = [_second(0.5, 50000, warmup=True)] + [
        _second(float(s), {3: 5000, 5: 9000, 7: 4000}.get(s, 2000)) for s in range(1, 9)]
    events = [Event(2.4, "127.0.0.1", "gc", 0.2), Event(2.9, "127.0.0.1", "flush"),
              Event(3.5, "127.0.0.2", "compaction", 1.2), Event(6.5, "client", "gc", 0.3)]
    found = spike_figures(_result(intervals, events))
    assert found == pytest.approx({"spikes.count": 3, "spikes.explained": 2, "spikes.gc": 1,
                                   "spikes.compaction": 1, "spikes.flush": 1, "spikes.worst_ratio": 4.5})
    assert set(found) <= set(checks.figure_paths())
    assert set(found) <= set(run_figures(_result(intervals, events)))
    calm = spike_figures(_result([_second(float(s), 2000) for s in range(1, 6)]))
    assert calm["spikes.count"] == 0 and calm["spikes.worst_ratio"] == 1
    assert spike_figures(_result([])) == {}


def test_checks_read_server_and_spike_figures_and_refuse_the_unknown():
    figures = {"g": {"server.gc_pauses": 12.0, "seconds": 15.0, "spikes.gc": 1.0, "spikes.count": 2.0},
               "s": {"server.gc_pauses": 3.0, "seconds": 15.0}}
    assert checks.parse("g.server.gc_pauses / g.seconds > s.server.gc_pauses / s.seconds").evaluate(figures)
    assert checks.parse("g.spikes.gc >= 1 or g.spikes.count == 0").evaluate(figures)
    assert not checks.parse("s.server.gc_pauses > 5").evaluate(figures)
    with pytest.raises(checks.Unmeasured, match="server figures come from a cluster's nodes"):
        checks.parse("s.server.compactions > 0").evaluate(figures)
    for bad in ("g.server.gc_pause > 0", "g.spikes > 0", "g.server.cpu > 1"):
        with pytest.raises(checks.CheckSyntaxError, match="unknown figure"):
            checks.parse(bad)
    assert checks.unit("server.gc_pause_ms_max") == "ms" and checks.unit("server.cpu_max") == "cores"


LESSON = '''title = "T"
goal = "G"
minutes = 3
[[clusters]]
preset = "cassandra-single"
memory = "1.5G"
[[steps]]
id = "calm"
action = "settle"
[[steps]]
id = "up"
action = "start"
cluster = "cassandra-single"
[[steps]]
id = "settled"
action = "settle"
'''
TEXT = "# T\n\n## Calm {#calm}\n\n## Up {#up}\n\n## Settled {#settled}\n"


def test_settle_is_an_action_on_a_started_cluster(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(LESSON)
    (tmp_path / "mine.md").write_text(TEXT)
    with pytest.raises(LessonError) as caught:
        load(path)
    assert [line.split(": ", 1)[1] for line in caught.value.lines()] == [
        "step 'calm': settle before any cluster was started (add a step with action = \"start\" before it)"]
    path.write_text(LESSON.replace('id = "calm"\naction = "settle"', 'id = "calm"\naction = "none"'))
    assert [s.action for s in load(path).steps] == ["none", "start", "settle"]


# As measured by `workbench lesson run why-p99-moved` at its default scale (2026-11-29, 225 s on a
# shared 2-core machine): runs 2, 3 and 5 to 8 of that lesson's store.
WHY_P99 = {
    "c_load": {"server.flushes": 5.0},
    "c_fresh": {"server.flushes": 0.0, "server.compactions": 0.0, "server.compactions_pending": 0.0,
                "spikes.explained": 0.0, "spikes.count": 4.0, "read.p99": 22.4},
    "c_settled": {"server.compactions_pending": 0.0, "read.p99": 14.7, "server.gc_pauses": 2.0,
                  "operations": 76744.0},
    "h_load": {"server.flushes": 1.0},
    "h_fresh": {"server.flushes": 0.0, "server.compactions": 0.0, "read.p99": 13.4},
    "h_settled": {"read.p99": 8.89},
    "g_small": {"server.gc_pauses": 2.0, "operations": 44095.0, "spikes.gc": 0.0, "spikes.count": 2.0},
}


def _verdicts(figures: dict) -> list[bool | None]:
    from workbench.config import catalog
    from workbench.lessons.runner import judge

    lesson = load(catalog.available("lessons")["why-p99-moved"])
    return [judge(c, figures).passed for s in lesson.steps for c in s.checks]


def test_why_p99_moved_judges_what_its_runs_measured_both_ways():
    # the load's flushes, no server event behind c_fresh's 4 spikes, settled no busier and
    # faster on both databases, the small heap paused, more often per operation, not in a spike
    assert _verdicts(WHY_P99) == [True, False, True, True, True, True, True, True, False]
    quiet = {**WHY_P99, "c_load": {"server.flushes": 0.0}, "h_load": {"server.flushes": 0.0},
             "c_fresh": {**WHY_P99["c_fresh"], "spikes.count": 0.0, "read.p99": 10.0},
             "h_settled": {"read.p99": 20.0},
             "g_small": {**WHY_P99["g_small"], "server.gc_pauses": 0.0, "spikes.count": 0.0}}
    assert _verdicts(quiet) == [False, True, True, False, False, False, False, False, True]
    # a run whose servers' side was not sampled is not judged, not failed
    blind = {**WHY_P99, "g_small": {"operations": 44095.0, "spikes.count": 0.0}}
    assert _verdicts(blind)[-3:-1] == [None, None]
