"""Helpers for engine tests: build a spec from -p style overrides and run one phase."""

from __future__ import annotations

import asyncio
import itertools

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.databases.memory.binding import drop_store

_stores = itertools.count()


def make_spec(*overrides: str, phase: str = "run", store: str | None = None):
    """A spec on a fresh memory store (unless one is named) with the given -p overrides."""
    name = store or f"test-{next(_stores)}"
    spec, props = spec_from_args([], [f"memory.store={name}", *overrides], phase)
    return spec, props


def run_phase(spec, phase: str = "run", setup=None):
    controller = Controller(spec, phase)
    snapshots = []
    controller.subscribe(snapshots.append)

    async def go():
        task = asyncio.ensure_future(controller.run())
        if setup is not None:
            await setup(controller)
        return await task

    outcome = asyncio.run(go())
    return outcome, snapshots


def cleanup_store(spec):
    drop_store(spec.binding_properties.get("memory.store", "default"))


class StallBinding:
    """A memory binding whose 100th read stalls for `stall.ms` (default 300 ms), once per process;
    with `stall.block=true` it holds the event loop meanwhile (a synchronous call), as a binding
    that blocks does."""

    def __new__(cls, spec, properties, context):
        import asyncio as _asyncio
        import time as _time

        from workbench.databases.memory.binding import MemoryBinding

        block = properties.get("stall.block", "false") == "true"

        class _Stall(MemoryBinding):
            reads = 0

            async def read(self, table, key, fields):
                _Stall.reads += 1
                if _Stall.reads == 100:
                    stall = int(properties.get("stall.ms", "300")) / 1000
                    if block:
                        _time.sleep(stall)
                    else:
                        await _asyncio.sleep(stall)
                return await super().read(table, key, fields)

        return _Stall(spec, properties, context)


def _register(name: str, cls_name: str) -> None:
    """Register one of this module's test bindings (worker processes import it by name)."""
    from workbench.config.bindings import BindingInfo, register

    register(BindingInfo(name=name, target=f"engine_helpers:{cls_name}", prefix=f"{name}."))


def register_stall_binding():
    _register("stall", "StallBinding")


class FlakyBinding:
    """A memory binding where every 10th update fails with a made-up driver error kind, and
    whose 'client' counts each update as sent to one of three made-up nodes by its key (the
    engine's per-node figures: Binding.node_counts), and to one of two made-up regions by its
    key's last digit (Binding.region_counts), and says it looked something up after each failure
    (Binding.client_counts)."""

    def __new__(cls, spec, properties, context):
        from workbench.bindings.base import Status
        from workbench.databases.memory.binding import MemoryBinding

        vanish = int(properties.get("flaky.vanish", "0"))

        class _Flaky(MemoryBinding):
            def __init__(self, *a):
                super().__init__(*a)
                self.updates = 0
                self.kinds: dict[str, int] = {}
                self.nodes: dict[str, list[int]] = {}
                self.regions: dict[str, list[int]] = {}

            async def update(self, table, key, values):
                self.updates += 1
                node = sum(key.encode()) % 3
                if vanish and self.updates > vanish and node == 2:
                    node = 0
                counts = self.nodes.setdefault(f"node{node}:9042", [0, 0])
                counts[0] += 1
                self.regions.setdefault(f"t,{'low' if key[-1] < '5' else 'high'},1.", [0, 0])[0] += 1
                if self.updates % 10 == 0:
                    self.kinds["FakeTimeout"] = self.kinds.get("FakeTimeout", 0) + 1
                    counts[1] += 1
                    return Status.ERROR
                return await super().update(table, key, values)

            def error_kinds(self):
                return self.kinds

            def node_counts(self):
                return {node: tuple(c) for node, c in self.nodes.items()}

            def region_counts(self):
                return {region: tuple(c) for region, c in self.regions.items()}

            def down_nodes(self):
                return frozenset({"node2:9042"}) if vanish and self.updates > vanish else frozenset()

            def client_counts(self):  # what a client did on its own (a lookup after each failure)
                return {"lookups after a failure": self.kinds.get("FakeTimeout", 0)} if self.kinds else {}

            def notes(self):
                return ["every 10th update fails on purpose"]

        return _Flaky(spec, properties, context)


def register_flaky_binding():
    _register("flaky", "FlakyBinding")


