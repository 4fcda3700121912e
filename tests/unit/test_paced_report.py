"""A paced experiment's report leads with latency at the offered load (issue 55, 7): the scale-up
case of 2026-11-29, where a repetition that started behind its schedule recorded 4,639 ops/s
against 3,000 offered, on synthetic records: that run is named as catching up and its latency
left out, the table and chart lead with response times, the throughput only checks delivery."""

from __future__ import annotations

import csv
import re

from workbench.experiments import plan
from workbench.experiments.analysis import OpFigures, RunRecord, write_csv
from workbench.experiments.paced_report import is_paced, latency_table, notes
from workbench.experiments.page import render_html
from workbench.results.paced import Pacing

EXPERIMENT = """\
databases = ["cassandra:cassandra-single"]
workloads = ["workloada"]
repetitions = 3
per_node = ["target"]
[properties]
target = 1500
[sweep]
nodes = [1, 2]
"""


def figures(p50_us: int, p99_us: int) -> OpFigures:
    return OpFigures(1000, p50_us, {"p50": p50_us, "p95": p99_us, "p99": p99_us, "p99.9": p99_us}, p99_us)


def records(e: plan.Experiment) -> list[RunRecord]:
    """Three repetitions a step; the second of two nodes started 2.5 s behind its schedule."""
    out = []
    for step in e.steps():
        offered = 1500.0 * dict(step.values)["nodes"]
        for rep in (1, 2, 3):
            late = step.key.endswith("nodes=2") and rep == 2
            pacing = Pacing(offered, 4639.0 if late else offered * 0.999, 2.5 if late else 0.0, 0.0)
            p99 = 90_000 if late else 4_000 + 1_000 * rep
            response = {"READ": figures(1_000, p99), "UPDATE": figures(1_200, p99 // 2)}
            out.append(RunRecord(len(out) + 1, step, rep, pacing.achieved, 20_000, 1.7e9 + len(out), offered,
                                 ops=response, response=response, pacing=pacing))
    return out


def load(tmp_path) -> plan.Experiment:
    path = tmp_path / "scale.toml"
    path.write_text(EXPERIMENT)
    return plan.load(str(path))


def test_the_latency_table_leaves_out_a_run_catching_up_and_names_it(tmp_path):
    e = load(tmp_path)
    rs = records(e)
    assert is_paced(e, rs)
    header, rows = latency_table(e, rs)
    assert header[:4] == ["step", "offered ops/s", "response p50 ms", "response p99 ms"]
    one, two = rows
    assert one[1:5] == ["1,500", "1.2", "6", "3 of 3"]  # p99 of 5, 6 and 7 ms: the worst operation's
    assert two[1:5] == ["3,000", "1.2", "6", "2 of 3"]  # 5 and 7 ms; with the run catching up, 34
    assert "#5: 4,639 of 3,000 ops/s offered (154.6%) catching up" in two[5]
    (line,) = notes(rs)
    assert line.startswith("run #5 (cassandra/workloada/nodes=2, repetition 2): 4,639 of 3,000 ops/s offered")
    assert line.endswith("behind schedule at the window's start (2.5 s of its offered rate due and not "
                         "started): catching up, not capacity")


def test_the_page_leads_with_latency_and_throughput_checks_the_load(tmp_path):
    e = load(tmp_path)
    page = render_html(e, "full", records(e))
    headings = re.findall(r"<h2>([^<]*)</h2>", page)
    assert headings[0] == "Latency at the offered load"
    assert "Throughput: a check that the offered load was delivered" in headings
    charts = re.findall(r'<figure class=chart data-chart="([^"]+)"', page)
    assert charts[0] == "response"  # the first chart is the response time, not the throughput
    assert "catching up, not capacity" in page and "2 of 3" in page


def test_the_csv_says_each_runs_offered_load(tmp_path):
    e = load(tmp_path)
    write_csv(e, "full", records(e), tmp_path / "out.csv")
    rows = list(csv.DictReader((tmp_path / "out.csv").open()))
    late = [r for r in rows if r["run_id"] == "5"]
    assert {r["offered_load"] for r in late} == {"catching up"} and late[0]["behind_at_start_s"] == "2.5"
    assert {r["offered_load"] for r in rows if r["run_id"] != "5"} == {"delivered"}


def test_an_unthrottled_experiment_has_no_such_section(tmp_path):
    e = load(tmp_path)
    rs = records(e)
    for r in rs:
        r.pacing = None
    assert not is_paced(e, rs)
    assert "Latency at the offered load" not in render_html(e, "full", rs)


def test_the_join_table_marks_a_window_catching_up_after_a_slow_one():
    from workbench.experiments.analysis import _elastic
    from workbench.experiments.elastic_report import join_table
    from workbench.results.model import Event, Interval, RunResult

    # 1,000 offered: on time before the join, 600 during it (falling 400 behind a second), then
    # 1,400 after it while it pays the backlog off
    rates = [1000] * 12 + [600] * 8 + [1400] * 8 + [1000] * 2
    behind, late = [], 0
    for rate in rates:
        late = max(late + 1000 - rate, 0)
        behind.append(late)
    intervals = [Interval(t + 1.0, 1.0, rate, 0, target=1000.0, warmup=t < 5, behind=b)
                 for t, (rate, b) in enumerate(zip(rates, behind, strict=True))]
    events = [Event(5.0, "measuring", 5.0), Event(12.0, "cluster", "+ node3 joining"),
              Event(20.0, "cluster", "node3 normal")]
    run = RunResult("run", "cassandra", 25_000, 25_000, 1000.0, intervals=intervals, events=events,
                    started_at=1.0e9, warmup_s=5.0)
    step = plan.Step(plan.Target("cassandra", "cassandra-2"), "workloada", ())
    r = RunRecord(7, step, 1, run.throughput, run.runtime_ms, 1.0e9, 1000.0)
    _elastic(r, run)
    header, rows = join_table([r])
    row = dict(zip(header, rows[0], strict=True))
    assert row["before: ops/s (95% CI)"].endswith("; 100% of offered")
    assert row["during: ops/s (95% CI)"].endswith("; 60% of offered, not delivered")
    assert row["after: ops/s (95% CI)"].endswith("; 132% of offered, catching up")
