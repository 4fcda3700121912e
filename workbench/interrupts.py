"""Ctrl-C that is not lost.

Python raises KeyboardInterrupt wherever the main thread happens to be when SIGINT arrives.
Inside a finalizer or a weakref callback (cassandra-driver's clean-up after every connection
runs many of them) the exception is printed as "Exception ignored" and dropped, and a command
goes on as if no key had been pressed: a demo interrupted while it waited for its Cassandra
node carried on for minutes. The handler installed here raises KeyboardInterrupt as Python's
does and also remembers the press; `check()`, called at the safe points of long blocking steps
(waiting for a server, between a demo's runs), raises it again.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

_pressed = False
_report = sys.unraisablehook  # what prints "Exception ignored in ..."


def on_signal(signum, frame) -> None:
    """SIGINT (or SIGTERM, where a command maps it onto Ctrl-C): KeyboardInterrupt, remembered."""
    global _pressed
    _pressed = True
    raise KeyboardInterrupt


def _unraisable(what) -> None:
    if what.exc_type is KeyboardInterrupt and _pressed:
        return  # not lost: check() raises it again (and no traceback on the user's screen)
    _report(what)


def install() -> None:
    """Use this handler for SIGINT (main thread only; an asyncio run puts its own in front and
    gives this one back), and keep a dropped KeyboardInterrupt off stderr."""
    global _report
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_signal)
        if sys.unraisablehook is not _unraisable:
            _report, sys.unraisablehook = sys.unraisablehook, _unraisable


def check() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed since install(), even if the first one was
    swallowed."""
    if _pressed:
        raise KeyboardInterrupt


def reset() -> None:
    global _pressed
    _pressed = False


@contextlib.contextmanager
def held_off() -> Iterator[None]:
    """Ctrl-C ignored inside (main thread): a clean-up that must finish, such as stopping the
    servers just started, is not cut short by a second press."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
