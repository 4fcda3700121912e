"""`--metrics`: the servers' figures on the page (workbench/drive/prometheus_server.py; names and
labels in docs/PROMETHEUS.md).

A real run on the memory binding, with a fake server source put in the place of the run's own
(as tests/unit/test_server_results.py does), is scraped over HTTP on 127.0.0.1 while it runs and
once more after it, and each page read with prometheus_client's own parser: the node's gauges are
what the source said for the newest second, the event counters count what the run received.
The server tier (tests/integration/test_prometheus_server.py) reads a real node's CPU back from a
real Prometheus.
"""

from __future__ import annotations

import threading
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from workbench.config.spec import spec_from_args
from workbench.drive import phase as phase_module
from workbench.drive.metrics_endpoint import MetricsEndpoint
from workbench.drive.phase import execute_phase
from workbench.drive.prometheus import RunLabels
from workbench.drive.prometheus_server import ServerCollector, ServerTally, series_of
from workbench.metrics.server import NodeSample, ServerEvent

NODE = "127.0.0.2"


class Node2:
    """A node whose CPU grows by a quarter core each second, with a 40 ms GC pause every second
    and a compaction every other; what it said is kept."""

    name = "fake"

    def __init__(self) -> None:
        self.said: list[float] = []
        self.emitted = {"gc": 0, "compaction": 0}
        self.lock = threading.Lock()

    def sample(self, now: float) -> list[NodeSample]:
        with self.lock:
            n = len(self.said) + 1
            cpu = 1.0 + 0.25 * n
            self.said.append(cpu)
            events = [ServerEvent(NODE, now - 0.05, "gc", 0.040, "G1 Young")]
            if n % 2 == 0:
                events.append(ServerEvent(NODE, now - 0.02, "compaction", 0.0, "ycsb.usertable"))
            for e in events:
                self.emitted[e.kind] += 1
        return [NodeSample(NODE, {"cpu": cpu, "gc_pauses": 1, "gc_pause_ms_total": 40.0,
                                  "queue.ReadStage.pending": 3, "queue.MutationStage.pending": 7},
                           tuple(events))]

    def close(self) -> None:
        pass


def parse(page: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(page)}


