"""Statistical checks of the key generators (core/generators/*) and of how a lane chooses keys
(core/workload.py). Every random source is seeded, so each test draws the same numbers every time.
"""

from __future__ import annotations

import math
import random
from collections import Counter as Tally

import pytest

from workbench.config.properties import merge
from workbench.config.spec import WorkloadSpec, build_spec
from workbench.core.generators.counter import AcknowledgedCounter, Counter
from workbench.core.generators.discrete import Discrete
from workbench.core.generators.latest import SkewedLatest
from workbench.core.generators.scrambled import ITEM_COUNT, ZETAN, ScrambledZipfian
from workbench.core.generators.simple import Exponential, Hotspot, Sequential, Uniform
from workbench.core.generators.zeta import _EXACT_LIMIT, zeta, zeta_extend
from workbench.core.generators.zipfian import Zipfian
from workbench.core.runner import lane_seed
from workbench.core.workload import LaneWorkload, WorkerKeys
from workbench.metrics.recorder import Recorder

THETAS = (0.2, 0.5, 0.99, 1.5, 3.0)


def exact_zeta(n: int, theta: float) -> float:
    return math.fsum(i**-theta for i in range(1, n + 1))


def hottest_share(tally: Tally, k: int) -> float:
    return sum(count for _, count in tally.most_common(k)) / sum(tally.values())


# ---- zeta --------------------------------------------------------------------------------------


@pytest.mark.parametrize("theta", THETAS)
def test_zeta_is_continuous_across_the_exact_to_approximation_switch(theta: float) -> None:
    start = _EXACT_LIMIT - 5
    reference = exact_zeta(start, theta)
    for n in range(start, _EXACT_LIMIT + 60):
        if n > start:
            reference += n**-theta
        assert zeta(n, theta) == pytest.approx(reference, rel=1e-9, abs=0), n


@pytest.mark.parametrize("theta", THETAS)
@pytest.mark.parametrize("n", [12_345, 100_000])
def test_zeta_approximation_matches_the_exact_sum_well_past_the_switch(n: int, theta: float) -> None:
    assert zeta(n, theta) == pytest.approx(exact_zeta(n, theta), rel=1e-9, abs=0)


def test_zeta_of_small_n() -> None:
    assert zeta(0, 0.99) == 0.0
    assert zeta(1, 0.99) == 1.0
    assert zeta(2, 0.99) == 1 + 0.5**0.99


def test_zeta_reproduces_ycsbs_constant_for_its_item_count() -> None:
    # ScrambledZipfian draws from ZipfianGenerator(0, ITEM_COUNT): ITEM_COUNT + 1 items.
    assert abs(zeta(ITEM_COUNT + 1, 0.99) - 26.46902820178302) < 3e-10
    assert ZETAN == 26.46902820178302


@pytest.mark.parametrize("theta", [0.5, 0.99, 1.5])
def test_zeta_of_a_billion_lies_between_rigorous_bounds(theta: float) -> None:
    # f(x) = x^-theta is convex and decreasing, so for its tail from m to n
    #   trapezoid:  sum >= integral_m^n f + (f(m) + f(n)) / 2
    #   midpoint:   sum <= integral_{m-1/2}^{n+1/2} f
    # Summing the first m-1 terms exactly makes the bracket narrower than 1e-10 relative.
    n, m = 10**9, 100_000

    def integral(a: float, b: float) -> float:
        return (b ** (1 - theta) - a ** (1 - theta)) / (1 - theta)

    head = exact_zeta(m - 1, theta)
    lower = head + integral(m, n) + (m**-theta + n**-theta) / 2
    upper = head + integral(m - 0.5, n + 0.5)
    assert 0 < (upper - lower) / lower < 1e-10
    value = zeta(n, theta)
    slack = 1e-13 * value  # rounding in the closed-form integrals
    assert lower - slack <= value <= upper + slack


@pytest.mark.parametrize("theta", [0.5, 0.99])
def test_zeta_extend_adds_only_the_new_terms(theta: float) -> None:
    start = zeta(1000, theta)
    assert zeta_extend(1000, 1500, theta, start) == pytest.approx(exact_zeta(1500, theta), rel=1e-12)
    assert zeta_extend(1000, 10**6, theta, start) == pytest.approx(zeta(10**6, theta), rel=1e-12)
    # It trusts the value it is given, as YCSB's incremental step does.
    assert zeta_extend(1000, 1001, theta, 0.0) == pytest.approx(1001**-theta)


# ---- uniform -----------------------------------------------------------------------------------


