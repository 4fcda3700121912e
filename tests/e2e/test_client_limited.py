"""A run whose client was the bottleneck says so (issue 54, 8): a real `workbench run` on the memory
binding, pinned to one core, unpaced with many lanes (the workers are the whole load: the client
wants its one core all the time), says "client-limited: ..." in one line
on stderr after its results, and `runs show` says it again from the run store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_client_limited_run_says_so_at_its_end_and_in_runs_show(tmp_path):  # about 10 s
    store = tmp_path / "runs.db"
    one_core = min(os.sched_getaffinity(0))
    env = dict(os.environ, WORKBENCH_STORE=str(store))

    def workbench(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                              timeout=120, env=env, cwd=ROOT,
                              preexec_fn=lambda: os.sched_setaffinity(0, {one_core}))

    # quiet, the workers use the whole core; under load (CI: two busy loops, the fast tier's other
    # workers, the servers) they get what the others leave, 0.2 of it or less, and their threads
    # wait for the rest (cpu_wait): client-limited either way. 20 kB values made for every update
    # make each operation cost more than the run's own bookkeeping.
    ran = workbench("run", "-db", "memory", "-threads", "16", "-q", "-p", "recordcount=100",
                    "-p", "fieldlength=20000", "-p", "operationcount=0", "-p", "maxexecutiontime=4")
    assert ran.returncode == 0, ran.stderr
    said = [line for line in ran.stderr.splitlines() if line.startswith("workbench: client-limited: ")]
    assert len(said) == 1, ran.stderr
    assert "of 1 cores" in said[0]  # the cores it could run on: the one it was pinned to
    assert ran.stdout.index("[OVERALL]") >= 0  # the results came first, on stdout
    shown = workbench("runs", "show", "1")
    assert shown.returncode == 0, shown.stderr
    # the same line from the stored run (its manifest's usable cores: 1), however rich wraps it
    line = " ".join(said[0].removeprefix("workbench: ").split())
    assert line in " ".join(shown.stdout.split()), shown.stdout
