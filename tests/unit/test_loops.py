"""The lanes' event loop: uvloop where installed (the default), asyncio's own as the fallback or
when asked; every run records which one it ran on."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.config.spec import spec_from_args
from workbench.core import loops
from workbench.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
uvloop = pytest.importorskip("uvloop", reason="the suite installs uvloop (a dependency)")


async def _kind() -> str:
    return loops.describe(asyncio.get_running_loop())


def test_auto_takes_uvloop_and_asyncio_is_kept_when_asked():
    assert loops.resolve("auto") == loops.resolve("uvloop") == "uvloop"
    assert loops.resolve("asyncio") == "asyncio"
    assert loops.run(_kind()) == f"uvloop {uvloop.__version__}"
    assert loops.run(_kind(), "asyncio") == "asyncio"
    with pytest.raises(ConfigError, match="eventloop='fast' is not one of auto, uvloop, asyncio"):
        loops.run(_kind(), "fast")
    with pytest.raises(ConfigError, match="unknown eventloop 'fast'"):
        spec_from_args([], ["eventloop=fast"], "run")


def _workbench(*args: str, hide_uvloop: bool) -> subprocess.CompletedProcess:
    """`workbench ARGS` in a new interpreter, where uvloop cannot be imported if asked."""
    hide = "sys.modules['uvloop'] = None; " if hide_uvloop else ""
    code = f"import sys; {hide}from workbench.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


@pytest.mark.parametrize("hide_uvloop", [False, True], ids=["installed", "missing"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_records_its_loop_and_falls_back_to_asyncio_without_uvloop(tmp_path, hide_uvloop, workers):
    out = tmp_path / "run.json"
    done = _workbench("run", "-db", "memory", "-P", "workloada", "-p", "recordcount=200",
                      "-p", "operationcount=3000", "-threads", "4", "--workers", str(workers),
                      "--no-store", "-q", "--export", f"json={out}", hide_uvloop=hide_uvloop)
    assert done.returncode == 0, done.stderr
    run = json.loads(out.read_text())["run"]
    assert run["operations"] == 3000
    assert {m["name"] for m in run["measurements"]} >= {"READ", "UPDATE"}
    expected = "asyncio" if hide_uvloop else f"uvloop {uvloop.__version__}"
    assert run["environment"]["event_loop"] == expected


def test_asking_for_uvloop_without_it_is_one_clear_line():
    done = _workbench("run", "-db", "memory", "-P", "workloada", "-p", "eventloop=uvloop", "--no-store",
                      hide_uvloop=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "workbench: error: -p: eventloop=uvloop but uvloop is not installed (pip install uvloop, or "
        "-p eventloop=auto (or asyncio) to use asyncio's loop)"]


@pytest.mark.parametrize("choice", ["uvloop", "asyncio"])
def test_a_paced_slot_never_starts_before_its_intended_time(choice):
    """uvloop's timers wake up to about a millisecond early; the pacer waits the rest out."""
    from time import perf_counter_ns

    from workbench.core.pacing import Pacer

    async def slots() -> list[int]:
        pacer = Pacer(1500.0)  # slots 0.67 ms apart: most sleeps are shorter than uvloop's ms
        early = []
        for _ in range(300):
            intended = await pacer.next_slot()
            early.append(intended - perf_counter_ns())
        return early

    early = loops.run(slots(), choice)
    assert max(early) <= 0, f"{sum(e > 0 for e in early)} of 300 slots started early"
