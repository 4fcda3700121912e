"""The report of an experiment: a tidy CSV and one self-contained HTML file.

`collect` reads the experiment's completed runs back from the run store. `write_csv` writes one
row per run x operation (the form spreadsheets and R/pandas want). `write_html` writes one page
that works offline: inline CSS and inline SVG charts drawn here, no script, font or image from
anywhere else. Charts: throughput against the first swept parameter with 95% confidence
intervals, one line per database and workload; per operation, p50 and p99 latency against the
same parameter. Tables: every step (n, mean, sd, 95% CI), Welch's t-test of the first database
against the second, and the two-way ANOVA the file asks for (`anova = ["recordcount",
"workload"]`), one table per database and per value of any other swept parameter.
"""

from __future__ import annotations

import csv
import html
import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.experiments.plan import RATE, SATURATED, UNTHROTTLED, Experiment, Step
from workbench.experiments.stats import NOISY, AnovaRow, anova2, cell, welch
from workbench.results.store import RunStore

OPERATIONS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE")
PERCENTILES = ((50.0, "p50"), (95.0, "p95"), (99.0, "p99"), (99.9, "p99.9"))
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


@dataclass
class OpFigures:
    count: int
    mean_us: float
    percentiles: dict[str, int]
    max_us: int


@dataclass
class RunRecord:
    run_id: int
    step: Step
    repetition: int
    throughput: float
    runtime_ms: int
    started_at: float
    target: float | None  # the target rate it was paced at (ops/s), None unthrottled
    ops: dict[str, OpFigures] = field(default_factory=dict)
    response: dict[str, OpFigures] = field(default_factory=dict)  # paced runs: from the intended start
    in_flight: float | None = None  # operations in the system, sampled, mean over the measured window
    interval_rates: list[float] = field(default_factory=list)  # ops/s of each measured interval
    warmup_s: float = 0.0
    server: str = ""  # what the server said it is (the run store's environment), "" if unknown
    client: str = ""  # the client that measured it (RunResult.client)

    @property
    def database(self) -> str:
        """The database as reports label it: the experiment's name for it, and the server when
        it is not what the protocol is called ("mongodb (FerretDB)"): never a FerretDB figure
        under MongoDB's name alone."""
        name = self.step.target.name
        if self.server.startswith("FerretDB") and "ferretdb" not in name.lower():
            return f"{name} (FerretDB)"
        return name

    def mean_us(self, response: bool = True) -> float:
        """Mean latency over every operation: response time where the run was paced."""
        figures = (self.response or self.ops) if response else self.ops
        count = sum(f.count for f in figures.values())
        return sum(f.mean_us * f.count for f in figures.values()) / count if count else 0.0

    @property
    def little_in_flight(self) -> float:
        """Little's law: throughput x mean response time."""
        return self.throughput * self.mean_us() / 1e6


def collect(e: Experiment, scale: str, store: object = None) -> list[RunRecord]:
    """The experiment's completed runs at this scale, in the order they were made."""
    out = []
    with RunStore(store, create=False, write=False) as s:
        for run_id, key, rep, status in s.experiment_runs(e.name, scale):
            step = e.find_step(key) if status == "completed" and rep else None
            if step is None:
                continue
            result = s.result(run_id)
            record = RunRecord(run_id, step, rep, result.throughput, result.runtime_ms,
                               result.started_at or 0.0, _target(result), warmup_s=result.warmup_s,
                               server=_server(result), client=result.client)
            measured = [i for i in result.intervals if not i.warmup and i.duration_s >= 0.5]
            record.interval_rates = [i.throughput for i in measured]
            sampled = [i for i in measured if i.in_flight is not None]
            if sampled:
                record.in_flight = (sum(i.in_flight * i.duration_s for i in sampled)
                                    / sum(i.duration_s for i in sampled))
            for name in OPERATIONS:
                for kind, prefix in ((record.ops, ""), (record.response, "Intended-")):
                    m = result.measurement(prefix + name)
                    if m is not None and m.operations:
                        kind[name] = OpFigures(m.operations, m.average_us,
                                               {label: m.percentiles.get(p, 0) for p, label in PERCENTILES},
                                               m.max_us)
            out.append(record)
    if not out:
        raise WorkbenchError(f"no completed runs of experiment {e.name!r} at scale {scale!r} in the store",
                             f"run it first: workbench experiment run {e.path} --scale {scale}")
    return out


