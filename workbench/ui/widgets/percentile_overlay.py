"""The selected runs' latency at each percentile, for one operation, drawn over one log axis:
one bar per run and percentile, each run with its own fill (█ ▓ ▒ ░), so the curves can be
told apart without colour."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from workbench.results.compare import percentile_curves
from workbench.results.model import RunResult

FILLS = "█▓▒░"
STYLES = ("cyan", "magenta", "yellow", "green")


def _fmt(us: float) -> str:
    return f"{us:,.0f}µs" if us < 10_000 else f"{us / 1000:,.1f}ms"


def overlay_text(results: Sequence[RunResult], labels: Sequence[str], op: str, width: int) -> Text:
    curves = percentile_curves(results, op)
    values = [v for curve in curves for _, v in curve if v > 0]
    text = Text(f"{op}: latency at each percentile, log axis (o: next operation)\n", style="bold")
    if not values:
        return text.append("no percentiles recorded for this operation", style="dim")
    low = 10 ** math.floor(math.log10(min(values)))
    high = max(values)
    bar = max(width - 22, 10)

    def cells(v: float) -> int:
        if high <= low:
            return bar
        return max(1, round((math.log10(max(v, low)) - math.log10(low)) / (math.log10(high) - math.log10(low))
                            * bar))

    for i, label in enumerate(labels):
        text.append(f"{FILLS[i % 4] * 2} {label}\n", style=STYLES[i % 4])
    percentiles = sorted({p for curve in curves for p, _ in curve})
    for p in percentiles:
        for i, curve in enumerate(curves):
            value = dict(curve).get(p)
            head = f"p{p:g}" if i == 0 else ""
            text.append(f"{head:>7} ")
            if value is None:
                text.append("-\n", style="dim")
                continue
            text.append(FILLS[i % 4] * cells(value), style=STYLES[i % 4])
            text.append(f" {_fmt(value)}\n")
    text.append(f"{'':>7} {_fmt(low)} … {_fmt(high)}", style="dim")
    return text


class PercentileOverlay(Static):
    DEFAULT_CSS = "PercentileOverlay { height: auto; margin-top: 1; }"

    def show(self, results: Sequence[RunResult], labels: Sequence[str], op: str | None) -> None:
        self.update(overlay_text(results, labels, op, self.size.width or 80) if op else "")

    def clear(self) -> None:
        self.update("")
