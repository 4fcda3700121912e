"""The dashboard screen (being built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static


class DashboardScreen(Screen):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("dashboard: not built yet")
        yield Footer()