def test_uniform_passes_a_chi_square_test_over_100_keys() -> None:
    gen = Uniform(random.Random(11), 500, 599)
    draws = 100_000
    tally = Tally(gen.next() for _ in range(draws))
    assert set(tally) == set(range(500, 600))
    expected = draws / 100
    chi2 = sum((count - expected) ** 2 / expected for count in tally.values())
    assert chi2 < 148.2  # critical value for 99 degrees of freedom at p = 0.001


# ---- zipfian -----------------------------------------------------------------------------------


def gray_probabilities(n: int, theta: float, k_max: int) -> list[float]:
    """P(item = k) for k < k_max under Gray et al.'s method, from its inverse CDF."""
    zetan = zeta(n, theta)
    eta = (1 - (2 / n) ** (1 - theta)) / (1 - zeta(2, theta) / zetan)
    u_first = (1 + 0.5**theta) / zetan  # below this u, the draw is item 0 or 1

    def at_least(k: int) -> float:  # P(item >= k) for k >= 2
        u_k = 1 + ((k / n) ** (1 - theta) - 1) / eta
        return 1 - min(1.0, max(u_first, u_k))

    probs = [1 / zetan, 0.5**theta / zetan]
    probs += [at_least(k) - at_least(k + 1) for k in range(2, k_max)]
    return probs


@pytest.mark.parametrize("theta", [0.5, 0.99, 1.5])
def test_zipfian_rank_frequency(theta: float) -> None:
    n, draws = 1000, 200_000
    gen = Zipfian(random.Random(7), 0, n - 1, theta)
    tally = Tally(gen.next() for _ in range(draws))
    assert min(tally) >= 0 and max(tally) <= n - 1
    assert tally.most_common(1)[0][0] == 0
    counts = [tally[k] for k in range(10)]
    assert counts == sorted(counts, reverse=True)
    # Items 0 and 1 are exact in Gray's method: P(k) = (k+1)^-theta / zeta(n).
    for k in (0, 1):
        assert counts[k] / draws == pytest.approx((k + 1) ** -theta / zeta(n, theta), rel=0.03)
    # Ranks 1..10 follow 1/rank^theta; the method's approximation is coarsest at rank 3.
    for k in range(1, 10):
        assert counts[k] / counts[0] == pytest.approx((k + 1) ** -theta, rel=0.25), k
    # And they match what Gray's formula predicts closely (within 4 standard deviations).
    for k, p in enumerate(gray_probabilities(n, theta, 10)):
        sigma = math.sqrt(draws * p * (1 - p))
        assert abs(counts[k] - draws * p) < 4 * sigma + 1, k


@pytest.mark.parametrize("theta", [0.5, 0.99, 1.5])
def test_zipfian_over_two_items(theta: float) -> None:
    # zeta(2) == zeta(n) makes eta 0/0 (NaN in Java, where the branch using it is never reached).
    gen = Zipfian(random.Random(2), 1, 2, theta)
    tally = Tally(gen.next() for _ in range(20_000))
    assert set(tally) == {1, 2}
    assert tally[2] / tally[1] == pytest.approx(0.5**theta, rel=0.05)


def test_zipfian_over_one_item() -> None:
    gen = Zipfian(random.Random(2), 5, 5)
    assert {gen.next() for _ in range(100)} == {5}


def test_zipfian_offset_range() -> None:
    gen = Zipfian(random.Random(3), 100, 199)
    tally = Tally(gen.next() for _ in range(20_000))
    assert min(tally) >= 100 and max(tally) <= 199
    assert tally.most_common(1)[0][0] == 100


def test_zipfian_grows_its_zeta_incrementally_when_drawing_over_more_items() -> None:
    gen = Zipfian(random.Random(3), 0, 999)
    assert gen.zetan == pytest.approx(zeta(1000, 0.99))
    seen = {gen.next_long(2000) for _ in range(20_000)}
    assert gen.count_for_zeta == 2000
    assert gen.zetan == pytest.approx(zeta(2000, 0.99), rel=1e-12)
    assert max(seen) >= 1000 and max(seen) < 2000


def test_textbook_zipfian_is_far_more_skewed_than_scrambled_on_1000_keys() -> None:
    gen = Zipfian(random.Random(5), 0, 999)
    tally = Tally(gen.next() for _ in range(100_000))
    assert 0.35 < hottest_share(tally, 10) < 0.45


# ---- scrambled zipfian (requestdistribution=zipfian) ------------------------------------------


