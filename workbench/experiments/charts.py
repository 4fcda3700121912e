"""The inline SVG charts of an experiment's report, drawn here: no script, font or image.

Throughput against the first swept parameter with 95% confidence intervals, one line per
database and workload; per operation, p50 and p99 latency against the same parameter. For a
rate sweep: latency against the throughput achieved (response and service time, the knee
marked) and the throughput achieved against the rate offered. Each function returns the HTML of
one <figure>; `esc`, `num`, `chart_open` and `legend_entry` are the pieces every chart shares
(the lessons' lab report draws with them too).

One series, one colour: `report_colours` gives every series of the report (database, workload
and the other swept values) its colour once, from all the report's runs in the plan's order, and
every chart takes its colours from that map, so a series missing from one chart (workload C from
the UPDATE chart) shifts no other series' colour there.
"""

from __future__ import annotations

import html
import math
from collections import defaultdict

from workbench.experiments.analysis import RunRecord, knee, saturation_curves
from workbench.experiments.plan import RATE, UNTHROTTLED, Experiment
from workbench.experiments.stats import cell

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
FRAME = (760, 360, 78, 250, 30, 50)  # every chart: width, height, left, right, top, bottom margins


def esc(text: object) -> str:
    """Text made safe to put in HTML."""
    return html.escape(str(text))


def num(v: float) -> str:
    """A number short enough for an axis or a tooltip: 1.2M, 34.5k, 1,234, 0.5."""
    if v >= 1e6:
        return f"{v / 1e6:.3g}M"
    if v >= 1e4:
        return f"{v / 1e3:.3g}k"
    return f"{v:,.0f}" if v >= 10 else f"{v:.3g}"


def chart_open(kind: str, caption: str) -> list[str]:
    """A chart's figure, caption, SVG element and plot area (closed by "</svg></figure>")."""
    width, height, left, right, top, bottom = FRAME
    return [f'<figure class=chart data-chart="{esc(kind)}"><figcaption>{esc(caption)}</figcaption>',
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img">',
            f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
            'fill="#fff" stroke="#999"/>']


def legend_entry(i: int, label: str, colour: str, dash: str = "") -> list[str]:
    """The i-th line of the legend right of the plot: a stroke sample and the label."""
    width, _, _, right, top, _ = FRAME
    ly = top + 14 + 16 * i
    return [f'<line x1="{width - right + 12}" x2="{width - right + 32}" y1="{ly - 4}" y2="{ly - 4}" '
            f'stroke="{colour}" stroke-width="2"{dash}/>',
            f'<text x="{width - right + 38}" y="{ly}">{esc(label)}</text>']


# -- the charts of every experiment --------------------------------------------------------------

def _x_param(e: Experiment) -> str | None:
    return e.sweep[0][0] if e.sweep else None


def _x_values(e: Experiment, records: list[RunRecord] = ()) -> list[object]:
    if not e.sweep:
        return list(e.workloads)
    param, values = e.sweep[0]
    if param != RATE:
        return list(values)
    rates = {*values, *(r.step.rate for r in records if r.step.rate != UNTHROTTLED)}
    return [UNTHROTTLED, *sorted(rates, key=float)]


def series_label(r: RunRecord, x: str | None) -> str:
    """The series a run belongs to in a chart whose x axis is `x`: database, workload and the
    values of the other sweeps (saturation_curves labels its curves the same way, x = rate)."""
    rest = ", ".join(f"{p}={v}" for p, v in r.step.values if p != x)
    return f"{r.database} {r.step.workload}" + (f" ({rest})" if rest else "")


def report_colours(e: Experiment, records: list[RunRecord]) -> dict[str, str]:
    """Every series of the report its colour, in the plan's order (databases, workloads, then the
    swept values as the file lists them), whatever order the runs were made in: the series of the
    x-axis charts and, with a rate sweep, of the saturation charts."""
    targets = [t.name for t in e.targets]
    swept = dict(e.sweep)

    def where(values: tuple, v: object) -> tuple[int, str]:
        return (values.index(v), "") if v in values else (len(values), str(v))

    keyed = {}
    for x in (_x_param(e), RATE) if RATE in swept else (_x_param(e),):
        for r in records:
            label = series_label(r, x)
            key = (targets.index(r.step.target.name) if r.step.target.name in targets else len(targets),
                   e.workloads.index(r.step.workload) if r.step.workload in e.workloads else len(e.workloads),
                   tuple(where(tuple(swept.get(p, ())), v) for p, v in r.step.values if p != x), label)
            keyed[label] = min(keyed.get(label, key), key)
    return {label: COLOURS[i % len(COLOURS)] for i, label in enumerate(sorted(keyed, key=keyed.__getitem__))}


