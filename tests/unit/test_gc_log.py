"""The GC log reader (clusters/gc_log.py) and the GC pause source (databases/gc_figures.py), on
lines Java 17's unified logging wrote (-Xlog:gc*:file=...:time,uptime,level,tags, G1)."""

from __future__ import annotations

import os
from datetime import datetime

import pytest

from workbench.clusters import gc_log
from workbench.databases.gc_figures import GcLogSource
from workbench.metrics.server import SourceUnavailable

# Lines of a real log (a small program run with the flag gc_log.flag gives, 2026-11-29).
YOUNG_START = ("[2026-11-29T09:12:21.661+0000][0.616s][info][gc,start    ] GC(0) Pause Young (Normal) "
               "(G1 Evacuation Pause)")
PHASE = "[2026-11-29T09:12:21.672+0000][0.627s][info][gc,phases   ] GC(0)   Evacuate Collection Set: 6.3ms"
HEAP = "[2026-11-29T09:12:21.672+0000][0.627s][info][gc,heap     ] GC(0) Eden regions: 12->0(10)"
YOUNG = ("[2026-11-29T09:12:21.672+0000][0.627s][info][gc          ] GC(0) Pause Young (Normal) "
         "(G1 Evacuation Pause) 12M->4M(256M) 10.979ms")
CPU = "[2026-11-29T09:12:21.672+0000][0.627s][info][gc,cpu      ] GC(0) User=0.00s Sys=0.00s Real=0.01s"
FULL_PHASE = ("[2026-11-29T09:12:21.917+0000][0.872s][info][gc,phases      ] GC(6) Phase 1: Mark live "
              "objects 5.851ms")
FULL = ("[2026-11-29T09:12:21.925+0000][0.880s][info][gc             ] GC(6) Pause Full (System.gc()) "
        "39M->22M(80M) 13.991ms")
SHORT = ("[2026-11-29T09:12:22.100+0000][1.055s][info][gc          ] GC(7) Pause Cleanup "
         "30M->30M(256M) 0.123ms")
CONCURRENT = ("[2026-11-29T09:12:22.300+0000][1.255s][info][gc          ] GC(8) Concurrent Mark Cycle "
              "123.456ms")
USING = "[2026-11-29T09:12:21.052+0000][0.007s][info][gc] Using G1"
# -XX:+UseZGC: its pauses are phases
ZGC = "[2026-11-29T09:39:47.835+0000][2.453s][info][gc,phases   ] GC(0) Pause Mark Start 0.014ms"
ZGC_HEAP = "[2026-11-29T09:39:47.840+0000][2.458s][info][gc,heap     ] GC(0) Pause Mark Start 0.014ms"
T_YOUNG = datetime.fromisoformat("2026-11-29T09:12:21.672+00:00").timestamp()
T_FULL = datetime.fromisoformat("2026-11-29T09:12:21.925+00:00").timestamp()


def test_a_pause_line_gives_its_end_length_and_kind():
    pause = gc_log.parse_line(YOUNG)
    assert pause == gc_log.Pause(T_YOUNG, 10.979, "Pause Young (Normal) (G1 Evacuation Pause) 12M->4M(256M)")
    assert pause.started == pytest.approx(T_YOUNG - 0.010979)
    assert gc_log.short(pause) == "Pause Young (Normal) (G1 Evacuation Pause) 11.0 ms"
    assert gc_log.parse_line(FULL) == gc_log.Pause(T_FULL, 13.991, "Pause Full (System.gc()) 39M->22M(80M)")
    assert gc_log.parse_line(ZGC).ms == 0.014  # ZGC's pauses are phases


@pytest.mark.parametrize("line", [YOUNG_START, PHASE, HEAP, CPU, FULL_PHASE, CONCURRENT, USING, "", ZGC_HEAP,
                                  "[garbage][x][info][gc] GC(1) Pause Young 3.0ms"])
def test_other_lines_are_no_pause(line):
    assert gc_log.parse_line(line) is None


def test_the_flag_logs_into_the_file_beside_the_nodes_log(tmp_path):
    log = tmp_path / "logs" / "system.log"
    assert gc_log.beside(log) == tmp_path / "logs" / "system.gc.log"
    assert gc_log.flag(gc_log.beside(log)) == (
        f"-Xlog:gc*:file={tmp_path}/logs/system.gc.log:time,uptime,level,tags:filecount=5,filesize=20M")


