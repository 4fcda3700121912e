"""from_counts builds exactly the histogram that recording every tally would build, and
summarize gives hdrh's own mean and percentiles: in Python and, where workbench._speedups is
built, in C (tally and summarize), value for value."""

import gc
import random
import weakref

import pytest

from workbench import speedups
from workbench.metrics import histograms, snapshot
from workbench.metrics.histograms import HIGHEST_US, decode, encode, from_counts, new_histogram
from workbench.metrics.snapshot import OpStats, summarize

# The extension is optional (test_speedups.py checks that it is built wherever a compiler and
# Python's headers are, as in CI); where it is not, only the Python path exists to test.
needs_c = pytest.mark.skipif(speedups.C is None, reason="workbench._speedups is not built here")
PATHS = ["python", pytest.param("compiled", marks=needs_c)]


@pytest.fixture(params=PATHS)
def path(request, monkeypatch):
    """Each test below runs once on the Python loops and once on the compiled ones."""
    c = speedups.C if request.param == "compiled" else None
    monkeypatch.setattr(histograms, "_C", c)
    monkeypatch.setattr(snapshot, "_C", c)
    return request.param


def test_from_counts_equals_recording_each_value(path):
    rng = random.Random(3)
    tallies: dict[int, int] = {}
    for _ in range(30_000):
        v = rng.choice([0, 1, 2047, 2048, int(rng.lognormvariate(8, 2)), rng.randint(0, 10**6)])
        tallies[v] = tallies.get(v, 0) + rng.randint(1, 4)
    tallies[HIGHEST_US + 10] = 2  # beyond the range: clamped, as the recorder promises
    ref = new_histogram()
    for v, n in tallies.items():
        ref.record_value(min(v, HIGHEST_US), n)
    built = from_counts(tallies)
    assert list(built.counts) == list(ref.counts)
    assert built.get_total_count() == ref.get_total_count()
    assert (built.get_min_value(), built.get_max_value()) == (ref.get_min_value(), ref.get_max_value())
    assert built.get_mean_value() == ref.get_mean_value()
    assert encode(built) == encode(ref)
    assert decode(encode(built)).get_value_at_percentile(99.9) == ref.get_value_at_percentile(99.9)


def test_from_counts_of_nothing_is_empty(path):
    assert from_counts({}).get_total_count() == 0


def test_from_counts_clamps_a_latency_below_zero_or_beyond_the_range(path):
    h = from_counts({-5: 2, 3: 1, HIGHEST_US * 4: 1, 2**70: 1})
    assert h.get_total_count() == 5
    assert (h.min_value, h.max_value) == (0, HIGHEST_US)
    assert h.counts[0] == 2  # the two below zero, as zeros
    ref = new_histogram()
    ref.record_value(0, 2)
    ref.record_value(3, 1)
    ref.record_value(HIGHEST_US, 2)
    assert list(h.counts) == list(ref.counts)
    assert (h.get_min_value(), h.get_max_value()) == (ref.get_min_value(), ref.get_max_value())


@needs_c
@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_loops_build_and_summarize_as_the_python_ones(seed, monkeypatch):
    rng = random.Random(seed)
    tallies: dict[int, int] = {}
    for _ in range(rng.choice([1, 50, 5000])):
        v = rng.choice([0, 1, 2047, 2048, 4095, 4096, HIGHEST_US, int(rng.lognormvariate(6 + seed, 2))])
        tallies[v] = tallies.get(v, 0) + rng.choice([1, 3, 2**40])
    wanted = (0.0, 0.1, 1.0, 25, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999,
              99.9999, 99.99999, 100.0, 100.0, 250.0, 50.0)  # many, repeated, 0 and beyond 100
    results = {}
    for which in ("compiled", "python"):
        c = speedups.C if which == "compiled" else None
        monkeypatch.setattr(histograms, "_C", c)
        monkeypatch.setattr(snapshot, "_C", c)
        h = from_counts(tallies)
        results[which] = (list(h.counts), h.get_total_count(), h.get_min_value(), h.get_max_value(),
                          summarize(h, wanted), OpStats.of(h))
    assert results["compiled"] == results["python"]


def test_dropped_histograms_are_freed_at_once_not_by_the_cycle_collector():
    gc.disable()  # what reference counting alone frees (each tick drops a few 188 KB histograms)
    try:
        for make in (new_histogram, lambda: from_counts({5: 2, 900: 1}),
                     lambda: decode(encode(from_counts({5: 2})))):
            h = make()
            assert decode(encode(h)).get_total_count() == h.get_total_count()  # still encodes
            ref = weakref.ref(h)
            del h
            assert ref() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("seed", range(5))
def test_summarize_gives_hdrhs_own_mean_and_percentiles(path, seed):
    rng = random.Random(seed)
    h = new_histogram()
    for _ in range(2000):
        h.record_value(1 + int(rng.lognormvariate(6 + seed, 1.5)))
    wanted = (0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0)
    mean, percentiles = summarize(h, wanted)
    assert mean == h.get_mean_value()
    assert percentiles == {p: h.get_value_at_percentile(p) for p in wanted}