def value(samples, name: str, **labels) -> float:
    found = [s.value for s in samples if s.name == name
             and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_a_run_serves_its_nodes_figures_and_events(monkeypatch, tmp_path):
    source = Node2()
    monkeypatch.setattr(phase_module, "sources_for", lambda cluster, db: [source])
    spec, props = spec_from_args([], ["db=memory", "recordcount=100", "operationcount=4000",
                                      "target=1000"], "run")
    endpoint = MetricsEndpoint("127.0.0.1", 0)
    pages: list[dict[str, list]] = []
    done_scraping = threading.Event()

    def scrape() -> None:  # on a thread: the phase runs on this one (its loop takes SIGINT)
        while not done_scraping.wait(0.3):
            page = parse(urllib.request.urlopen(endpoint.url, timeout=10).read().decode())
            if "workbench_server_cpu" in page:
                pages.append(page)

    scraper = threading.Thread(target=scrape, daemon=True)
    scraper.start()
    try:
        done = execute_phase(spec, props.as_dict(), "run", store=tmp_path / "runs.db", status=False,
                             metrics=endpoint)
        done_scraping.set()
        scraper.join(15)
        last = parse(urllib.request.urlopen(endpoint.url, timeout=10).read().decode())
    finally:
        done_scraping.set()
        endpoint.close()
    # at least two scrapes saw the node's figures live (and, below, two different seconds of them):
    # under two busy loops this process's scraping thread got only two in the 4-s run
    assert len(pages) >= 2, f"{len(pages)} pages with the node's figures in a 4-second run"
    run = {"phase": "run", "db": "memory", "client": "memory (in-process)", "run_id": str(done.run_id)}
    with source.lock:
        said, emitted = list(source.said), dict(source.emitted)
    # each second's GC pause count as the run recorded it, by the CPU the source said that second:
    # one pause a second, two in the second that took a late answer's too (server_sampler._PAUSES)
    pauses = {i.server[NODE]["cpu"]: i.server[NODE]["gc_pauses"] for i in done.result.intervals
              if "cpu" in i.server.get(NODE, {})}
    before = 0.0
    for page in [*pages, last]:
        for family, samples in page.items():
            if family.startswith("workbench_server_"):
                for s in samples:
                    assert {k: s.labels[k] for k in run} == run, s
                    assert s.labels["node"] in (NODE, "client"), s  # the controller's own: "client"
        cpu = value(page["workbench_server_cpu"], "workbench_server_cpu", node=NODE)
        assert cpu in said and cpu >= before, (cpu, said)  # a second the source said, the newest
        before = cpu
        queue = page["workbench_server_queue_pending"]
        assert value(queue, "workbench_server_queue_pending", node=NODE, stage="ReadStage") == 3
        assert value(queue, "workbench_server_queue_pending", node=NODE, stage="MutationStage") == 7
        gc = value(page["workbench_server_gc_pauses"], "workbench_server_gc_pauses", node=NODE)
        assert gc == pauses.get(cpu, gc) and gc >= 1, (cpu, gc, pauses)
    assert len({value(p["workbench_server_cpu"], "workbench_server_cpu") for p in pages}) >= 2
    # after the run: the newest second's CPU, and every event the run received, by kind
    newest = [i.server[NODE]["cpu"] for i in done.result.intervals if NODE in i.server][-1]
    assert value(last["workbench_server_cpu"], "workbench_server_cpu", node=NODE) == newest
    received = {"gc": 0, "compaction": 0}
    for e in done.result.server_events:
        received[e.kind] += 1
    assert received["gc"] >= 3 and received["compaction"] >= 1, received
    for kind in ("gc", "compaction"):
        n = value(last["workbench_server_events"], "workbench_server_events_total", node=NODE, kind=kind)
        assert n == received[kind] <= emitted[kind], (kind, n, received, emitted)
    gc_s = value(last["workbench_server_gc_pause_seconds"], "workbench_server_gc_pause_seconds_total",
                 node=NODE)
    assert gc_s == pytest.approx(0.040 * received["gc"])  # 40 ms with each second's one pause
    mid = value(pages[0]["workbench_server_events"], "workbench_server_events_total", node=NODE, kind="gc")
    assert 1 <= mid < received["gc"]  # counted as they came, not at the end


def test_names_labels_and_types_from_figures_made_here():
    assert series_of("cpu") == ("workbench_server_cpu", {})
    assert series_of("queue.ReadStage.pending") == ("workbench_server_queue_pending", {"stage": "ReadStage"})
    assert series_of("queue.Native-Transport-Requests.active") == (
        "workbench_server_queue_active", {"stage": "Native-Transport-Requests"})
    assert series_of("odd.name-x") == ("workbench_server_odd_name_x", {})
    tally = ServerTally()
    tally.add({NODE: {"cpu": 2.0, "gc_pause_ms_total": 30.0}, "client": {"loop_lag_ms": 4.0}},
              ((0.5, ServerEvent(NODE, 0.0, "gc", 0.03)), (0.6, ServerEvent(NODE, 0.0, "flush"))))
    tally.add({NODE: {"cpu": 0.5, "gc_pause_ms_total": 20.0}}, ((1.5, ServerEvent(NODE, 0.0, "gc", 0.02)),))
    tally.add({}, ())  # a second not sampled: the newest figures stay
    # a second whose figures came late (dropped by the sampler) keeps its pause's event: counted
    tally.add({}, ((2.5, ServerEvent(NODE, 0.0, "gc", 0.01)),))
    registry = CollectorRegistry()
    labels = RunLabels("run", "cassandra", "native CQL v4", "17")
    registry.register(ServerCollector(lambda: tally.figures, lambda: labels))
    page = parse(generate_latest(registry).decode())
    assert value(page["workbench_server_cpu"], "workbench_server_cpu", node=NODE, run_id="17") == 0.5
    assert value(page["workbench_server_loop_lag_ms"], "workbench_server_loop_lag_ms", node="client") == 4.0
    events = page["workbench_server_events"]
    assert value(events, "workbench_server_events_total", node=NODE, kind="gc") == 3
    assert value(events, "workbench_server_events_total", node=NODE, kind="flush") == 1
    assert value(page["workbench_server_gc_pause_seconds"], "workbench_server_gc_pause_seconds_total",
                 node=NODE) == pytest.approx(0.06)
    assert "client" not in {s.labels["node"] for s in page["workbench_server_gc_pause_seconds"]}
    types = {f.name: f.type for f in text_string_to_metric_families(generate_latest(registry).decode())}
    assert types["workbench_server_cpu"] == "gauge" and types["workbench_server_events"] == "counter"
