"""Summaries computed from HdrHistograms (workbench/results/summarize.py)."""

from __future__ import annotations

import random

import pytest
from test_results_builders import new_histogram

from workbench.results.model import SUMMARY_PERCENTILES
from workbench.results.summarize import (
    decode,
    interval_measurement_from_histogram,
    mean_of,
    measurement_from_histogram,
)


def test_measurement_takes_every_figure_from_the_histogram() -> None:
    h = new_histogram()
    for v in [150, 266, 1000, 1000, 123_327, 2_217_983]:
        h.record_value(v)
    m = measurement_from_histogram("READ", h, {"OK": 6})
    assert (m.name, m.operations, m.returns) == ("READ", 6, {"OK": 6})
    assert m.average_us == h.get_mean_value() and isinstance(m.average_us, float)
    assert (m.min_us, m.max_us) == (150, h.get_max_value())
    assert type(m.min_us) is int and type(m.max_us) is int
    assert list(m.percentiles) == list(SUMMARY_PERCENTILES)
    assert m.percentiles[50.0] == h.get_value_at_percentile(50.0) == 1000
    assert m.percentiles[99.99] == h.get_value_at_percentile(99.99)
    assert decode(m.histogram).get_total_count() == 6


def test_empty_histogram_is_all_zeros() -> None:
    im = interval_measurement_from_histogram(new_histogram())
    assert (im.count, im.average_us, im.min_us, im.max_us) == (0, 0.0, 0, 0)
    assert set(im.percentiles.values()) == {0}
    assert im.histogram and decode(im.histogram).get_total_count() == 0


def test_returns_are_copied_not_shared() -> None:
    returns = {"OK": 1}
    h = new_histogram()
    h.record_value(10)
    m = measurement_from_histogram("UPDATE", h, returns)
    returns["OK"] = 99
    assert m.returns == {"OK": 1}


@pytest.mark.parametrize("seed", range(5))
def test_fast_mean_and_percentiles_equal_hdrh_own(seed: int) -> None:
    rng = random.Random(seed)
    h = new_histogram()
    for _ in range(2000):
        h.record_value(1 + int(rng.lognormvariate(6 + seed, 1.5)))
    assert mean_of(h) == h.get_mean_value()
    m = measurement_from_histogram("READ", h)
    assert m.percentiles == {p: h.get_value_at_percentile(p) for p in SUMMARY_PERCENTILES}
