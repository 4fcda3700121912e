"""An experiment of paced runs at set offered loads, as YCSB's scaling tier is (scale-up: the
load grows with the nodes): its figure of merit is the latency at the offered load, and its
throughput only a check that the load was delivered (Cooper et al., "Benchmarking Cloud Serving
Systems with YCSB", SoCC 2010, 3.2). A run whose window started behind its schedule, or ran above
its offered rate, was catching up (results/paced.py): its throughput is no capacity and its
response times carry the queue from before the window, so it is named, never averaged in.
"""

from __future__ import annotations

from workbench.experiments.analysis import RunRecord, by_step, ms
from workbench.experiments.charts import response_chart
from workbench.experiments.plan import RATE, Experiment
from workbench.results.paced import DELIVERED_WORD

TITLE = "Latency at the offered load"


def is_paced(e: Experiment, records: list[RunRecord]) -> bool:
    """Every run paced at a load the file set (not a rate sweep, which has its own section)."""
    return RATE not in dict(e.sweep) and bool(records) and all(r.pacing is not None for r in records)


def delivered(rs: list[RunRecord]) -> list[RunRecord]:
    return [r for r in rs if r.pacing is not None and r.pacing.verdict == DELIVERED_WORD]


def response_us(rs: list[RunRecord], pct: str) -> float | None:
    """The steps' latency: the worst operation's response time at `pct`, mean over the runs
    whose offered load was delivered (None when none was)."""
    values = [max((f.percentiles[pct] for f in (r.response or r.ops).values()), default=0)
              for r in delivered(rs)]
    return sum(values) / len(values) if values else None


def latency_table(e: Experiment, records: list[RunRecord]) -> tuple[list[str], list[list[str]]]:
    """One row a step: the offered rate, the response p50 and p99 of the runs that delivered it,
    how many did, and each run's achieved rate against the offered with what it was."""
    header = ["step", "offered ops/s", "response p50 ms", "response p99 ms", "load delivered",
              "each run: achieved of offered"]
    rows = []
    steps = by_step(records)
    for step in e.steps_of(steps):
        rs = steps[step.key]
        offered = sum(r.pacing.offered for r in rs) / len(rs)  # type: ignore[union-attr]
        p50, p99 = response_us(rs, "p50"), response_us(rs, "p99")
        runs = "; ".join(f"#{r.run_id}: {r.pacing.achieved_text()} {r.pacing.verdict}"  # type: ignore[union-attr]
                         for r in rs)
        rows.append([step.key, f"{offered:,.0f}", "-" if p50 is None else ms(p50),
                     "-" if p99 is None else ms(p99), f"{len(delivered(rs))} of {len(rs)}", runs])
    return header, rows


def notes(records: list[RunRecord]) -> list[str]:
    """One line per run whose offered load was not delivered or that was catching up."""
    return [f"run #{r.run_id} ({r.step.key}, repetition {r.repetition}): {r.pacing.line()}"
            for r in records if r.pacing is not None and r.pacing.verdict != DELIVERED_WORD]


def paced_html(e: Experiment, records: list[RunRecord], html_table, esc,
               colours: dict[str, str]) -> list[str]:
    """The page's first section for a paced experiment: the latency chart and table, then the
    runs whose figures are not latency at the offered load, each with why."""
    parts = [f"<h2>{TITLE}</h2>",
             "<p>Every run was paced: the figure of merit is the response time (from each operation's "
             "intended start) at the offered load; a run's throughput only checks that the load was "
             "delivered. Latency is the mean over the repetitions that delivered it; runs that were "
             "catching up or fell behind are named below and left out.</p>",
             response_chart(e, records, response_us, "response time at the offered load (µs, log "
                            "scale): worst operation, p50 solid, p99 dashed, runs that delivered it",
                            colours)]
    header, rows = latency_table(e, records)
    parts.append(html_table(header, rows, caption="latency at the offered load, and whether each run "
                            "delivered it"))
    parts += [f"<p class=noisy>{esc(line)}</p>" for line in notes(records)]
    return parts
