"""Runs side by side: throughput and per-operation latency, with differences against the baseline
(the first run named), and for throughput, mean and p99 latency a 95% interval of the difference
from the runs' per-second figures and a verdict (results/significance.py).

`compare(results, labels)` gathers the figures; `comparison_view` draws them with rich (the
app's Compare screen and the command line share it): `comparison_table`, the figures, and
verdicts.py's `significance_table`, the intervals and verdicts; `comparison_rows` is the same as
CSV rows;
`percentile_curves` gives each run's latency at each percentile, for an overlaid chart;
`spec_differences` says in what, besides the database, the runs differ: their properties and the
client that measured them (a comparison of two different workloads, or of cassandra-driver
against the native client, is not a comparison of two databases).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich import box
from rich.console import Group
from rich.table import Table

from workbench.config.bindings import BINDINGS
from workbench.results.model import RunResult, error_total
from workbench.results.paced import DELIVERED_WORD, Pacing, run_pacing
from workbench.results.server_summary import cpu_by_node
from workbench.results.verdicts import Tested, against_baseline, significance_rows, significance_table

FIGURES = (("p50", 50.0), ("p95", 95.0), ("p99", 99.0), ("p99.9", 99.9), ("max", None))
CURVE = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99)
# Properties that name where a run went rather than what it did (and every binding's own, named
# by its prefix in the registry, config/bindings.py; results/comparable.py names the ones of them
# that change results, consistency levels among them).
WHERE = ("db", "hosts", "port", "label", "table", "workers")
ORDER = ("OVERALL", "INSERT", "READ", "UPDATE", "SCAN", "READ-MODIFY-WRITE", "DELETE")


@dataclass(frozen=True)
class OpFigures:
    count: int
    latencies: dict[str, float | None]  # p50 ... max in µs; None when the run lacks it
    errors: int


@dataclass(frozen=True)
class Comparison:
    labels: tuple[str, ...]  # the first is the baseline
    throughput: tuple[float, ...]
    ops: dict[str, tuple[OpFigures | None, ...]]  # operation -> figures per run
    differences: tuple[str, ...]
    clients: tuple[str, ...] = ()  # the client that measured each run (RunResult.client)
    tested: tuple[Tested, ...] = ()  # throughput, then each operation's mean and p99
    # node -> each run's mean CPU in cores (results/server_summary.py)
    server_cpu: dict[str, tuple[float | None, ...]] = field(default_factory=dict)
    # each run's offered load and what its throughput was (results/paced.py), None unpaced
    pacing: tuple[Pacing | None, ...] = ()


def compare(results: Sequence[RunResult], labels: Sequence[str],
            tolerances: dict[str, float] | None = None) -> Comparison:
    """The runs' figures; the first of `results` is the baseline. `tolerances` (figure ->
    percent) override significance.TOLERANCES."""
    if len(results) < 2:
        raise ValueError("a comparison needs two runs or more")
    names: list[str] = []
    for result in results:
        names += [m.name for m in result.measurements if _is_operation(m.name) and m.name not in names]
    names.sort(key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    ops = {name: tuple(_figures(r, name) for r in results) for name in names}
    return Comparison(tuple(labels), tuple(r.throughput for r in results), ops,
                      tuple(spec_differences(results)), tuple(r.client for r in results),
                      against_baseline(results, names, tolerances), cpu_by_node(results),
                      tuple(run_pacing(r) for r in results))


def _is_operation(name: str) -> bool:
    return name not in ("CLEANUP", "VERIFY") and not name.endswith("-FAILED") \
        and not name.startswith("Intended-") and "LATENCY-PER-RECORD" not in name


def _figures(result: RunResult, name: str) -> OpFigures | None:
    m = result.measurement(name)
    if m is None:
        return None
    lat = {label: (m.max_us if p is None else m.percentiles.get(p)) for label, p in FIGURES}
    errors = error_total(m.returns)
    return OpFigures(m.operations, lat, errors)


def difference(first: float | None, other: float | None, higher_is_better: bool) -> str:
    """'+12.3% ✓' (better than the first run) / '-4.0% ✗' (worse) / '' (nothing to compare)."""
    if first is None or other is None or first == 0:
        return ""
    change = (other - first) / first * 100
    if abs(change) < 0.05:
        return "±0%"
    better = (change > 0) == higher_is_better
    return f"{change:+.1f}% {'✓' if better else '✗'}"


def spec_differences(results: Sequence[RunResult]) -> list[str]:
    """`key: a / b` for every property that differs between the runs, where they went aside, and
    `client: a / b` when the clients that measured them differ (name, compiled or not, loop).
    Runs imported from YCSB text carry no properties: they are left out of the properties' check."""
    out = []
    everyone = results
    unknown = [i + 1 for i, r in enumerate(results) if not r.properties]
    if unknown:
        out.append(f"properties of run {', '.join(map(str, unknown))} unknown (YCSB text), not compared")
    results = [r for r in results if r.properties]
    keys = sorted({k for r in results for k in r.properties})
    bindings_own = tuple(info.prefix for info in BINDINGS.values())
    for key in keys:
        if key in WHERE or key.startswith(bindings_own):
            continue
        values = [r.properties.get(key, "-") for r in results]
        if len(set(values)) > 1:
            out.append(f"{key}: {' / '.join(values)}")
    phases = [r.phase for r in everyone]
    if len(set(phases)) > 1:
        out.insert(0, f"phase: {' / '.join(phases)}")
    clients = [r.client for r in everyone]
    if len(set(clients)) > 1:
        out.insert(0, f"client: {' / '.join(clients)}")
    return out


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def comparison_view(c: Comparison) -> Group:
    """What the command line prints and the Compare screen shows: the figures, then the
    intervals and verdicts."""
    return Group(comparison_table(c), "", significance_table(c.labels, c.tested))


