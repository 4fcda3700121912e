"""Key popularity: draw key choices exactly as a run's lane would and summarise where they land.

A teaching aid ("what does zipfian 0.99 mean on 1,000 keys?") and a check of the generators.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from workbench.config.spec import WorkloadSpec
from workbench.core.runner import lane_seed
from workbench.core.workload import LaneWorkload, WorkerKeys
from workbench.metrics.recorder import Recorder

FRACTIONS = (0.001, 0.01, 0.1)


@dataclass(frozen=True)
class Popularity:
    keys: int  # size of the key space the draws come from
    samples: int
    distinct: int
    hot_shares: dict[float, tuple[int, float]]  # fraction -> (k hottest keys, share of draws)
    first_keys: list[str]
    counts: Counter


def draw_keys(spec: WorkloadSpec, samples: int) -> tuple[list[int], LaneWorkload]:
    """Key numbers as lane 0 of worker 0 of a run draws them (no inserts happen meanwhile)."""
    rng = random.Random(lane_seed(spec.seed, 0, 0))
    lane = LaneWorkload(spec, None, Recorder(), WorkerKeys(spec), rng)  # type: ignore[arg-type]
    return [lane.next_keynum() for _ in range(samples)], lane


def popularity(spec: WorkloadSpec, samples: int, first: int = 10) -> Popularity:
    draws, lane = draw_keys(spec, samples)
    counts = Counter(draws)
    keys = spec.insert_total
    ranked = [n for _, n in counts.most_common()]
    shares = {}
    for fraction in FRACTIONS:
        k = max(1, int(keys * fraction))
        shares[fraction] = (k, sum(ranked[:k]) / samples if samples else 0.0)
    return Popularity(
        keys=keys,
        samples=samples,
        distinct=len(counts),
        hot_shares=shares,
        first_keys=[lane.key_name(n) for n in draws[:first]],
        counts=counts,
    )
