"""YCSB's ScrambledZipfianGenerator: what `requestdistribution=zipfian` really means.

A zipfian draw over 10^10 items is hashed (fnvhash64) onto the real key range, so popular
items are spread over the key space, and the skew is flatter than a textbook Zipf for small
tables (with 1000 keys the hottest 1% get about 13% of the draws, not 40%).
"""

from __future__ import annotations

import random

from workbench.config.keys import fnvhash64
from workbench.core.generators.zipfian import YCSB_CONSTANT, Zipfian

ITEM_COUNT = 10_000_000_000
ZETAN = 26.46902820178302  # YCSB's precomputed zeta(10^10, 0.99)
SEEN_LIMIT = 4_096  # per lane: the hot draws; 64 lanes stay under 20 MB


class ScrambledZipfian:
    def __init__(self, rng: random.Random, lo: int, hi: int, theta: float = YCSB_CONSTANT) -> None:
        self.lo = lo
        self.itemcount = hi - lo + 1
        zetan = ZETAN if theta == YCSB_CONSTANT else None
        # ZipfianGenerator(0, ITEM_COUNT) in YCSB: ITEM_COUNT + 1 items.
        self._gen = Zipfian(rng, 0, ITEM_COUNT, theta, zetan)
        self._seen: dict[int, int] = {}

    def next(self) -> int:
        # Popular draws repeat constantly: remember their hashed positions (bounded).
        raw = self._gen.next()
        pos = self._seen.get(raw)
        if pos is None:
            pos = self.position(raw)
        return pos

    def position(self, raw: int) -> int:
        """Where zipfian draw `raw` lands in [lo, hi] (remembered while the memo has room)."""
        pos = self.lo + fnvhash64(raw) % self.itemcount
        if len(self._seen) < SEEN_LIMIT:
            self._seen[raw] = pos
        return pos