def _colour(colours: dict[str, str], series: str) -> str:
    """The series' colour in the report's map (a series it lacks is added to it, so that the
    charts drawn after agree)."""
    if series not in colours:
        colours[series] = COLOURS[len(colours) % len(COLOURS)]
    return colours[series]


def _series(e: Experiment, records: list[RunRecord]):
    """(label, [(x, [records])...]) per database x workload x values of the other sweeps."""
    x = _x_param(e)
    groups: dict[str, dict[object, list[RunRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        values = dict(r.step.values)
        groups[series_label(r, x)][values[x] if x else r.step.workload].append(r)
    order = {v: i for i, v in enumerate(_x_values(e, records))}
    return [(label, sorted(points.items(), key=lambda kv: order.get(kv[0], 0)))
            for label, points in groups.items()]


def throughput_chart(e: Experiment, records: list[RunRecord], colours: dict[str, str] | None = None) -> str:
    lines = []
    for label, points in _series(e, records):
        pts = []
        for xv, rs in points:
            c = cell([r.throughput for r in rs])
            pts.append((xv, c.mean, c.ci_low, c.ci_high))
        lines.append((label, pts))
    return svg_chart("throughput (ops/s), mean of the repetitions with 95% confidence interval",
                      _x_param(e) or "workload", lines, e, log_y=False, kind="throughput", records=records,
                      colours=report_colours(e, records) if colours is None else colours)


def latency_chart(e: Experiment, records: list[RunRecord], op: str,
                  colours: dict[str, str] | None = None) -> str:
    lines = []
    for label, points in _series(e, records):
        for pct in ("p50", "p99"):
            pts = []
            for xv, rs in points:
                values = [r.ops[op].percentiles[pct] for r in rs if op in r.ops]
                if values:
                    pts.append((xv, sum(values) / len(values), None, None))
            if pts:
                lines.append((f"{label} {pct}", pts))
    return svg_chart(f"{op} latency (µs, log scale): p50 solid, p99 dashed, mean of the repetitions",
                      _x_param(e) or "workload", lines, e, log_y=True, kind=f"latency-{op}", records=records,
                      colours=report_colours(e, records) if colours is None else colours)


def response_chart(e: Experiment, records: list[RunRecord], value, title: str,
                   colours: dict[str, str] | None = None) -> str:
    """A paced experiment's latency at the offered load (experiments/paced_report.py): p50 and
    p99 per series, `value(runs, pct)` the figure of a step's runs (None: no point drawn)."""
    lines = []
    for label, points in _series(e, records):
        for pct in ("p50", "p99"):
            pts = [(xv, v, None, None) for xv, rs in points if (v := value(rs, pct)) is not None]
            if pts:
                lines.append((f"{label} {pct}", pts))
    return svg_chart(title, _x_param(e) or "workload", lines, e, log_y=True, kind="response",
                     records=records, colours=report_colours(e, records) if colours is None else colours)


def svg_chart(title: str, xlabel: str, lines, e: Experiment, log_y: bool, kind: str,
               records: list[RunRecord] = (), colours: dict[str, str] | None = None) -> str:
    """`lines`: (label, [(x, mean, ci low, ci high)...]); on a log_y (latency) chart a label ends
    in " p50" or " p99" and the series is the label without it. Colours from `colours`
    (report_colours), in the order of the lines where none is given."""
    width, height, left, right, top, bottom = FRAME
    colours = {} if colours is None else colours
    xs = _x_values(e, records)
    ys = [v for _, pts in lines for _, m, lo, hi in pts for v in (m, lo, hi) if v is not None and v > 0]
    if not ys and log_y and any(pts for _, pts in lines):
        ys = [1.0]  # every latency below the histogram's 1 us resolution: drawn on the axis floor
    if not ys:
        return f"<p>{esc(title)}: no data</p>"
    low, high = min(ys), max(ys)
    if log_y:
        low, high = 10 ** math.floor(math.log10(low)), 10 ** math.ceil(math.log10(high))
    else:
        low, high = 0.0, high * 1.1

    def fy(v: float) -> float:
        if log_y:
            frac = (math.log10(max(v, low)) - math.log10(low)) / max(math.log10(high) - math.log10(low), 1e-9)
        else:
            frac = (v - low) / (high - low or 1)
        return top + (1 - frac) * (height - top - bottom)

    def fx(v: object) -> float:
        i = xs.index(v) if v in xs else 0
        span = width - left - right
        return left + (span * (i + 0.5) / len(xs))

    out = chart_open(kind, title)
    ticks = ([10 ** k for k in range(int(math.log10(low)), int(math.log10(high)) + 1)] if log_y
             else [low + (high - low) * k / 5 for k in range(6)])
    for t in ticks:
        y = fy(t)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{num(t)}</text>')
    for v in xs:
        out.append(f'<text x="{fx(v):.1f}" y="{height - bottom + 18}" text-anchor="middle">{esc(v)}</text>')
    out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle" '
               f'class=axis>{esc(xlabel)}</text>')
    for i, (label, pts) in enumerate(lines):
        colour = _colour(colours, label.removesuffix(" p50").removesuffix(" p99") if log_y else label)
        dash = ' stroke-dasharray="6 4"' if log_y and label.endswith("p99") else ""
        path = " ".join(f"{fx(xv):.1f},{fy(m):.1f}" for xv, m, _, _ in pts)
        out.append(f'<polyline class=series points="{path}" fill="none" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        for xv, m, lo, hi in pts:
            if lo is not None and hi is not None:
                out.append(f'<line class=ci x1="{fx(xv):.1f}" x2="{fx(xv):.1f}" y1="{fy(max(lo, low)):.1f}" '
                           f'y2="{fy(hi):.1f}" stroke="{colour}"/>')
            out.append(f'<circle cx="{fx(xv):.1f}" cy="{fy(m):.1f}" r="3.5" fill="{colour}">'
                       f'<title>{esc(label)}: {num(m)}</title></circle>')
        out += legend_entry(i, label, colour, dash)
    out.append("</svg></figure>")
    return "\n".join(out)


# -- the charts of a rate sweep ------------------------------------------------------------------

def saturation_chart(e: Experiment, records: list[RunRecord], service: bool = False,
                     colours: dict[str, str] | None = None) -> str:
    """p50 (solid) and p99 (dashed) latency against the throughput achieved, log y: the
    response time (from the intended start), or the service time beside it; the knee marked."""
    width, height, left, right, top, bottom = FRAME
    colours = report_colours(e, records) if colours is None else colours
    curves = saturation_curves(e, records)
    p50, p99 = ("service_p50_us", "service_p99_us") if service else ("p50_us", "p99_us")
    xs = [p.throughput for pts in curves.values() for p in pts]
    ys = [v for pts in curves.values() for p in pts for v in (getattr(p, p50), getattr(p, p99)) if v > 0]
    if not xs or not ys:
        return "<p>saturation: no data</p>"
    x_high = max(xs) * 1.1 or 1.0
    low, high = 10 ** math.floor(math.log10(min(ys))), 10 ** math.ceil(math.log10(max(ys)))
    if e.p99_bound_ms:
        high = max(high, 10 ** math.ceil(math.log10(e.p99_bound_ms * 1000)))
    if high <= low:
        high = low * 10

    def fx(v: float) -> float:
        return left + (width - left - right) * v / x_high

    def fy(v: float) -> float:
        frac = (math.log10(max(v, low)) - math.log10(low)) / (math.log10(high) - math.log10(low))
        return top + (1 - frac) * (height - top - bottom)

    what = "service time (from the actual start)" if service else "response time (from the intended start)"
    out = chart_open("saturation-service" if service else "saturation",
                      f"{what}, µs (log scale), against the throughput achieved: p50 solid, p99 dashed"
                      + ("" if service else "; ◆ the knee"))
    for k in range(int(math.log10(low)), int(math.log10(high)) + 1):
        y = fy(10 ** k)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{num(10 ** k)}</text>')
    for k in range(6):
        v = x_high * k / 5
        out.append(f'<text x="{fx(v):.1f}" y="{height - bottom + 18}" text-anchor="middle">{num(v)}</text>')
    out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle" '
               'class=axis>throughput achieved (ops/s)</text>')
    if e.p99_bound_ms:
        y = fy(e.p99_bound_ms * 1000)
        out.append(f'<line class=bound x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'stroke="#888" stroke-dasharray="2 3"/><text x="{width - right - 4}" y="{y - 4:.1f}" '
                   f'text-anchor="end">p99 bound {e.p99_bound_ms:g} ms</text>')
    for i, (label, points) in enumerate(curves.items()):
        colour = _colour(colours, label)
        paced = [p for p in points if p.rate != UNTHROTTLED]  # the calibration is a point apart
        for pct, dash in ((p50, ""), (p99, ' stroke-dasharray="6 4"')):
            path = " ".join(f"{fx(p.throughput):.1f},{fy(getattr(p, pct)):.1f}" for p in paced)
            out.append(f'<polyline class=series points="{path}" fill="none" stroke="{colour}" '
                       f'stroke-width="2"{dash}/>')
            for p in points:
                us = getattr(p, pct)
                shape = "r=\"3\"" if p.rate != UNTHROTTLED else "r=\"5\" fill-opacity=\"0.4\""
                out.append(f'<circle cx="{fx(p.throughput):.1f}" cy="{fy(us):.1f}" {shape} fill="{colour}">'
                           f'<title>{esc(label)} {esc(p.rate_text)}: achieved {num(p.throughput)} ops/s, '
                           f'{pct[:-3].replace("service_", "service ")} {num(us)} µs</title></circle>')
        best = None if service else knee(e, points)
        if best is not None:
            x, y = fx(best.throughput), fy(best.p99_us)
            out.append(f'<path class=knee d="M{x:.1f},{y - 8:.1f} L{x + 7:.1f},{y:.1f} L{x:.1f},{y + 8:.1f} '
                       f'L{x - 7:.1f},{y:.1f} Z" fill="none" stroke="{colour}" stroke-width="2"/>'
                       f'<text x="{x:.1f}" y="{y - 12 if i % 2 == 0 else y + 22:.1f}" text-anchor="middle" '
                       f'fill="{colour}">'
                       f'knee {num(best.throughput)} ops/s</text>')
        out += legend_entry(i, label, colour)
    out.append("</svg></figure>")
    return "\n".join(out)


def offered_chart(e: Experiment, records: list[RunRecord], colours: dict[str, str] | None = None) -> str:
    """Achieved against offered rate, one line per curve, and the diagonal where they are
    equal: where a line leaves the diagonal, the database is saturated."""
    width, height, left, right, top, bottom = FRAME
    colours = report_colours(e, records) if colours is None else colours
    curves = {label: [p for p in pts if p.target] for label, pts in saturation_curves(e, records).items()}
    values = [v for pts in curves.values() for p in pts for v in (p.target, p.throughput)]
    if not values:
        return "<p>achieved against offered: no paced steps yet</p>"
    high = max(values) * 1.05

    def fx(v: float) -> float:
        return left + (width - left - right) * v / high

    def fy(v: float) -> float:
        return top + (1 - v / high) * (height - top - bottom)

    out = chart_open("offered", "throughput achieved against the rate offered (ops/s); dotted: "
                      "achieved = offered; a line below it is saturated")
    for k in range(6):
        v = high * k / 5
        y = fy(v)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{num(v)}</text>')
        out.append(f'<text x="{fx(v):.1f}" y="{height - bottom + 18}" text-anchor="middle">{num(v)}</text>')
    out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle" '
               'class=axis>offered (ops/s)</text>')
    out.append(f'<line class=diagonal x1="{fx(0):.1f}" y1="{fy(0):.1f}" x2="{fx(high):.1f}" '
               f'y2="{fy(high):.1f}" stroke="#888" stroke-dasharray="2 3"/>')
    for i, (label, points) in enumerate(curves.items()):
        colour = _colour(colours, label)
        path = " ".join(f"{fx(p.target):.1f},{fy(p.throughput):.1f}" for p in points)
        out.append(f'<polyline class=series points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for p in points:
            out.append(f'<circle cx="{fx(p.target):.1f}" cy="{fy(p.throughput):.1f}" r="3" fill="{colour}">'
                       f'<title>{esc(label)} {esc(p.rate_text)}: achieved {num(p.throughput)} ops/s'
                       '</title></circle>')
        out += legend_entry(i, label, colour)
    out.append("</svg></figure>")
    return "\n".join(out)
