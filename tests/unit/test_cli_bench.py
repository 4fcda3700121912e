"""`workbench load|run` as a user runs them: YCSB text on stdout, status lines, exports, exit codes."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.runs import wait_until_running
from workbench.results.importers import import_file
from workbench.results.ycsb_text import read_ycsb_text

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")
STATUS = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3} \d+ sec: \d+ operations; "
    r"(\S+ current ops/sec; )?(est completion in .*)?(\[[A-Z-]+: Count=\d+, .*\] )*$"
)


def workbench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_run_prints_ycsb_text_status_lines_and_exports(tmp_path):
    files = {k: tmp_path / f"out.{k}" for k in ("ycsb", "csv", "timeseries", "hdr", "json")}
    proc = workbench("run", "-P", WORKLOAD_A, "-p", "recordcount=1000", "-p", "operationcount=30000",
                     "-threads", "4", "-p", "status.interval=1", "-s",
                     *[a for k, f in files.items() for a in ("--export", f"{k}={f}")])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("[OVERALL], RunTime(ms), ")
    assert lines[1].startswith("[OVERALL], Throughput(ops/sec), ")
    assert "[READ], 95thPercentileLatency(us)" in proc.stdout
    assert "[UPDATE], Return=OK" in proc.stdout
    status = [ln for ln in proc.stderr.splitlines() if " sec: " in ln]
    assert len(status) >= 2 and all(STATUS.match(ln) for ln in status), status
    assert status[-1].split(" sec: ")[1].startswith("30000 operations")
    parsed = read_ycsb_text(proc.stdout)
    reads = parsed.measurement("READ").operations
    assert reads + parsed.measurement("UPDATE").operations == 30000
    assert files["ycsb"].read_text() == proc.stdout
    restored = import_file(files["json"])
    assert restored.measurement("READ").operations == reads
    assert restored.measurement("READ").histogram is not None
    assert files["csv"].read_text().splitlines()[0].startswith("measurement,operations")
    assert "Tag=READ," in files["hdr"].read_text()
    assert len(files["timeseries"].read_text().splitlines()) > 2


def test_master_layout_adds_the_50th_percentile():
    proc = workbench("run", "-P", WORKLOAD_A, "-p", "operationcount=2000", "--ycsb-layout", "master", "-q")
    assert proc.returncode == 0, proc.stderr
    assert "[READ], 50thPercentileLatency(us)" in proc.stdout
    assert proc.stderr == ""


def test_load_counts_inserts():
    proc = workbench("load", "-P", WORKLOAD_A, "-p", "recordcount=5000", "-threads", "2", "-q")
    assert proc.returncode == 0, proc.stderr
    assert "[INSERT], Operations, 5000" in proc.stdout
    assert "[INSERT], Return=OK, 5000" in proc.stdout


def test_ctrl_c_stops_cleanly_and_still_reports(tmp_path):
    out = tmp_path / "partial.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "run", "-P", WORKLOAD_A, "-p", "operationcount=0",
         "-p", "maxexecutiontime=60", "-p", "status.interval=1", "--export", f"json={out}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    first = wait_until_running(proc, 1)  # operations are running, not just the interpreter
    proc.send_signal(signal.SIGINT)
    stdout, rest = proc.communicate(timeout=30)
    stderr = first + rest
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "[OVERALL], RunTime(ms)" in stdout
    result = import_file(out)
    assert result.outcome == "interrupted"
    assert result.operations > 0
    assert [e.kind for e in result.events] == ["stop"]


def test_bad_export_kind_is_one_line_and_exit_2():
    proc = workbench("run", "-P", WORKLOAD_A, "--export", "xml=out.xml")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("workbench: error:")
    assert "ycsb" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""
