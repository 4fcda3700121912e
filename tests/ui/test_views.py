"""The Run screen's drawings, headless: what each figure says for known data."""

from __future__ import annotations

from rich.console import Console

from tests.ui.livedata import live_state
from workbench.ui.views import (
    error_kinds,
    event_line,
    fmt_duration,
    fmt_us,
    measurement_names,
    op_table,
    percentile_bars,
    progress,
    throughput_chart,
)


def text_of(renderable, width: int = 80) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_formats_fit_their_columns():
    assert [fmt_us(v) for v in (0, 312, 1240, 12_345, 123_456, 1_200_000)] == [
        "0µs", "312µs", "1.24ms", "12.3ms", "123ms", "1.20s"]
    assert [fmt_duration(s) for s in (5, 75, 3725)] == ["5s", "1m15s", "1h02m"]


def test_progress_by_operations_and_eta():
    state = live_state(ticks=40)  # 80,000 of 200,000 operations in 40 s
    p = progress(state, 200_000, 0)
    assert p.fraction == 0.4
    assert p.eta_s == 60.0
    assert p.text == "80,000 / 200,000 ops  40%  ETA 1m00s"
    by_time = progress(state, 0, 50)
    assert by_time.fraction == 0.8 and "ETA 10s" in by_time.text
    assert "no limit" in progress(state, 0, 0).text


def test_op_table_shows_response_time_only_when_paced():
    paced = text_of(op_table(live_state(), live_state().returns, paced=True))
    assert "READ service" in paced and "response" in paced
    unpaced_state = live_state(paced=False)
    unpaced = text_of(op_table(unpaced_state, unpaced_state.returns, paced=False))
    assert "response" not in unpaced and "READ" in unpaced


def test_errors_are_counted_and_named_by_kind():
    state = live_state(errors=12)
    assert error_kinds(state.returns) == [("TIMEOUT", 12)]
    table = text_of(op_table(state, state.returns, paced=False))
    assert "✗ 12" in table and "TIMEOUT 12" in table


def test_measurement_names_skip_intended_and_bookkeeping():
    assert measurement_names(live_state()) == ["READ", "UPDATE"]


def test_percentile_bars_on_a_log_axis():
    state = live_state()
    stats = state.snapshot.stats["READ"]
    text = percentile_bars(stats, state.snapshot.cumulative["READ"], width=60).plain
    lines = text.splitlines()
    assert [line.split()[0] for line in lines[:6]] == ["p50", "p90", "p99", "p99.9", "p99.99", "max"]
    # Longer bars for higher percentiles: the log axis keeps their order.
    widths = [line.count("█") for line in lines[:6]]
    assert widths == sorted(widths) and widths[0] < widths[-1]
    assert fmt_us(stats.max) in lines[5]


def test_throughput_chart_marks_events_under_their_tick():
    state = live_state(ticks=40, events=[(10.5, "target", 2500.0), (30.2, "fault", "node2 killed")])
    rows = throughput_chart(state, width=40).plain.splitlines()
    assert len(rows) == 4 and all(len(r) == 40 for r in rows[:3])
    # the scale's 5 columns leave 35 for the newest 35 ticks: marks stay under their tick's column
    assert rows[3][10] == "T" and rows[3][30] == "!"
    assert event_line(state) == "10.5s T target 2,500 · 30.2s ! node2 killed"
    assert "no events yet" in event_line(live_state())


def test_throughput_chart_has_a_scale_from_zero_to_a_round_top():
    from workbench.ui.views import chart_top, fmt_short

    state = live_state(ticks=40)  # up to 2,100 ops/s, target 2,000
    rows = throughput_chart(state, width=60, height=4).plain.splitlines()
    assert rows[0].startswith("2.5k┤") and rows[3].startswith("   0┤")
    assert rows[1].startswith("    │") and rows[2].startswith("    │")
    assert [chart_top(v) for v in (0, 7, 2000, 2100, 656_271)] == [1, 8, 2000, 2500, 800_000]
    assert [fmt_short(v) for v in (800, 1500, 25_000, 1_200_000)] == ["800", "1.5k", "25k", "1.2M"]


