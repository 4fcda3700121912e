"""Freed memory goes back to the system during long runs (glibc's malloc_trim).

A long run frees as much as it allocates, but glibc's malloc keeps freed blocks for reuse: the
encoded interval histograms and the run store's JSON (a few KB each, every tick) come and go
between longer-lived objects, and the holes stay part of the resident set. Measured on a
memory-binding run at 5,000 ops/s (BENCHMARKS.md, "Memory over an hour"): after 22 minutes,
malloc_trim(0) gave back 18 MB at one tick a second and 8 MB at four. Each process that runs a
controller or lanes calls `maybe_trim()` every tick; it trims at most once a minute (about 0.1
ms when there is little to give back). Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time

EVERY_S = 60.0

_trim = None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _trim = _libc.malloc_trim
    _trim.argtypes, _trim.restype = [ctypes.c_size_t], ctypes.c_int
except (OSError, AttributeError):  # not glibc: nothing to trim with
    _trim = None

_last = time.monotonic()


def maybe_trim(now: float | None = None) -> bool:
    """Trim if a minute has passed since the last trim in this process; True if it trimmed."""
    global _last
    now = time.monotonic() if now is None else now
    if _trim is None or now - _last < EVERY_S:
        return False
    _last = now
    _trim(0)
    return True
