"""Field-length generators: constant, uniform, zipfian and histogram (YCSB's file format)."""

from __future__ import annotations

import bisect
import random
from pathlib import Path

from workbench.core.generators.zipfian import Zipfian
from workbench.errors import ConfigError


class Constant:
    def __init__(self, value: int) -> None:
        self.value = value

    def next(self) -> int:
        return self.value


class UniformLength:
    def __init__(self, rng: random.Random, lo: int, hi: int) -> None:
        self._randint = rng.randint
        self.lo, self.hi = lo, hi

    def next(self) -> int:
        return self._randint(self.lo, self.hi)


class HistogramLength:
    """YCSB HistogramGenerator file: "BlockSize\\t<n>" then "<bucket>\\t<count>" lines."""

    def __init__(self, rng: random.Random, path: str) -> None:
        self._random = rng.random
        try:
            lines = Path(path).read_text().splitlines()
        except OSError as exc:
            raise ConfigError(
                f"cannot read fieldlengthhistogram file {path}: {exc.strerror}",
                "set fieldlengthhistogram to a histogram file, or use another distribution",
            ) from None
        try:
            self.block = int(lines[0].split("\t")[1])
            buckets = [tuple(int(x) for x in ln.split("\t")[:2]) for ln in lines[1:] if ln.strip()]
        except (IndexError, ValueError):
            raise ConfigError(
                f"{path}: not a YCSB histogram file", "first line 'BlockSize<TAB>n', then 'bucket<TAB>count'"
            ) from None
        self.values, self.cumulative, total = [], [], 0
        for bucket, count in buckets:
            total += count
            self.values.append(bucket)
            self.cumulative.append(total)
        if total <= 0:
            raise ConfigError(f"{path}: histogram has no counts", "add bucket<TAB>count lines")
        self.total = total
        self.longest = max(1, max(self.values) * self.block)

    def next(self) -> int:
        i = bisect.bisect_right(self.cumulative, self._random() * self.total)
        return max(1, self.values[min(i, len(self.values) - 1)] * self.block)


def field_length_generator(rng: random.Random, spec) -> object:
    """The generator for spec.fieldlengthdistribution (spec: WorkloadSpec)."""
    kind = spec.fieldlengthdistribution
    if kind == "constant":
        return Constant(spec.fieldlength)
    if kind == "uniform":
        return UniformLength(rng, spec.minfieldlength, spec.fieldlength)
    if kind == "zipfian":
        return Zipfian(rng, spec.minfieldlength, spec.fieldlength, spec.zipfian_constant)
    return HistogramLength(rng, spec.fieldlengthhistogram)
