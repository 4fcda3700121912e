"""One series, one colour (issue 55, 8): in an experiment's report a series keeps its colour in
every chart, also where another series is missing from a chart (workload C has no UPDATE)."""

from __future__ import annotations

import re
from collections import defaultdict

from workbench.experiments import plan
from workbench.experiments.analysis import OpFigures, RunRecord
from workbench.experiments.page import render_html
from workbench.experiments.plan import UNTHROTTLED

EXPERIMENT = """\
databases = ["memory", "cassandra"]
workloads = ["workloada", "workloadc"]
[sweep]
rate = [50, 100]
"""
LEGEND = re.compile(r'<line x1="[\d.]+" x2="[\d.]+" y1="[\d.]+" y2="[\d.]+" stroke="(#[0-9a-f]{6})" '
                    r'stroke-width="2"(?: stroke-dasharray="6 4")?/>\n'
                    r'<text x="[\d.]+" y="[\d.]+">([^<]*)</text>')


def figures(us: int) -> OpFigures:
    return OpFigures(1000, us, {"p50": us, "p90": us, "p95": us, "p99": 3 * us, "p99.9": 4 * us,
                                "p99.99": 5 * us}, 6 * us)


def records(e: plan.Experiment) -> list[RunRecord]:
    """One run per step, workload C's made first (as a random order may): the order in which the
    old charts handed out colours."""
    steps = sorted(e.steps(), key=lambda s: s.workload != "workloadc")
    out = []
    for i, step in enumerate(steps):
        rate = step.rate
        throughput = 10_000.0 if rate == UNTHROTTLED else 100.0 * float(rate)
        ops = {"READ": figures(100 + i)}
        if step.workload == "workloada":
            ops["UPDATE"] = figures(200 + i)
        out.append(RunRecord(i + 1, step, 1, throughput, 10_000, 1.7e9 + i,
                             None if rate == UNTHROTTLED else throughput, ops=ops, response=ops))
    return out


def colours_by_chart(page: str) -> dict[str, dict[str, str]]:
    """chart kind -> series -> colour, read from each chart's legend (a latency chart's p50 and
    p99 lines are one series)."""
    out: dict[str, dict[str, str]] = {}
    for kind, body in re.findall(r'<figure class=chart data-chart="([^"]+)">(.*?)</figure>', page, re.S):
        entries = LEGEND.findall(body)
        assert entries, kind
        out[kind] = {label.removesuffix(" p50").removesuffix(" p99"): colour for colour, label in entries}
    return out


def test_a_series_has_one_colour_in_every_chart_even_where_others_are_missing(tmp_path):
    path = tmp_path / "ops.toml"
    path.write_text(EXPERIMENT)
    e = plan.load(str(path))
    charts = colours_by_chart(render_html(e, "laptop", records(e)))
    assert set(charts) == {"saturation", "saturation-service", "offered", "throughput", "latency-READ",
                           "latency-UPDATE"}
    everywhere = ["memory workloada", "memory workloadc", "cassandra workloada", "cassandra workloadc"]
    assert sorted(charts["throughput"]) == sorted(everywhere)
    assert sorted(charts["latency-UPDATE"]) == ["cassandra workloada", "memory workloada"]  # C is missing
    seen: dict[str, set[str]] = defaultdict(set)
    for per_series in charts.values():
        for series, colour in per_series.items():
            seen[series].add(colour)
    assert {s: len(c) for s, c in seen.items()} == dict.fromkeys(everywhere, 1), dict(seen)
    assert len({c.pop() for c in seen.values()}) == 4  # and four series, four colours
    # in the plan's order, whatever order the runs were made in
    assert charts["throughput"]["memory workloada"] == "#1f77b4"