def test_scrambled_zipfian_on_1000_keys() -> None:
    lo, hi, draws = 5000, 5999, 200_000
    gen = ScrambledZipfian(random.Random(13), lo, hi)
    tally = Tally(gen.next() for _ in range(draws))
    assert min(tally) >= lo and max(tally) <= hi
    assert 0.10 <= hottest_share(tally, 10) <= 0.16  # hottest 1%: about 13%
    assert 0.26 <= hottest_share(tally, 100) <= 0.32  # hottest 10%: about 29%
    # The hot keys are spread over the range, not bunched at its start.
    hot = [k for k, _ in tally.most_common(10)]
    assert max(hot) - min(hot) > 300


def test_scrambled_zipfian_with_another_constant() -> None:
    gen = ScrambledZipfian(random.Random(13), 0, 999, theta=0.5)
    assert gen._gen.zetan == pytest.approx(zeta(ITEM_COUNT + 1, 0.5), rel=1e-12)
    tally = Tally(gen.next() for _ in range(20_000))
    assert min(tally) >= 0 and max(tally) <= 999


# ---- hotspot -----------------------------------------------------------------------------------


def test_hotspot_sends_80_percent_of_draws_to_the_lowest_20_percent_of_keys() -> None:
    gen = Hotspot(random.Random(17), 1000, 1999, 0.2, 0.8)
    draws = [gen.next() for _ in range(100_000)]
    assert min(draws) >= 1000 and max(draws) <= 1999
    hot = sum(1 for d in draws if d < 1200) / len(draws)
    assert hot == pytest.approx(0.8, abs=0.015)
    assert len(set(draws)) == 1000


def test_hotspot_edge_fractions() -> None:
    all_hot = Hotspot(random.Random(1), 0, 99, 0.2, 1.0)
    assert max(all_hot.next() for _ in range(5000)) < 20
    no_hot_data = Hotspot(random.Random(1), 0, 99, 0.0, 0.8)
    assert len({no_hot_data.next() for _ in range(5000)}) == 100


# ---- latest ------------------------------------------------------------------------------------


def test_latest_prefers_the_newest_keys() -> None:
    counter = AcknowledgedCounter(1000)  # keys 0..999 loaded
    gen = SkewedLatest(random.Random(19), counter, 0.99)
    tally = Tally(gen.next() for _ in range(100_000))
    assert tally.most_common(1)[0][0] == 999
    assert min(tally) >= 1 and max(tally) <= 999
    newest = [tally[999 - age] for age in range(5)]
    assert newest == sorted(newest, reverse=True)

    def mean_count(ages: range) -> float:
        return sum(tally[999 - a] for a in ages) / len(ages)

    assert mean_count(range(0, 10)) > mean_count(range(10, 100)) > mean_count(range(100, 999))


@pytest.mark.parametrize("loaded", [3, 11, 1000])
def test_latest_never_returns_zero_once_keys_exist(loaded: int) -> None:
    gen = SkewedLatest(random.Random(loaded), AcknowledgedCounter(loaded), 0.99)
    draws = {gen.next() for _ in range(20_000)}
    assert min(draws) >= 1 and max(draws) == loaded - 1


@pytest.mark.parametrize("loaded", [1, 2, 3])
def test_latest_on_a_tiny_table_then_growing(loaded: int) -> None:
    counter = AcknowledgedCounter(loaded)
    gen = SkewedLatest(random.Random(loaded), counter, 0.99)
    first = {gen.next() for _ in range(1000)}
    assert first <= set(range(loaded)) and max(first) == loaded - 1
    for _ in range(100):
        counter.acknowledge(counter.next())
    top = counter.last()
    tally = Tally(gen.next() for _ in range(20_000))
    assert min(tally) >= 1 and max(tally) == top
    assert tally.most_common(1)[0][0] == top


def test_latest_follows_acknowledged_inserts_only() -> None:
    counter = AcknowledgedCounter(1000)
    gen = SkewedLatest(random.Random(23), counter, 0.99)
    pending = [counter.next() for _ in range(10)]  # 1000..1009 handed out, none done
    assert max(gen.next() for _ in range(5000)) == 999
    for value in pending:
        counter.acknowledge(value)
    tally = Tally(gen.next() for _ in range(20_000))
    assert max(tally) == 1009
    assert tally.most_common(1)[0][0] == 1009


# ---- exponential -------------------------------------------------------------------------------