def test_the_node_line_gives_each_nodes_request_rate_and_its_errors():
    from workbench.ui.views import node_line

    nodes = {"127.0.0.1:9042": (5210, 0), "127.0.0.2:9042": (2490, 3)}
    assert node_line(nodes, 1.0) == "nodes 127.0.0.1 5,210/s · 127.0.0.2 2,490/s 3 err"
    assert node_line(nodes, 2.0) == "nodes 127.0.0.1 2,605/s · 127.0.0.2 1,245/s 3 err"
    mixed = {"127.0.0.1:16020": (10, 0), "127.0.0.1:16030": (20, 0)}  # two RegionServers on one host
    assert node_line(mixed, 1.0) == "nodes 127.0.0.1:16020 10/s · 127.0.0.1:16030 20/s"
    assert node_line({}, 1.0) == ""


def test_the_node_line_keeps_a_node_without_requests_and_says_down_where_the_client_knows():
    """Issue 54, 9: after node2 was killed the line vanished; a node with no requests this
    second reads 0/s, one whose connection the client lost reads "down"."""
    from workbench.ui.views import node_line

    nodes = {"127.0.0.1:9042": (1000, 0), "127.0.0.2:9042": (0, 4), "127.0.0.3:9042": (0, 0)}
    assert node_line(nodes, 1.0, frozenset({"127.0.0.2:9042"})) == (
        "nodes 127.0.0.1 1,000/s · 127.0.0.2 down 4 err · 127.0.0.3 0/s")
    assert node_line({"127.0.0.1:9042": (0, 0)}, 1.0) == "nodes 127.0.0.1 0/s"


def test_the_drivers_error_kinds_stand_for_the_bare_error_live():
    """Issue 54, 9: the Run screen said "ERROR 46" where the stored run named the kinds."""
    from dataclasses import replace

    state = live_state()
    returns = {"READ": {"OK": 900, "ERROR": 30, "TIMEOUT": 2}, "UPDATE": {"OK": 800, "ERROR": 16}}
    driver = {"ReadTimeout": 20, "Unavailable": 14, "ConnectionShutdown": 12}
    assert error_kinds(returns) == [("ERROR", 46), ("TIMEOUT", 2)]
    assert error_kinds(returns, driver) == [("ReadTimeout", 20), ("Unavailable", 14),
                                            ("ConnectionShutdown", 12), ("TIMEOUT", 2)]
    live = replace(state, snapshot=replace(state.snapshot, error_kinds=driver))
    caption = text_of(op_table(live, returns, paced=False), width=120)
    assert "✗ errors by kind: ReadTimeout 20, Unavailable 14, ConnectionShutdown 12, TIMEOUT 2" in caption
    assert "ERROR" not in caption


def test_runs_show_lists_requests_per_node_with_share_errors_and_last_interval_served():
    from rich.console import Console

    from workbench.commands.runs import _nodes_table
    from workbench.results.model import Interval, RunResult

    intervals = [Interval(1.0, 1.0, 30, 30, nodes={"a:1": [20, 0], "b:1": [10, 1]}),
                 Interval(2.0, 1.0, 20, 50, nodes={"a:1": [20, 2]})]  # b served nothing in the 2nd
    result = RunResult("run", "cassandra", 2000, 50, 25.0, intervals=intervals)
    assert result.node_totals() == {"a:1": (40, 2), "b:1": (10, 1)}
    console = Console(width=100, record=True)
    console.print(_nodes_table(result, result.node_totals()))
    text = console.export_text()
    assert "a:1" in text and "80.0%" in text and "20.0%" in text
    row_b = next(line for line in text.splitlines() if line.strip().startswith("b:1"))
    assert row_b.split()[-1] == "1.0"  # last seen in the first interval
