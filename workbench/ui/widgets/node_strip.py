"""The Run screen's strip under the throughput chart (issue 54, 3 and 8): a line per node of the
servers' newest second (server_view.node_lines: CPU, the longest GC pause, compactions and flushes
pending, a dead node as DEAD), and the client's own line (its CPU, loop lag, start gap, a paced
run behind its schedule, and "client-limited: ..." when the client was the bottleneck). Empty,
and no taller than nothing, before the first second's figures."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from workbench.drive.background import LiveState
from workbench.ui.server_view import client_line, client_verdict, node_lines

MAX_NODE_LINES = 2  # a larger cluster packs several nodes per line
SHORT_SCREEN = 30  # rows: below, one line of nodes and one of the client (80x24 keeps its panels)


class NodeStrip(Static):
    DEFAULT_CSS = "NodeStrip { height: auto; max-height: 4; text-wrap: nowrap; text-overflow: ellipsis; }"

    _last: tuple | None = None

    def on_resize(self) -> None:  # the packing depends on the width: draw the last state again
        if self._last is not None:
            self.show(*self._last)

    def show(self, state: LiveState, cores: float | None = None) -> None:
        self._last = (state, cores)
        width = self.size.width or 80
        short = self.screen.size.height < SHORT_SCREEN
        lines = node_lines(state, width)
        most = 1 if short else MAX_NODE_LINES
        if len(lines) > most:
            rest = " · ".join(lines[most - 1:]).split(" · ")  # the nodes from the last line shown on
            kept = _fit(rest, width)
            lines = [*lines[:most - 1], " · ".join(rest[:kept]) + f" · +{len(rest) - kept} more nodes"]
        client = [line for line in (client_line(state), client_verdict(state, cores)) if line]
        if short and len(client) == 2:  # the verdict says the client's cpu; keep BEHIND beside it
            behind = client[0].partition(" · BEHIND")[2]
            client = [(f"BEHIND{behind} · " if behind else "") + client[1]]
        text = Text("\n".join([*lines, *client]), style="dim", no_wrap=True, overflow="ellipsis")
        text.highlight_words(["DEAD", "FROZEN", "DOWN"], "bold red")
        text.highlight_regex(r"BEHIND by [\d,]+ ops|\w+-limited: .*", "bold yellow")
        self.display = bool(lines or client)
        self.update(text)


def _fit(parts: list[str], width: int) -> int:
    """How many of the nodes' `parts` fit on one line with "· +N more nodes" after them."""
    kept = len(parts) - 1
    while kept > 1 and len(" · ".join(parts[:kept])) + len(f" · +{len(parts) - kept} more nodes") > width:
        kept -= 1
    return kept
