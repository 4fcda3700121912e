"""The latency distribution of one operation on a log axis: this interval and since start."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from workbench.drive.background import LiveState
from workbench.ui.views import percentile_bars


class PercentileBars(Static):
    DEFAULT_CSS = "PercentileBars { height: auto; }"

    _last: tuple | None = None

    def on_resize(self) -> None:  # the drawing depends on the size: draw the last tick again
        if self._last is not None:
            self.show(*self._last)

    def show(self, state: LiveState, op: str | None, response: bool) -> None:
        self._last = (state, op, response)
        snap = state.snapshot
        if op is None:
            self.update("latency: no operations yet")
            return
        name = f"Intended-{op}" if response else op
        title = Text(f"{op} {'response' if response else 'service'} time, log axis "
                     "(█ this interval, ┃ since start; o: next op)\n", style="bold")
        bars = percentile_bars(snap.stats.get(name), snap.cumulative.get(name), self.size.width or 80)
        self.update(Text.assemble(title, bars))
