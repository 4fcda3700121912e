"""Per-second series compared with their autocorrelation counted (results/significance.py):
the interval covers a known difference at about its stated rate where the naive one does not,
independent seconds count for about n, and a short or constant series gets a clear answer."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.signal import lfilter

from workbench.results.significance import (
    CONSTANT,
    TOO_FEW,
    compare_series,
    effective_sample_size,
    verdict,
)

PHI, SECONDS, PAIRS = 0.7, 200, 400
TRUE_DIFFERENCE = -50.0


def ar1(rng, rows: int, n: int, phi: float) -> np.ndarray:
    """`rows` stationary AR(1) series of length n (x_t = phi x_(t-1) + e_t), all at once."""
    e = rng.standard_normal((rows, n + 100))
    return lfilter([1.0], [1.0, -phi], e, axis=1)[:, 100:]  # 100 seconds of burn-in dropped


def test_the_interval_covers_a_known_difference_of_autocorrelated_series_about_95_in_100():
    rng = np.random.default_rng(55)
    noise = ar1(rng, 2 * PAIRS, SECONDS, PHI) * 50
    baselines, others = 1000 + noise[:PAIRS], 1000 + TRUE_DIFFERENCE + noise[PAIRS:]
    covered = naive = 0
    for a, b in zip(baselines, others, strict=True):
        d = compare_series(a, b)
        covered += d.low <= TRUE_DIFFERENCE <= d.high
        # Welch-Satterthwaite with effective seconds: never more freedom than n_eff1 + n_eff2 - 2
        assert min(d.baseline.n_eff, d.other.n_eff) - 1 <= d.df <= d.baseline.n_eff + d.other.n_eff - 2
        # the interval that takes every second for an independent value
        se = np.sqrt(a.var(ddof=1) / SECONDS + b.var(ddof=1) / SECONDS)
        half = stats.t.ppf(0.975, 2 * SECONDS - 2) * se
        naive += b.mean() - a.mean() - half <= TRUE_DIFFERENCE <= b.mean() - a.mean() + half
    assert 0.90 <= covered / PAIRS <= 0.99, covered / PAIRS
    assert naive / PAIRS < 0.85, naive / PAIRS  # about 0.6: the reason for all this


def test_independent_seconds_count_for_about_n_and_correlated_ones_for_far_fewer():
    rng = np.random.default_rng(7)
    iid = np.array([effective_sample_size(row) for row in rng.standard_normal((200, 120))]) / 120
    assert iid.max() <= 1.0  # never more than n
    assert np.median(iid) > 0.9 and iid.mean() > 0.85, (np.median(iid), iid.mean())
    correlated = np.array([effective_sample_size(row) for row in ar1(rng, 200, 400, PHI)]) / 400
    # theory: (1 - phi) / (1 + phi) = 0.18
    assert 0.12 < correlated.mean() < 0.25, correlated.mean()


def test_short_and_constant_series_get_a_clear_answer():
    short = compare_series([100.0] * 5, [90.0] * 5)
    assert (short.low, short.high, short.reason) == (None, None, TOO_FEW)
    assert short.pct == pytest.approx(-10.0)  # the difference itself is still known
    assert verdict(short, 10, higher_is_better=True) == "unknown"
    assert compare_series([], [1.0] * 20).difference is None

    constant = compare_series([100.0] * 30, [90.0] * 30)
    assert (constant.low, constant.high, constant.reason) == (-10.0, -10.0, CONSTANT)
    assert verdict(constant, 5, higher_is_better=True) == "worse"

    one_constant = compare_series([100.0] * 30, list(np.random.default_rng(1).normal(100, 5, 30)))
    assert one_constant.reason == "" and one_constant.low < one_constant.high

    # a ramp has no level to estimate: it counts for about 3 seconds, and the interval says so
    ramp = list(range(30))
    assert effective_sample_size(ramp) < 4
    trend = compare_series(ramp, [v + 3 for v in ramp])
    assert trend.low < 0 < trend.high and verdict(trend, 10, higher_is_better=True) == "inconclusive"


def interval(low: float, high: float):
    """A Difference whose interval is [low, high] percent of a baseline of mean 100."""
    d = compare_series([100.0] * 20, [100.0] * 20)
    return type(d)(d.baseline, d.other, (low + high) / 2, low, high, 30.0)


@pytest.mark.parametrize(("low", "high", "higher_is_better", "expected"), [
    (-30, -12, True, "worse"),  # throughput: wholly below -10%
    (-30, -8, True, "inconclusive"),  # reaches past the tolerance: not proven worse, nor within it
    (-10, -2, True, "same"),  # up to the tolerance itself: within it
    (-8, -2, True, "same"),  # surely lower, but within the tolerance
    (-3, 4, True, "same"),
    (1, 6, True, "better"),  # wholly above zero
    (12, 30, False, "worse"),  # latency: wholly above +10%
    (-6, -1, False, "better"),  # latency wholly lower
    (-1, 6, False, "same"),
    (-5, 40, False, "inconclusive"),  # latency: from better to well past +10%
])
def test_the_verdict_reads_the_whole_interval_in_the_direction_of_the_figure(low, high, higher_is_better,
                                                                            expected):
    assert verdict(interval(low, high), 10, higher_is_better) == expected
    assert verdict(interval(low, high), -10, higher_is_better) == expected  # a size, either sign


def test_a_time_limited_runs_last_short_interval_the_drain_after_its_stop_is_not_measured():
    from workbench.results.model import Interval, RunResult
    from workbench.results.significance import run_series

    def tick(k: int, duration: float, ops: int) -> Interval:
        return Interval(elapsed_s=0.15 * k, duration_s=duration, operations=ops, total_operations=0)

    steady = [tick(k, 0.15, 75_000) for k in range(1, 11)]  # 500,000 ops/s
    drained = RunResult("run", "memory", 1608, 0, 0.0, intervals=[*steady, tick(11, 0.108, 1_920)])
    assert run_series(drained, "throughput") == pytest.approx([500_000.0] * 10)
    whole_enough = RunResult("run", "memory", 1640, 0, 0.0, intervals=[*steady, tick(11, 0.14, 70_000)])
    assert len(run_series(whole_enough, "throughput")) == 11
