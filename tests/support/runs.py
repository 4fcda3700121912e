"""Helpers for tests that run `workbench` as a subprocess and act on it mid-run."""

from __future__ import annotations

import re
import subprocess
import time


def wait_until_running(proc: subprocess.Popen, rate: float, timeout: float = 60.0) -> str:
    """Read status lines (stderr, text mode) until one shows `rate` ops/s: every worker runs.
    Returns the stderr read so far, for checks on the whole of it.

    Faults and signals are sent after this rather than after a fixed sleep, which on a loaded
    machine can end before the run has connected.
    """
    read = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        read.append(line)
        match = re.search(r"; ([\d.]+) current ops/sec", line)
        if match and float(match.group(1)) >= rate:
            return "".join(read)
        assert line, "the run ended before it got going: " + "".join(read)
    raise AssertionError(f"no status line with {rate} ops/s within {timeout} s")
