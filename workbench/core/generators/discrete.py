"""Weighted choice among operations (YCSB's DiscreteGenerator): weights need not sum to 1."""

from __future__ import annotations

import bisect
import random


class Discrete:
    def __init__(self, rng: random.Random, weights: dict[str, float]) -> None:
        self._random = rng.random
        self.values = list(weights)
        total = 0.0
        self.cumulative = []
        for w in weights.values():
            total += w
            self.cumulative.append(total)
        self.total = total
        self._last = len(self.values) - 1

    def next(self) -> str:
        i = bisect.bisect_right(self.cumulative, self._random() * self.total)
        return self.values[i if i <= self._last else self._last]
