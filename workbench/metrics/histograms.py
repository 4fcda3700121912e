"""HdrHistogram construction, encoding and lossless merging in one place."""

from __future__ import annotations

from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000  # one hour, in microseconds
DIGITS = 3


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS)


def from_counts(counts: dict[int, int]) -> HdrHistogram:
    """Build a histogram from exact value -> count tallies (values clamped to the range)."""
    h = new_histogram()
    record = h.record_value
    for value, n in counts.items():
        record(value if value < HIGHEST_US else HIGHEST_US, n)
    return h


def encode(h: HdrHistogram) -> str:
    """HdrHistogram's compressed base64 form (what HdrHistogram's log tools read)."""
    data = h.encode()
    return data.decode("ascii") if isinstance(data, bytes) else data


def decode(text: str) -> HdrHistogram:
    return HdrHistogram.decode(text)


def merge_into(target: HdrHistogram, other: HdrHistogram) -> None:
    """Add other's counts to target: merging histograms, never averaging percentiles."""
    if other.get_total_count():
        target.add(other)
