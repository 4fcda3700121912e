"""YCSB's CoreWorkload operations for one lane: choose keys, fields and values; call the binding;
record latencies.

Key numbers live in a per-worker *virtual* key space so that worker processes never collide:
numbers below recordcount are the loaded keys; a worker's n-th insert of the run phase gets
virtual number recordcount + n, which maps to the real key number recordcount + n*K + w for
worker w of K. With one worker the mapping is the identity, exactly YCSB's key sequence.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from functools import partial
from time import perf_counter_ns

from workbench import speedups
from workbench.bindings.base import READ, UPDATE, Binding, Status
from workbench.config.keys import key_builder
from workbench.config.spec import DISTRIBUTIONS, WorkloadSpec
from workbench.core.generators.counter import AcknowledgedCounter
from workbench.core.generators.discrete import Discrete
from workbench.core.generators.latest import SkewedLatest
from workbench.core.generators.lengths import field_length_generator
from workbench.core.generators.scrambled import ScrambledZipfian
from workbench.core.generators.simple import Exponential, Hotspot, Sequential, Uniform
from workbench.core.generators.zipfian import Zipfian
from workbench.core.values import ValueMaker, verify_row
from workbench.metrics.recorder import Recorder

_OK = Status.OK
# Key names a worker remembers (about 100 bytes each) on the Python path: every hot key of a
# skewed distribution is named once, not on every request (the compiled namer, workbench/speedups.py,
# builds a name for less than the lookup costs). Python work per operation costs client CPU.
KEY_NAME_CACHE = 100_000
CHOOSE_AHEAD = 64  # transactions a lane chooses in one go when choices cannot depend on time
CHOOSE_AHEAD_BYTES = 256 * 1024  # ... but no more values than this per lane (large fields)


class WorkerKeys:
    """Key state shared by the lanes of one worker (one event loop, so no locks)."""

    def __init__(self, spec: WorkloadSpec, worker: int = 0, workers: int = 1) -> None:
        self.spec = spec
        self.names: dict[int, str] = {}  # key number -> key name, bounded by KEY_NAME_CACHE
        self.worker = worker
        self.workers = workers
        self.counter = None  # a KeyCounter while the run counts its keys (measurement.keys)
        self.record_total = spec.record_total
        # YCSB: transactioninsertkeysequence = AcknowledgedCounterGenerator(recordcount)
        self.inserts = AcknowledgedCounter(self.record_total)
        lo = spec.insertstart
        hi = spec.insertstart + spec.insert_total - 1
        # Sequential is shared by all lanes of the worker; workers start at different offsets.
        span = max(hi - lo + 1, 1)
        self.sequential = Sequential(lo, hi, offset=(span * worker) // workers)

    def to_real(self, virtual: int) -> int:
        if virtual < self.record_total or self.workers == 1:
            return virtual
        return self.record_total + (virtual - self.record_total) * self.workers + self.worker


def key_chooser(spec: WorkloadSpec, rng: random.Random, keys: WorkerKeys):
    """The request distribution over virtual key numbers, as CoreWorkload.init builds it."""
    lo = spec.insertstart
    hi = spec.insertstart + spec.insert_total - 1
    dist = spec.requestdistribution
    if dist == "uniform":
        return Uniform(rng, lo, hi)
    if dist == "zipfian":
        # YCSB sizes the zipfian key space for the inserts the run may add (2 is its fudge).
        expected_new = int(spec.operationcount * spec.insertproportion * 2.0)
        return ScrambledZipfian(rng, lo, hi + 1 + expected_new, spec.zipfian_constant)
    if dist == "latest":
        return SkewedLatest(rng, keys.inserts, spec.zipfian_constant)
    if dist == "hotspot":
        return Hotspot(rng, lo, hi, spec.hotspotdatafraction, spec.hotspotopnfraction)
    if dist == "sequential":
        return keys.sequential
    if dist == "exponential":
        return Exponential(rng, spec.exponential_percentile, spec.record_total * spec.exponential_frac)
    raise ValueError(f"requestdistribution={dist!r} is not one of {', '.join(DISTRIBUTIONS)}")


class LaneWorkload:
    """The operations of one lane. Every method records its own latency."""

    def __init__(
        self,
        spec: WorkloadSpec,
        db: Binding,
        recorder: Recorder,
        keys: WorkerKeys,
        rng: random.Random,
    ) -> None:
        self.spec = spec
        self.db = db
        self.table = spec.table
        self.keys = keys
        self.rng = rng
        self.key_name = key_builder(spec.zeropadding, spec.insertorder == "ordered",
                                    keys.names, KEY_NAME_CACHE)
        self.fields = spec.field_names
        self.values = ValueMaker(rng, spec, field_length_generator(rng, spec))
        self.chooser = key_chooser(spec, rng, keys)
        self.exponential = isinstance(self.chooser, Exponential)
        self.field_index = Uniform(rng, 0, spec.fieldcount - 1)
        if spec.scanlengthdistribution == "uniform":
            self.scan_length = Uniform(rng, spec.minscanlength, spec.maxscanlength)
        else:
            self.scan_length = Zipfian(rng, spec.minscanlength, spec.maxscanlength)
        weights = spec.operation_weights()
        self.ops = Discrete(rng, weights) if weights else None  # by name (for tools)
        self.integrity = spec.dataintegrity
        self.all_names = list(self.fields) if (spec.dataintegrity or spec.readallfieldsbyname) else None
        self.m_read = recorder.meter("READ")
        self.m_update = recorder.meter("UPDATE")
        self.m_insert = recorder.meter("INSERT")
        self.m_scan = recorder.meter("SCAN")
        self.m_delete = recorder.meter("DELETE")
        self.m_rmw = recorder.meter("READ-MODIFY-WRITE")
        self.m_verify = recorder.meter("VERIFY")
        self.m_per_record = recorder.meter("SCAN-LATENCY-PER-RECORD")
        # Fixed per run: bound here so that an operation does no lookups it need not do.
        self._read_all = None if self.all_names is None else tuple(self.all_names)
        self._db_read = db.read if db is not None else None
        self._db_update = db.update if db is not None else None
        self._db_sequence = db.sequence if db is not None else None
        # run_sequence's recording where no read is verified, compiled (the same tallies)
        self._record = speedups.C.record if speedups.C is not None and not self.integrity else None
        self.drawn: deque | None = None  # counting keys: (key, newest) of the newest choices
        self.next_key = self._key_source() if keys.counter is None else self._counted_key_source()
        # The next transaction as (execute, choose): the same draws as `ops`.
        choosers = self._choosers()
        self._discrete = discrete = (Discrete(rng, {choosers[op]: w for op, w in weights.items()})
                                     if weights else None)
        self._pick = discrete.next if discrete else None
        self._choose = self._compiled_choose(discrete) if discrete and speedups.C is not None else None
        # How many transactions a lane may choose ahead (1: choose each when it runs).
        self.batch = 1
        if not spec.insertproportion and self.chooser is not keys.sequential:
            longest = max(spec.fieldlength, self.values.longest)
            value_bytes = longest * (spec.fieldcount if spec.writeallfields else 1)
            self.batch = max(1, min(CHOOSE_AHEAD, CHOOSE_AHEAD_BYTES // max(value_bytes, 1)))

    # -- choices -----------------------------------------------------------------------------

    def next_keynum(self) -> int:
        last = self.keys.inserts.limit
        chooser = self.chooser
        if self.exponential:
            while True:
                k = last - chooser.next()
                if k >= 0:
                    return self.keys.to_real(k)
        while True:
            k = chooser.next()
            if k <= last:
                return self.keys.to_real(k)

    def _key_source(self):
        """A no-argument function: the name of the next key to operate on.

        The same draws as key_name(next_keynum()). For the default scrambled zipfian it is one
        closure over locals, with ZipfianGenerator.nextLong inlined: every call and attribute
        lookup on this path costs CPU that a client sharing cores with the server takes from
        the server (test_hot_path_caches checks that both paths give the same keys). With
        workbench._speedups built, that closure is compiled (speedups.C.ZipfianKeys)."""
        key_name = self.key_name
        chooser = self.chooser
        if not isinstance(chooser, ScrambledZipfian):
            next_keynum = self.next_keynum
            return lambda: key_name(next_keynum())
        zipf = chooser._gen  # fixed item count (10^10) and zeta: nothing to extend
        random_, zetan, half_pow = zipf._random, zipf.zetan, zipf._half_pow
        eta, alpha, items = zipf.eta, zipf.alpha, zipf.items
        seen_get, position = chooser._seen.get, chooser.position
        inserts = self.keys.inserts
        keys = self.keys
        record_total = keys.record_total
        to_real = keys.to_real if keys.workers > 1 else None
        if speedups.C is not None:  # the same closure, compiled (csrc/keys.c)
            return speedups.C.ZipfianKeys(random_, zetan, half_pow, eta, alpha, items, chooser.lo,
                                          chooser.itemcount, inserts, record_total, to_real, key_name)

        def next_key() -> str:
            while True:
                u = random_()
                uz = u * zetan
                if uz < 1.0:
                    raw = 0
                elif uz < half_pow:
                    raw = 1
                else:
                    raw = int(items * (eta * u - eta + 1) ** alpha)
                k = seen_get(raw)
                if k is None:
                    k = position(raw)
                if k <= inserts.limit:
                    break
            if to_real is not None and k >= record_total:
                k = to_real(k)
            return key_name(k)

        return next_key

    def _counted_key_source(self):
        """key_name(next_keynum()), each key counted in the worker's KeyCounter: the same draws,
        in Python even where the compiled ZipfianKeys exists (it gives names, not numbers; the
        compiled `choose` still calls this). A key among the counter's newest_n newest when
        chosen counts as newest. The newest CHOOSE_AHEAD choices are kept for `uncount`."""
        counter, key_name, chooser, keys = self.keys.counter, self.key_name, self.chooser, self.keys
        record, newest_n, inserts, to_real = counter.record, counter.newest_n, keys.inserts, keys.to_real
        exponential = self.exponential
        self.drawn = drawn = deque(maxlen=CHOOSE_AHEAD)
        append = drawn.append

        def next_key() -> str:
            last = inserts.limit
            while True:
                k = last - chooser.next() if exponential else chooser.next()
                if (k >= 0) if exponential else (k <= last):
                    break
            real = to_real(k)
            newest = last - k < newest_n
            record(real, newest)
            append((real, newest))
            return key_name(real)

        return next_key

    def uncount(self, unrun: list[tuple]) -> None:
        """Take back the counted keys of transactions chosen but never run (a lane that ended
        with some left): the newest choices, one per transaction that chose a key."""
        forget = self.keys.counter.forget
        keyed = sum(1 for execute, _ in unrun
                    if getattr(execute, "__func__", None) is not LaneWorkload.insert_transaction)
        for _ in range(min(keyed, len(self.drawn))):
            forget(*self.drawn.pop())

    def _write_values(self, key: str) -> dict[str, str]:
        if self.spec.writeallfields:
            return self.values.all_fields(key)
        return self.values.one_field(key, self.fields[self.field_index.next()])

    def _verify(self, key: str, row) -> None:
        t0 = perf_counter_ns()
        ok = verify_row(key, row, self.spec.fieldlength)
        self.m_verify.record(_OK if ok else Status.UNEXPECTED_STATE, t0, perf_counter_ns(), 0)

    # -- operations --------------------------------------------------------------------------
    #
    # A transaction is chosen (operation, key, fields, values) and then executed. Lanes choose
    # `batch` operations at a time when the choices cannot depend on time: no inserts in the
    # mix, so the key range is fixed, and no shared sequential counter; large values lower the
    # batch so that a lane never holds more than CHOOSE_AHEAD_BYTES of them. The random draws are
    # the same, in the same order, as choosing one at a time; only when they are made changes.
    # Choosing in a tight loop keeps that code and its data hot in the CPU cache: measured
    # against a real server sharing the 2 cores, the same choices cost half the CPU per
    # operation in batches of 64 as one at a time (BENCHMARKS.md, "Cassandra binding").

    def _choosers(self):
        """(execute, choose) per operation name; choose() returns execute's argument."""
        fields, field_index, readall = self.fields, self.field_index.next, self.spec.readallfields
        read_all, next_key, write_values = self._read_all, self.next_key, self._write_values
        scan_length = self.scan_length.next
        if not self.spec.writeallfields:
            one_field = self.values.one_field

            def write_values(key: str) -> dict[str, str]:
                return one_field(key, fields[field_index()])
        self._write_values_of_update = write_values

        def read_args():
            key = next_key()
            return READ, key, (read_all if readall else [fields[field_index()]])

        def update_args():
            key = next_key()
            return UPDATE, key, write_values(key)

        def scan_args():
            key = next_key()
            return key, scan_length(), (None if readall else [fields[field_index()]])

        def rmw_args():
            key = next_key()
            chosen = None if readall else [fields[field_index()]]
            return key, chosen, write_values(key)

        # The two operations a sequence carries, as the very objects `choose` hands out.
        self._sequenced = read, update = self.read, self.update
        return {
            "READ": (read, read_args),
            "UPDATE": (update, update_args),
            "INSERT": (self.insert_transaction, lambda: None),  # its key is drawn when it runs
            "SCAN": (self.scan, scan_args),
            "READ-MODIFY-WRITE": (self.read_modify_write, rmw_args),
            "DELETE": (self.delete, next_key),
        }

    def _compiled_choose(self, discrete: Discrete):
        """`choose`, compiled (speedups.C.choose): the same draws in the same order. A READ or an
        UPDATE is made in C, with its one value where the field length is constant and values
        are random; anything else by its Python chooser."""
        if self.field_index.lo != 0 or self.field_index.n != len(self.fields):
            return None
        read, update = self._sequenced
        kinds = {read: 0, update: 1}
        entries = tuple((execute, kinds.get(execute, 2), args) for execute, args in discrete.values)
        spec = self.spec
        random_length = None if spec.writeallfields else self.values.random_length
        length = -1 if random_length is None else random_length
        ctx = (self.rng.random, tuple(discrete.cumulative), discrete.total, entries, self.next_key,
               tuple(self.fields), spec.readallfields, self._read_all, length, self.rng.getrandbits,
               8 * max(length, 0), self._write_values_of_update, READ, UPDATE)
        return partial(speedups.C.choose, ctx)

    def choose(self, n: int) -> list[tuple]:
        """The next n transactions as (execute, argument), in the order they are to run.

        A READ's argument is (READ, key, fields) and an UPDATE's (UPDATE, key, values): the
        Steps that `run_sequence` hands to the binding as they are."""
        if self._choose is not None:
            return self._choose(n)
        pick = self._pick
        out = []
        append = out.append
        for _ in range(n):
            execute, args = pick()
            append((execute, args()))
        return out

    def sequence_length(self, chosen: list[tuple], start: int) -> int:
        """How many transactions from chosen[start] on are reads and updates (a sequence)."""
        read, update = self._sequenced
        end, n = start, len(chosen)
        while end < n and (chosen[end][0] is read or chosen[end][0] is update):
            end += 1
        return end - start

    async def run_sequence(self, steps: list, more) -> int:
        """Run chosen READ/UPDATE Steps as one binding sequence and record each; how many ran."""
        outcomes = await self._db_sequence(self.table, steps, more)
        if self._record is not None:
            return self._record(steps, outcomes, self.m_read, self.m_update, READ, _OK)
        m_read, m_update, integrity = self.m_read, self.m_update, self.integrity
        for (op, key, _), (status, t0, t1, row) in zip(steps, outcomes, strict=False):  # outcomes: a prefix
            if op == READ:
                m_read.record(status, t0, t1, 0)
                if integrity:
                    self._verify(key, row)
            else:
                m_update.record(status, t0, t1, 0)
        return len(outcomes)

    async def insert_load(self, keynum: int, intended: int) -> Status:
        """One insert of the load phase, with YCSB's insertion retries."""
        key = self.key_name(keynum)
        values = self.values.all_fields(key)
        attempts = 0
        while True:
            t0 = perf_counter_ns()
            status = await self.db.insert(self.table, key, values)
            self.m_insert.record(status, t0, perf_counter_ns(), intended)
            if status.is_ok or attempts >= self.spec.insertion_retry_limit:
                return status
            attempts += 1
            delay = self.spec.insertion_retry_interval * (0.8 + 0.4 * self.rng.random())
            await asyncio.sleep(delay)
            intended = 0

    async def read(self, intended: int, args) -> None:
        _, key, fields = args
        t0 = perf_counter_ns()
        status, row = await self._db_read(self.table, key, fields)
        self.m_read.record(status, t0, perf_counter_ns(), intended)
        if self.integrity:
            self._verify(key, row)

    async def update(self, intended: int, args) -> None:
        _, key, values = args
        t0 = perf_counter_ns()
        status = await self._db_update(self.table, key, values)
        self.m_update.record(status, t0, perf_counter_ns(), intended)

    async def insert_transaction(self, intended: int, _args=None) -> None:
        inserts = self.keys.inserts
        virtual = inserts.next()
        try:
            key = self.key_name(self.keys.to_real(virtual))
            values = self.values.all_fields(key)
            t0 = perf_counter_ns()
            status = await self.db.insert(self.table, key, values)
            self.m_insert.record(status, t0, perf_counter_ns(), intended)
        finally:
            inserts.acknowledge(virtual)

    async def scan(self, intended: int, args) -> None:
        key, length, fields = args
        t0 = perf_counter_ns()
        status, rows = await self.db.scan(self.table, key, length, fields)
        t1 = perf_counter_ns()
        self.m_scan.record(status, t0, t1, intended)
        if rows:
            self.m_per_record.record_value((t1 - t0) // 1000 // len(rows))

    async def delete(self, intended: int, key: str) -> None:
        t0 = perf_counter_ns()
        status = await self.db.delete(self.table, key)
        self.m_delete.record(status, t0, perf_counter_ns(), intended)

    async def read_modify_write(self, intended: int, args) -> None:
        key, fields, values = args
        t0 = perf_counter_ns()
        status, row = await self.db.read(self.table, key, fields)
        t1 = perf_counter_ns()
        self.m_read.record(status, t0, t1, intended)
        ustatus = await self.db.update(self.table, key, values)
        t2 = perf_counter_ns()
        self.m_update.record(ustatus, t1, t2, intended)
        if self.integrity:
            self._verify(key, row)
        # As in YCSB, READ-MODIFY-WRITE has a latency but no status of its own.
        self.m_rmw.time(t0, t2, intended)
