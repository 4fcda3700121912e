"""from_counts builds exactly the histogram that recording every tally would build."""

import gc
import random
import weakref

from workbench.metrics.histograms import HIGHEST_US, decode, encode, from_counts, new_histogram


def test_from_counts_equals_recording_each_value():
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


def test_from_counts_of_nothing_is_empty():
    assert from_counts({}).get_total_count() == 0


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
