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


def stop_when_recorded(proc: subprocess.Popen, store, wanted, *, more_intervals: int = 3,
                       timeout: float = 240.0) -> None:
    """End a `workbench run` with Ctrl-C (SIGINT: what it measured is kept, its exports written)
    once `wanted(events)` holds for the server events it has written live into `store` (rows of
    elapsed_s, node, kind, detail of its newest run) and it has recorded `more_intervals` more
    intervals since: the run lasts as long as this machine takes to do what the test waits for,
    not a guessed number of seconds. `wanted` may read other state too (steps beside the run)."""
    import signal
    import sqlite3

    deadline = time.monotonic() + timeout
    seen_at: int | None = None
    while proc.poll() is None:
        assert time.monotonic() < deadline, f"what the test waits for was not recorded in {timeout:.0f} s"
        try:
            with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as conn:
                run_id = conn.execute("SELECT MAX(id) FROM runs").fetchone()[0]
                events = conn.execute("SELECT elapsed_s, node, kind, detail FROM server_events "
                                      "WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
                count = conn.execute("SELECT COUNT(*) FROM intervals WHERE run_id = ?",
                                     (run_id,)).fetchone()[0]
        except sqlite3.Error:  # not created yet, or busy a moment
            time.sleep(0.5)
            continue
        if seen_at is None and wanted(events):
            seen_at = count
        if seen_at is not None and count >= seen_at + more_intervals:
            proc.send_signal(signal.SIGINT)
            return
        time.sleep(0.5)
    raise AssertionError(f"the run ended (exit status {proc.returncode}) before what the test waits for")
