"""Which keys a run's requests chose (`measurement.keys=true`): counted by each worker while the
run goes on, merged over the workers at its end, summed up in the figures a lesson reads.

What is counted: the key of every read, update, scan, delete and read-modify-write that ran, the
keys `requestdistribution` chooses. An insert writes a key of its own and is not counted.
Choices a lane made ahead and never ran (the run ended first) are taken back, so that with exact
counting the counts add up to the run's operations less its inserts, warm-up included.

How: a worker whose run reads at most EXACT_LIMIT loaded keys counts every request exactly, in
an array of counts indexed by key number (8 bytes a key; the keys inserted during the run extend
it up to ARRAY_LIMIT entries, and any key beyond is counted in a dict, still exactly). Above
EXACT_LIMIT loaded keys it keeps a uniform sample of SAMPLE of its requests (reservoir sampling,
Li's algorithm L, on a random stream of its own: the lanes' key choices stay those of an
uncounted run). From a sample the share of the hottest keys is bracketed: the sample's own
hottest keys overstate it (luck favours them), the hottest keys of one half of the sample
measured on the other half understate it; `summarize` reports the middle of the two with an
error bound of half their gap plus three standard errors of a share measured on half the sample.
The share of the newest keys and of keys inserted during the run are counted exactly either way;
the keys touched only when counting exactly.

Nothing here is on the hot path of a run that does not count keys: the lanes only look at a
worker's counter when it exists.
"""

from __future__ import annotations

import math
import random
from array import array
from dataclasses import dataclass, field
from statistics import NormalDist

from workbench.config.spec import WorkloadSpec

EXACT_LIMIT = 1_000_000  # loaded keys counted exactly (an array of 8 MB per worker)
ARRAY_LIMIT = 4 * EXACT_LIMIT  # entries the array may grow to with inserted keys (32 MB)
SAMPLE = 1_000_000  # requests a worker keeps a uniform sample of, above EXACT_LIMIT keys
# The k hottest keys, k a share of the keys loaded before the run (at least one key).
HOTTEST = {"hottest_0_1pct": 0.001, "hottest_1pct": 0.01, "hottest_10pct": 0.1}
CHANCE = {"chance_0_1pct": 0.001, "chance_1pct": 0.01, "chance_10pct": 0.1}
NEWEST = 0.01  # newest_1pct: the share of the requests on the newest 1% of the keys, when asked
TOP = 10  # the hottest keys a summary lists with their counts


def hot_count(keys: int, fraction: float) -> int:
    """How many keys "the hottest `fraction` of `keys` keys" are."""
    return max(1, int(keys * fraction))


@dataclass
class KeyTally:
    """What a worker hands over at the end of its run (picklable), and the merge of several."""

    loaded: int  # keys loaded before the run (insertcount)
    base: int  # counts[i] is key base + i (insertstart)
    first_new: int  # key numbers from here on were inserted during the run (recordcount)
    exact: bool
    requests: int = 0  # sampled: every request counted (exact: the sum of `counts`, left 0 here)
    newest: int = 0  # requests on the newest 1% of the keys at the time
    new: int = 0  # requests on keys inserted during the run
    inserted: int = 0  # keys inserted during the run
    counts: bytes = b""  # exact: array("q") of counts from key `base`
    other: dict[int, int] = field(default_factory=dict)  # exact: keys outside the array
    samples: list[tuple[int, bytes]] = field(default_factory=list)  # (requests, array("q") keys)


