"""The elastic-speedup part of an experiment's report: every run's join in a table (its windows
before, during and after, each with its interval estimate; the join's duration and what it
streamed) and each run over time with the join marked, in the offline HTML page and the
terminal."""

from __future__ import annotations

import dataclasses
import math
import os

from workbench.experiments.analysis import RunRecord, ms
from workbench.experiments.charts import COLOURS, FRAME, chart_open, esc, legend_entry, num
from workbench.experiments.elastic import WINDOWS, Window
from workbench.experiments.plan import Experiment
from workbench.results.paced import DELIVERED_WORD, Pacing


def caps_note(e: Experiment) -> str | None:
    """Where capped nodes stop adding capacity on this host (None: the nodes are not capped)."""
    if not e.cpus:
        return None
    cores = os.cpu_count() or 1
    room = math.floor(cores / e.cpus + 1e-9)
    return (f"Each node was capped at {e.cpus:g} cores (a cgroup of its own, or the container's CPU "
            f"quota): N nodes may use N x {e.cpus:g} of this host's {cores} cores, so each node added "
            f"brings capacity of its own up to {room} nodes; past that the nodes share the cores again, "
            "and a node more adds none.")


def shared_cores_note(e: Experiment) -> str:
    """What a join on one host can and cannot show, in words."""
    cores = os.cpu_count() or 1
    said = (f"Each run added one node {e.add_node_at_s:g} s into its measured window, and took it out "
            "again after the run. ")
    capped = caps_note(e)
    if capped:
        return said + capped
    return said + (f"The nodes of a local cluster share this host's {cores} cores: a node "
                   "added here brings a new owner of part of the data and the streaming of that part, not "
                   "processors, so the throughput after the join cannot rise above what the host already "
                   "gave the cluster (cpus = 0.5 in the experiment caps each node, so that one machine "
                   "can stand for several). What the join costs meanwhile (the window during it) is what "
                   "this host can show.")


def _cell(window: Window | None, which: str) -> str:
    if window is None:
        return "-"
    value = window.throughput if which == "throughput" else window.p99_us
    if value is None:
        return "-"
    if which == "throughput":
        return f"{value.mean:,.0f} ({value.interval()})"
    # milliseconds, the interval as the mean (it printed the mean in ms, its interval in us)
    scaled = dataclasses.replace(value, mean=value.mean / 1000,
                                 ci_low=None if value.ci_low is None else value.ci_low / 1000,
                                 ci_high=None if value.ci_high is None else value.ci_high / 1000)
    return f"{ms(value.mean)} ms ({scaled.interval('{:,.3g}')})"


def _paced(p: Pacing | None) -> str:
    """A paced window's share of its offered rate, and what it was when not the load delivered
    (a window after a slow one catching up: its throughput is no capacity)."""
    if p is None:
        return ""
    return f"; {p.share:.0%} of offered" + ("" if p.verdict == DELIVERED_WORD else f", {p.verdict}")


def join_table(records: list[RunRecord]) -> tuple[list[str], list[list[str]]]:
    """(header, rows): one row per run that had a node join."""
    header = ["step", "rep", "node", "join (s)", "streamed"]
    for name in WINDOWS:
        header += [f"{name}: s", f"{name}: ops/s (95% CI)", f"{name}: p99 (95% CI)", f"{name}: failed"]
    rows = []
    for r in records:
        if r.step.rate == "max":  # the calibration runs before the sweep: no node added there
            continue
        if r.join is None:
            rows.append([r.step.key, str(r.repetition), "no node joined during the run", "-", "-"]
                        + ["-"] * 4 * len(WINDOWS))
            continue
        duration = r.join.duration_s
        said = "did not join (stopped again)" if r.join.failed else "not normal before the run ended"
        row = [r.step.key, str(r.repetition), r.join.node, said if duration is None else f"{duration:.1f}",
               r.streamed or "not known"]
        found = {w.name: w for w in r.join.windows}
        for name in WINDOWS:
            w = found.get(name)
            row += ["-" if w is None else f"{w.length_s:.0f}",
                    _cell(w, "throughput") + _paced(r.window_pacing.get(name)), _cell(w, "p99"),
                    "-" if w is None else f"{w.errors:,}"]
        rows.append(row)
    return header, rows


def timeline_chart(record: RunRecord) -> str:
    """Throughput of each measured interval of one run, its p99 on a second line (scaled to the
    same height), and the cluster's events as vertical lines."""
    width, height, left, right, top, bottom = FRAME
    if not record.series:
        return f"<p>run {record.run_id}: no measured intervals</p>"
    t0 = record.series[0][0] - 1
    t1 = record.series[-1][0]
    top_rate = max(r for _, r, _ in record.series) * 1.1 or 1.0
    top_p99 = max(p for _, _, p in record.series) * 1.1 or 1.0

    def fx(t: float) -> float:
        return left + (width - left - right) * (t - t0) / max(t1 - t0, 1e-9)

    def fy(v: float, high: float) -> float:
        return top + (1 - v / high) * (height - top - bottom)

    out = chart_open("elastic", f"{record.step.key} #{record.repetition} (run {record.run_id}): "
                                f"throughput and p99 each second, the join marked")
    for k in range(6):
        y = fy(top_rate * k / 5, top_rate)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{num(top_rate * k / 5)}</text>')
    for k in range(6):
        t = t0 + (t1 - t0) * k / 5
        out.append(f'<text x="{fx(t):.1f}" y="{height - bottom + 18}" text-anchor="middle">{t:.0f} s</text>')
    out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle" '
               'class=axis>seconds since the run started (ops/s on the left; p99 scaled to the plot)</text>')
    for i, (label, values, high, dash) in enumerate((
            ("ops/s", [r for _, r, _ in record.series], top_rate, ""),
            (f"p99 (top {ms(top_p99 / 1.1)})", [p for _, _, p in record.series], top_p99,
             ' stroke-dasharray="6 4"'))):
        colour = COLOURS[i]
        points = " ".join(f"{fx(t):.1f},{fy(v, high):.1f}" for (t, _, _), v in zip(record.series, values,
                                                                                       strict=True))
        out.append(f'<polyline class=series points="{points}" fill="none" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        out += legend_entry(i, label, colour, dash)
    for t, text in record.marks:
        if t0 <= t <= t1 and " received " not in text:
            x = fx(t)
            out.append(f'<line class=event x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{height - bottom}" '
                       f'stroke="#555" stroke-dasharray="2 3"><title>{esc(text)} at {t:.1f} s</title></line>')
            out.append(f'<text x="{x + 3:.1f}" y="{top + 12}" class=event>{esc(text)}</text>')
    out.append("</svg></figure>")
    return "\n".join(out)


def elastic_html(e: Experiment, records: list[RunRecord], table) -> list[str]:
    """The report's section: the note on shared cores, the table, a chart per run."""
    header, rows = join_table(records)
    parts = ["<h2>Elastic speedup: a node added while the run goes on</h2>",
             f"<p>{esc(shared_cores_note(e))}</p>",
             table(header, rows, "Before, during and after the join (each window: its length, the mean "
                                 "of its intervals and the 95% interval of that mean)")]
    parts += [timeline_chart(r) for r in records]
    return parts
