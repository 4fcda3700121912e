"""Zipfian over [min, max] (Gray et al. 1994), as YCSB's ZipfianGenerator, any constant theta."""

from __future__ import annotations

import random

from workbench.core.generators.zeta import zeta, zeta_extend

YCSB_CONSTANT = 0.99


class Zipfian:
    """Item `base` is the most popular, then base+1, ...; draws from the lane's random source."""

    def __init__(
        self,
        rng: random.Random,
        lo: int,
        hi: int,
        theta: float = YCSB_CONSTANT,
        zetan: float | None = None,
    ) -> None:
        self._random = rng.random
        self.items = hi - lo + 1
        self.base = lo
        self.theta = theta
        self.alpha = 1.0 / (1.0 - theta)
        self._zeta2 = zeta(2, theta)
        self.zetan = zeta(self.items, theta) if zetan is None else zetan
        self.count_for_zeta = self.items
        self._half_pow = 1.0 + 0.5**theta
        self.eta = self._eta()

    def _eta(self) -> float:
        # YCSB computes eta from the constructor's item count even when drawing over more items.
        denominator = 1 - self._zeta2 / self.zetan
        if denominator == 0:
            # Two items: every draw is item 0 or 1 and eta is never used (Java computes NaN).
            return 0.0
        return (1 - (2.0 / self.items) ** (1 - self.theta)) / denominator

    def next_long(self, itemcount: int) -> int:
        """A draw over [base, base + itemcount); zeta grows incrementally as YCSB's does."""
        if itemcount > self.count_for_zeta:
            self.zetan = zeta_extend(self.count_for_zeta, itemcount, self.theta, self.zetan)
            self.count_for_zeta = itemcount
            self.eta = self._eta()
        u = self._random()
        uz = u * self.zetan
        if uz < 1.0:
            return self.base
        if uz < self._half_pow:
            return self.base + 1
        return self.base + int(itemcount * (self.eta * u - self.eta + 1) ** self.alpha)

    def next(self) -> int:
        # next_long(self.items) without the growth check: the hot path of every zipfian draw.
        u = self._random()
        uz = u * self.zetan
        if uz < 1.0:
            return self.base
        if uz < self._half_pow:
            return self.base + 1
        return self.base + int(self.items * (self.eta * u - self.eta + 1) ** self.alpha)