def test_exponential_matches_its_gamma() -> None:
    value_range = 1000 * 0.8571428571
    gen = Exponential(random.Random(29), 95.0, value_range)
    assert gen.gamma == pytest.approx(-math.log(0.05) / value_range)
    draws = [gen.next() for _ in range(100_000)]
    assert min(draws) >= 0
    # int() truncates: the mean of the draws is 1/gamma - about 0.5.
    assert sum(draws) / len(draws) == pytest.approx(1 / gen.gamma, rel=0.03)
    # By construction 95% of the draws fall below the range.
    assert sum(1 for d in draws if d < value_range) / len(draws) == pytest.approx(0.95, abs=0.005)


# ---- sequential and counters ------------------------------------------------------------------


def test_sequential_wraps_around() -> None:
    gen = Sequential(10, 14)
    assert [gen.next() for _ in range(12)] == [10, 11, 12, 13, 14, 10, 11, 12, 13, 14, 10, 11]


def test_sequential_starts_each_worker_at_its_share_of_the_range() -> None:
    spec = spec_of("recordcount=100", "requestdistribution=sequential")
    starts = [WorkerKeys(spec, w, 2).sequential.next() for w in range(2)]
    assert starts == [0, 50]
    starts = [WorkerKeys(spec, w, 3).sequential.next() for w in range(3)]
    assert starts == [0, 33, 66]
    late = WorkerKeys(spec, 1, 2).sequential
    assert [late.next() for _ in range(52)][-3:] == [99, 0, 1]


def test_counter() -> None:
    counter = Counter(5)
    assert counter.last() == 4
    assert [counter.next() for _ in range(3)] == [5, 6, 7]
    assert counter.last() == 7


def test_acknowledged_counter_moves_its_limit_only_when_the_gap_closes() -> None:
    counter = AcknowledgedCounter(10)
    assert counter.last() == 9
    handed = [counter.next() for _ in range(5)]
    assert handed == [10, 11, 12, 13, 14]
    assert counter.last() == 9  # handed out is not acknowledged
    counter.acknowledge(12)
    counter.acknowledge(14)
    assert counter.last() == 9
    counter.acknowledge(11)
    assert counter.last() == 9
    counter.acknowledge(10)  # 10, 11, 12 now contiguous; 13 is still missing
    assert counter.last() == 12
    counter.acknowledge(13)
    assert counter.last() == 14
    counter.acknowledge(counter.next())
    assert counter.last() == 15


# ---- discrete ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "weights",
    [
        {"READ": 0.5, "UPDATE": 0.3, "SCAN": 0.2},
        {"READ": 3.0, "UPDATE": 1.0},  # need not sum to 1
        {"READ": 0.1, "INSERT": 0.1, "SCAN": 0.2},
    ],
)
def test_discrete_proportions(weights: dict[str, float]) -> None:
    gen = Discrete(random.Random(31), weights)
    draws = 100_000
    tally = Tally(gen.next() for _ in range(draws))
    assert set(tally) == set(weights)
    total = sum(weights.values())
    for op, w in weights.items():
        assert tally[op] / draws == pytest.approx(w / total, abs=0.01), op


def test_discrete_with_one_operation() -> None:
    gen = Discrete(random.Random(1), {"READ": 0.7})
    assert {gen.next() for _ in range(100)} == {"READ"}


# ---- how a lane chooses keys -----------------------------------------------------------------


def spec_of(*overrides: str) -> WorkloadSpec:
    return build_spec(merge([], list(overrides)), "run")


def lane_for(spec: WorkloadSpec, keys: WorkerKeys | None = None, seed: int = 1, lane: int = 0):
    rng = random.Random(lane_seed(seed, 0, lane))
    return LaneWorkload(spec, None, Recorder(), keys or WorkerKeys(spec), rng)  # type: ignore[arg-type]


GROWING = ("recordcount=100", "operationcount=1000", "readproportion=0.5", "insertproportion=0.5")


@pytest.mark.parametrize("distribution", ["zipfian", "uniform", "hotspot", "exponential", "latest"])
def test_next_keynum_never_goes_beyond_the_acknowledged_limit(distribution: str) -> None:
    lane = lane_for(spec_of(*GROWING, f"requestdistribution={distribution}"))
    draws = [lane.next_keynum() for _ in range(5000)]
    assert 0 <= min(draws) and max(draws) <= 99
    inserts = lane.keys.inserts
    pending = [inserts.next() for _ in range(3)]  # 100, 101, 102
    inserts.acknowledge(pending[0])
    inserts.acknowledge(pending[2])
    assert max(lane.next_keynum() for _ in range(5000)) <= 100


