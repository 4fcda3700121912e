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
    /* the marker, the longest label (23: "hot operations fraction") and a space before the value */
    FieldRow Label { width: 26; color: $text-muted; }
    FieldRow Input { width: 1fr; }
    FieldRow .field-error { display: none; color: $error; padding-left: 2; }
    FieldRow.-invalid .field-error { display: block; }
    """

    def __init__(self, key: str, label: str, value: str, placeholder: str = "") -> None:
        super().__init__(id=f"row-{field_id(key)}")
        self.key, self.label, self.value, self.placeholder = key, label, value, placeholder

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Label(f"  {self.label}")
            yield Input(self.value, placeholder=self.placeholder, id=field_id(self.key), compact=True)
        yield Static("", classes="field-error")

    # The field being edited is marked with a symbol too, not only with the input's colour.
    def on_descendant_focus(self) -> None:
        self.query_one(Label).update(f"▸ {self.label}")

    def on_descendant_blur(self) -> None:
        self.query_one(Label).update(f"  {self.label}")

    def show_error(self, message: str | None) -> None:
        """The command line's message under the field ("✗ ..."), or nothing."""
        self.set_class(bool(message), "-invalid")
        self.query_one(".field-error", Static).update(f"✗ {message}" if message else "")
