"""The report of an experiment as one self-contained HTML page.

The page works offline: inline CSS and the inline SVG charts of `charts`, no script, font or
image from anywhere else. After the servers that answered and, for a rate sweep, the saturation
section: the charts, every step (n, mean, sd, 95% CI), Welch's t-test of the first database
against the second, and the two-way ANOVA tables the file asks for.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from workbench.databases import in_process
from workbench.experiments.analysis import (
    OPERATIONS,
    RunRecord,
    anova_tables,
    by_step,
    calibration_table,
    clients,
    curve_table,
    knee,
    ms,
    saturation_curves,
    saturation_table,
    servers,
)
from workbench.experiments.charts import (
    esc,
    latency_chart,
    offered_chart,
    report_colours,
    saturation_chart,
    throughput_chart,
)
from workbench.experiments.elastic_report import caps_note, elastic_html
from workbench.experiments.paced_report import delivered, is_paced, paced_html
from workbench.experiments.plan import RATE, Experiment
from workbench.experiments.stats import NOISY, AnovaRow, cell, welch
from workbench.experiments.timeline_chart import servers_section


def write_html(e: Experiment, scale: str, records: list[RunRecord], path: Path) -> None:
    path.write_text(render_html(e, scale, records), encoding="utf-8")


def render_html(e: Experiment, scale: str, records: list[RunRecord]) -> str:
    parts = [f"<h1>{esc(e.name)}</h1>",
             f"<p>{esc(e.description)}</p>",
             f"<p class=meta>scale {esc(scale)} · {len(records)} completed runs · databases "
             f"{esc(', '.join(t.name for t in e.targets))} · workloads {esc(', '.join(e.workloads))} · "
             f"swept {esc('; '.join(f'{p} = {list(v)}' for p, v in e.sweep) or 'nothing')} · "
             f"{e.repetitions} repetitions, order {esc(e.order)} · report of "
             f"{datetime.now().strftime('%Y-%m-%d %H:%M')}</p>"]
    measured_by = clients(records)
    rows = [[name, "; ".join(found) or ("in-process (no server)" if in_process(name.partition(":")[0])
                                        else "not recorded"),
             "; ".join(measured_by.get(name, ())) or "not recorded"]
            for name, found in servers(records).items()]
    parts.append(html_table(["database", "server, as it answered", "client that measured it"], rows,
                            "Servers"))
    if e.add_node_at_s is not None:
        parts += elastic_html(e, records, html_table)
    elif caps_note(e):
        parts.append(f"<p>{esc(caps_note(e))}</p>")
    colours = report_colours(e, records)  # one series, one colour, in every chart
    paced = is_paced(e, records)  # latency at the offered load leads; throughput checks it
    if paced:
        parts += paced_html(e, records, html_table, esc, colours)
    if RATE in dict(e.sweep):
        parts += _saturation_section(e, records, colours)
    parts.append("<h2>Throughput: a check that the offered load was delivered</h2>" if paced else
                 "<h2>Throughput</h2>")
    parts.append(throughput_chart(e, records, colours))
    ops = [name for name in OPERATIONS if any(name in r.ops for r in records)]
    parts.append("<h2>Latency by operation</h2>")
    for name in ops:
        parts.append(latency_chart(e, records, name, colours))
    parts += servers_section(records)
    parts.append("<h2>Every step</h2>")
    parts.append(_steps_table(e, records, paced))
    if len(e.targets) >= 2:
        parts.append(_welch_html(e, records))
    if e.anova:
        parts.append(f"<h2>Two-way ANOVA of throughput: {esc(e.anova[0])} x {esc(e.anova[1])}</h2>")
        for title, table in anova_tables(e, records, e.anova):
            parts.append(_anova_html(title, table))
    return PAGE.format(title=esc(f"{e.name} ({scale})"), body="\n".join(parts))


def _saturation_section(e: Experiment, records: list[RunRecord], colours: dict[str, str]) -> list[str]:
    """The rate sweep first: the latency-throughput curve with its knee, the service time
    beside it, achieved against offered, the calibration's spread and Little's law."""
    parts = ["<h2>Saturation: latency against throughput</h2>"]
    for label, points in saturation_curves(e, records).items():
        best, stop = knee(e, points), next((p for p in points if p.saturated), None)
        words = [f"<b>{esc(label)}</b>:"]
        if best is not None:
            words.append(f"the knee is at <b>{best.throughput:,.0f} ops/s</b> achieved "
                         f"({esc(best.rate_text)} offered), the highest throughput whose response p99 "
                         f"({ms(best.p99_us)} ms) stayed under {e.p99_bound_ms:g} ms.")
        elif e.p99_bound_ms:
            words.append(f"no paced step kept its response p99 under {e.p99_bound_ms:g} ms.")
        if stop is not None:
            words.append(f"Saturated at {esc(stop.rate_text)}: it achieved {stop.throughput:,.0f} ops/s, "
                         f"{stop.throughput / stop.target:.0%} of the offered rate, with a response p99 of "
                         f"{ms(stop.p99_us)} ms; the sweep stopped there.")
        else:
            words.append("Not saturated by the steps made so far.")
        parts.append(f"<p class=knee-text>{' '.join(words)}</p>")
    parts.append('<div class=pair>' + saturation_chart(e, records, colours=colours)
                 + saturation_chart(e, records, service=True, colours=colours) + "</div>")
    parts.append(offered_chart(e, records, colours))
    header, rows = saturation_table(e, records)
    parts.append(html_table(header, rows, caption="knee and saturation per database"))
    header, rows = curve_table(e, records)
    parts.append(html_table(header, rows, caption="every rate: offered and achieved, response and service "
                        "time, and Little's law (operations in the system = throughput x mean response "
                        "time; sampled 50 times a second by each worker)"))
    header, rows = calibration_table(e, records)
    parts.append(html_table(header, rows, caption="unthrottled calibration (each run until its throughput "
                        "was stable): the spread the sweep's percentages rest on"))
    return parts


def html_table(header: list[str], rows: list[list[object]], caption: str = "") -> str:
    """A table of text cells, escaped, with its caption if it has one."""
    head = "".join(f"<th>{esc(c)}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _steps_table(e: Experiment, records: list[RunRecord], paced: bool = False) -> str:
    steps = by_step(records)
    rows = []
    noisy = 0
    for step in e.steps_of(steps):
        rs = steps[step.key]
        c = cell([r.throughput for r in rs])
        noisy += c.noisy
        read = [r.ops[op].percentiles["p99"] for r in rs for op in ("READ",) if op in r.ops]
        rows.append([step.key, c.n, f"{c.mean:,.0f}", "-" if c.sd is None else f"{c.sd:,.0f}",
                     c.interval(), f"{sum(read) / len(read):,.0f}" if read else "-"]
                    + ([f"{len(delivered(rs))} of {len(rs)}"] if paced else []))
    note = (f"<p class=noisy>{noisy} step(s) {NOISY}: the 95% interval is wider than the mean; "
            "more repetitions or a longer measure_s narrow it.</p>" if noisy else "")
    header = ["step", "n", "mean ops/s", "sd", "95% interval (t on the log scale)", "READ p99 µs (mean)"]
    header += ["offered load delivered"] if paced else []
    return html_table(header, rows) + note


def _welch_html(e: Experiment, records: list[RunRecord]) -> str:
    first, second = e.targets[0], e.targets[1]
    steps = by_step(records)
    rows = []
    for step in e.steps():
        if step.target != first:
            continue
        twin = next(s for s in e.steps() if s.target == second and s.workload == step.workload
                    and s.values == step.values)
        a = [r.throughput for r in steps.get(step.key, [])]
        b = [r.throughput for r in steps.get(twin.key, [])]
        if len(a) < 2 or len(b) < 2:
            continue
        w = welch(a, b)
        rows.append([step.key.split("/", 1)[1], f"{cell(a).mean:,.0f}", f"{cell(b).mean:,.0f}",
                     f"{w.t:.2f}", f"{w.df:.1f}", f"{w.p:.4f}", w.verdict()])
    if not rows:
        return ""
    return (f"<h2>{esc(first.name)} vs {esc(second.name)}: Welch's t-test of throughput</h2>"
            + html_table(["workload / sweep", f"{first.name} mean", f"{second.name} mean", "t", "df", "p",
                      "verdict"], rows))


def _anova_html(title: str, table: list[AnovaRow]) -> str:
    if not table:
        return f"<p>{esc(title)}</p>"
    rows = [[r.source, f"{r.ss:,.1f}", r.df, f"{r.ms:,.1f}", "" if r.f is None else f"{r.f:.2f}",
             "" if r.p is None else f"{r.p:.4f}"] for r in table]
    return html_table(["source", "SS", "df", "MS", "F", "p"], rows, caption=title)


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1100px; }}
h1 {{ margin-bottom: 0.2em; }} .meta {{ color: #666; font-size: 0.9em; }}
figure {{ margin: 1.2em 0; }} .pair {{ display: flex; flex-wrap: wrap; gap: 1em; }}
.noisy {{ color: #a33; }} figcaption {{ font-weight: 600; margin-bottom: 0.3em; }}
svg text {{ font-size: 11px; fill: #333; }} svg .axis {{ font-size: 12px; font-weight: 600; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 0.25em 0.7em; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }} caption {{ text-align: left; font-weight: 600; }}
</style></head>
<body>
{body}
</body></html>
"""
