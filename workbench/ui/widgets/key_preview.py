"""Where the keys land: the share of requests on the hottest 0.1% / 1% / 10% / 50% of keys,
as numbers and bars, from the same draws as `workbench keys`."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


def preview_text(distribution: str, keys: int, points: list[tuple[float, float]], width: int) -> Text:
    from workbench.config.compose import preview_samples

    text = Text(f"where {distribution} requests land\n", style="bold")
    text.append(f"{keys:,} keys, {preview_samples(keys):,} draws as a run makes them\n", style="dim")
    bar = max(width - 24, 6)
    for fraction, share in points:
        text.append(f"hottest {fraction * 100:>4g}% ")
        filled = round(share * bar)
        text.append("█" * filled, style="magenta")
        text.append("·" * (bar - filled), style="dim")
        text.append(f" {share:6.1%}\n")
    even = ", ".join(f"{f * 100:g}%" for f, _ in points)
    text.append(f"(uniform keys would get {even})", style="dim")
    return text


class KeyPreview(Static):
    DEFAULT_CSS = "KeyPreview { height: auto; }"

    def show(self, distribution: str, keys: int, points: list[tuple[float, float]]) -> None:
        self.update(preview_text(distribution, keys, points, self.size.width or 36))

    def waiting(self, why: str) -> None:
        self.update(Text(why, style="dim"))
