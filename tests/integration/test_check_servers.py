"""`workbench check --quick --cluster NAME` on real servers: a Cassandra node and standalone HBase.

Each saves a baseline, then checks against it: the exit status is 0 or 1 (a verdict, never 2: the
same cluster, workload and manifest), the verdict table is printed, the JUnit XML is written, and
the check's own table is loaded (the first check) without touching any other, and settled before it
is measured (flushed, and compacted on Cassandra).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from workbench.results.baseline import FIGURES, FORMAT

pytestmark = pytest.mark.servers

ROOT = Path(__file__).resolve().parents[2]


def _check(tmp_path: Path, suite_servers, name: str, *args: str) -> subprocess.CompletedProcess:
    # every duration a quarter (drive/check.py SCALE_ENV; the snapshot interval with it, so each
    # run still has its number of measured intervals): CI's minutes (at 0.5 the two tests took
    # 176 s of CPU on a quiet machine), the same suite; what is judged here is the machinery
    # (baseline saved, compared, exit status, JUnit), not the figures
    env = dict(os.environ, WORKBENCH_STORE=str(tmp_path / "runs.db"),
               WORKBENCH_STATE_DIR=str(suite_servers.state_dir), WORKBENCH_CHECK_SCALE="0.25")
    return subprocess.run([sys.executable, "-m", "workbench", "check", "--quick", "--cluster", name, "-q",
                           "-threads", "8", *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)


def _saved_then_checked(tmp_path: Path, suite_servers, name: str, settled: str) -> None:
    base, junit = tmp_path / "baseline.json", tmp_path / "check.xml"
    first = _check(tmp_path, suite_servers, name, "--save-baseline", str(base))
    assert first.returncode in (0, 1), first.stdout + first.stderr
    assert "loading" in first.stderr and "workbench_check" in first.stderr  # its own table, missing
    doc = json.loads(base.read_text())
    assert doc["format"] == FORMAT and doc["cluster"] == name
    # a second of each measured interval (at least 3 s of 0.25-s intervals, 12; a loaded machine's
    # held ticks make fewer and longer: 9 under two busy loops)
    assert len(doc["figures"]["throughput A"]["series"]) >= 6
    second = _check(tmp_path, suite_servers, name, "--baseline", str(base), "--junit", str(junit))
    assert second.returncode in (0, 1), second.stdout + second.stderr
    assert "loading" not in second.stderr  # the table is there now
    # its table settled before A: what the first check's runs wrote flushed (and compacted) first
    assert settled in second.stderr, second.stderr
    assert f"baseline: the baseline {base}" in second.stdout
    for figure in FIGURES:
        assert figure in second.stdout
    cases = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase")]
    assert cases == list(FIGURES)


def test_check_quick_on_a_cassandra_node(tmp_path, suite_servers, cassandra_node):
    # the load's SSTable and the first check's flushed into one
    _saved_then_checked(tmp_path, suite_servers, cassandra_node.name,
                        "settled: ycsb.workbench_check flushed and compacted, SSTables: 1 on node1")


def test_check_quick_on_hbase(tmp_path, suite_servers, hbase_server):
    _saved_then_checked(tmp_path, suite_servers, hbase_server.name,
                        "settled: workbench_check flushed, no compaction running")
