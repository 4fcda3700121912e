"""The compiled hot path (workbench._speedups, from csrc/: one C file per job), or Python's where it is not.

The extension is optional: `pip install` builds it where a C compiler and Python's headers exist
(Debian: gcc and python3-dev) and skips it where they do not. Both give the same keys from the
same random stream, draw for draw, and the same answers and requests (tests/unit/test_speedups.py,
test_cassandra_native.py, test_hbase_native.py), so only the client's CPU per operation depends
on which one a run used; the run records it (environment.speedups).

WORKBENCH_SPEEDUPS=off (read once, at import; worker processes inherit it) runs the Python code
even where the extension is built: to compare the two, or to rule the extension out.
"""

from __future__ import annotations

import os
from types import ModuleType

ENV = "WORKBENCH_SPEEDUPS"


def _turned_off() -> bool:
    return os.environ.get(ENV, "").strip().lower() in ("off", "0", "no", "false")


def _load() -> ModuleType | None:
    if _turned_off():
        return None
    try:
        from workbench import _speedups  # noqa: PLC0415 - optional: built where a compiler was found
    except ImportError:
        return None
    return _speedups


C: ModuleType | None = _load()


def describe() -> str:
    """What a run records: "C" (the extension) or "Python" (and why)."""
    if C is not None:
        return "C"
    if _turned_off():
        return f"Python ({ENV}=off)"
    return "Python (workbench._speedups is not built)"
