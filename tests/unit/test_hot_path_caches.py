"""The hot path's caches change nothing but speed: same names, same draws, bounded size."""

import random

import pytest

from workbench import speedups
from workbench.config.keys import build_key_name, fnvhash64, key_builder
from workbench.core.generators import scrambled
from workbench.core.generators.scrambled import ScrambledZipfian


def test_cached_key_names_equal_built_ones_and_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(speedups, "C", None)  # the Python builder (the compiled one has no cache)
    cache: dict[int, str] = {}
    name = key_builder(1, False, cache, cache_limit=50)
    rng = random.Random(5)
    for keynum in [rng.randrange(200) for _ in range(2000)]:
        assert name(keynum) == build_key_name(keynum)
    assert len(cache) == 50
    padded = key_builder(12, True, {}, cache_limit=10)
    assert padded(7) == padded(7) == build_key_name(7, 12, True) == "user000000000007"


def test_scrambled_zipfian_draws_are_unchanged_by_its_memo(monkeypatch):
    monkeypatch.setattr(scrambled, "SEEN_LIMIT", 100)
    a = ScrambledZipfian(random.Random(9), 0, 999)
    raw = ScrambledZipfian(random.Random(9), 0, 999)._gen  # the same zipfian stream, unhashed
    draws = [a.next() for _ in range(5000)]
    assert draws == [fnvhash64(raw.next()) % 1000 for _ in range(5000)]
    assert len(a._seen) == 100


def _lane(props: list[str], lane_seed: int = 3, worker: int = 0, workers: int = 1):
    from pathlib import Path

    from workbench.config.spec import spec_from_args
    from workbench.core.workload import LaneWorkload, WorkerKeys
    from workbench.metrics.recorder import Recorder

    workloads = Path(__file__).resolve().parents[2] / "workbench" / "workloads"
    spec, _ = spec_from_args([str(workloads / props[0])], props[1:], "run")
    keys = WorkerKeys(spec, worker, workers)
    return LaneWorkload(spec, None, Recorder(), keys, random.Random(lane_seed))


@pytest.mark.parametrize("compiled", [True, False])
def test_the_fused_zipfian_key_source_draws_the_keys_the_generic_path_draws(monkeypatch, compiled):
    if compiled and speedups.C is None:
        pytest.skip("workbench._speedups is not built here")
    if not compiled:
        monkeypatch.setattr(speedups, "C", None)
    for worker, workers in ((0, 1), (1, 3)):
        fused = _lane(["workloada", "recordcount=5000"], worker=worker, workers=workers)
        generic = _lane(["workloada", "recordcount=5000"], worker=worker, workers=workers)
        # the inlined closure (or its compiled version), not the generic fallback
        kind = type(fused.next_key).__name__ if compiled else fused.next_key.__name__
        assert kind == ("ZipfianKeys" if compiled else "next_key")
        assert [fused.next_key() for _ in range(20000)] == [
            generic.key_name(generic.next_keynum()) for _ in range(20000)]


def test_choosing_ahead_makes_the_same_choices_as_choosing_each_when_it_runs():
    for workload in ("workloada", "workloadb", "workloadc", "workloadf", "workloade"):
        ahead = _lane([workload, "recordcount=2000", "seed=11"])
        one_by_one = _lane([workload, "recordcount=2000", "seed=11"])
        assert ahead.batch == (1 if workload == "workloade" else 64)  # E inserts: no look-ahead
        batched = [c for _ in range(10) for c in ahead.choose(ahead.batch)]
        single = []
        for _ in range(len(batched)):
            execute, args = one_by_one._pick()
            single.append((execute, args()))
        assert [(e.__name__, a) for e, a in batched] == [(e.__name__, a) for e, a in single]


def test_choosing_ahead_holds_a_bounded_amount_of_values():
    from workbench.core.workload import CHOOSE_AHEAD_BYTES

    assert _lane(["workloada"]).batch == 64  # one 100-byte field per update
    big = _lane(["workloada", "fieldlength=100000", "writeallfields=true"])
    assert big.batch == 1  # 1 MB of values per update: never chosen ahead
    mid = _lane(["workloada", "fieldlength=1000", "writeallfields=true"])
    assert mid.batch == CHOOSE_AHEAD_BYTES // 10_000
