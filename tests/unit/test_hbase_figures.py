"""HBase's figures from a RegionServer's /jmx (databases/hbase/figures.py): the bean as HBase 2.6.1
served it (2026-11-29, standalone, after two flushes and a major compaction; trimmed to the keys
read and a few others), garbage in its place, and a local HTTP server that answers garbage."""

from __future__ import annotations

import http.server
import json
import re
import threading
import time

import pytest

from workbench.databases.hbase import figures as hf

BEAN = {"name": "Hadoop:service=HBase,name=RegionServer,sub=Server", "modelerType": "RegionServer,sub=Server",
        "tag.serverName": "127.0.0.1,16020,1795944178832", "regionCount": 3, "memStoreSize": 25490,
        "compactionQueueLength": 1, "flushQueueLength": 2, "blockCacheHitCount": 0,
        "blockCacheMissCount": 4, "totalRequestCount": 456, "FlushTime_num_ops": 5,
        "flushedMemstoreBytes": 56014, "CompactionTime_num_ops": 5, "MajorCompactionTime_num_ops": 5,
        "compactedInputBytes": 85303, "FlushTime_max": 31, "readRequestRatePerSecond": 2.0}
JVM = {"name": "Hadoop:service=HBase,name=JvmMetrics", "GcCount": 8, "GcTimeMillis": 399}


def answer(*beans) -> str:
    return json.dumps({"beans": list(beans)}, indent=2)


def test_the_regionserver_bean_is_found_in_the_answer():
    assert hf.parse(answer(JVM, BEAN).encode()) == BEAN


@pytest.mark.parametrize("body, said", [
    ("<html><body>Error 500</body></html>", "answered HTML"),
    (answer(BEAN)[:200], "answered truncated JSON"),
    ("", "answered nothing"),
    ("Service Unavailable", "answered not JSON"),
    ('{"nothing": 1}', "answered JSON without beans"),
    (answer(JVM), "has no Hadoop:service=HBase,name=RegionServer,sub=Server bean"),
])
def test_garbage_is_one_line_saying_what_came(body, said):
    with pytest.raises(hf.JmxGarbage, match=said):
        hf.parse(body, "http://127.0.0.1:16030")


def test_a_bean_gives_queues_memstore_and_per_second_rates_and_events():
    last = hf.Counters()
    first = hf.node_sample("127.0.0.1", BEAN, last, 0.0, 100.0)
    assert first.figures == {"compactions_pending": 1, "flushes_pending": 2, "memstore_bytes": 25490}
    assert first.events == ()  # counters have nothing to be compared with yet
    later = dict(BEAN, blockCacheHitCount=30, blockCacheMissCount=14, totalRequestCount=556,
                 FlushTime_num_ops=7, flushedMemstoreBytes=56014 + 3 * 2**20,
                 CompactionTime_num_ops=6, MajorCompactionTime_num_ops=6, compactedInputBytes=85303 + 2048)
    second = hf.node_sample("127.0.0.1", later, last, 100.0, 101.0)
    assert second.figures["block_cache_hit_ratio"] == 0.75  # 30 hits, 10 misses this second
    assert second.figures["requests"] == 100
    assert [(e.kind, e.at, e.detail) for e in second.events] == [
        ("flush", 100.0, "2 memstore flushes (3.0 MiB)"),
        ("compaction", 100.0, "1 compaction (1 major) of 2.0 KiB")]
    third = hf.node_sample("127.0.0.1", later, last, 101.0, 102.0)
    assert "block_cache_hit_ratio" not in third.figures  # no block cache request: not known
    assert third.figures["requests"] == 0 and third.events == ()


def test_non_numbers_in_the_bean_are_left_out():
    odd = dict(BEAN, memStoreSize="lots", flushQueueLength=True)
    assert hf.node_sample("n", odd, hf.Counters(), 0.0, 1.0).figures == {"compactions_pending": 1}


class _Jmx(http.server.BaseHTTPRequestHandler):
    bodies: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        body = (self.bodies.pop(0) if self.bodies else answer(BEAN)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_jmx():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Jmx)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_garbage_answer_skips_the_second_and_the_next_is_read(fake_jmx):
    _Jmx.bodies = [answer(BEAN), "<html>Service Unavailable</html>", answer(BEAN)[:100]]
    url = f"http://127.0.0.1:{fake_jmx.server_port}"
    source = hf.JmxFigures([("127.0.0.1", url)])
    try:
        assert source.sample(1.0)[0].figures["memstore_bytes"] == 25490
        with pytest.raises(hf.JmxGarbage, match="answered HTML"):
            source.sample(2.0)
        with pytest.raises(hf.JmxGarbage, match="answered truncated JSON"):
            source.sample(3.0)
        assert source.sample(4.0)[0].figures["requests"] == 0
    finally:
        source.close()


def test_the_run_notes_the_seconds_garbage_cost(fake_jmx):
    from workbench.drive.server_sampler import ServerSampler

    _Jmx.bodies = ["<html>Service Unavailable</html>"] * 2
    source = hf.JmxFigures([("127.0.0.1", f"http://127.0.0.1:{fake_jmx.server_port}")])
    sampler = ServerSampler([source], period=0.2, lead=0.05)
    wall0 = time.time()
    sampler.start(wall0)
    deadline, taken = time.monotonic() + 60, {}
    while "memstore_bytes" not in taken.get("127.0.0.1", {}):  # the seconds after the garbage
        assert time.monotonic() < deadline, "no figures after the two garbage answers in 60 s"
        time.sleep(0.2)
        taken, _ = sampler.take(time.time() - wall0)
    notes = sampler.stop()
    assert taken["127.0.0.1"]["memstore_bytes"] == 25490
    [note] = notes
    # the two garbage answers, named; a loaded machine may also have skipped a second still busy,
    # or had an answer come after its tick
    assert re.match(r"jmx: \d+ of \d+ seconds skipped \((\d+ busy, )?2 failed(, \d+ late)?\): JmxGarbage: "
                    r"http://127\.0\.0\.1:\d+ answered HTML \(32 bytes\)$", note), note


def test_a_bridged_docker_cluster_says_why_it_has_no_figures():
    from workbench.clusters.base import Cluster, Node
    from workbench.databases.hbase.cluster_spec import HBaseSpec

    def node(name):
        return Node(name, "127.0.0.1", 16000, 0, 0, Path("/x.log"), Path("/c.log"), Path("/"))

    from pathlib import Path

    spec = HBaseSpec(name="h", docker_network="bridge")
    cluster = Cluster("h", "hbase", spec, (node("master"), node("thrift")), Path("/tmp"), provider="docker")
    jmx, gc = hf.server_sources(cluster)
    with pytest.raises(hf.SourceUnavailable, match="bridge network"):
        jmx.sample(0.0)
    jmx.close()
