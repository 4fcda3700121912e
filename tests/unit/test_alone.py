"""The lock that CPU-bound timed tests of the two processes of a whole-suite run take in turn
(tests/support/alone.py)."""

from __future__ import annotations

import subprocess
import sys
import threading

from tests.support import alone

HOLD = ("import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "sys.stdin.readline()\n")


def test_a_test_marked_alone_waits_while_another_process_holds_the_lock(tmp_path, monkeypatch):
    lock = tmp_path / "alone.lock"
    monkeypatch.setenv(alone.LOCK, str(lock))
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    entered, waited = threading.Event(), []

    def take() -> None:
        with alone.held() as seconds:
            waited.append(seconds)
            entered.set()

    try:
        assert other.stdout.readline() == "held\n"
        taker = threading.Thread(target=take, daemon=True)
        taker.start()
        assert not entered.wait(0.5)  # (how long it waits is the other's business)
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.wait(timeout=30) == 0
        assert entered.wait(30) and waited[0] >= 0.5
        taker.join(30)
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
    with alone.held() as seconds:  # free again: taken at once
        assert seconds < 0.5


def test_in_one_process_the_mark_takes_no_lock(monkeypatch):
    monkeypatch.delenv(alone.LOCK, raising=False)
    with alone.held() as seconds:
        assert seconds == 0.0


def test_the_suite_runs_a_test_marked_alone_only_once_it_holds_the_lock(tmp_path):
    """tests/conftest.py's hook, end to end: a pytest of a test marked alone, beside a process
    that holds the lock, waits for it and says so."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    lock = tmp_path / "alone.lock"
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline() == "held\n"
        env = dict(os.environ, **{alone.LOCK: str(lock)})
        env.pop("PYTEST_XDIST_WORKER", None)
        run = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-s",
                                "-o", "python_files=probe_*.py", "tests/data/alone/probe_alone.py"],
                               cwd=root, env=env, stdout=subprocess.PIPE, text=True)
        said = []
        for line in run.stdout:  # until its test waits for the lock (or it ended without waiting)
            said.append(line)
            if "waiting for the other process's CPU-bound test" in line:
                break
        assert run.poll() is None and "tests/data/alone/probe_alone.py::test_alone" in said[-1], said
        other.stdin.write("\n")
        other.stdin.flush()
        out, _ = run.communicate(timeout=120)
        assert run.returncode == 0 and "waited " in out and "1 passed" in out, out
    finally:
        for proc in (other, locals().get("run")):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
