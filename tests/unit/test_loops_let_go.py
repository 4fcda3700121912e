"""loops.run ends once main has, even when a task main left ignores every cancellation (pymongo's
async client once did in close(), and a finished run's process stayed alive for good)."""

from __future__ import annotations

import asyncio
import threading
import time

from workbench.core import loops


def _run_on_a_thread(main, seconds: float):
    ended = []
    thread = threading.Thread(target=lambda: ended.append(loops.run(main(), "asyncio")), daemon=True)
    thread.start()
    thread.join(timeout=seconds)
    return ended


def test_a_task_that_ignores_its_cancellation_is_let_go(monkeypatch):
    monkeypatch.setattr(loops, "LEFT_TASKS_S", 0.3)
    cancels = []

    async def stubborn():
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancels.append(time.monotonic())

    async def main():
        asyncio.get_running_loop().create_task(stubborn())
        await asyncio.sleep(0.05)
        return "done"

    t0 = time.monotonic()
    assert _run_on_a_thread(main, 30) == ["done"], "loops.run waited for the stubborn task"
    assert time.monotonic() - t0 < 10
    assert len(cancels) == 1  # cancelled once, waited for, let go: not cancelled again and again


def test_tasks_that_end_when_cancelled_still_run_their_cleanup():
    cleaned = []

    async def polite():
        try:
            await asyncio.sleep(3600)
        finally:
            cleaned.append(True)

    async def main():
        asyncio.get_running_loop().create_task(polite())
        await asyncio.sleep(0.05)
        return 1

    assert _run_on_a_thread(main, 30) == [1] and cleaned == [True]
