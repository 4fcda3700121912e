"""The event loop lanes run on: uvloop where it is installed, asyncio's own otherwise.

uvloop is asyncio's loop written in C over libuv: scheduling a callback, resolving a future
and waking up on a socket cost less per operation (BENCHMARKS.md, "Client CPU per operation").
`-p eventloop=auto` (the default) takes it when it can be imported; `eventloop=uvloop` insists
on it (one clear error without it); `eventloop=asyncio` keeps Python's own loop. Every place
that runs lanes (the headless run, the terminal app's controller thread, worker processes)
starts its loop through `run()`, and the run records which loop it was (`environment.event_loop`).

Ray actors run on the loop Ray gives them (asyncio's); their run says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from workbench.config.spec import EVENT_LOOPS as CHOICES
from workbench.errors import ConfigError

T = TypeVar("T")


def _uvloop() -> Any | None:
    try:
        import uvloop  # noqa: PLC0415 - optional: the fallback is asyncio's loop
    except ImportError:
        return None
    return uvloop


def resolve(choice: str) -> str:
    """The loop a choice gives on this installation: "uvloop" or "asyncio"."""
    if choice not in CHOICES:
        raise ConfigError(f"eventloop={choice!r} is not one of {', '.join(CHOICES)}",
                          "write auto, uvloop or asyncio")
    if choice == "asyncio":
        return "asyncio"
    if _uvloop() is not None:
        return "uvloop"
    if choice == "uvloop":
        raise ConfigError("eventloop=uvloop but uvloop is not installed",
                          "pip install uvloop, or -p eventloop=asyncio (or auto) to use asyncio's loop")
    return "asyncio"


def factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """A new-loop function for asyncio.Runner (None: asyncio's default)."""
    return _uvloop().new_event_loop if resolve(choice) == "uvloop" else None


# Once main has ended, the tasks it left are cancelled and get this long to end. asyncio.run waits
# for them without a bound: a client's task that ignores its cancellation (pymongo's async client
# once hung in close() after its server was killed and restarted) kept a finished run's process
# alive for good. Tasks still pending then are let go: the process ends without them.
LEFT_TASKS_S = 10.0


def run(main: Coroutine[Any, Any, T], choice: str = "auto") -> T:
    """asyncio.run(main) on the chosen loop, with a bounded wait for the tasks main left behind."""
    try:
        make = factory(choice)
    except ConfigError:
        main.close()  # never awaited: no "coroutine was never awaited" warning
        raise
    with asyncio.Runner(loop_factory=make) as runner:
        try:
            return runner.run(main)
        finally:
            _let_go(runner.get_loop())


def _let_go(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left on `loop` and wait LEFT_TASKS_S at most; what is still pending then is
    dropped from asyncio's registry, so that the Runner's own close does not wait for it again."""
    if loop.is_closed():
        return
    left = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not left:
        return
    for task in left:
        task.cancel()
    loop.run_until_complete(asyncio.wait(left, timeout=LEFT_TASKS_S))
    for task in left:
        if not task.done():
            asyncio.tasks._unregister_task(task)  # noqa: SLF001 - the one way to stop asyncio waiting for it


def kind(loop: asyncio.AbstractEventLoop) -> str:
    """"uvloop" or "asyncio": the choice that gives this loop again (in a worker process)."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"


def describe(loop: asyncio.AbstractEventLoop) -> str:
    """What a running loop is, for the run's record: "uvloop 0.23.0" or "asyncio"."""
    module = type(loop).__module__
    if module.startswith("uvloop"):
        return f"uvloop {_uvloop().__version__}"
    return "asyncio" if module.startswith("asyncio") else f"{module}.{type(loop).__name__}"
