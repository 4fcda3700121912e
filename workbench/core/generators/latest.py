"""YCSB's SkewedLatestGenerator: recent inserts are the most popular keys."""

from __future__ import annotations

import random

from workbench.core.generators.counter import Counter
from workbench.core.generators.zipfian import Zipfian


class SkewedLatest:
    """next = last acknowledged - zipfian(last acknowledged); never 0 once a key exists."""

    def __init__(self, rng: random.Random, basis: Counter, theta: float) -> None:
        self.basis = basis
        # At least 3 items: YCSB's eta uses this first count forever, and with 2 items it is 0, so
        # once inserts grow the table most draws would come out as key 0.
        self._zipf = Zipfian(rng, 0, max(basis.last(), 3) - 1, theta)

    def next(self) -> int:
        top = self.basis.last()
        if top < 1:
            return 0
        return top - self._zipf.next_long(top)
