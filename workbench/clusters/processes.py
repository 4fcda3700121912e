"""Server processes: start them detached, recognise them later, signal them safely.

A PID alone is not an identity: after a reboot or a long time the number can belong to another
program. Every node therefore records the process start time from /proc/PID/stat (field 22, in
clock ticks since boot) and is only signalled if both still match. JVMs start in their own session
(start_new_session=True) so a Ctrl-C in the terminal reaches the workbench, which decides what to
stop, and not the servers directly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def start_time(pid: int) -> int | None:
    """Start time of pid in clock ticks since boot, or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19])


def state(pid: int) -> str | None:
    """One-letter process state (R, S, D, T stopped, Z zombie, ...), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2]


def is_ours(pid: int, started: int) -> bool:
    """True if pid is still the very process that was started at `started` and not a zombie."""
    return start_time(pid) == started and state(pid) not in (None, "Z", "X")


def launch(argv: list[str], cwd: Path, log: Path, env: dict[str, str]) -> subprocess.Popen:
    """Start a server detached from our terminal; stdout/stderr go to `log`."""
    with log.open("ab") as out:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def send(pid: int, started: int, sig: signal.Signals) -> bool:
    """Send sig if pid is still ours; False if it is gone (or is someone else's by now)."""
    if not is_ours(pid, started):
        return False
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return False
    return True


def _reap(pid: int) -> None:
    # Our own child that exited stays a zombie until waited for.
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def has_exited(pid: int, started: int) -> bool:
    """True once every thread of the process is gone (its sockets are closed by then).

    A JVM's main thread can turn zombie while its other threads are still shutting down and
    holding the ports; only when the zombie has no other tasks left has the process exited."""
    if start_time(pid) != started:
        return True
    if state(pid) not in ("Z", "X"):
        return False
    try:
        return len(os.listdir(f"/proc/{pid}/task")) <= 1
    except OSError:
        return True


def wait_gone(pid: int, started: int, timeout: float) -> bool:
    """Wait until the process has exited; True if it did within timeout."""
    deadline = time.monotonic() + timeout
    while True:
        _reap(pid)
        if has_exited(pid, started):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def stop(pid: int, started: int, timeout: float = 30.0, sig: signal.Signals = signal.SIGTERM) -> str:
    """`sig` (SIGTERM), then SIGKILL after timeout. Returns 'stopped', 'killed' or 'not running'."""
    if not is_ours(pid, started):
        _reap(pid)
        return "not running"
    # A paused (SIGSTOPped) JVM cannot act on SIGTERM until it runs again.
    send(pid, started, signal.SIGCONT)
    send(pid, started, sig)
    if wait_gone(pid, started, timeout):
        return "stopped"
    send(pid, started, signal.SIGKILL)
    wait_gone(pid, started, 10.0)
    return "killed"
