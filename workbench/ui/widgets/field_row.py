"""One property of the Workload screen: its label, a compact input, and the command line's
message under it when the value is refused."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, Static


def field_id(key: str) -> str:
    """Widget ids cannot hold dots: zipfian.constant -> zipfian-constant."""
    return key.replace(".", "-")


class FieldRow(Vertical):
    DEFAULT_CSS = """
    FieldRow { height: auto; }
    FieldRow > Horizontal { height: 1; }
    FieldRow Label { width: 20; color: $text-muted; }
    FieldRow Input { width: 1fr; }
    FieldRow .field-error { display: none; color: $error; padding-left: 2; }
    FieldRow.-invalid .field-error { display: block; }
    """

    def __init__(self, key: str, label: str, value: str) -> None:
        super().__init__(id=f"row-{field_id(key)}")
        self.key, self.label, self.value = key, label, value

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Label(self.label)
            yield Input(self.value, id=field_id(self.key), compact=True)
        yield Static("", classes="field-error")

    def show_error(self, message: str | None) -> None:
        """The command line's message under the field ("✗ ..."), or nothing."""
        self.set_class(bool(message), "-invalid")
        self.query_one(".field-error", Static).update(f"✗ {message}" if message else "")