def comparison_table(c: Comparison) -> Table:
    """One column per run, the first the baseline; after it, each figure carries its difference to
    the baseline (✓ better, ✗ worse: higher throughput, lower latency, fewer errors)."""
    table = Table(title=f"runs side by side (differences against the baseline, {c.labels[0]})",
                  title_justify="left", header_style="bold", expand=False, pad_edge=False,
                  box=box.SIMPLE_HEAD)
    table.add_column("figure", no_wrap=True)
    for i, label in enumerate(c.labels):
        table.add_column(f"{label} (baseline)" if i == 0 else f"{label}\n(Δ vs baseline)", justify="right")
    first = c.throughput[0]
    if c.clients:
        table.add_row("client", *c.clients)
    table.add_row("throughput ops/s", *[f"{t:,.0f}" + ("" if i == 0 else f"\n{difference(first, t, True)}")
                                        for i, t in enumerate(c.throughput)])
    if any(p is not None for p in c.pacing):  # a paced run: what its throughput is
        table.add_row("offered ops/s", *["-" if p is None else f"{p.offered:,.0f}\n{p.share:.1%} {p.verdict}"
                                         for p in c.pacing])
    for name, per_run in c.ops.items():
        table.add_section()
        base = per_run[0]
        table.add_row(f"{name} count", *[_us(f.count if f else None) for f in per_run])
        for label, _ in FIGURES:
            if all(f is None or f.latencies.get(label) is None for f in per_run):
                continue  # e.g. p50 of a YCSB 0.17.0 text file, which does not print it
            cells = []
            for i, f in enumerate(per_run):
                value = f.latencies.get(label) if f else None
                cell = _us(value)
                if i:
                    d = difference(base.latencies.get(label) if base else None, value, False)
                    cell += f" {d}" if d else ""
                cells.append(cell)
            table.add_row(f"{name} {label} µs", *cells)
        if any(f and f.errors for f in per_run):
            table.add_row(f"{name} errors", *[_us(f.errors if f else None) for f in per_run])
    if c.server_cpu:
        table.add_section()
    for node, per_run in c.server_cpu.items():
        table.add_row(f"cpu {node} cores", *["-" if v is None else f"{v:.2f}" for v in per_run])
    notes = [f"the runs differ in more than the database: {'; '.join(c.differences)}"] * bool(c.differences)
    notes += [f"{label}: {p.line()}" for label, p in zip(c.labels, c.pacing, strict=False)
              if p is not None and p.verdict != DELIVERED_WORD]
    if notes:
        table.caption = "\n".join(f"note: {n}" for n in notes)
        table.caption_justify = "left"
    return table


CSV_HEADER = ["run", "operation", "figure", "value", "diff_vs_first_pct", "diff_low_pct", "diff_high_pct",
              "verdict", "note", "intervals", "effective_intervals", "role"]


def comparison_rows(c: Comparison) -> list[list[object]]:
    """Tidy rows: run, operation, figure, value, difference to the baseline (the first run) in
    percent; then the per-second figures (per_second_throughput_ops_s, per_second_mean_us,
    per_second_p99_us: the mean of the series) with the 95% interval of the difference, the
    verdict, a note (too few seconds, no variation), the intervals counted (seconds by default)
    and their effective number. `role` says which run is the baseline on every row."""
    rows: list[list[object]] = [CSV_HEADER]
    pad = [""] * (len(CSV_HEADER) - 6)
    for i, label in enumerate(c.labels):
        role = "baseline" if i == 0 else "compared"
        t = c.throughput[i]
        if c.clients:
            rows.append([label, "OVERALL", "client", c.clients[i], "", *pad, role])
        rows.append([label, "OVERALL", "throughput_ops_s", t, _pct(c.throughput[0], t) if i else "",
                     *pad, role])
        paced = c.pacing[i] if i < len(c.pacing) else None
        if paced is not None:  # its offered rate, and what its throughput was, in the note
            rows.append([label, "OVERALL", "offered_ops_s", round(paced.offered, 3), "", "", "", "",
                         paced.note(), "", "", role])
        for name, per_run in c.ops.items():
            f, base = per_run[i], per_run[0]
            if f is None:
                continue
            rows.append([label, name, "count", f.count, "", *pad, role])
            for fig, _ in FIGURES:
                value = f.latencies.get(fig)
                base_value = base.latencies.get(fig) if base else None
                rows.append([label, name, f"{fig}_us", "" if value is None else value,
                             _pct(base_value, value) if i else "", *pad, role])
            rows.append([label, name, "errors", f.errors, "", *pad, role])
        rows += [[label, *row, role] for row in significance_rows(c.tested, i)]
        rows += [[label, node, "cpu_mean_cores", per_run[i], _pct(per_run[0], per_run[i]) if i else "",
                  *pad, role] for node, per_run in c.server_cpu.items() if per_run[i] is not None]
    return rows


def _pct(first: float | None, other: float | None) -> object:
    if first in (None, 0) or other is None:
        return ""
    return round((other - first) / first * 100, 2)


def write_comparison_csv(c: Comparison, path: str | Path) -> None:
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(comparison_rows(c))


def percentile_curves(results: Sequence[RunResult], name: str) -> list[list[tuple[float, float]]]:
    """For each run, (percentile, latency µs) of operation `name` at the percentiles it has."""
    curves = []
    for r in results:
        m = r.measurement(name)
        curves.append([(p, float(m.percentiles[p])) for p in CURVE if m and p in m.percentiles])
    return curves
