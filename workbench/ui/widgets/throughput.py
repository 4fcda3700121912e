"""The throughput sparkline of the Run screen: ops/s per tick, the target rate drawn as ╌,
and the run's events marked under the ticks they happened in."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from workbench.commands.background import LiveState
from workbench.ui.views import event_line, throughput_chart


class ThroughputChart(Static):
    DEFAULT_CSS = "ThroughputChart { height: 6; }"

    def show(self, state: LiveState) -> None:
        snap = state.snapshot
        caption = Text(f"throughput {snap.throughput:,.0f} ops/s", style="bold")
        if snap.target > 0:
            caption.append(f"  (target ╌ {snap.target:,.0f})", style="yellow")
        caption.append("\n")
        chart = throughput_chart(state, self.size.width or 80, height=3)
        self.update(Text.assemble(caption, chart, "\n", Text(event_line(state), style="dim")))
