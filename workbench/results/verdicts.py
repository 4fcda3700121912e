"""Runs held to a baseline, figure by figure: each difference with its 95% interval and verdict.

`against_baseline(results, operations)` compares the per-second series (significance.py) of the
throughput and of each operation's mean and p99 latency, every run after the first against the
first (the baseline); `significance_table` draws the result with rich (under `runs compare`'s
figures, on the Compare screen); `significance_rows` gives the same as the comparison CSV's rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.table import Table

from workbench.results.model import RunResult
from workbench.results.significance import (
    CONSTANT,
    HIGHER_IS_BETTER,
    MIN_SECONDS,
    TOLERANCES,
    TOO_FEW,
    Difference,
    compare_series,
    run_series,
    verdict,
)

STYLES = {"better": "green", "worse": "bold red", "same": "", "inconclusive": "yellow", "unknown": "dim"}
CAPTION = ("95% interval of the difference of the per-second means, their autocorrelation counted "
           "(effective sample size, Geyer 1992; Welch). worse: the whole interval beyond the "
           "tolerance; better: the whole interval beyond zero the right way; same: the interval "
           "within the tolerance; inconclusive: it reaches past the tolerance (longer runs narrow "
           f"it). n: measured intervals (seconds by default), at least {MIN_SECONDS} a run.")


@dataclass(frozen=True)
class Tested:
    """One figure's per-second series compared: each run after the baseline against it."""

    operation: str  # "OVERALL" for throughput
    figure: str  # "throughput", "mean" or "p99" (significance.FIGURES)
    tolerance_pct: float
    differences: tuple[Difference, ...]  # one per run after the baseline
    verdicts: tuple[str, ...]  # better / same / worse / unknown, in the same order

    @property
    def name(self) -> str:
        return "throughput ops/s" if self.figure == "throughput" else f"{self.operation} {self.figure} µs"

    @property
    def tolerance(self) -> str:
        """The tolerance signed the bad way: "-10%" for throughput, "+25%" for a p99."""
        return f"{'-' if HIGHER_IS_BETTER[self.figure] else '+'}{self.tolerance_pct:g}%"


def figure_against_baseline(results: Sequence[RunResult], operation: str, figure: str,
                            tolerance_pct: float | None = None) -> Tested:
    """`figure` of `operation` (the throughput: any operation) in every run against the first."""
    series = [run_series(r, figure, operation) for r in results]
    diffs = tuple(compare_series(series[0], other) for other in series[1:])
    tolerance = TOLERANCES[figure] if tolerance_pct is None else tolerance_pct
    return Tested(operation, figure, tolerance, diffs,
                  tuple(verdict(d, tolerance, HIGHER_IS_BETTER[figure]) for d in diffs))


def against_baseline(results: Sequence[RunResult], operations: Sequence[str],
                     tolerances: dict[str, float] | None = None) -> tuple[Tested, ...]:
    """Throughput, then each operation's mean and p99; `tolerances` (figure -> percent) override
    significance.TOLERANCES."""
    limits = {**TOLERANCES, **(tolerances or {})}
    tested = [figure_against_baseline(results, "OVERALL", "throughput", limits["throughput"])]
    tested += [figure_against_baseline(results, op, figure, limits[figure])
               for op in operations for figure in ("mean", "p99")]
    return tuple(tested)


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def _baseline_cell(d: Difference) -> str:
    s = d.baseline
    if s.mean is None:
        return "-"
    return f"{_number(s.mean)} (n={s.n})" if s.n_eff is not None else f"- ({TOO_FEW}: {s.n})"


def difference_cells(d: Difference, said: str) -> list[str]:
    """Δ, interval, verdict: "-4.0%", "[-6.1, -1.9]", "same"; "too few seconds" where a run has
    fewer than MIN_SECONDS; "-" where a run lacks the figure."""
    if d.other.n == 0 or d.baseline.n == 0:
        return ["-", "", ""]
    if d.low is None or d.pct_low is None or d.pct_high is None or d.pct is None:
        pct = "" if d.pct is None else f"{d.pct:+.1f}%"
        return [pct, f"{TOO_FEW} ({d.other.n})" if d.other.n_eff is None else TOO_FEW, ""]
    style = STYLES[said]
    shown = f"[{style}]{said}[/]" if style else said
    return [f"{d.pct:+.1f}%", f"[{d.pct_low:+.1f}, {d.pct_high:+.1f}]",
            shown + (f" ({CONSTANT})" if d.reason == CONSTANT else "")]


def significance_table(labels: Sequence[str], tested: Sequence[Tested]) -> Table:
    """One row per figure and run after the baseline: the figure (tolerance), the baseline's
    per-second mean, the run, its difference, the interval and the verdict."""
    table = Table(title=f"differences against the baseline, {labels[0]}, with 95% intervals (per-second "
                  "figures)", title_justify="left", header_style="bold", expand=False, pad_edge=False,
                  box=box.SIMPLE_HEAD, caption=CAPTION, caption_justify="left")
    table.add_column("figure (tolerance)", no_wrap=True)
    table.add_column(f"{labels[0]} (baseline)\nmean per second", justify="right")
    table.add_column("run")
    table.add_column("Δ", justify="right", no_wrap=True)
    table.add_column("95% interval", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for t in tested:
        if len(labels) > 2:
            table.add_section()
        for i, (label, d, said) in enumerate(zip(labels[1:], t.differences, t.verdicts, strict=True)):
            first = i == 0
            table.add_row(f"{t.name} ({t.tolerance})" if first else "", _baseline_cell(d) if first else "",
                          label, *difference_cells(d, said))
    return table


def _round(value: float | None, digits: int = 2) -> object:
    return "" if value is None else round(value, digits)


def significance_rows(tested: Sequence[Tested], run: int) -> list[list[object]]:
    """Run `run`'s (0: the baseline) per-second rows for the comparison CSV: operation, figure,
    value (the series' mean), diff_vs_first_pct, diff_low_pct, diff_high_pct, verdict, note,
    intervals, effective_intervals."""
    rows: list[list[object]] = []
    for t in tested:
        d = t.differences[max(run - 1, 0)]
        s = d.baseline if run == 0 else d.other
        if s.mean is None:
            continue
        figure = f"per_second_{'throughput_ops_s' if t.figure == 'throughput' else t.figure + '_us'}"
        head = [t.operation, figure, _round(s.mean, 3)]
        note = TOO_FEW if s.n_eff is None else ""
        if run == 0:
            rows.append([*head, "", "", "", "", note, s.n, _round(s.n_eff, 1)])
        else:
            rows.append([*head, _round(d.pct), _round(d.pct_low), _round(d.pct_high), t.verdicts[run - 1],
                         d.reason or note, s.n, _round(s.n_eff, 1)])
    return rows
