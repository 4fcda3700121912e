"""Two runs' per-second series compared: the difference of their means with a 95% interval that
knows a second from the next, and a verdict (better, same, inconclusive, worse).

A run's seconds are not independent draws: a compaction, a GC pause or a cold cache lasts for
several of them, so the throughput (or p99) of one second says much about the next. Treating the
n seconds as n independent values makes the interval too narrow and calls noise a regression
(with AR(1) seconds of correlation 0.7, a naive 95% interval covers the truth about half the time;
tests/unit/test_significance.py measures it). Here each series counts for its *effective* sample
size instead:

    n_eff = n / tau,   tau = 1 + 2 * (rho_1 + rho_2 + ... + rho_k)

where rho_j is the series' sample autocorrelation at lag j (the biased estimator, divided by n,
computed by FFT) and the cut-off k is Geyer's *initial monotone sequence* estimator: the sums of
adjacent pairs Gamma_m = rho_2m + rho_2m+1 (rho_0 = 1) are added while they stay positive, each
one capped at the one before it (C. J. Geyer, "Practical Markov Chain Monte Carlo", Statistical
Science 7(4), 1992, section 3.3; the same estimator as Stan's effective sample size). n_eff is
capped at n: a series that looks anti-correlated is never taken as more precise than independent
seconds (the conservative side, for a verdict that may fail a CI job).

Measured on AR(1) seconds (phi 0.7, 400 pairs, a known difference): the 95% interval covers it
87% of the time over 30 seconds, 91% over 60, 93-94% over 120, 96% over 300 (the estimate of tau
is low on short series); the naive interval 55-63% at every length.

The difference (other - baseline) gets a Welch interval: standard error sqrt(s1^2/n_eff1 +
s2^2/n_eff2) and the Welch-Satterthwaite degrees of freedom with n_eff - 1 per side (the same idea
as latte's comparison of two runs: a Welch t-test on errors corrected for autocorrelation). In
percent of the baseline's mean, the interval's ends are divided by that mean, taken as fixed (a
first-order approximation; the baseline's own noise is already in the interval's width).

`verdict` reads the interval against a tolerance in the bad direction (lower throughput, higher
latency): "worse" only when the whole interval lies beyond the tolerance, "better" when the whole
interval lies beyond zero in the good direction, "same" when the interval lies within the
tolerance (a change too small to matter, if any), "inconclusive" when it reaches past the
tolerance without lying wholly beyond it (too few or too noisy seconds to tell: a longer run
narrows it), "unknown" without an interval.

`run_series` gives a run's per-second figures (the measured window's intervals); FIGURES,
HIGHER_IS_BETTER and TOLERANCES name them. Used by `runs compare` and the Compare screen
(results/compare.py) and meant for `workbench check`; numpy and scipy are imported when a
function is first called, never at start-up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.results.model import Interval, RunResult

# The figures a run gives per second, whether more is better, and the tolerance (percent, in the
# bad direction) below which a change is "same": throughput -10% and p99 +25% as issue 55 sets
# them; the mean latency +10%, as steady as throughput and held to the same bar.
FIGURES = ("throughput", "mean", "p99")
HIGHER_IS_BETTER = {"throughput": True, "mean": False, "p99": False}
TOLERANCES = {"throughput": 10.0, "mean": 10.0, "p99": 25.0}

MIN_SECONDS = 10  # fewer seconds than this: no autocorrelation worth the name can be estimated
TOO_FEW = "too few seconds"
CONSTANT = "no variation"  # both series constant: a zero-width interval, exact but said
VERDICTS = ("better", "same", "inconclusive", "worse", "unknown")


@dataclass(frozen=True)
class Series:
    """One per-second series, summarised: its length, mean, sample standard deviation
    (ddof 1) and effective sample size (None below MIN_SECONDS)."""

    n: int
    mean: float | None
    sd: float | None
    n_eff: float | None

    @property
    def standard_error(self) -> float | None:
        """Of the mean, autocorrelation counted: sd / sqrt(n_eff)."""
        if self.sd is None or not self.n_eff:
            return None
        return self.sd / math.sqrt(self.n_eff)


@dataclass(frozen=True)
class Difference:
    """other - baseline, with its interval (None, and `reason` said, when there is none)."""

    baseline: Series
    other: Series
    difference: float | None  # other.mean - baseline.mean
    low: float | None  # the interval's ends, absolute
    high: float | None
    df: float | None  # Welch-Satterthwaite degrees of freedom (inf for two constant series)
    confidence: float = 0.95
    reason: str = ""  # "" when the interval stands; TOO_FEW or CONSTANT

    def _pct(self, value: float | None) -> float | None:
        base = self.baseline.mean
        if value is None or not base:
            return None
        return value / abs(base) * 100

    @property
    def pct(self) -> float | None:
        return self._pct(self.difference)

    @property
    def pct_low(self) -> float | None:
        return self._pct(self.low)

    @property
    def pct_high(self) -> float | None:
        return self._pct(self.high)


def measured(result: RunResult) -> list[Interval]:
    """The intervals of the measured window: not warm-up, not paused, and whole. An interval
    shorter than 90% of the typical one is a run cut mid-interval, left out: a time-limited run's
    last one holds the lanes' drain after the stop, not the steady state (a check's quick C run
    on a loaded machine: its last 0.108 s of 0.15 had 1,920 operations, 17,781 ops/s against
    the run's 500,000, and widened its interval)."""
    kept = [i for i in result.intervals if not i.warmup and not i.paused and i.duration_s > 0]
    if not kept:
        return []
    typical = sorted(i.duration_s for i in kept)[len(kept) // 2]
    return [i for i in kept if i.duration_s >= 0.9 * typical]


def run_series(result: RunResult, figure: str, operation: str = "") -> list[float]:
    """One figure per measured interval: "throughput" (ops/s, every operation), or operation's
    "mean" or "p99" latency in µs (the intervals where it ran). Any measurement name works as
    the operation, Intended-READ's response time as well as READ's service time."""
    if figure == "throughput":
        return [i.throughput for i in measured(result)]
    if figure not in ("mean", "p99"):
        raise ValueError(f"unknown figure {figure!r}: one of {', '.join(FIGURES)}")
    out = []
    for interval in measured(result):
        m = interval.measurements.get(operation)
        if m is None or not m.count:
            continue
        value = m.average_us if figure == "mean" else m.percentiles.get(99.0)
        if value is not None:
            out.append(float(value))
    return out


def autocorrelation(values: Sequence[float]) -> list[float]:
    """rho_0 = 1, rho_1, ... rho_(n-1): the biased sample autocorrelation (divided by n, about
    the series' mean), by FFT. [] for an empty series, all zeros after rho_0 for a constant one."""
    import numpy as np  # noqa: PLC0415 - slow import, only when statistics are asked for

    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return []
    x = x - x.mean()
    size = 1 << (2 * n - 1).bit_length()  # zero padding: no wrap-around of the circular product
    f = np.fft.rfft(x, size)
    acov = np.fft.irfft(f * np.conjugate(f), size)[:n]
    if acov[0] <= 1e-12 * max(1.0, float(np.abs(values).max()) ** 2) * n:
        return [1.0] + [0.0] * (n - 1)
    return list(acov / acov[0])


def integrated_time(rho: Sequence[float]) -> float:
    """tau = 1 + 2 * sum of rho_1..rho_k, k by Geyer's initial monotone sequence (module doc)."""
    tau = -1.0
    previous = math.inf
    for m in range(len(rho) // 2):
        pair = rho[2 * m] + rho[2 * m + 1]
        if pair <= 0:
            break
        pair = min(pair, previous)
        previous = pair
        tau += 2 * pair
    return max(float(tau), 1.0)  # at least independent: n_eff never above n


def effective_sample_size(values: Sequence[float]) -> float:
    """n / tau (module doc); n for a constant series."""
    n = len(values)
    if n < 2:
        return float(n)
    return float(n / integrated_time(autocorrelation(values)))


def summarize(values: Sequence[float]) -> Series:
    n = len(values)
    if n == 0:
        return Series(0, None, None, None)
    mean = math.fsum(values) / n
    if n < MIN_SECONDS:
        return Series(n, mean, None, None)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return Series(n, mean, sd, effective_sample_size(values))


def compare_series(baseline: Sequence[float], other: Sequence[float],
                   confidence: float = 0.95) -> Difference:
    """The difference of the means (other - baseline) and its `confidence` interval."""
    a, b = summarize(baseline), summarize(other)
    diff = None if a.mean is None or b.mean is None else b.mean - a.mean
    # n_eff >= 2 always holds from MIN_SECONDS on (a ramp, the worst case, counts for about 3);
    # the guard keeps the degrees of freedom below defined whatever the estimator does
    if a.n_eff is None or b.n_eff is None or a.n_eff < 2 or b.n_eff < 2:
        return Difference(a, b, diff, None, None, None, confidence, TOO_FEW)
    assert diff is not None and a.sd is not None and b.sd is not None
    va, vb = a.sd ** 2 / a.n_eff, b.sd ** 2 / b.n_eff  # variances of the two means
    se = math.sqrt(va + vb)
    if se == 0:
        return Difference(a, b, diff, diff, diff, math.inf, confidence, CONSTANT)
    df = (va + vb) ** 2 / (va ** 2 / (a.n_eff - 1) + vb ** 2 / (b.n_eff - 1))
    from scipy.special import stdtrit  # noqa: PLC0415 - Student's t quantile, without scipy.stats

    half = float(stdtrit(df, 0.5 + confidence / 2)) * se
    return Difference(a, b, diff, diff - half, diff + half, df, confidence)


def verdict(d: Difference, tolerance_pct: float, higher_is_better: bool) -> str:
    """"worse" when the whole interval (in percent of the baseline) lies beyond `tolerance_pct`
    in the bad direction (below -tolerance for throughput, above +tolerance for latency);
    "better" when it lies wholly beyond zero in the good direction; "same" when it reaches no
    further than the tolerance in the bad direction; "inconclusive" when it reaches past the
    tolerance without lying wholly beyond it; "unknown" without an interval. The tolerance is a
    size: its sign is ignored."""
    low, high = d.pct_low, d.pct_high
    if low is None or high is None:
        return "unknown"
    tolerance = abs(tolerance_pct)
    # In "how much worse" terms: positive is bad whichever way the figure goes.
    bad_low, bad_high = (-high, -low) if higher_is_better else (low, high)
    if bad_low > tolerance:
        return "worse"
    if bad_high < 0:
        return "better"
    return "same" if bad_high <= tolerance else "inconclusive"
