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

MAX_NODE_LINES = 2  # at 80x24 the chart keeps its rows; a larger cluster packs several per line


class NodeStrip(Static):
    DEFAULT_CSS = "NodeStrip { height: auto; max-height: 4; text-wrap: nowrap; text-overflow: ellipsis; }"

    def show(self, state: LiveState, cores: float | None = None) -> None:
        width = self.size.width or 80
        lines = node_lines(state, width)
        if len(lines) > MAX_NODE_LINES:
            more = len(lines) - MAX_NODE_LINES + 1
            lines = [*lines[:MAX_NODE_LINES - 1], f"… and {more} more lines of nodes"]
        client = [line for line in (client_line(state), client_verdict(state, cores)) if line]
        text = Text("\n".join([*lines, *client]), style="dim", no_wrap=True, overflow="ellipsis")
        text.highlight_words(["DEAD", "FROZEN", "DOWN"], "bold red")
        text.highlight_regex(r"BEHIND by [\d,]+ ops|\w+-limited: .*", "bold yellow")
        self.display = bool(lines or client)
        self.update(text)
