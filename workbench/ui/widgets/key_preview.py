"""Where the keys land: the share of requests on the hottest 0.1% / 1% / 10% / 50% of keys,
as numbers and bars, from the same draws as `workbench keys` (`curve`, computed off the UI
thread: it draws up to 100,000 keys)."""

from __future__ import annotations

import dataclasses

from rich.text import Text
from textual.widgets import Static

from workbench.config.spec import WorkloadSpec

CURVE_FRACTIONS = (0.001, 0.01, 0.1, 0.5)


def preview_samples(keys: int) -> int:
    """Draws for a preview: enough per key that the hottest keys are not just lucky ones
    (with 2 draws per key, uniform keys look 2x hotter than they are), at most 100,000."""
    return min(max(20_000, 20 * keys), 100_000)


def curve(spec: WorkloadSpec, samples: int | None = None) -> list[tuple[float, float]]:
    """(fraction of keys, share of requests on that many hottest keys), from the same draws
    as `workbench keys` (fixed seed: the same spec always gives the same preview)."""
    from workbench.core.popularity import popularity

    samples = samples or preview_samples(spec.insert_total)
    if spec.seed is None:  # a preview must not flicker between two looks at the same spec
        spec = dataclasses.replace(spec, seed=1)
    pop = popularity(spec, samples, first=0)
    ranked = [n for _, n in pop.counts.most_common()]
    out = []
    for fraction in CURVE_FRACTIONS:
        k = max(1, int(pop.keys * fraction))
        out.append((fraction, sum(ranked[:k]) / samples))
    return out


def preview_text(distribution: str, keys: int, points: list[tuple[float, float]], width: int) -> Text:
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
