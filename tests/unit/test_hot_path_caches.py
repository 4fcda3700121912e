"""The hot path's caches change nothing but speed: same names, same draws, bounded size."""

import random

from workbench.core.generators import scrambled
from workbench.core.generators.scrambled import ScrambledZipfian
from workbench.core.keys import build_key_name, fnvhash64, key_builder


def test_cached_key_names_equal_built_ones_and_the_cache_is_bounded():
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
