"""HdrHistogram construction, encoding and lossless merging in one place."""

from __future__ import annotations

import weakref

from hdrh.histogram import HdrHistogram

from workbench import speedups

LOWEST_US = 1
HIGHEST_US = 3_600_000_000  # one hour, in microseconds
DIGITS = 3
_C = speedups.C  # the compiled tally, or None (tests set it to None to run the Python)


def _acyclic(h: HdrHistogram) -> HdrHistogram:
    """hdrh's histogram and its encoder refer to each other, so a dropped histogram (and its
    188 KB of counts) waits for the cyclic garbage collector; every tick drops a few. With the
    encoder's reference made weak, reference counting frees it at once."""
    h.encoder.histogram = weakref.proxy(h)
    return h


def new_histogram() -> HdrHistogram:
    return _acyclic(HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS))


def from_counts(counts: dict[int, int]) -> HdrHistogram:
    """Build a histogram from exact value -> count tallies (values clamped to 0..HIGHEST_US).

    Equivalent to record_value(value, n) for each tally, but with the bucket index computed
    inline: this runs every tick for every distinct latency, which with real servers is
    thousands of values per second. Where workbench._speedups is built, its tally() runs this
    loop, value for value (tests/unit/test_histograms.py compares the two)."""
    h = new_histogram()
    if not counts:
        return h
    mask = h.sub_bucket_mask
    unit = h.unit_magnitude
    shift = h.sub_bucket_half_count_magnitude
    base = h.sub_bucket_half_count
    if _C is not None:
        h.total_count, h.min_value, h.max_value = _C.tally(h.counts, counts, mask, unit, shift, base,
                                                           HIGHEST_US)
        return h
    buckets = h.counts
    total = 0
    for value, n in counts.items():
        if value > HIGHEST_US:
            value = HIGHEST_US
        elif value < 0:  # (perf_counter_ns is monotonic: no latency is, but none may break a tick)
            value = 0
        bucket = (value | mask).bit_length() - unit - shift - 1
        buckets[((bucket + 1) << shift) + (value >> (bucket + unit)) - base] += n
        total += n
    h.total_count = total
    h.min_value = min(max(min(counts), 0), HIGHEST_US)
    h.max_value = min(max(max(counts), 0), HIGHEST_US)
    return h


def encode(h: HdrHistogram) -> str:
    """HdrHistogram's compressed base64 form (what HdrHistogram's log tools read)."""
    data = h.encode()
    return data.decode("ascii") if isinstance(data, bytes) else data


def decode(text: str) -> HdrHistogram:
    return _acyclic(HdrHistogram.decode(text))


def merge_into(target: HdrHistogram, other: HdrHistogram) -> None:
    """Add other's counts to target: merging histograms, never averaging percentiles."""
    if other.get_total_count():
        target.add(other)