class FailingCleanupBinding:
    """A memory binding whose cleanup raises, as a client-side write buffer that cannot flush."""

    def __new__(cls, spec, properties, context):
        from workbench.databases.memory.binding import MemoryBinding

        class _BadCleanup(MemoryBinding):
            async def cleanup(self):
                if self.context.get("worker", 0) >= 0:
                    raise OSError("buffer flush failed")

        return _BadCleanup(spec, properties, context)


def register_failing_cleanup_binding():
    _register("badcleanup", "FailingCleanupBinding")


class SequenceLog:
    """What the `seq` binding's sequences were asked to do and did (this process only)."""

    asked: list[int] = []
    ran: list[int] = []


class SequenceBinding:
    """A memory binding that logs its sequences; each step sleeps `seq.step_ms` (default 0)."""

    def __new__(cls, spec, properties, context):
        import asyncio as _asyncio

        from workbench.databases.memory.binding import MemoryBinding

        step_s = float(properties.get("seq.step_ms", "0")) / 1000

        class _Logged(MemoryBinding):
            async def read(self, table, key, fields):
                if step_s:
                    await _asyncio.sleep(step_s)
                return await super().read(table, key, fields)

            async def update(self, table, key, values):
                if step_s:
                    await _asyncio.sleep(step_s)
                return await super().update(table, key, values)

            async def sequence(self, table, steps, more):
                out = await super().sequence(table, steps, more)
                SequenceLog.asked.append(len(steps))
                SequenceLog.ran.append(len(out))
                return out

        return _Logged(spec, properties, context)


def register_sequence_binding():
    SequenceLog.asked.clear()
    SequenceLog.ran.clear()
    _register("seq", "SequenceBinding")


class RegionsBinding:
    """A memory binding whose 'client' counts each insert against the region of a table
    pre-split as hbase.presplit would split it (`regions.count` regions: databases/hbase/schema.py
    split_points), as HBase's native client counts its requests per region."""

    def __new__(cls, spec, properties, context):
        import bisect

        from workbench.databases.hbase.schema import split_points
        from workbench.databases.memory.binding import MemoryBinding

        points = split_points(spec, int(properties.get("regions.count", "4")))

        class _Regions(MemoryBinding):
            def __init__(self, *a):
                super().__init__(*a)
                self.counts: dict[str, list[int]] = {}

            async def insert(self, table, key, values):
                region = f"{table},region{bisect.bisect_right(points, key)},1."
                self.counts.setdefault(region, [0, 0])[0] += 1
                return await super().insert(table, key, values)

            def region_counts(self):
                return {region: tuple(c) for region, c in self.counts.items()}

        return _Regions(spec, properties, context)


def register_regions_binding():
    _register("regions", "RegionsBinding")


class HangBinding:
    """A memory binding that hangs the end of a phase, as a client call that never returns and
    swallows a cancellation would: with `hang.at=read` a worker's 50th read, with `hang.at=cleanup`
    its cleanup (worker processes too; not the controller's own binding). Each shrugs off the
    first cancellation and gives in to the second, so that the test's loop can still close.
    `hang.at=read-raise`: the 50th read waits until cancelled and then raises RuntimeError, as
    pymongo 4.20's lock did in a lane cancelled after its server was killed and restarted
    (rehearsal 70: `_asyncio_lock.py` release)."""

    def __new__(cls, spec, properties, context):
        import asyncio as _asyncio

        from workbench.databases.memory.binding import MemoryBinding

        at = properties.get("hang.at", "cleanup")

        async def stuck():
            for attempt in range(2):
                try:
                    await _asyncio.Event().wait()
                except _asyncio.CancelledError:
                    if attempt:
                        raise

        async def raises():
            try:
                await _asyncio.Event().wait()
            except _asyncio.CancelledError:
                raise RuntimeError("Lock is not acquired.") from None

        class _Hang(MemoryBinding):
            reads = 0

            async def read(self, table, key, fields):
                _Hang.reads += 1
                if at == "read" and _Hang.reads == 50:
                    await stuck()
                if at == "read-raise" and _Hang.reads == 50:
                    await raises()
                return await super().read(table, key, fields)

            async def cleanup(self):
                if at == "cleanup" and self.context.get("worker", 0) >= 0:
                    await stuck()
                await super().cleanup()

        return _Hang(spec, properties, context)


def register_hang_binding():
    _register("hang", "HangBinding")
