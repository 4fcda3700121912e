"""The throughput sparkline of the Run screen: ops/s per tick, the target rate drawn as ╌,
and the run's events marked under the ticks they happened in."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from workbench.drive.background import LiveState
from workbench.ui.views import event_line, throughput_chart


class ThroughputChart(Static):
    # Takes the room the other panels leave: 3 chart rows at 80x24, more on a taller terminal.
    DEFAULT_CSS = "ThroughputChart { height: 1fr; min-height: 6; max-height: 16; }"

    _last: tuple | None = None

    def on_resize(self) -> None:  # the drawing depends on the size: draw the last tick again
        if self._last is not None:
            self.show(*self._last)

    def show(self, state: LiveState, overall: float | None = None) -> None:
        """The last tick's throughput while the phase runs; `overall`, the finished phase's own
        figure (operations / runtime, as its YCSB [OVERALL] line says), once it is over."""
        self._last = (state, overall)
        snap = state.snapshot
        if overall is None:
            caption = Text(f"throughput {snap.throughput:,.0f} ops/s", style="bold")
        else:
            caption = Text(f"throughput {overall:,.0f} ops/s overall", style="bold")
        if snap.target > 0:
            caption.append(f"  (target ╌ {snap.target:,.0f})", style="yellow")
        caption.append("\n")
        rows = max((self.size.height or 6) - 3, 3)  # caption, event marks, event line
        chart = throughput_chart(state, self.size.width or 80, height=rows)
        self.update(Text.assemble(caption, chart, "\n", Text(event_line(state), style="dim")))
