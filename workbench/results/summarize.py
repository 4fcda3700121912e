"""Summaries (count, mean, min, max, percentiles) computed from an HdrHistogram.

The engine and the tests build measurements through these two functions so that every figure
in a result comes from the histogram it carries, computed the one way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hdrh.histogram import HdrHistogram

from workbench.results.model import SUMMARY_PERCENTILES, IntervalMeasurement, Measurement

_Figures = tuple[int, float, int, int, dict[float, int]]


def _figures(hist: HdrHistogram, percentiles: Iterable[float]) -> _Figures:
    count = int(hist.get_total_count())
    if count == 0:
        # An empty histogram is all zeros in the model; YCSB's Java quirks live in layouts.py.
        return 0, 0.0, 0, 0, {float(p): 0 for p in percentiles}
    return (
        count,
        float(hist.get_mean_value()),
        int(hist.get_min_value()),
        int(hist.get_max_value()),
        {float(p): int(hist.get_value_at_percentile(p)) for p in percentiles},
    )


def encode(hist: HdrHistogram) -> str:
    """The compressed base64 form the model stores."""
    blob = hist.encode()
    return blob.decode("ascii") if isinstance(blob, bytes) else str(blob)


def measurement_from_histogram(
    name: str,
    hist: HdrHistogram,
    returns: Mapping[str, int] | None = None,
    percentiles: Iterable[float] = SUMMARY_PERCENTILES,
) -> Measurement:
    """A cumulative measurement: YCSB's summary figures plus the histogram itself."""
    count, mean, lo, hi, pct = _figures(hist, percentiles)
    return Measurement(
        name=name,
        operations=count,
        average_us=mean,
        min_us=lo,
        max_us=hi,
        percentiles=pct,
        returns=dict(returns or {}),
        histogram=encode(hist),
    )


def interval_measurement_from_histogram(
    hist: HdrHistogram, percentiles: Iterable[float] = SUMMARY_PERCENTILES
) -> IntervalMeasurement:
    """One interval's figures (a status-line bracket) plus the interval histogram."""
    count, mean, lo, hi, pct = _figures(hist, percentiles)
    return IntervalMeasurement(
        count=count, average_us=mean, min_us=lo, max_us=hi, percentiles=pct, histogram=encode(hist)
    )


def decode(histogram: str) -> HdrHistogram:
    """The HdrHistogram behind a model's compressed base64 string."""
    return HdrHistogram.decode(histogram)
