"""Small distributions: uniform, hotspot, sequential and exponential, as YCSB defines them."""

from __future__ import annotations

import math
import random


class Uniform:
    """Uniform over [lo, hi]."""

    def __init__(self, rng: random.Random, lo: int, hi: int) -> None:
        self._random = rng.random
        self.lo = lo
        self.n = hi - lo + 1

    def next(self) -> int:
        return self.lo + int(self._random() * self.n)


class Hotspot:
    """With probability opn_fraction a key from the lowest data_fraction of [lo, hi], else the rest."""

    def __init__(
        self, rng: random.Random, lo: int, hi: int, data_fraction: float, opn_fraction: float
    ) -> None:
        self._random = rng.random
        self.lo = lo
        interval = hi - lo + 1
        self.hot = int(interval * data_fraction)
        self.cold = interval - self.hot
        self.opn_fraction = opn_fraction

    def next(self) -> int:
        r = self._random
        if r() < self.opn_fraction and self.hot > 0:
            return self.lo + int(r() * self.hot)
        if self.cold > 0:
            return self.lo + self.hot + int(r() * self.cold)
        return self.lo + int(r() * self.hot)


class Sequential:
    """lo, lo+1, ..., hi, lo, ... (shared by the lanes of a worker, like YCSB's AtomicLong)."""

    def __init__(self, lo: int, hi: int, offset: int = 0) -> None:
        self.lo = lo
        self.interval = hi - lo + 1
        self.counter = offset

    def next(self) -> int:
        c = self.counter
        self.counter = c + 1
        return self.lo + c % self.interval


class Exponential:
    """Exponential with gamma = -ln(1 - percentile/100) / range; callers subtract from the newest key."""

    def __init__(self, rng: random.Random, percentile: float, value_range: float) -> None:
        self._random = rng.random
        self.gamma = -math.log(1.0 - percentile / 100.0) / value_range

    def next(self) -> int:
        return int(-math.log(1.0 - self._random()) / self.gamma)
