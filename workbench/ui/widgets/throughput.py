"""The throughput chart of the Run screen (and the Lessons screen): ops/s per tick on a labelled
scale, the target rate drawn as ╌, the run's events marked under the ticks they happened in.

Its caption says which throughput is which: the last tick's ("now") beside the phase's mean so
far while it runs, the mean alone (the run's result, as its YCSB [OVERALL] line says) once it is
over. A short last tick or a paced start makes the two far apart."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from workbench.drive.background import LiveState
from workbench.ui.views import event_line, fmt_short, mean_throughput, throughput_chart


class ThroughputChart(Static):
    # Takes the room the other panels leave: 3 chart rows at 80x24, more on a taller terminal,
    # 2 when the servers' lines under it need the room.
    DEFAULT_CSS = "ThroughputChart { height: 1fr; min-height: 5; max-height: 16; }"

    _last: tuple | None = None

    def on_resize(self) -> None:  # the drawing depends on the size: draw the last tick again
        if self._last is not None:
            self.show(*self._last)

    def show(self, state: LiveState, overall: float | None = None) -> None:
        """`overall`: the finished phase's own figure (operations / runtime); without it, a
        finished phase's mean is worked out from its last state."""
        self._last = (state, overall)
        snap = state.snapshot
        finished = overall is not None or snap.final
        mean = overall if overall is not None else mean_throughput(state)
        width = self.size.width or 80
        if finished:
            words = [(f"throughput mean {mean:,.0f} ops/s over the run", "bold")]
        else:
            words = [(f"throughput now {snap.throughput:,.0f} ops/s", "bold"), (f" · mean {mean:,.0f}", "")]
        if snap.target > 0:
            words.append((f"  (target ╌ {snap.target:,.0f})", "yellow"))
        if sum(len(w) for w, _ in words) > width:  # a narrow pane (beside a lesson's text): one line still
            words = [(f"mean {fmt_short(mean)} ops/s", "bold")] if finished else [
                (f"now {fmt_short(snap.throughput)}", "bold"), (f" · mean {fmt_short(mean)} ops/s", "")]
            if snap.target > 0:
                words.append((f" ╌ {fmt_short(snap.target)}", "yellow"))
        caption = Text.assemble(*words, "\n")
        rows = max((self.size.height or 6) - 3, 2)  # caption, event marks, event line
        chart = throughput_chart(state, width, height=rows)
        events = event_line(state)
        if len(events) > width:  # one line, so that the rows above keep their room
            events = events[:width - 1] + "…"
        self.update(Text.assemble(caption, chart, "\n", Text(events, style="dim")))
