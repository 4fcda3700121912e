"""Helpers for tests that run `workbench` as a subprocess and act on it mid-run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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


class Drained:
    """The rest of a run's stderr, read on a thread of its own from now on. A pipe that nobody
    reads fills at 64 KiB, some 200 status lines at status.interval=1, and the run then blocks in
    its next write: its event loop, its ticks and its requests with it. (The faults test once saw
    that as a 2.4 s stall of its native run, its in-flight requests timed out at 2 s, which ended
    the moment communicate() began to read the pipe after the Ctrl-C.)"""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self.lines.extend, args=(proc.stderr,), daemon=True)
        self._thread.start()

    def text(self, timeout: float = 30.0) -> str:
        """What was read: all of it once the run has ended and its pipe closed (waits for that)."""
        self._thread.join(timeout)
        return "".join(self.lines)


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


def run_while(env: dict, common: list[str], out: Path, steps, seen) -> tuple[dict, list[str]]:
    """`workbench run -P ... common` at 300 ops/s while `steps(said)` runs beside it (appending
    its lines to `said`), ended with Ctrl-C once the steps are done and `seen(events)` holds for
    the server events it has recorded (then three more seconds): each `cluster flush|compact`
    starts a JVM, seconds apiece on a loaded machine, so no run of a set length is long enough
    on every machine (under two busy loops a 36-s run ended before the compaction began, a 50-s
    one before a flush). The run's JSON (exported to `out`) and what the steps said."""
    said: list[str] = []
    failed: list[BaseException] = []

    def beside() -> None:
        try:
            steps(said)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failed.append(exc)

    worker = threading.Thread(target=beside, daemon=True)
    run = subprocess.Popen([sys.executable, "-m", "workbench", "run", *common,
                            "-p", "operationcount=100000000", "-p", "maxexecutiontime=300",
                            "-target", "300", "--export", f"json={out}"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    worker.start()
    try:
        stop_when_recorded(run, env["WORKBENCH_STORE"],
                           lambda events: bool(failed) or (not worker.is_alive() and seen(events)))
        _, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    worker.join(timeout=120)
    assert not failed, failed
    assert run.returncode == 130, err  # ended as Ctrl-C ends a run
    doc = json.loads(out.read_text())["run"]
    assert doc["outcome"] == "interrupted", doc["outcome"]
    return doc, said
