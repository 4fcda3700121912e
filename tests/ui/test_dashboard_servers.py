"""The Run screen's servers' side (issue 54, 3 and 8): a line per node under the throughput chart
(CPU, the longest GC pause, compactions and flushes pending, a killed node DEAD), the client's own
line (loop lag, start gap, a paced run behind its schedule, client-limited), the server events
marked on the chart's timeline beside the run's own, and `?` explaining each, at 80x24."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.ui.livedata import FixedRun, live_state, with_servers
from tests.ui.test_dashboard import EVENTS, _plain, until
from workbench.ui import server_view
from workbench.ui.app import WorkbenchApp
from workbench.ui.widgets.node_strip import NodeStrip
from workbench.ui.widgets.throughput import ThroughputChart


@pytest.fixture(autouse=True)
def sixteen_cores(monkeypatch):
    """The same verdict on every machine: the live one asks for this machine's cores."""
    monkeypatch.setattr(server_view, "machine_cores", lambda: 16)


def servers_app(session, **options) -> WorkbenchApp:
    session.current = FixedRun(with_servers(live_state(ticks=40, events=EVENTS), **options))
    return WorkbenchApp(session, mode="dashboard")


async def test_each_node_has_its_line_and_a_killed_node_stays_dead_at_80x24(session):
    app = servers_app(session, behind=1204)
    async with app.run_test(size=(80, 24)) as pilot:
        strip = app.screen.query_one(NodeStrip)
        await until(pilot, lambda: "127.0.0.1" in _plain(strip.content), what="the node lines")
        text = _plain(strip.content)
        assert "127.0.0.1 cpu 1.2 C2 F1" in text
        assert "127.0.0.2 DEAD" in text  # killed at 30.2 s: no figures since, its place kept
        assert "127.0.0.3 cpu 0.8" in text
        assert "client cpu 0.4 · loop lag 1.5ms · start gap 2.2ms · BEHIND by 1,204 ops" in text
        assert "limited" not in text
        assert strip.region.height == 2 and strip.region.y > app.screen.query_one(ThroughputChart).region.y
        assert all(len(line) <= 80 for line in text.splitlines())


async def test_server_events_are_marked_on_the_same_timeline_as_the_runs_own(session):
    app = servers_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        chart = app.screen.query_one(ThroughputChart)
        await until(pilot, lambda: "throughput" in str(chart.content), what="the chart")
        lines = str(chart.content).splitlines()
        marks, words = lines[-2], lines[-1]
        margin = marks.index(next(c for c in marks if c != " ")) - 8  # T at 8.2 s: the 9th tick
        assert marks[margin + 8] == "T"
        at = {second: marks[margin + second] for second in (12, 18, 20, 21, 24, 30)}
        # compaction, flush, the 412 ms pause; the 4 ms pause unmarked; the run's own fault
        # at 30.6 s drawn over the kill of the same second
        assert at == {12: "C", 18: "F", 20: " ", 21: "L", 24: "G", 30: "!"}, marks
        assert "24.5s G 127.0.0.2 gc 412ms" in words and "30.2s K 127.0.0.2 kill" in words


async def test_the_client_says_when_it_was_the_bottleneck(session):
    app = servers_app(session, client_cpu=1.9)
    async with app.run_test(size=(80, 24)) as pilot:
        strip = app.screen.query_one(NodeStrip)
        await until(pilot, lambda: "client cpu" in _plain(strip.content), what="the client line")
        strip.show(session.current.state, cores=2)
        said = "client-limited: the workers used 1.9 of 2 cores; the servers' CPU was"
        assert said in _plain(strip.content)
        strip.show(session.current.state, cores=8)
        assert "limited" not in _plain(strip.content)


async def test_help_explains_every_mark_and_figure(session):
    app = servers_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        from workbench.ui.screens.help import HELP

        for said in ("`C` a compaction", "`F` a flush", "`G` a GC pause of 100 ms or more",
                     "`K` a node killed", "**gc**", "**C2**", "**F1**", "**DEAD**", "**loop lag**",
                     "**start gap**", "**BEHIND by N ops**", "**client-limited"):
            assert said in HELP, said
        assert app.screen.__class__.__name__ == "HelpScreen"


