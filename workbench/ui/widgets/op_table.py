"""Per-operation figures of the Run screen: count, ops/s, percentiles, max and errors."""

from __future__ import annotations

from textual.widgets import Static

from workbench.drive.background import LiveState
from workbench.ui.views import COMPACT, WIDE, op_table


class OpTable(Static):
    DEFAULT_CSS = "OpTable { height: auto; max-height: 9; }"

    def __init__(self, *args, compact: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.columns = COMPACT if compact else WIDE

    def show(self, state: LiveState, paced: bool) -> None:
        self.update(op_table(state, state.returns, paced, self.columns))
