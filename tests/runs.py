"""Helpers for tests that run `workbench` as a subprocess and act on it mid-run."""

from __future__ import annotations

import re
import subprocess
import time


def wait_until_running(proc: subprocess.Popen, rate: float, timeout: float = 60.0) -> None:
    """Read status lines (stderr, text mode) until one shows `rate` ops/s: every worker runs.

    Faults and signals are sent after this rather than after a fixed sleep, which on a loaded
    machine can end before the run has connected.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        match = re.search(r"; ([\d.]+) current ops/sec", line)
        if match and float(match.group(1)) >= rate:
            return
        assert line, "the run ended before it got going"
    raise AssertionError(f"no status line with {rate} ops/s within {timeout} s")
