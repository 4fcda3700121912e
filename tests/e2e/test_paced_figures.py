"""A paced run that falls behind its schedule, end to end (issue 55, 7): a real `workbench run`
on the memory binding at a target far beyond what one lane can do, recorded, exported and shown:
its intervals say how far behind they ended, and `runs show` says the offered load was not
delivered instead of presenting the throughput as the offered rate's. One on schedule says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def workbench(store: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_STORE=str(store))
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)


def test_a_run_behind_its_schedule_says_so_and_one_on_schedule_too(tmp_path):
    store, exported = tmp_path / "runs.db", tmp_path / "run.json"
    # one lane of the memory binding does some 10^5 operations a second here: 10^7 is never met
    over = workbench(store, "run", "-db", "memory", "-threads", "1", "-target", "10000000", "-q",
                     "-p", "recordcount=1000", "-p", "operationcount=0", "-p", "maxexecutiontime=3",
                     "-p", "measurement.warmup=1", "--export", f"json={exported}")
    assert over.returncode == 0, over.stderr  # it ends: the lane behind its schedule lets the ticks run
    run = json.loads(exported.read_text())["run"]
    whole = [i for i in run["intervals"] if i["duration_s"] >= 0.5]
    assert len(whole) >= 3 and all(i["behind"] > 0 for i in whole)
    assert whole[-1]["behind"] > whole[0]["behind"]  # further behind every second
    shown = workbench(store, "runs", "show", "1")
    assert shown.returncode == 0, shown.stderr
    (line,) = [x for x in shown.stdout.splitlines() if x.startswith("paced:")]
    assert "of 10,000,000 ops/s offered" in line, line
    assert "behind schedule all through the window" in line and "not delivered" in line, line
    assert "behind s" in shown.stdout  # the intervals' column

    on_time = workbench(store, "run", "-db", "memory", "-threads", "2", "-target", "300", "-q",
                        "-p", "recordcount=1000", "-p", "operationcount=0", "-p", "maxexecutiontime=3")
    assert on_time.returncode == 0, on_time.stderr
    shown = workbench(store, "runs", "show", "2")
    (line,) = [x for x in shown.stdout.splitlines() if x.startswith("paced:")]
    assert "of 300 ops/s offered" in line and line.endswith("the offered load was delivered"), line