def test_the_zipfian_key_space_covers_the_expected_inserts_and_is_redrawn() -> None:
    # YCSB: ScrambledZipfian(insertstart, insertstart + insertcount + expected new keys), both
    # ends included; 100 records + 1000 operations * 0.5 inserts * 2 gives keys 0..1100 ...
    lane = lane_for(spec_of(*GROWING, "requestdistribution=zipfian"))
    raw = [lane.chooser.next() for _ in range(5000)]
    assert min(raw) >= 0 and max(raw) == 1100
    # ... so a lane must redraw until it finds one that exists.
    assert max(lane.next_keynum() for _ in range(5000)) <= 99


def test_latest_in_a_lane_follows_the_inserts() -> None:
    lane = lane_for(spec_of(*GROWING, "requestdistribution=latest"))
    inserts = lane.keys.inserts
    for _ in range(5):
        inserts.acknowledge(inserts.next())
    tally = Tally(lane.next_keynum() for _ in range(5000))
    assert tally.most_common(1)[0][0] == 104 and max(tally) == 104


def test_two_workers_map_run_inserts_to_disjoint_real_keys() -> None:
    spec = spec_of(*GROWING)
    workers = [WorkerKeys(spec, w, 2) for w in range(2)]
    real = []
    for keys in workers:
        virtual = [keys.inserts.next() for _ in range(50)]
        assert virtual[0] == 100  # each worker numbers its inserts from recordcount
        real.append({keys.to_real(v) for v in virtual})
    assert real[0].isdisjoint(real[1])
    assert real[0] | real[1] == set(range(100, 200))
    for keys in workers:  # loaded keys are the same for every worker
        assert [keys.to_real(k) for k in range(100)] == list(range(100))


def test_one_worker_maps_keys_to_themselves() -> None:
    keys = WorkerKeys(spec_of(*GROWING))
    assert all(keys.to_real(v) == v for v in range(0, 5000, 7))


def test_a_lane_of_worker_one_returns_its_own_inserted_keys() -> None:
    spec = spec_of(*GROWING, "requestdistribution=latest")
    keys = WorkerKeys(spec, 1, 2)
    lane = lane_for(spec, keys)
    for _ in range(3):
        keys.inserts.acknowledge(keys.inserts.next())  # virtual 100..102 -> real 101, 103, 105
    drawn = {lane.next_keynum() for _ in range(5000)}
    assert {101, 103, 105} <= drawn
    assert not drawn & {100, 102, 104} and max(drawn) == 105


@pytest.mark.parametrize("distribution", ["zipfian", "uniform", "latest", "hotspot", "exponential"])
def test_a_seed_reproduces_a_lanes_keys_and_lanes_differ(distribution: str) -> None:
    spec = spec_of("recordcount=1000", f"requestdistribution={distribution}")

    def keys_of(seed: int, lane: int) -> list[int]:
        workload = lane_for(spec, seed=seed, lane=lane)
        return [workload.next_keynum() for _ in range(500)]

    first = keys_of(1, 0)
    assert keys_of(1, 0) == first
    assert keys_of(1, 1) != first
    assert keys_of(2, 0) != first


def test_a_seed_reproduces_the_operation_sequence() -> None:
    spec = spec_of("readproportion=0.5", "updateproportion=0.3", "scanproportion=0.2")
    lanes = [lane_for(spec, seed=4) for _ in range(2)]
    ops = [[lane.ops.next() for _ in range(200)] for lane in lanes]
    assert ops[0] == ops[1]
    assert set(ops[0]) == {"READ", "UPDATE", "SCAN"}


def test_an_unknown_request_distribution_is_refused_not_taken_for_exponential() -> None:
    """The spec refuses one when it is parsed; key_chooser refuses one that got past it (a spec
    made by hand), instead of falling into its last case. The composer offers the same names."""
    import dataclasses

    from workbench.config.compose import DISTRIBUTION_PARAMS
    from workbench.config.spec import DISTRIBUTIONS
    from workbench.core.workload import key_chooser
    from workbench.errors import ConfigError

    with pytest.raises(ConfigError, match="requestdistribution"):
        build_spec(merge([], ["requestdistribution=gaussian"]))
    spec = dataclasses.replace(build_spec(merge([], [])), requestdistribution="gaussian")
    with pytest.raises(ValueError, match="requestdistribution='gaussian' is not one of uniform, zipfian"):
        key_chooser(spec, random.Random(1), WorkerKeys(spec))
    assert set(DISTRIBUTION_PARAMS) <= set(DISTRIBUTIONS)