class KeyCounter:
    """One worker's count of the keys its lanes request (its lanes share it on one loop).

    `record(key, newest)` counts a request for real key number `key` (`newest`: it was among the
    `newest_n` newest keys when chosen); `forget(key, newest)` takes back one never run."""

    def __init__(self, spec: WorkloadSpec, worker: int = 0) -> None:
        self.base = spec.insertstart
        self.loaded = spec.insert_total
        self.first_new = spec.record_total
        self.newest_n = hot_count(self.loaded, NEWEST)
        self.exact = self.loaded <= EXACT_LIMIT
        self.requests = self.newest = self.new = 0
        self.counts = array("q", bytes(8 * self.loaded)) if self.exact else array("q")
        self.other: dict[int, int] = {}
        self.sample = array("q")
        seed = None if spec.seed is None else spec.seed * 7_919 + worker + 0x6B657973
        self.record = self._exact() if self.exact else self._sampled(random.Random(seed))

    def _exact(self):
        counts, other, base = self.counts, self.other, self.base
        size = len(counts)

        def record(key: int, newest: bool) -> None:
            nonlocal size
            i = key - base
            if 0 <= i < size:
                counts[i] += 1
            elif 0 <= i < ARRAY_LIMIT:  # an inserted key past the array: grow it
                counts.frombytes(bytes(8 * (min(ARRAY_LIMIT, max(i + 1, 2 * size)) - size)))
                size = len(counts)
                counts[i] += 1
            else:
                other[key] = other.get(key, 0) + 1
            if newest:
                self.newest += 1

        return record

    def _sampled(self, rng: random.Random):
        sample, first_new, limit = self.sample, self.first_new, SAMPLE
        rnd, randrange = rng.random, rng.randrange
        w = 1.0
        skip = 0

        def record(key: int, newest: bool) -> None:
            nonlocal w, skip
            self.requests += 1
            if newest:
                self.newest += 1
            if key >= first_new:
                self.new += 1
            if len(sample) < limit:
                sample.append(key)
                if len(sample) == limit:
                    w = math.exp(math.log(rnd() or 1e-300) / limit)
                    skip = _skip(rnd, w)
            elif skip:
                skip -= 1
            else:  # algorithm L: this request replaces a random one of the sample
                sample[randrange(limit)] = key
                w *= math.exp(math.log(rnd() or 1e-300) / limit)
                skip = _skip(rnd, w)

        return record

    def forget(self, key: int, newest: bool) -> None:
        if newest:
            self.newest -= 1
        if not self.exact:  # the sample keeps it: one request in a million, inside the error
            self.requests -= 1
            self.new -= key >= self.first_new
            return
        i = key - self.base
        if 0 <= i < len(self.counts):
            self.counts[i] -= 1
        elif self.other.get(key):
            self.other[key] -= 1

    def tally(self, inserted: int) -> KeyTally:
        out = KeyTally(self.loaded, self.base, self.first_new, self.exact, newest=self.newest,
                       inserted=inserted)
        if self.exact:
            out.counts, out.other = self.counts.tobytes(), dict(self.other)
        else:
            out.requests, out.new = self.requests, self.new
            out.samples = [(self.requests, self.sample.tobytes())]
        return out


def _skip(rnd, w: float) -> int:
    """Algorithm L: how many requests pass before the next one enters the sample."""
    u = rnd() or 1e-300
    return int(math.log(u) / math.log1p(-w)) if w < 1.0 else 0


def merge(tallies: list[KeyTally]) -> KeyTally | None:
    """The run's tally from its workers' (same spec, so the same mode and key space)."""
    if not tallies:
        return None
    import numpy as np  # noqa: PLC0415 - at the end of a run, in the parent only

    first = tallies[0]
    out = KeyTally(first.loaded, first.base, first.first_new, first.exact)
    for t in tallies:
        out.requests += t.requests
        out.newest += t.newest
        out.new += t.new
        out.inserted += t.inserted
        out.samples += t.samples
        for key, n in t.other.items():
            out.other[key] = out.other.get(key, 0) + n
    if first.exact:
        arrays = [np.frombuffer(t.counts, dtype=np.int64) for t in tallies]
        total = np.zeros(max((len(a) for a in arrays), default=0), dtype=np.int64)
        for a in arrays:
            total[:len(a)] += a
        out.counts = total.tobytes()
    return out


def chance_share(requests: int, keys: int, fraction: float) -> float:
    """The share of `requests` that the hottest `fraction` of `keys` keys get when every key is
    equally likely: more than `fraction`, because by luck some keys get more than their part. The
    expected sum of the largest k of `keys` binomial counts (n = requests, p = 1/keys), the counts
    taken as independent (exact to well under a tenth of a percentage point from 100 keys up)."""
    if requests <= 0 or keys <= 0:
        return 0.0
    k = hot_count(keys, fraction)
    if k >= keys:
        return 1.0
    f = k / keys
    p = 1.0 / keys
    mean = requests * p
    sd = math.sqrt(requests * p * (1 - p))
    if sd > 200:  # the normal limit: the mean of the top tail is mean + sd * pdf(z) / f
        z = NormalDist().inv_cdf(1 - f)
        return min(1.0, (f * mean + sd * math.exp(-z * z / 2) / math.sqrt(2 * math.pi)) * keys / requests)
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(requests + 1)
    tail = top = 0.0
    x = min(requests, int(mean + 40 * sd + 40))
    while x >= 0:  # from the largest count down, until the top f of the keys are accounted for
        pmf = math.exp(log_n - math.lgamma(x + 1) - math.lgamma(requests - x + 1) + x * log_p
                       + (requests - x) * log_q)
        if tail + pmf >= f:
            top += (f - tail) * x
            break
        tail += pmf
        top += pmf * x
        x -= 1
    return min(1.0, top * keys / requests)


