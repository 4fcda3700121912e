"""Per-node CPU caps (clusters/cgroups.py) on this machine's own cgroup cpu controller: a real
process capped and measured; and the one line where caps cannot be set. A capped Cassandra node
started by `cluster up --cpus`: tests/integration/test_cluster_lifecycle.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from workbench.clusters import cgroups, presets
from workbench.errors import ClusterError
from workbench.experiments import plan


def _ticks(pid: int) -> int:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_a_capped_process_uses_at_most_its_share_and_its_group_goes_with_it():
    why = cgroups.problem()
    if why is not None:  # a machine without a writable cpu controller: refused in one line
        with pytest.raises(ClusterError, match="cpus = 0.2 caps each node's processors, and "):
            cgroups.require(0.2)
        return
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    name = f"test-{os.getpid()}-busy"
    try:
        group = cgroups.cap(busy.pid, 0.2, name)
        assert cgroups.cap_of(busy.pid) == pytest.approx(0.2)
        hz = os.sysconf("SC_CLK_TCK")
        start, used0 = time.monotonic(), _ticks(busy.pid)
        while time.monotonic() - start < 1.5:  # CPU over wall time: a share needs a stretch of time
            time.sleep(0.1)
        share = (_ticks(busy.pid) - used0) / hz / (time.monotonic() - start)
        assert share <= 0.3, share  # 0.2 and the accounting's slack; an uncapped loop takes ~1.0
    finally:
        busy.kill()
        busy.wait()
    cgroups.release(name)
    assert not group.exists()
    cgroups.release(name)  # gone already: nothing to do


def test_without_a_cpu_controller_a_cap_is_one_line_and_no_cap_asks_for_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "V1", tmp_path / "cpu")
    monkeypatch.setattr(cgroups, "V2", tmp_path)
    assert cgroups.problem() == ("this machine has no cgroup cpu controller mounted (/sys/fs/cgroup/cpu or "
                                 "cgroup v2 with cpu)")
    with pytest.raises(ClusterError) as caught:
        cgroups.require(0.5)
    assert str(caught.value).startswith("cpus = 0.5 caps each node's processors, and this machine has no")
    assert "use the Docker provider" in str(caught.value)
    cgroups.require(0)  # no cap asked: nothing checked
    assert cgroups.cap_of(os.getpid()) is None


def test_groups_are_named_per_state_folder_cluster_and_node(tmp_path):
    a = cgroups.group_name(tmp_path / "a", "cassandra-3", "node2")
    assert a.endswith("-cassandra-3-node2")
    assert a != cgroups.group_name(tmp_path / "b", "cassandra-3", "node2")


def test_presets_and_experiments_take_a_cap_and_refuse_a_wrong_one(tmp_path):
    assert presets.load("cassandra-3", cpus=0.5).cpus == 0.5 and presets.load("hbase-standalone").cpus == 0
    with pytest.raises(ClusterError, match="cpus"):
        presets.load("cassandra-3", cpus=-1.0)
    e = plan.load("scaleup")
    assert e.cpus == 0.5 and e.per_node == ("recordcount", "target")
    runs = {r.step.key: r for r in e.runs()}
    three = runs["cassandra/workloada/nodes=3"]
    assert e.cluster_spec(three.step).cpus == 0.5 and e.cluster_spec(three.step).nodes == 3
    assert {"recordcount=30000", "target=4500"} <= set(e.overrides(three, "laptop"))  # x 3 nodes
    path = tmp_path / "bad.toml"
    path.write_text('databases = ["cassandra"]\nworkloads = ["workloada"]\nper_node = ["recordcount"]\n')
    with pytest.raises(Exception, match="per_node"):
        plan.load(str(path))  # no nodes sweep to be in proportion to
