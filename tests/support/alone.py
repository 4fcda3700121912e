"""One CPU-bound timing test at a time across the two processes of a whole-suite run.

A run of the whole suite runs two pytest processes at once (alongside.py): the parent's server
tiers and the child's fast tier, then the child's own clusters. Most of their tests wait more
than they compute, so overlapping them halves the run. A few compute a lot and judge timings
as well: a three-node cluster serving two clients at 400 ops/s through kills and freezes, the
elasticity lesson's join and removal, Ray's workers, the server events matched to the servers'
logs. Two of those at once on 2 cores starve each other: in CI rehearsal 69 the three-node
faults and add-node tests ran beside the Ray and server-events tests, their clients got a tenth
of a core each, their event loops lagged 0.3-3 s, and none reached the rate the tests wait for;
two Ray tests and both server-events tests failed beside them (late samples, no operations).

Such a test is marked `@pytest.mark.alone`; its call takes an exclusive lock on a file that
both processes know (WORKBENCH_TESTS_ALONE_LOCK, set by alongside.start) and waits for it.
Fixtures (a cluster's start) run outside the lock. Without the variable (one process) the mark
does nothing.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

LOCK = "WORKBENCH_TESTS_ALONE_LOCK"


@contextmanager
def held(busy: Callable[[], None] = lambda: None) -> Iterator[float]:
    """Hold the suite-wide lock; if the other process holds it, call `busy` and wait for it.
    Yields the seconds waited."""
    path = os.environ.get(LOCK)
    if not path:
        yield 0.0
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        start = time.monotonic()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            busy()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield time.monotonic() - start
    finally:
        os.close(fd)  # (closing the file releases the lock)
