"""measurement.keys: the engine counts the keys its requests chose (metrics/keycounts.py), exactly
up to a million loaded keys and from a sample above, and the key-distributions lesson's checks
read those counts (issue 44, defects 3 and 4)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from tests.unit.engine_helpers import cleanup_store, make_spec, run_phase
from workbench import speedups
from workbench.config import catalog
from workbench.config.spec import spec_from_args
from workbench.core.workload import LaneWorkload, WorkerKeys
from workbench.lessons.figures import run_figures
from workbench.lessons.model import load
from workbench.lessons.runner import judge
from workbench.metrics import keycounts
from workbench.metrics.keycounts import KeyCounter, chance_share, merge, summarize
from workbench.metrics.recorder import Recorder
from workbench.results.from_run import to_run_result
from workbench.results.jsonfile import from_json_dict, to_json_dict

WORKLOADS = Path(__file__).resolve().parents[2] / "workbench" / "workloads"
STORES = itertools.count()


def counted_run(workload: str, *overrides: str):
    spec, _ = spec_from_args([str(WORKLOADS / workload)],
                                 [f"memory.store=keys-{next(STORES)}", "recordcount=10000",
                                  "measurement.keys=true", *overrides], "run")
    try:
        outcome, _ = run_phase(spec)
    finally:
        cleanup_store(spec)
    assert outcome.outcome == "completed", outcome.error
    return to_run_result(outcome, {})


def not_inserts(result) -> int:
    inserts = sum(m.operations for m in result.measurements if m.name in ("INSERT", "INSERT-FAILED"))
    return result.operations - inserts


# -- the counter ----------------------------------------------------------------------------------

def test_exact_counts_grow_with_inserted_keys_and_take_back_what_never_ran():
    spec, _ = spec_from_args([], ["recordcount=100", "measurement.keys=true"], "run")
    counter = KeyCounter(spec)
    assert counter.exact and counter.newest_n == 1
    for key in (5, 5, 7, 99, 250, 250, 10 ** 12):  # 250: an inserted key; 10**12: past the array
        counter.record(key, key == 99)
    counter.forget(250, False)
    counter.forget(7, False)
    tally = counter.tally(inserted=200)
    summary = summarize(merge([tally, tally]))  # two workers that counted the same
    assert summary["requests"] == 10 and summary["counted"] == "exactly" and summary["error"] == 0.0
    assert summary["top"][0] == [5, 4]
    assert summary["hottest_1pct"] == 0.4  # one key of 100
    assert summary["touched"] == 4 / 500  # 5, 99, 250 and 10**12 over 100 loaded and 2 x 200 inserted
    assert summary["newest_1pct"] == 0.2
    assert summary["new"] == 0.4  # 250 and 10**12 are past recordcount


def test_chance_share_is_what_the_hottest_keys_of_uniform_requests_get():
    rng = np.random.default_rng(1)
    for requests in (3_000, 100_000):
        shares = []
        for _ in range(40):
            counts = -np.sort(-np.bincount(rng.integers(0, 10_000, requests), minlength=10_000))
            shares.append(counts[:100].sum() / requests)
        assert abs(np.mean(shares) - chance_share(requests, 10_000, 0.01)) < 0.0005
    assert chance_share(100_000, 10_000, 0.01) == pytest.approx(0.0193, abs=0.0001)  # the 1.9%
    assert chance_share(100_000, 10_000, 0.1) == pytest.approx(0.1587, abs=0.0001)  # and its 15.9%
    assert 0.01 < chance_share(10 ** 9, 10_000, 0.01) < 0.0101  # the normal limit: luck evens out


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("workload,dist", [("workloada", "zipfian"), ("workloadc", "uniform"),
                                           ("workloadd", "latest"), ("workloadc", "hotspot"),
                                           ("workloade", "exponential")])
def test_counting_keys_leaves_the_lanes_draws_as_they_were(monkeypatch, compiled, workload, dist):
    if compiled and speedups.C is None:
        pytest.skip("workbench._speedups is not built here")
    if not compiled:
        monkeypatch.setattr(speedups, "C", None)

    def lane(count: bool):
        spec, _ = spec_from_args([str(WORKLOADS / workload)],
                                 ["recordcount=5000", f"requestdistribution={dist}", "seed=3",
                                  f"measurement.keys={str(count).lower()}"], "run")
        keys = WorkerKeys(spec, 1, 3)
        keys.counter = KeyCounter(spec, 1) if count else None
        return LaneWorkload(spec, None, Recorder(), keys, random.Random(3))

    plain, counted = lane(False), lane(True)
    if compiled and dist == "zipfian":  # off, the compiled key source; on, the counting one
        assert type(plain.next_key).__name__ == "ZipfianKeys"
    chosen = [a for _ in range(40) for _, a in plain.choose(plain.batch)]
    assert chosen == [a for _ in range(40) for _, a in counted.choose(counted.batch)]
    keyed = sum(1 for a in chosen if a is not None)
    assert summarize(merge([counted.keys.counter.tally(0)]))["requests"] == keyed


def test_a_run_that_does_not_ask_counts_nothing():
    spec, _ = make_spec("recordcount=1000", "operationcount=2000")
    assert not spec.count_keys
    outcome, _ = run_phase(spec)
    cleanup_store(spec)
    assert outcome.keys is None and to_run_result(outcome, {}).keys is None


# -- the engine's counts --------------------------------------------------------------------------

@pytest.mark.parametrize("workload,dist,workers", [
    ("workloadc", "uniform", 1), ("workloadd", "latest", 1), ("workloadd", "latest", 2),
    ("workloade", "zipfian", 1), ("workloadf", "hotspot", 2)])
def test_every_request_is_counted_once_even_those_chosen_ahead_when_time_ran_out(workload, dist, workers):
    # maxexecutiontime ends the run with choices made ahead and never run: taken back
    result = counted_run(workload, f"requestdistribution={dist}", "operationcount=0",
                         "maxexecutiontime=1", "threadcount=4", f"workers={workers}")
    assert result.keys["counted"] == "exactly"
    assert result.keys["requests"] == not_inserts(result) > 0
    if workload == "workloadd":
        assert result.keys["inserted"] == result.measurement("INSERT").operations > 0


def test_key_counts_bigger_than_a_pipe_buffer_come_back_from_worker_processes():
    # 100,000 keys: 800 KB of counts per worker, through a pipe that uvloop made non-blocking
    spec, props = spec_from_args([str(WORKLOADS / "workloadc")],
                                 ["memory.store=keys-pipe", "recordcount=100000", "operationcount=20000",
                                  "measurement.keys=true", "workers=2", "threadcount=2"], "run")
    try:
        outcome, _ = run_phase(spec)
    finally:
        cleanup_store(spec)
    assert outcome.outcome == "completed", outcome.error
    assert summarize(outcome.keys)["requests"] == 20000


def test_latest_shows_its_hot_set_moving_with_the_inserts():
    latest = counted_run("workloadd", "requestdistribution=latest", "operationcount=20000",
                         "threadcount=2").keys
    zipfian = counted_run("workloadc", "requestdistribution=zipfian", "operationcount=20000").keys
    assert latest["newest_1pct"] > 0.4 and zipfian["newest_1pct"] < 0.05
    assert latest["new"] > 0.5 and zipfian["new"] == 0.0
    # over the run no 100 keys kept the newest's share: fewer than zipfian's hottest 100 got
    assert latest["hottest_1pct"] < latest["newest_1pct"] / 2
    assert latest["hottest_1pct"] < zipfian["hottest_1pct"]


def test_above_a_million_keys_a_sample_gives_the_shares_within_the_stated_error(monkeypatch):
    # The limits scaled down: 10,000 keys counted from a sample of 4,000 requests a worker.
    results = {}
    for exact in (True, False):
        if not exact:
            monkeypatch.setattr(keycounts, "EXACT_LIMIT", 1000)
            monkeypatch.setattr(keycounts, "SAMPLE", 4000)
        for dist in ("uniform", "zipfian", "hotspot"):
            results[exact, dist] = counted_run("workloadc", f"requestdistribution={dist}", "seed=5",
                                               "operationcount=40000", "threadcount=1").keys
    for dist in ("uniform", "zipfian", "hotspot"):
        truth, sampled = results[True, dist], results[False, dist]
        assert sampled["counted"] == "sampled" and sampled["sample"] == 4000 and "touched" not in sampled
        assert sampled["requests"] == truth["requests"] == 40000
        assert sampled["newest_1pct"] == truth["newest_1pct"]  # counted exactly either way
        assert 0 < sampled["error"] < 0.2
        for name in keycounts.HOTTEST:
            assert abs(sampled[name] - truth[name]) <= sampled["error"], (dist, name)


def test_the_key_figures_are_the_runs_own_and_survive_the_store():
    result = counted_run("workloadc", "requestdistribution=zipfian", "operationcount=5000")
    figures = run_figures(result)
    assert figures["keys.hottest_1pct"] == result.keys["hottest_1pct"] and figures["keys.error"] == 0.0
    assert from_json_dict(to_json_dict(result)).keys == result.keys
    plain = counted_run("workloadc", "operationcount=1000", "measurement.keys=false")
    assert not any(name.startswith("keys.") for name in run_figures(plain))


# -- the lesson's checks against the counts -------------------------------------------------------

LESSON = "key-distributions"
STEPS = {"uniform": ("workloadc", "uniform"), "zipfian": ("workloadc", "zipfian"),
         "latest": ("workloadd", "latest"), "hotspot": ("workloadc", "hotspot")}


@pytest.mark.parametrize("operations", [10_000, 60_000])
def test_each_checks_passes_for_its_distribution_and_fails_for_the_others(operations):
    """Every step's checks on the figures of runs of each distribution (the step's workload): they
    hold for the right one and for no other, at both ends of what a 5-second lesson run makes."""
    lesson = load(catalog.available("lessons")[LESSON])
    runs = {}  # one run of each workload and distribution: three steps share workload C
    for workload in sorted({w for w, _ in STEPS.values()}):
        for dist in ("uniform", "zipfian", "latest", "hotspot"):
            result = counted_run(workload, f"requestdistribution={dist}", f"operationcount={operations}",
                                 "threadcount=2", "hotspotdatafraction=0.2", "hotspotopnfraction=0.8")
            runs[workload, dist] = {k: v for k, v in run_figures(result).items() if k.startswith("keys.")}
    measured = {(step_id, dist): runs[workload, dist] for step_id, (workload, _) in STEPS.items()
                for dist in ("uniform", "zipfian", "latest", "hotspot")}
    right = {step_id: measured[step_id, dist] for step_id, (_, dist) in STEPS.items()}
    for step in lesson.steps:
        for check in step.checks:
            for dist in ("uniform", "zipfian", "latest", "hotspot"):
                figures = {**right, step.id: measured[step.id, dist]}
                right_one = dist == STEPS[step.id][1]
                assert judge(check, figures).passed is right_one, (step.id, dist, check.expect.text)
