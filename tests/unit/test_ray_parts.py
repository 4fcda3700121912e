"""The parts of `--ray` that need no Ray cluster: its properties, the refusal without the extra,
and the operation numbers a Ray worker takes from a far-away counter (tests/integration/test_ray.py
runs real Ray clusters)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from workbench.config.spec import WORKERS_PER_CORE, ray_resources, spec_from_args
from workbench.core.ray_workers import Counter, RemoteBudget
from workbench.core.runner import WorkerEngine
from workbench.core.workers import binding_factory
from workbench.databases.memory.binding import drop_store, get_store
from workbench.errors import ConfigError


def spec_of(**props: str):
    return spec_from_args([], [f"{key.replace('_', '.')}={value}" for key, value in props.items()], "run")[0]


def test_ray_properties_are_parsed_and_checked():
    spec = spec_of(ray_address="127.0.0.1:6379", ray_cpus="0.5", ray_resources="loadgen:1, big:2.5",
                   ray_strategy="pack", ray_onlost="stop")
    assert (spec.ray_address, spec.ray_cpus, spec.ray_strategy, spec.ray_onlost) == (
        "127.0.0.1:6379", 0.5, "pack", "stop")
    assert ray_resources(spec.ray_resources) == {"loadgen": 1.0, "big": 2.5}
    for key, value, words in (("ray_resources", "loadgen", "NAME:AMOUNT"),
                              ("ray_resources", "loadgen:0", "NAME:AMOUNT"),
                              ("ray_cpus", "-1", "must not be negative"),
                              ("ray_strategy", "random", "spread"),
                              ("ray_onlost", "retry", "continue")):
        with pytest.raises(ConfigError) as caught:
            spec_of(ray_address="auto", **{key: value})
        assert words in str(caught.value) + caught.value.hint


def test_workers_on_a_ray_cluster_are_not_bounded_by_this_machines_cores():
    many = str(WORKERS_PER_CORE * (os.cpu_count() or 1) + 1)
    with pytest.raises(ConfigError, match="cores"):
        spec_of(workers=many, threadcount=many)
    assert spec_of(workers=many, threadcount=many, ray_address="auto").workers == int(many)


def test_ray_without_the_extra_is_one_line_naming_it(tmp_path):
    code = ("import sys; sys.modules['ray'] = None\n"
            "from workbench.cli import main\n"
            "sys.exit(main(['run', '-p', 'recordcount=10', '-p', 'operationcount=10', '--ray', 'auto',"
            " '--no-store']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "pip install 'ycsb-workbench[ray]'" in errors[0], done.stderr
    assert "Traceback" not in done.stderr


class FarCounter:
    """Counter's answers arrive a few loop turns later, like an actor's on another machine."""

    def __init__(self, total: int, delay_turns: int = 3) -> None:
        self.counter = Counter(total)
        self.calls = 0
        self.delay_turns = delay_turns
        outer = self

        class Method:
            def remote(self, n: int):
                outer.calls += 1
                return outer._answer(n)

        self.claim = Method()

    async def _answer(self, n: int) -> tuple[int, int]:
        for _ in range(self.delay_turns):
            await asyncio.sleep(0)
        return self.counter.claim(n)


def test_lanes_take_every_number_once_from_a_far_counter_chunk_by_chunk():
    async def main() -> list[int]:
        budget = RemoteBudget(FarCounter(2500), chunk=100)
        got: list[int] = []

        async def lane() -> None:
            while True:
                n = budget.claim()
                if n is None:
                    if await budget.refill():
                        continue
                    return
                got.append(n)
                if n % 7 == 0:
                    await asyncio.sleep(0)

        await asyncio.gather(*(lane() for _ in range(5)))
        assert budget.exhausted()
        assert budget.claim() is None and not await budget.refill()
        return got

    got = asyncio.run(main())
    assert sorted(got) == list(range(2500))


def test_a_load_on_a_remote_budget_inserts_each_key_once():
    spec = spec_of(recordcount="3000", threadcount="4", memory_store="ray-unit")

    async def main() -> int:
        far = FarCounter(3000, delay_turns=5)
        engine = WorkerEngine(spec, "load", binding_factory(spec), RemoteBudget(far, chunk=128), 4, 0.0)
        await engine.run()
        assert engine.failure is None
        return engine.drain().returns["INSERT"]["OK"], far.calls

    try:
        inserted, calls = asyncio.run(main())
        assert inserted == 3000
        assert len(get_store("ray-unit").rows) == 3000
    finally:
        drop_store("ray-unit")
    assert calls <= 3000 // 128 + 3  # one claim per chunk, plus the ones that found it empty
