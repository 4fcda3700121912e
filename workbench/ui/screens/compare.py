"""The compare screen (being built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static


class CompareScreen(Screen):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("compare: not built yet")
        yield Footer()