def _server(result) -> str:
    cluster = (result.environment or {}).get("cluster") or {}
    version = str(cluster.get("server_version") or "")
    if version and version[0].isdigit():  # the pinned Cassandra or HBase release
        return f"{cluster.get('kind', '')} {version}".strip()
    return version


def _distinct(records: list[RunRecord], what: str) -> dict[str, list[str]]:
    """Each database's distinct values of a record's `what` ("server", "client"), in run order."""
    out: dict[str, list[str]] = {}
    for r in records:
        seen, value = out.setdefault(r.database, []), getattr(r, what)
        if value and value not in seen:
            seen.append(value)
    return out


def servers(records: list[RunRecord]) -> dict[str, list[str]]:
    """Each database's servers as its runs recorded them (the report's "Servers" table)."""
    return _distinct(records, "server")


def clients(records: list[RunRecord]) -> dict[str, list[str]]:
    """Each database's clients as its runs recorded them (the "Servers" table's last column):
    more than one for a database means its figures mix clients."""
    return _distinct(records, "client")


def _target(result) -> float | None:
    value = (result.properties or {}).get("target")
    try:
        return float(value) or None if value not in (None, "") else None
    except ValueError:
        return None


def write_csv(e: Experiment, scale: str, records: list[RunRecord], path: Path) -> None:
    swept = [p for p, _ in e.sweep]
    header = ["experiment", "scale", "run_id", "database", "server", "client", "workload", *swept,
              "repetition", "throughput_ops_s", "offered_ops_s", "runtime_ms", "operation", "count",
              "mean_us", *[f"{label}_us" for _, label in PERCENTILES], "max_us"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in records:
            values = dict(r.step.values)
            for name, op in r.ops.items():
                w.writerow([e.name, scale, r.run_id, r.database, r.server, r.client, r.step.workload,
                            *[values[p] for p in swept], r.repetition, round(r.throughput, 3),
                            "" if r.target is None else round(r.target), r.runtime_ms, name, op.count,
                            round(op.mean_us, 3),
                            *[op.percentiles[label] for _, label in PERCENTILES], op.max_us])


# -- statistics over the records -----------------------------------------------------------------

def by_step(records: list[RunRecord]) -> dict[str, list[RunRecord]]:
    out: dict[str, list[RunRecord]] = defaultdict(list)
    for r in records:
        out[r.step.key].append(r)
    return out


def anova_tables(e: Experiment, records: list[RunRecord], factors: tuple[str, str]
                 ) -> list[tuple[str, list[AnovaRow]]]:
    """(title, table) for each database and each value of the swept parameters not in `factors`."""
    def level(r: RunRecord, factor: str) -> object:
        return r.step.workload if factor == "workload" else dict(r.step.values)[factor]

    others = [p for p, _ in e.sweep if p not in factors]
    groups: dict[tuple, list[RunRecord]] = defaultdict(list)
    for r in records:
        values = dict(r.step.values)
        groups[(r.database, *[(p, values[p]) for p in others])].append(r)
    out = []
    for key, rows in groups.items():
        title = key[0] + "".join(f", {p} = {v}" for p, v in key[1:])
        try:
            table = anova2([(level(r, factors[0]), level(r, factors[1]), r.throughput) for r in rows],
                           factors[0], factors[1])
        except ValueError as exc:  # not enough repetitions yet (or a factor with one level)
            out.append((f"{title}: {exc}", []))
            continue
        out.append((title, table))
    return out


# -- HTML ----------------------------------------------------------------------------------------

def write_html(e: Experiment, scale: str, records: list[RunRecord], path: Path) -> None:
    path.write_text(render_html(e, scale, records), encoding="utf-8")


def render_html(e: Experiment, scale: str, records: list[RunRecord]) -> str:
    parts = [f"<h1>{_h(e.name)}</h1>",
             f"<p>{_h(e.description)}</p>",
             f"<p class=meta>scale {_h(scale)} · {len(records)} completed runs · databases "
             f"{_h(', '.join(t.name for t in e.targets))} · workloads {_h(', '.join(e.workloads))} · "
             f"swept {_h('; '.join(f'{p} = {list(v)}' for p, v in e.sweep) or 'nothing')} · "
             f"{e.repetitions} repetitions, order {_h(e.order)} · report of "
             f"{datetime.now().strftime('%Y-%m-%d %H:%M')}</p>"]
    measured_by = clients(records)
    rows = [[name, "; ".join(found) or ("in-process (no server)" if name == "memory" else "not recorded"),
             "; ".join(measured_by.get(name, ())) or "not recorded"]
            for name, found in servers(records).items()]
    parts.append(_table(["database", "server, as it answered", "client that measured it"], rows, "Servers"))
    if RATE in dict(e.sweep):
        parts += _saturation_section(e, records)
    parts.append("<h2>Throughput</h2>")
    parts.append(_throughput_chart(e, records))
    ops = [name for name in OPERATIONS if any(name in r.ops for r in records)]
    parts.append("<h2>Latency by operation</h2>")
    for name in ops:
        parts.append(_latency_chart(e, records, name))
    parts.append("<h2>Every step</h2>")
    parts.append(_steps_table(e, records))
    if len(e.targets) >= 2:
        parts.append(_welch_html(e, records))
    if e.anova:
        parts.append(f"<h2>Two-way ANOVA of throughput: {_h(e.anova[0])} x {_h(e.anova[1])}</h2>")
        for title, table in anova_tables(e, records, e.anova):
            parts.append(_anova_html(title, table))
    return _PAGE.format(title=_h(f"{e.name} ({scale})"), body="\n".join(parts))


def _saturation_section(e: Experiment, records: list[RunRecord]) -> list[str]:
    """The rate sweep first: the latency-throughput curve with its knee, the service time
    beside it, achieved against offered, the calibration's spread and Little's law."""
    parts = ["<h2>Saturation: latency against throughput</h2>"]
    for label, points in saturation_curves(e, records).items():
        best, stop = knee(e, points), next((p for p in points if p.saturated), None)
        words = [f"<b>{_h(label)}</b>:"]
        if best is not None:
            words.append(f"the knee is at <b>{best.throughput:,.0f} ops/s</b> achieved "
                         f"({_h(best.rate_text)} offered), the highest throughput whose response p99 "
                         f"({_ms(best.p99_us)} ms) stayed under {e.p99_bound_ms:g} ms.")
        elif e.p99_bound_ms:
            words.append(f"no paced step kept its response p99 under {e.p99_bound_ms:g} ms.")
        if stop is not None:
            words.append(f"Saturated at {_h(stop.rate_text)}: it achieved {stop.throughput:,.0f} ops/s, "
                         f"{stop.throughput / stop.target:.0%} of the offered rate, with a response p99 of "
                         f"{_ms(stop.p99_us)} ms; the sweep stopped there.")
        else:
            words.append("Not saturated by the steps made so far.")
        parts.append(f"<p class=knee-text>{' '.join(words)}</p>")
    parts.append('<div class=pair>' + _saturation_chart(e, records)
                 + _saturation_chart(e, records, service=True) + "</div>")
    parts.append(_offered_chart(e, records))
    header, rows = saturation_table(e, records)
    parts.append(_table(header, rows, caption="knee and saturation per database"))
    header, rows = curve_table(e, records)
    parts.append(_table(header, rows, caption="every rate: offered and achieved, response and service "
                        "time, and Little's law (operations in the system = throughput x mean response "
                        "time; sampled 50 times a second by each worker)"))
    header, rows = calibration_table(e, records)
    parts.append(_table(header, rows, caption="unthrottled calibration (each run until its throughput "
                        "was stable): the spread the sweep's percentages rest on"))
    return parts


def _h(text: object) -> str:
    return html.escape(str(text))


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


def _series(e: Experiment, records: list[RunRecord]):
    """(label, [(x, [records])...]) per database x workload x values of the other sweeps."""
    x = _x_param(e)
    groups: dict[str, dict[object, list[RunRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        values = dict(r.step.values)
        rest = ", ".join(f"{p}={v}" for p, v in r.step.values if p != x)
        label = f"{r.database} {r.step.workload}" + (f" ({rest})" if rest else "")
        groups[label][values[x] if x else r.step.workload].append(r)
    order = {v: i for i, v in enumerate(_x_values(e, records))}
    return [(label, sorted(points.items(), key=lambda kv: order.get(kv[0], 0)))
            for label, points in groups.items()]


def _throughput_chart(e: Experiment, records: list[RunRecord]) -> str:
    lines = []
    for label, points in _series(e, records):
        pts = []
        for xv, rs in points:
            c = cell([r.throughput for r in rs])
            pts.append((xv, c.mean, c.ci_low, c.ci_high))
        lines.append((label, pts))
    return _svg_chart("throughput (ops/s), mean of the repetitions with 95% confidence interval",
                      _x_param(e) or "workload", lines, e, log_y=False, kind="throughput", records=records)


def _latency_chart(e: Experiment, records: list[RunRecord], op: str) -> str:
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
    return _svg_chart(f"{op} latency (µs, log scale): p50 solid, p99 dashed, mean of the repetitions",
                      _x_param(e) or "workload", lines, e, log_y=True, kind=f"latency-{op}", records=records)


def _svg_chart(title: str, xlabel: str, lines, e: Experiment, log_y: bool, kind: str,
               records: list[RunRecord] = ()) -> str:
    width, height, left, right, top, bottom = FRAME
    xs = _x_values(e, records)
    ys = [v for _, pts in lines for _, m, lo, hi in pts for v in (m, lo, hi) if v is not None and v > 0]
    if not ys and log_y and any(pts for _, pts in lines):
        ys = [1.0]  # every latency below the histogram's 1 us resolution: drawn on the axis floor
    if not ys:
        return f"<p>{_h(title)}: no data</p>"
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

    out = _chart_open(kind, title)
    ticks = ([10 ** k for k in range(int(math.log10(low)), int(math.log10(high)) + 1)] if log_y
             else [low + (high - low) * k / 5 for k in range(6)])
    for t in ticks:
        y = fy(t)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_num(t)}</text>')
    for v in xs:
        out.append(f'<text x="{fx(v):.1f}" y="{height - bottom + 18}" text-anchor="middle">{_h(v)}</text>')
    out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle" '
               f'class=axis>{_h(xlabel)}</text>')
    for i, (label, pts) in enumerate(lines):
        colour = COLOURS[(i // (2 if log_y else 1)) % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if log_y and label.endswith("p99") else ""
        path = " ".join(f"{fx(xv):.1f},{fy(m):.1f}" for xv, m, _, _ in pts)
        out.append(f'<polyline class=series points="{path}" fill="none" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        for xv, m, lo, hi in pts:
            if lo is not None and hi is not None:
                out.append(f'<line class=ci x1="{fx(xv):.1f}" x2="{fx(xv):.1f}" y1="{fy(max(lo, low)):.1f}" '
                           f'y2="{fy(hi):.1f}" stroke="{colour}"/>')
            out.append(f'<circle cx="{fx(xv):.1f}" cy="{fy(m):.1f}" r="3.5" fill="{colour}">'
                       f'<title>{_h(label)}: {_num(m)}</title></circle>')
        out += _legend_entry(i, label, colour, dash)
    out.append("</svg></figure>")
    return "\n".join(out)


@dataclass
class CurvePoint:
    rate: object  # "max" or a percentage
    throughput: float  # mean achieved
    target: float | None  # mean target rate (ops/s); None unthrottled
    p50_us: float  # mean over the repetitions of the worst operation's response time p50
    p99_us: float
    service_p50_us: float = 0.0  # the same, of the service time (from the actual start)
    service_p99_us: float = 0.0
    in_flight: float | None = None  # sampled operations in the system (mean of the repetitions)
    little: float = 0.0  # throughput x mean response time (Little's law)
    n: int = 0

    @property
    def saturated(self) -> bool:
        return self.target is not None and self.throughput < SATURATED * self.target

    @property
    def rate_text(self) -> str:
        if self.rate == UNTHROTTLED:
            return "unthrottled"
        return f"{self.rate}% = {self.target:,.0f} ops/s" if self.target else f"{self.rate}%"


def saturation_curves(e: Experiment, records: list[RunRecord]) -> dict[str, list[CurvePoint]]:
    """Per database x workload (x other swept values): one point per rate, in rising order.
    Latency is the response time (from the intended start) where the run was paced, the service
    time for the unthrottled run (they are the same thing there), worst operation first."""
    groups: dict[str, dict[object, list[RunRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        rest = ", ".join(f"{p}={v}" for p, v in r.step.values if p != RATE)
        label = f"{r.database} {r.step.workload}" + (f" ({rest})" if rest else "")
        groups[label][r.step.rate].append(r)
    out: dict[str, list[CurvePoint]] = {}
    for label, by_rate in groups.items():
        points = []
        for rate, rs in sorted(by_rate.items(), key=lambda kv: _rate_order(kv[0])):
            def worst(r: RunRecord, pct: str, response: bool = True) -> float:
                figures = (r.response or r.ops) if response else r.ops
                return max((f.percentiles[pct] for f in figures.values()), default=0)

            def mean(values: list[float]) -> float:
                return sum(values) / len(values) if values else 0.0
            targets = [r.target for r in rs if r.target]
            sampled = [r.in_flight for r in rs if r.in_flight is not None]
            points.append(CurvePoint(
                rate, mean([r.throughput for r in rs]), mean(targets) if targets else None,
                mean([worst(r, "p50") for r in rs]), mean([worst(r, "p99") for r in rs]),
                mean([worst(r, "p50", False) for r in rs]), mean([worst(r, "p99", False) for r in rs]),
                mean(sampled) if sampled else None, mean([r.little_in_flight for r in rs]), len(rs)))
        out[label] = points
    return out


def _rate_order(rate: object) -> float:
    return float("inf") if rate == UNTHROTTLED else float(rate)


def knee(e: Experiment, points: list[CurvePoint]) -> CurvePoint | None:
    """The highest throughput whose response p99 stayed under the file's bound (p99_bound_ms),
    at a step that kept up with its offered rate (a saturated step is no operating point: its
    queue grows for as long as it runs, so its p99 is only a matter of how long that was)."""
    if e.p99_bound_ms is None:
        return None
    ok = [p for p in points if p.rate != UNTHROTTLED and not p.saturated and p.p99_us < e.p99_bound_ms * 1000]
    return max(ok, key=lambda p: p.throughput, default=None)


def saturation_table(e: Experiment, records: list[RunRecord]) -> tuple[list[str], list[list[str]]]:
    """Per curve: the unthrottled throughput, the knee (the highest throughput whose response
    p99 stayed under the bound) and the step that ended the sweep: the database saturated there
    (achieved under 90% of offered)."""
    header = ["database / workload", "unthrottled ops/s", "knee: achieved ops/s",
              f"knee p99 ms (bound {e.p99_bound_ms:g})" if e.p99_bound_ms else "knee p99 ms",
              "knee offered", "sweep ended at", "its achieved / offered", "its p99 ms"]
    rows = []
    for label, points in saturation_curves(e, records).items():
        top = next((p for p in points if p.rate == UNTHROTTLED), None)
        best = knee(e, points)
        stop = next((p for p in points if p.saturated), None)
        row = [label, f"{top.throughput:,.0f}" if top else "-"]
        row += (["none" if e.p99_bound_ms else "no bound set", "-", "-"] if best is None else
                [f"{best.throughput:,.0f}", _ms(best.p99_us), best.rate_text])
        row += (["not saturated", "-", "-"] if stop is None else
                [stop.rate_text, f"{stop.throughput / stop.target:.0%}", _ms(stop.p99_us)])
        rows.append(row)
    return header, rows


def curve_table(e: Experiment, records: list[RunRecord]) -> tuple[list[str], list[list[str]]]:
    """Every step of every curve: offered and achieved rate, response and service p50 / p99,
    and Little's law (operations in the system, sampled, against throughput x mean response)."""
    header = ["database / workload", "rate", "offered ops/s", "achieved ops/s", "achieved / offered",
              "response p50 ms", "response p99 ms", "service p99 ms", "in the system (sampled)",
              "throughput x mean response", "Little's law", "n"]
    rows = []
    for label, points in saturation_curves(e, records).items():
        for p in points:
            offered = f"{p.target:,.0f}" if p.target else "-"
            share = "-"
            if p.target:
                share = f"{p.throughput / p.target:.0%}" + (" saturated" if p.saturated else "")
            if p.in_flight is None or not p.little:
                verdict = "-"
            elif p.saturated:  # its queue grew all along: operations still queued at the end
                verdict = "not steady (saturated)"  # are in the system, but have no response time
            else:
                ratio = p.in_flight / p.little
                verdict = f"{ratio:.2f}x " + ("holds" if 0.8 <= ratio <= 1.25 else "off")
            rows.append([label, "max" if p.rate == UNTHROTTLED else f"{p.rate}%", offered,
                         f"{p.throughput:,.0f}", share, _ms(p.p50_us), _ms(p.p99_us), _ms(p.service_p99_us),
                         "-" if p.in_flight is None else f"{p.in_flight:,.1f}", f"{p.little:,.1f}", verdict,
                         str(p.n)])
    return header, rows


def calibration_table(e: Experiment, records: list[RunRecord]) -> tuple[list[str], list[list[str]]]:
    """The unthrottled calibration runs of each curve: their spread between repetitions and
    within each run (the coefficient of variation of its measured intervals)."""
    header = ["database / workload", "n", "mean ops/s", "95% CI", "lowest – highest",
              "measured s (each)", "within-run spread (CV of 1 s intervals)"]
    rows = []
    for label, rs in _calibrations(records).items():
        c = cell([r.throughput for r in rs])
        spreads = []
        for r in rs:
            rates = r.interval_rates
            if len(rates) >= 2 and sum(rates):
                m = sum(rates) / len(rates)
                spreads.append((sum((x - m) ** 2 for x in rates) / (len(rates) - 1)) ** 0.5 / m)
        rows.append([label, str(c.n), f"{c.mean:,.0f}", c.interval(),
                     f"{min(r.throughput for r in rs):,.0f} – {max(r.throughput for r in rs):,.0f}",
                     ", ".join(f"{r.runtime_ms / 1000:.0f}" for r in rs),
                     ", ".join(f"{x:.1%}" for x in spreads) or "-"])
    return header, rows


def _calibrations(records: list[RunRecord]) -> dict[str, list[RunRecord]]:
    out: dict[str, list[RunRecord]] = defaultdict(list)
    for r in records:
        if r.step.rate == UNTHROTTLED:
            rest = ", ".join(f"{p}={v}" for p, v in r.step.values if p != RATE)
            out[f"{r.database} {r.step.workload}" + (f" ({rest})" if rest else "")].append(r)
    return out


def _ms(us: float) -> str:
    return f"{us / 1000:,.3g}" if us < 100_000 else f"{us / 1000:,.0f}"


def _saturation_chart(e: Experiment, records: list[RunRecord], service: bool = False) -> str:
    """p50 (solid) and p99 (dashed) latency against the throughput achieved, log y: the
    response time (from the intended start), or the service time beside it; the knee marked."""
    width, height, left, right, top, bottom = FRAME
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
    out = _chart_open("saturation-service" if service else "saturation",
                      f"{what}, µs (log scale), against the throughput achieved: p50 solid, p99 dashed"
                      + ("" if service else "; ◆ the knee"))
    for k in range(int(math.log10(low)), int(math.log10(high)) + 1):
        y = fy(10 ** k)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_num(10 ** k)}</text>')
    for k in range(6):
        v = x_high * k / 5
        out.append(f'<text x="{fx(v):.1f}" y="{height - bottom + 18}" text-anchor="middle">{_num(v)}</text>')
    out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle" '
               'class=axis>throughput achieved (ops/s)</text>')
    if e.p99_bound_ms:
        y = fy(e.p99_bound_ms * 1000)
        out.append(f'<line class=bound x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'stroke="#888" stroke-dasharray="2 3"/><text x="{width - right - 4}" y="{y - 4:.1f}" '
                   f'text-anchor="end">p99 bound {e.p99_bound_ms:g} ms</text>')
    for i, (label, points) in enumerate(curves.items()):
        colour = COLOURS[i % len(COLOURS)]
        paced = [p for p in points if p.rate != UNTHROTTLED]  # the calibration is a point apart
        for pct, dash in ((p50, ""), (p99, ' stroke-dasharray="6 4"')):
            path = " ".join(f"{fx(p.throughput):.1f},{fy(getattr(p, pct)):.1f}" for p in paced)
            out.append(f'<polyline class=series points="{path}" fill="none" stroke="{colour}" '
                       f'stroke-width="2"{dash}/>')
            for p in points:
                us = getattr(p, pct)
                shape = "r=\"3\"" if p.rate != UNTHROTTLED else "r=\"5\" fill-opacity=\"0.4\""
                out.append(f'<circle cx="{fx(p.throughput):.1f}" cy="{fy(us):.1f}" {shape} fill="{colour}">'
                           f'<title>{_h(label)} {_h(p.rate_text)}: achieved {_num(p.throughput)} ops/s, '
                           f'{pct[:-3].replace("service_", "service ")} {_num(us)} µs</title></circle>')
        best = None if service else knee(e, points)
        if best is not None:
            x, y = fx(best.throughput), fy(best.p99_us)
            out.append(f'<path class=knee d="M{x:.1f},{y - 8:.1f} L{x + 7:.1f},{y:.1f} L{x:.1f},{y + 8:.1f} '
                       f'L{x - 7:.1f},{y:.1f} Z" fill="none" stroke="{colour}" stroke-width="2"/>'
                       f'<text x="{x:.1f}" y="{y - 12 if i % 2 == 0 else y + 22:.1f}" text-anchor="middle" '
                       f'fill="{colour}">'
                       f'knee {_num(best.throughput)} ops/s</text>')
        out += _legend_entry(i, label, colour)
    out.append("</svg></figure>")
    return "\n".join(out)


def _offered_chart(e: Experiment, records: list[RunRecord]) -> str:
    """Achieved against offered rate, one line per curve, and the diagonal where they are
    equal: where a line leaves the diagonal, the database is saturated."""
    width, height, left, right, top, bottom = FRAME
    curves = {label: [p for p in pts if p.target] for label, pts in saturation_curves(e, records).items()}
    values = [v for pts in curves.values() for p in pts for v in (p.target, p.throughput)]
    if not values:
        return "<p>achieved against offered: no paced steps yet</p>"
    high = max(values) * 1.05

    def fx(v: float) -> float:
        return left + (width - left - right) * v / high

    def fy(v: float) -> float:
        return top + (1 - v / high) * (height - top - bottom)

    out = _chart_open("offered", "throughput achieved against the rate offered (ops/s); dotted: "
                      "achieved = offered; a line below it is saturated")
    for k in range(6):
        v = high * k / 5
        y = fy(v)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_num(v)}</text>')
        out.append(f'<text x="{fx(v):.1f}" y="{height - bottom + 18}" text-anchor="middle">{_num(v)}</text>')
    out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle" '
               'class=axis>offered (ops/s)</text>')
    out.append(f'<line class=diagonal x1="{fx(0):.1f}" y1="{fy(0):.1f}" x2="{fx(high):.1f}" '
               f'y2="{fy(high):.1f}" stroke="#888" stroke-dasharray="2 3"/>')
    for i, (label, points) in enumerate(curves.items()):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{fx(p.target):.1f},{fy(p.throughput):.1f}" for p in points)
        out.append(f'<polyline class=series points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for p in points:
            out.append(f'<circle cx="{fx(p.target):.1f}" cy="{fy(p.throughput):.1f}" r="3" fill="{colour}">'
                       f'<title>{_h(label)} {_h(p.rate_text)}: achieved {_num(p.throughput)} ops/s'
                       '</title></circle>')
        out += _legend_entry(i, label, colour)
    out.append("</svg></figure>")
    return "\n".join(out)


FRAME = (760, 360, 78, 250, 30, 50)  # every chart: width, height, left, right, top, bottom margins


def _chart_open(kind: str, caption: str) -> list[str]:
    """A chart's figure, caption, SVG element and plot area (closed by "</svg></figure>")."""
    width, height, left, right, top, bottom = FRAME
    return [f'<figure class=chart data-chart="{_h(kind)}"><figcaption>{_h(caption)}</figcaption>',
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img">',
            f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
            'fill="#fff" stroke="#999"/>']


def _legend_entry(i: int, label: str, colour: str, dash: str = "") -> list[str]:
    """The i-th line of the legend right of the plot: a stroke sample and the label."""
    width, _, _, right, top, _ = FRAME
    ly = top + 14 + 16 * i
    return [f'<line x1="{width - right + 12}" x2="{width - right + 32}" y1="{ly - 4}" y2="{ly - 4}" '
            f'stroke="{colour}" stroke-width="2"{dash}/>',
            f'<text x="{width - right + 38}" y="{ly}">{_h(label)}</text>']


def _num(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:.3g}M"
    if v >= 1e4:
        return f"{v / 1e3:.3g}k"
    return f"{v:,.0f}" if v >= 10 else f"{v:.3g}"


def _table(header: list[str], rows: list[list[object]], caption: str = "") -> str:
    head = "".join(f"<th>{_h(c)}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{_h(c)}</td>" for c in row) + "</tr>" for row in rows)
    cap = f"<caption>{_h(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _steps_table(e: Experiment, records: list[RunRecord]) -> str:
    steps = by_step(records)
    rows = []
    noisy = 0
    for step in e.steps_of(steps):
        rs = steps[step.key]
        c = cell([r.throughput for r in rs])
        noisy += c.noisy
        read = [r.ops[op].percentiles["p99"] for r in rs for op in ("READ",) if op in r.ops]
        rows.append([step.key, c.n, f"{c.mean:,.0f}", "-" if c.sd is None else f"{c.sd:,.0f}",
                     c.interval(), f"{sum(read) / len(read):,.0f}" if read else "-"])
    note = (f"<p class=noisy>{noisy} step(s) {NOISY}: the 95% interval is wider than the mean; "
            "more repetitions or a longer measure_s narrow it.</p>" if noisy else "")
    header = ["step", "n", "mean ops/s", "sd", "95% interval (t on the log scale)", "READ p99 µs (mean)"]
    return _table(header, rows) + note


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
    return (f"<h2>{_h(first.name)} vs {_h(second.name)}: Welch's t-test of throughput</h2>"
            + _table(["workload / sweep", f"{first.name} mean", f"{second.name} mean", "t", "df", "p",
                      "verdict"], rows))


def _anova_html(title: str, table: list[AnovaRow]) -> str:
    if not table:
        return f"<p>{_h(title)}</p>"
    rows = [[r.source, f"{r.ss:,.1f}", r.df, f"{r.ms:,.1f}", "" if r.f is None else f"{r.f:.2f}",
             "" if r.p is None else f"{r.p:.4f}"] for r in table]
    return _table(["source", "SS", "df", "MS", "F", "p"], rows, caption=title)


_PAGE = """<!DOCTYPE html>
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
