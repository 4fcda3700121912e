"""The experiment statistics against a published textbook example and against scipy and
statsmodels called directly on random data."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from workbench.experiments.stats import anova2, cell, welch

# Montgomery, Design and Analysis of Experiments, Example 5.1 (the battery design experiment):
# life in hours of batteries of three plate materials at three temperatures (°F), 4 each.
BATTERY = {
    (1, 15): [130, 155, 74, 180], (1, 70): [34, 40, 80, 75], (1, 125): [20, 70, 82, 58],
    (2, 15): [150, 188, 159, 126], (2, 70): [136, 122, 106, 115], (2, 125): [25, 70, 58, 45],
    (3, 15): [138, 110, 168, 160], (3, 70): [174, 120, 150, 139], (3, 125): [96, 104, 82, 60],
}


def test_two_way_anova_matches_the_textbooks_battery_example():
    rows = [(m, t, y) for (m, t), ys in BATTERY.items() for y in ys]
    table = {r.source: r for r in anova2(rows, "material", "temperature")}
    # The book's table: SS 10,683.72 / 39,118.72 / 9,613.78 / 18,230.75; df 2 / 2 / 4 / 27;
    # F 7.91 / 28.97 / 3.56; P 0.0020 / < 0.0001 / 0.0186.
    expected = {"material": (10683.72, 2, 7.91, 0.0020), "temperature": (39118.72, 2, 28.97, 0.0000),
                "material x temperature": (9613.78, 4, 3.56, 0.0186)}
    for source, (ss, df, f, p) in expected.items():
        row = table[source]
        assert row.ss == pytest.approx(ss, abs=0.01)
        assert row.df == df
        assert row.f == pytest.approx(f, abs=0.005)
        assert row.p == pytest.approx(p, abs=0.0005)
    assert table["residual"].ss == pytest.approx(18230.75, abs=0.01)
    assert table["residual"].df == 27
    assert table["residual"].ms == pytest.approx(675.21, abs=0.01)


def test_cell_and_welch_agree_with_scipy_on_random_data():
    from scipy import stats

    rng = random.Random(4)
    for _ in range(20):
        a = [rng.gauss(1000, 80) for _ in range(rng.randint(2, 8))]
        b = [rng.gauss(1050, 150) for _ in range(rng.randint(2, 8))]
        c = cell(a)
        logs = [math.log(v) for v in a]  # the interval is t on the log scale, turned back
        low, high = (math.exp(v) for v in stats.t.interval(0.95, len(a) - 1, loc=statistics.fmean(logs),
                                                           scale=stats.sem(logs)))
        assert (c.n, c.mean, c.sd) == \
            (len(a), pytest.approx(statistics.fmean(a)), pytest.approx(statistics.stdev(a)))
        assert (c.ci_low, c.ci_high) == (pytest.approx(low), pytest.approx(high))
        w = welch(a, b)
        ref = stats.ttest_ind(a, b, equal_var=False)
        assert (w.t, w.p) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))
        if hasattr(ref, "df"):
            assert w.df == pytest.approx(ref.df)
    single = cell([5.0])
    assert (single.n, single.mean, single.sd, single.ci_low) == (1, 5.0, None, None)
    with pytest.raises(ValueError):
        welch([1.0], [1.0, 2.0])


def test_an_interval_never_holds_a_negative_throughput_and_a_wide_one_is_marked_too_noisy():
    """The plain t interval of five-mixes' Cassandra workload B at laptop scale (mean 6,316,
    sd 2,647, n = 3) ran from -259 to 12,891: no throughput is negative."""
    from scipy import stats

    runs = [3600.0, 6400.0, 8948.0]  # three repetitions as spread as those
    plain = stats.t.interval(0.95, 2, loc=statistics.fmean(runs), scale=stats.sem(runs))
    assert plain[0] < 0  # what the report printed before
    c = cell(runs)
    assert 0 < c.ci_low < min(runs) and c.ci_high > max(runs)
    assert c.noisy and c.interval().endswith("(too noisy to compare)")
    tight = cell([1000.0, 1010.0, 990.0])
    assert not tight.noisy and "noisy" not in tight.interval()
    assert cell([0.0, 10.0, 20.0]).ci_low == 0.0  # a zero (a run that did nothing): cut at zero
    w = welch(runs, [1000.0, 1010.0, 990.0])
    assert w.noisy and w.verdict() == "too noisy to compare"
    assert welch([1000.0, 1010.0, 990.0], [2000.0, 2020.0, 1990.0]).verdict() == "different (p < 0.05)"
    assert welch([1000.0, 1010.0, 990.0], [1001.0, 1012.0, 989.0]).verdict() == "no clear difference"


def test_anova_agrees_with_statsmodels_on_random_balanced_data():
    import pandas as pd
    import statsmodels.api as sm
    from statsmodels.formula.api import ols

    rng = random.Random(9)
    rows = [(f"r{i}", f"w{j}", rng.gauss(100 + 10 * i - 5 * j + (i * j) % 3, 7))
            for i in range(3) for j in range(4) for _ in range(3)]
    ours = anova2(rows)
    frame = pd.DataFrame(rows, columns=["a", "b", "y"])
    ref = sm.stats.anova_lm(ols("y ~ C(a) * C(b)", data=frame).fit(), typ=2)
    assert [r.ss for r in ours] == pytest.approx(list(ref["sum_sq"]))
    assert [r.f for r in ours[:3]] == pytest.approx(list(ref["F"])[:3])
    with pytest.raises(ValueError, match="every cell"):
        anova2(rows[:-2])  # one cell left with a single observation
