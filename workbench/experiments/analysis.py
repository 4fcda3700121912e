"""The figures an experiment's report is made of, read back from the run store.

`collect` reads the experiment's completed runs back from the run store, one `RunRecord` each.
`write_csv` writes one row per run x operation (the form spreadsheets and R/pandas want). The
statistics over the records: the steps' repetitions (`by_step`) and the two-way ANOVA the file
asks for (`anova = ["recordcount", "workload"]`), one table per database and per value of any
other swept parameter. A rate sweep's saturation curve: one `CurvePoint` per rate, its `knee`,
and the tables of text (header, rows) that the HTML page and the terminal both show. With
`add_node_at_s`, each record also holds its join's windows and the run over time (elastic.py).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from workbench.clusters import journal
from workbench.errors import WorkbenchError
from workbench.experiments.elastic import Join, join_windows, series, streamed
from workbench.experiments.plan import RATE, SATURATED, UNTHROTTLED, Experiment, Step
from workbench.experiments.stats import AnovaRow, anova2, cell
from workbench.experiments.timeline import RunTimeline, run_timeline
from workbench.results.paced import Pacing, pacing
from workbench.results.store import RunStore

OPERATIONS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE")
PERCENTILES = ((50.0, "p50"), (95.0, "p95"), (99.0, "p99"), (99.9, "p99.9"))


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
    # elastic speedup (add_node_at_s): the join's windows, what it streamed, and the run over time:
    # (end of each measured interval on the run's clock, ops/s, p99 response time us) and the
    # cluster's events (elapsed_s, text)
    join: Join | None = None
    streamed: str | None = None
    series: list[tuple[float, float, float]] = field(default_factory=list)
    marks: list[tuple[float, str]] = field(default_factory=list)
    # a paced run: its measured window's achieved against offered rate and its schedule at the
    # window's start and end (results/paced.py): delivered, not delivered or catching up
    pacing: Pacing | None = None
    # and with add_node_at_s, each of the join's windows (before, during, after) the same way
    window_pacing: dict[str, Pacing | None] = field(default_factory=dict)
    # the run over time, the client's side and its servers', with its spikes (timeline.py); None for
    # a run with no server figures (a memory run)
    timeline: RunTimeline | None = None

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
            record.pacing = pacing(result.intervals)
            record.timeline = run_timeline(result)
            sampled = [i for i in measured if i.in_flight is not None]
            if sampled:
                record.in_flight = (sum(i.in_flight * i.duration_s for i in sampled)
                                    / sum(i.duration_s for i in sampled))
            if e.add_node_at_s is not None:
                _elastic(record, result)
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


def _elastic(record: RunRecord, result) -> None:
    record.join = join_windows(result)
    record.streamed = streamed(result, record.join.node) if record.join else None
    record.series = [(end, rate, p99 or 0.0) for _, end, rate, p99 in series(result)]
    record.marks = [(e.elapsed_s, str(e.value)) for e in result.events if e.kind == journal.KIND]
    if record.join is not None:  # a window after a slow one may be catching up (results/paced.py)
        record.window_pacing = {w.name: pacing(result.intervals, w.start_s, w.end_s)
                                for w in record.join.windows}


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
              "mean_us", *[f"{label}_us" for _, label in PERCENTILES], "max_us",
              "offered_load", "behind_at_start_s"]
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
                            *[op.percentiles[label] for _, label in PERCENTILES], op.max_us,
                            *_paced_cells(r.pacing)])


def _paced_cells(p: Pacing | None) -> list[object]:
    """A paced run's offered load (delivered, not delivered, catching up) and how far behind its
    schedule its window started (s); empty for an unthrottled run or one not recorded."""
    if p is None:
        return ["", ""]
    return [p.verdict, "" if p.behind_start_s is None else round(p.behind_start_s, 3)]


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


# -- the saturation curve of a rate sweep --------------------------------------------------------

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
                [f"{best.throughput:,.0f}", ms(best.p99_us), best.rate_text])
        row += (["not saturated", "-", "-"] if stop is None else
                [stop.rate_text, f"{stop.throughput / stop.target:.0%}", ms(stop.p99_us)])
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
                         f"{p.throughput:,.0f}", share, ms(p.p50_us), ms(p.p99_us), ms(p.service_p99_us),
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


def ms(us: float) -> str:
    """Microseconds as milliseconds: three significant figures, whole ones from 100 ms up."""
    return f"{us / 1000:,.3g}" if us < 100_000 else f"{us / 1000:,.0f}"