async def test_before_any_figures_the_strip_takes_no_room(session):
    session.current = FixedRun(live_state(ticks=10))
    app = WorkbenchApp(session, mode="dashboard")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.5)
        assert not app.screen.query_one(NodeStrip).display


def test_dashboard_with_servers_snapshot_80x24(session, snap_compare):
    assert snap_compare(servers_app(session, behind=1204), terminal_size=(80, 24))


def test_a_paced_run_behind_its_schedule_says_so_without_server_figures():
    from workbench.ui.server_view import client_line

    state = live_state(ticks=5)
    assert client_line(replace(state, snapshot=replace(state.snapshot, behind=40))) == \
        "client BEHIND by 40 ops"


def test_a_client_waiting_for_its_cores_says_how_long_on_its_line():
    from workbench.ui.server_view import client_line

    state = live_state(ticks=5)

    def line(figures):
        return client_line(replace(state, snapshot=replace(state.snapshot, server={"client": figures})))

    starved = {"cpu": 0.2, "cpu_wait": 0.8, "loop_lag_ms": 30.0}
    assert line(starved) == "client cpu 0.2 · waited 0.8 · loop lag 30ms"
    assert line({"cpu": 0.9, "cpu_wait": 0.01}) == "client cpu 0.9"  # a few ms a second: not worth a word


async def test_a_real_runs_client_figures_reach_the_strip_live(session):
    """The wiring, on a real paced memory run: the controller's tick -> the snapshot's server
    figures -> the LiveState -> the strip (the client's CPU from /proc, its loops' lag, its start
    gap), while the run goes on. (A screen tall enough for the client's line beside a verdict:
    a loaded machine may well make this client-limited.)"""
    from tests.ui.test_dashboard import endless_load

    app = WorkbenchApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        assert app.start_run(endless_load(2000))
        def strip_text() -> str:
            found = app.screen.query(NodeStrip)
            return _plain(found.first().content) if found else ""

        # (its CPU is a rate: the first second it is read in has none yet)
        await until(pilot, lambda: "start gap" in strip_text() and "cpu " in strip_text(),
                    what="the client's line")
        line = next(x for x in strip_text().splitlines() if x.startswith("client "))
        assert "cpu " in line and "loop lag " in line, line
        assert session.current.state.server and "client" in session.current.state.server[-1]
        await pilot.press("s")
        await until(pilot, lambda: session.finished, what="the stopped phase")


async def test_at_80x24_five_nodes_and_a_verdict_fit_without_scrolling(session, monkeypatch):
    """A short screen: one line of nodes ("+2 more nodes") and one of the client, the verdict with
    BEHIND before it; the chart gives a row, the other panels keep theirs, nothing scrolls."""
    monkeypatch.setattr(server_view, "machine_cores", lambda: 2)
    state = with_servers(live_state(ticks=40, events=EVENTS), behind=1204, client_cpu=1.9)
    more = tuple({**s, "127.0.0.4": {"cpu": 0.5}, "127.0.0.5": {"cpu": 0.7}} for s in state.server)
    session.current = FixedRun(replace(state, server=more, snapshot=replace(state.snapshot, server=more[-1])))
    app = WorkbenchApp(session, mode="dashboard")
    async with app.run_test(size=(80, 24)) as pilot:
        strip = app.screen.query_one(NodeStrip)
        await until(pilot, lambda: "more nodes" in _plain(strip.content), what="the packed node line")
        await pilot.pause(0.3)
        nodes, client = _plain(strip.content).splitlines()[:2]
        assert nodes.endswith("127.0.0.3 cpu 0.8 · +2 more nodes"), nodes
        assert client.startswith("BEHIND by 1,204 ops · client-limited: the workers used 1.9 of 2 cores")
        assert strip.region.height == 2 and app.screen.max_scroll_y == 0
