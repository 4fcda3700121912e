"""Summaries (count, mean, min, max, percentiles) computed from an HdrHistogram.

The engine and the tests build measurements through these two functions so that every figure
in a result comes from the histogram it carries, computed the one way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hdrh.histogram import HdrHistogram

from workbench.metrics.histograms import encode
from workbench.metrics.snapshot import OpStats
from workbench.results.model import SUMMARY_PERCENTILES, IntervalMeasurement, Measurement

_Figures = tuple[int, float, int, int, dict[float, int]]


def _figures(hist: HdrHistogram, percentiles: Iterable[float]) -> _Figures:
    wanted = tuple(float(p) for p in percentiles)
    stats = OpStats.of(hist, wanted)  # the engine's one-pass summary: one way to compute figures
    return stats.count, stats.mean, stats.min, stats.max, dict(stats.percentiles)


def mean_of(hist: HdrHistogram) -> float:
    """Exactly hdrh's get_mean_value (median-equivalent values, as Java's getMean), but fast."""
    return OpStats.of(hist, ()).mean


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
