"""The statistics published YCSB studies compute by hand, from scipy and statsmodels.

- `cell(values)`: n, mean, sample standard deviation and a 95% confidence interval for the
  repetitions of one step. Throughputs and latencies are positive and spread multiplicatively,
  so the interval is Student's t with n - 1 degrees of freedom on the logarithms, turned back:
  it never holds impossible (negative) values, as the plain t interval of three noisy runs did.
  A step whose interval is wider than its mean is `noisy`: too noisy to compare.
- `welch(a, b)`: Welch's unequal-variances t-test of two samples (Cassandra's repetitions
  against HBase's): t, the Welch-Satterthwaite degrees of freedom, the two-sided p-value.
- `anova2(rows, a, b)`: the two-way ANOVA table with interaction (SS, df, MS, F, p for both
  factors, their interaction and the residual), from an ordinary least squares fit with
  sum-to-zero contrasts and type II sums of squares; for a balanced design (every cell the same
  number of repetitions, as an experiment makes) these equal the textbook sums of squares.

scipy and statsmodels are imported when a function is first called, never at start-up.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

NOISY = "too noisy to compare"


@dataclass(frozen=True)
class Cell:
    n: int
    mean: float
    sd: float | None  # None for a single value
    ci_low: float | None  # 95% confidence interval (t on the log scale); None below two values
    ci_high: float | None

    @property
    def noisy(self) -> bool:
        """Is the interval wider than the mean (the step is too noisy to compare)?"""
        return self.ci_low is not None and self.ci_high is not None and (
            self.ci_high - self.ci_low > abs(self.mean))

    def interval(self, fmt: str = "{:,.0f}") -> str:
        """The interval as text, with the words when it is too noisy."""
        if self.ci_low is None or self.ci_high is None:
            return "-"
        text = f"{fmt.format(self.ci_low)} – {fmt.format(self.ci_high)}"
        return f"{text} ({NOISY})" if self.noisy else text


def cell(values: Sequence[float], confidence: float = 0.95) -> Cell:
    if not values:
        raise ValueError("a cell needs at least one value")
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return Cell(n, mean, None, None, None)
    from scipy import stats  # noqa: PLC0415 - slow import, only when statistics are asked for

    sd = statistics.stdev(values)
    t = stats.t.ppf(0.5 + confidence / 2, n - 1)
    if min(values) <= 0:  # no logarithm: the plain interval, cut at zero (nothing is negative)
        half = t * sd / math.sqrt(n)
        return Cell(n, mean, sd, max(mean - half, 0.0), mean + half)
    logs = [math.log(v) for v in values]
    centre, half = statistics.fmean(logs), t * statistics.stdev(logs) / math.sqrt(n)
    return Cell(n, mean, sd, math.exp(centre - half), math.exp(centre + half))


@dataclass(frozen=True)
class Welch:
    t: float
    df: float
    p: float
    noisy: bool = False  # one side's interval is wider than its mean: no verdict

    def verdict(self, alpha: float = 0.05) -> str:
        """The comparison in words."""
        if self.noisy:
            return NOISY
        if self.p < alpha:
            return f"different (p < {alpha:g})"
        return "no clear difference"


def welch(a: Sequence[float], b: Sequence[float]) -> Welch:
    """Welch's t-test of mean(a) - mean(b); needs two values or more in each sample."""
    if len(a) < 2 or len(b) < 2:
        raise ValueError("Welch's t-test needs two values or more on each side")
    from scipy import stats  # noqa: PLC0415

    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)) if va + vb else float("nan")
    result = stats.ttest_ind(a, b, equal_var=False)
    return Welch(float(result.statistic), df, float(result.pvalue), cell(a).noisy or cell(b).noisy)


@dataclass(frozen=True)
class AnovaRow:
    source: str
    ss: float
    df: int
    ms: float
    f: float | None  # None on the residual row
    p: float | None


def anova2(rows: Sequence[tuple[object, object, float]], a: str = "A", b: str = "B") -> list[AnovaRow]:
    """Two-way ANOVA with interaction of (level of a, level of b, value) observations; rows in the
    order a, b, a x b, residual."""
    levels_a = {r[0] for r in rows}
    levels_b = {r[1] for r in rows}
    if len(levels_a) < 2 or len(levels_b) < 2:
        raise ValueError("a two-way ANOVA needs two levels or more of each factor")
    cells: dict[tuple[object, object], int] = {}
    for x, y, _ in rows:
        cells[(x, y)] = cells.get((x, y), 0) + 1
    if len(cells) < len(levels_a) * len(levels_b) or min(cells.values()) < 2:
        raise ValueError("a two-way ANOVA with interaction needs two observations or more in every cell")
    import pandas as pd  # noqa: PLC0415
    import statsmodels.api as sm  # noqa: PLC0415
    from statsmodels.formula.api import ols  # noqa: PLC0415

    frame = pd.DataFrame({"a": [str(r[0]) for r in rows], "b": [str(r[1]) for r in rows],
                          "y": [float(r[2]) for r in rows]})
    model = ols("y ~ C(a, Sum) * C(b, Sum)", data=frame).fit()
    table = sm.stats.anova_lm(model, typ=2)
    names = {"C(a, Sum)": a, "C(b, Sum)": b, "C(a, Sum):C(b, Sum)": f"{a} x {b}", "Residual": "residual"}
    out = []
    for source, row in table.iterrows():
        df = int(round(row["df"]))
        f = None if source == "Residual" else float(row["F"])
        p = None if source == "Residual" else float(row["PR(>F)"])
        out.append(AnovaRow(names[source], float(row["sum_sq"]), df, float(row["sum_sq"]) / df, f, p))
    return out