def summarize(tally: KeyTally | None) -> dict | None:
    """The run's key figures (shares between 0 and 1), as RunResult.keys keeps them:
    counted ("exactly" or "sampled"), requests, keys (loaded), inserted, sample (requests in it),
    error (the shares' bound: 0 when exact), HOTTEST, CHANCE, touched (exact only: distinct keys
    requested over the keys there were by the end), newest_1pct, new, top ([key, count] of the
    hottest TOP keys; estimated counts when sampled)."""
    if tally is None:
        return None
    import numpy as np  # noqa: PLC0415 - at the end of a run, in the parent only

    out: dict = {"counted": "exactly" if tally.exact else "sampled", "keys": tally.loaded,
                 "inserted": tally.inserted}
    if tally.exact:
        counts = np.frombuffer(tally.counts, dtype=np.int64)
        extra = np.array(list(tally.other.values()), dtype=np.int64)
        requests = int(counts.sum() + extra.sum())
        out.update(requests=requests, sample=0, error=0.0)
        if not requests:
            return out
        everything = np.concatenate([counts, extra])
        ranked = -np.sort(-everything)
        cumulative = np.cumsum(ranked)
        for name, fraction in HOTTEST.items():
            k = min(hot_count(tally.loaded, fraction), len(ranked))
            out[name] = float(cumulative[k - 1]) / requests
        out["touched"] = int(np.count_nonzero(everything)) / max(tally.loaded + tally.inserted, 1)
        new_from = max(tally.first_new - tally.base, 0)
        new = int(counts[new_from:].sum())
        new += sum(n for key, n in tally.other.items() if key >= tally.first_new)
        out["new"] = new / requests
        order = np.argsort(-counts, kind="stable")[:TOP]
        top = [(int(i) + tally.base, int(counts[i])) for i in order if counts[i]]
        top += [(key, n) for key, n in tally.other.items() if n]
        out["top"] = [list(t) for t in sorted(top, key=lambda t: -t[1])[:TOP]]
    else:
        requests = tally.requests
        out.update(requests=requests, new=tally.new / requests if requests else 0.0)
        if not requests:
            out.update(sample=0, error=0.0)
            return out
        out.update(_sampled_shares(tally, np))
    out["newest_1pct"] = tally.newest / requests
    for name, fraction in CHANCE.items():
        out[name] = chance_share(requests, tally.loaded, fraction)
    return out


def _sampled_shares(tally: KeyTally, np) -> dict:
    """Shares of the hottest keys from the workers' samples, each entry weighted by the requests
    it stands for; see the module docstring for the bracket and its error bound."""
    keys, weights, halves = [], [], []
    for requests, data in tally.samples:
        sample = np.frombuffer(data, dtype=np.int64)
        if len(sample):
            keys.append(sample)
            weights.append(np.full(len(sample), requests / len(sample)))
            halves.append(np.arange(len(sample)) % 2)  # the sample is in random order: a random split
    keys_all, w, half = np.concatenate(keys), np.concatenate(weights), np.concatenate(halves)
    unique, index = np.unique(keys_all, return_inverse=True)
    total = w.sum()
    estimate = np.bincount(index, weights=w, minlength=len(unique))
    by_half = [np.bincount(index[half == h], weights=2 * w[half == h], minlength=len(unique)) for h in (0, 1)]
    out: dict = {"sample": int(len(keys_all))}
    sigma = 0.5 / math.sqrt(max(len(keys_all) / 2, 1))
    error = 0.0
    ranked = -np.sort(-estimate)
    for name, fraction in HOTTEST.items():
        k = min(hot_count(tally.loaded, fraction), len(unique))
        upper = float(ranked[:k].sum()) / total
        lower = 0.0
        for a, b in ((0, 1), (1, 0)):  # the hottest of one half, measured on the other
            chosen = np.argsort(-by_half[a], kind="stable")[:k]
            lower += float(by_half[b][chosen].sum()) / total / 2
        lower = min(lower, upper)
        out[name] = (upper + lower) / 2
        error = max(error, (upper - lower) / 2 + 3 * sigma)
    out["error"] = error
    order = np.argsort(-estimate, kind="stable")[:TOP]
    out["top"] = [[int(unique[i]), round(float(estimate[i]))] for i in order]
    return out
