"""What differs between the YCSB versions whose output we write and read.

YCSB 0.17.0 is built on HdrHistogram 2.1.4 and prints the 95th and 99th percentiles; current
master is built on HdrHistogram 2.1.12 and prints the 50th, 95th and 99th. The two HdrHistogram
versions disagree on what an empty histogram reports, which shows in status lines (an interval
without operations) and would show in a final summary of an empty measurement:

- 2.1.4: getMinValue() = Long.MAX_VALUE, getMaxValue() = 0, getMean() = 0/0 = NaN;
- 2.1.12: getMinValue() = 0, getMaxValue() = 0, getMean() = 0.0.

Our model keeps an empty measurement sane (count 0, average 0.0, min 0, max 0); the Java
figures exist only in text, written and read through `empty_figures`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.results.javafmt import JAVA_LONG_MAX, java_double
from workbench.results.model import PERCENTILES_0_17, PERCENTILES_MASTER


@dataclass(frozen=True)
class Layout:
    """The version-specific parts of YCSB's text output."""

    name: str
    percentiles: tuple[float, ...]  # default hdrhistogram.percentiles of the final summary
    status_percentiles: tuple[float, ...]  # the fixed list of a status-line bracket
    empty_min: int
    empty_max: int
    empty_average: float


LAYOUTS: dict[str, Layout] = {
    "0.17": Layout("0.17", PERCENTILES_0_17, (90.0, 99.0, 99.9, 99.99), JAVA_LONG_MAX, 0, math.nan),
    "master": Layout("master", PERCENTILES_MASTER, (50.0, 90.0, 99.0, 99.9, 99.99), 0, 0, 0.0),
}


def get_layout(name: str) -> Layout:
    """The layout called `name`; a ValueError names the valid ones."""
    try:
        return LAYOUTS[name]
    except KeyError:
        raise ValueError(f"unknown YCSB layout {name!r}; valid: {', '.join(LAYOUTS)}") from None


def empty_figures(layout: Layout) -> tuple[float, int, int]:
    """(average, min, max) that YCSB of this layout prints for an empty histogram."""
    return layout.empty_average, layout.empty_min, layout.empty_max


def ordinal(percentile: float) -> str:
    """YCSB's name for a percentile: 95 -> "95th", 1 -> "1st", 99.9 -> "99.9"."""
    if percentile % 1 == 0:
        j = int(percentile)
        if j % 100 in (11, 12, 13):
            return f"{j}th"
        return f"{j}{('th', 'st', 'nd', 'rd')[j % 10] if j % 10 < 4 else 'th'}"
    return java_double(percentile)