def test_the_tail_reads_only_new_complete_lines(tmp_path):
    file = tmp_path / "gc.log"
    file.write_text(USING + "\n" + YOUNG + "\n")
    tail = gc_log.GcLogTail(file)  # what the file held before is not the run's
    assert tail.read() == []
    with open(file, "a") as f:
        f.write(FULL_PHASE + "\n" + FULL[:40])  # the pause line half written
    assert tail.read() == []
    with open(file, "a") as f:
        f.write(FULL[40:] + "\n")
    assert [p.ms for p in tail.read()] == [13.991]
    assert tail.read() == []
    assert [p.ms for p in gc_log.GcLogTail(file, from_start=True).read()] == [10.979, 13.991]


def test_the_tail_follows_the_jvms_rotation(tmp_path):
    file = tmp_path / "system.gc.log"
    file.write_text(USING + "\n")
    tail = gc_log.GcLogTail(file)
    with open(file, "a") as f:
        f.write(YOUNG + "\n")
    os.rename(file, tmp_path / "system.gc.log.0")  # the JVM rotates, then writes a new file
    file.write_text(FULL + "\n")
    assert [p.ms for p in tail.read()] == [10.979, 13.991]
    with open(file, "a") as f:
        f.write(YOUNG + "\n")
    assert [p.ms for p in tail.read()] == [10.979]


def test_the_source_counts_each_pause_in_the_second_it_ended(tmp_path):
    file = tmp_path / "system.gc.log"
    file.write_text("")
    source = GcLogSource([("127.0.0.1", file)])
    file.write_text("\n".join((YOUNG, PHASE, FULL, SHORT)) + "\n")
    [first] = source.sample(T_YOUNG + 0.1)  # the full pause ended after this second
    assert first.node == "127.0.0.1"
    assert first.figures == {"gc_pauses": 1.0, "gc_pause_ms_total": 10.979, "gc_pause_ms_max": 10.979}
    [event] = first.events
    assert (event.kind, event.node, event.at, event.seconds) == ("gc", "127.0.0.1",
                                                                 pytest.approx(T_YOUNG - 0.010979), 0.010979)
    [second] = source.sample(T_FULL + 1)  # the 0.123 ms cleanup is under 1 ms: not a pause here
    assert second.figures == {"gc_pauses": 1.0, "gc_pause_ms_total": 13.991, "gc_pause_ms_max": 13.991}
    assert [e.detail for e in second.events] == ["Pause Full (System.gc()) 14.0 ms"]
    [third] = source.sample(T_FULL + 2)
    assert third.figures == {"gc_pauses": 0.0, "gc_pause_ms_total": 0.0, "gc_pause_ms_max": 0.0}


def test_no_gc_log_at_all_is_unavailable(tmp_path):
    source = GcLogSource([("127.0.0.1", tmp_path / "system.gc.log")])
    with pytest.raises(SourceUnavailable, match="no GC log at .*restart the cluster"):
        source.sample(0.0)


def test_local_nodes_start_with_their_gc_log_on(tmp_path):
    from pathlib import Path

    from workbench.databases.cassandra import cluster as cassandra_local
    from workbench.databases.cassandra.cluster_spec import CassandraSpec
    from workbench.databases.gc_figures import local_logs
    from workbench.databases.hbase import cluster as hbase_local
    from workbench.databases.hbase.cluster_spec import HBaseSpec

    java, lib = Path("/usr/bin/java"), tmp_path / "lib"
    for plan in cassandra_local.plans(CassandraSpec(name="c2", nodes=2), tmp_path / "c2", lib, java):
        assert gc_log.flag(plan.dir / "logs" / "system.gc.log") in plan.argv
    hbase = hbase_local.plans(HBaseSpec(name="h", regionservers=2), tmp_path / "h", lib, java)
    assert {p.name: p.argv.count(gc_log.flag(gc_log.beside(p.log))) for p in hbase} == {
        "zookeeper": 1, "master": 1, "rs1": 1, "rs2": 1, "thrift": 1}
    assert gc_log.beside(hbase[2].log) == tmp_path / "h" / "hbase" / "rs1" / "logs" / "regionserver.gc.log"

    class Node:  # what local_logs reads of a cluster's node
        def __init__(self, plan):
            self.name, self.address, self.log = plan.name, plan.address, plan.log

    class Cluster:
        nodes = [Node(p) for p in hbase]

    # the names the process figures go under (clusters/node_figures.py): name@address where shared
    assert [(key, f.name) for key, f in local_logs(Cluster)] == [
        ("zookeeper@127.0.0.1", "zookeeper.gc.log"), ("master@127.0.0.1", "master.gc.log"),
        ("rs1@127.0.0.1", "regionserver.gc.log"), ("127.0.0.2", "regionserver.gc.log"),
        ("thrift@127.0.0.1", "thrift.gc.log")]
