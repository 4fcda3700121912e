"""`load|run --metrics`: the running phase at /metrics in Prometheus's text format
(workbench/drive/prometheus.py, metrics_endpoint.py; names and labels in docs/PROMETHEUS.md).

A real `workbench run` on the memory binding is scraped over HTTP while it runs and every page is
read with prometheus_client's own parser; a port in use is one line naming its holder and exit
status 2 before anything runs; the families are checked value by value from figures made here.
The server tier (tests/integration/test_prometheus_server.py) has a real Prometheus scrape a run
on a real Cassandra.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from workbench.drive.metrics_endpoint import parse_address
from workbench.drive.prometheus import (
    BOUNDS_S,
    RunCollector,
    RunFigures,
    RunLabels,
    families,
    latency_of,
    split_measurement,
)
from workbench.errors import ConfigError
from workbench.metrics.histograms import new_histogram

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")


def parse(page: str) -> dict[str, list]:
    """family name -> its samples, as prometheus_client's parser reads the page."""
    return {f.name: f.samples for f in text_string_to_metric_families(page)}


def value(samples, name: str, **labels) -> float:
    found = [s.value for s in samples if s.name == name
             and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def reads_of(page: dict[str, list]) -> float:
    return sum(s.value for s in page["workbench_operations"]
               if s.name == "workbench_operations_total" and s.labels["operation"] == "READ")


def check_histograms(page: dict[str, list]) -> None:
    """Every latency series: buckets in BOUNDS_S order, never decreasing, +Inf == _count."""
    samples = page["workbench_latency_seconds"]
    series = {tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
              for s in samples if s.name.endswith("_bucket")}
    assert series
    for key in series:
        labels = dict(key)
        buckets = [s for s in samples if s.name == "workbench_latency_seconds_bucket"
                   and {k: v for k, v in s.labels.items() if k != "le"} == labels]
        assert [float(s.labels["le"]) for s in buckets] == [*BOUNDS_S, float("inf")]
        counts = [s.value for s in buckets]
        assert counts == sorted(counts), (labels, counts)
        assert counts[-1] == value(samples, "workbench_latency_seconds_count", **labels)
        assert value(samples, "workbench_latency_seconds_sum", **labels) >= 0


def test_a_run_is_scraped_while_it_runs_and_agrees_with_its_result(tmp_path: Path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "run", "-P", WORKLOAD_A, "-db", "memory",
         "-p", "recordcount=200", "-p", "memory.preload=true", "-p", "operationcount=0",
         "-p", "maxexecutiontime=120", "-target", "4000", "-threads", "2",
         "--store", str(tmp_path / "runs.db"), "--metrics", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        said = {}
        deadline = time.monotonic() + 60
        while len(said) < 2 and time.monotonic() < deadline:  # the run's ID, then the address
            line = proc.stderr.readline()
            assert line, "the run ended before it served its metrics"
            for key, pattern in (("run", r"recording run (\d+) in"), ("url", r"serving metrics at (\S+)")):
                match = re.search(pattern, line)
                if match:
                    said[key] = match.group(1)
        pages: list[dict[str, list]] = []
        deadline = time.monotonic() + 60
        while len(pages) < 3 and time.monotonic() < deadline:  # three pages of three ticks
            page = parse(urllib.request.urlopen(said["url"], timeout=10).read().decode())
            if reads_of(page) > (reads_of(pages[-1]) if pages else 0):
                pages.append(page)
            time.sleep(0.05)  # (a poll: the condition is a new tick)
        assert len(pages) == 3, "no three pages with more operations each within 60 s"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    final = {op: int(n) for op, n in re.findall(r"^\[(\w+)\], Operations, (\d+)$", out, re.M)}
    run = {"phase": "run", "db": "memory", "client": "memory (in-process)", "run_id": said["run"]}
    before = {}
    for page in pages:
        for family, samples in page.items():
            assert family.startswith("workbench_")
            for s in samples:
                assert {k: s.labels[k] for k in run} == run, s
        ops = page["workbench_operations"]
        check_histograms(page)
        for op in ("READ", "UPDATE"):
            n = value(ops, "workbench_operations_total", operation=op, status="OK")
            assert before.get(op, 0) <= n <= final[op]  # a counter, and no more than the run did
            before[op] = n
            # at that moment: the latency histograms hold every operation the counters count
            lat = page["workbench_latency_seconds"]
            for time_ in ("service", "response"):  # paced: the response time from the intended start
                assert value(lat, "workbench_latency_seconds_count", operation=op, outcome="ok",
                             time=time_) == n
        assert "workbench_errors" in page and not page["workbench_errors"]  # the memory store fails nothing
        assert value(page["workbench_target_rate_ops"], "workbench_target_rate_ops") == 4000
        assert value(page["workbench_lanes"], "workbench_lanes") == 2
        assert 0 < value(page["workbench_achieved_rate_ops"], "workbench_achieved_rate_ops") < 6000
        assert value(page["workbench_throughput_ops"], "workbench_throughput_ops") > 0
    with pytest.raises(urllib.error.URLError):  # the endpoint ended with the phase
        urllib.request.urlopen(said["url"], timeout=10)


def test_a_port_in_use_is_one_line_naming_its_holder_and_exit_2_before_the_run(tmp_path: Path):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "workbench", "run", "-P", WORKLOAD_A, "-db", "memory",
             "-p", "memory.preload=true", "--no-store", "--metrics", str(port)],
            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"workbench: error: --metrics 127.0.0.1:{port}: the port is already in "
                               f"use by PID {os.getpid()} (")
    assert done.stdout == ""  # nothing ran


def test_addresses():
    assert parse_address("9464") == ("127.0.0.1", 9464)
    assert parse_address("0.0.0.0:9464") == ("0.0.0.0", 9464)
    assert parse_address("[::1]:9464") == ("::1", 9464)
    for bad in ("", "x", "host:", ":9464", "1:70000", "-1"):
        with pytest.raises(ConfigError, match="is not PORT or HOST:PORT"):
            parse_address(bad)


def histogram(*values_us: int):
    h = new_histogram()
    for v in values_us:
        h.record_value(v)
    return h


def test_families_from_figures_made_here():
    read = histogram(5, 5, 5, 150, 150, 2000, 20_000_000)
    lat = latency_of(read)
    at = dict(zip(BOUNDS_S, lat.at_or_below, strict=True))
    assert (at[0.00001], at[0.0001], at[0.00025], at[0.0025], at[10.0], lat.count) == (3, 3, 5, 6, 6, 7)
    assert lat.sum_s == pytest.approx((15 + 300 + 2000 + 20_000_000) / 1e6, rel=1e-3)
    empty = latency_of(new_histogram())
    assert (set(empty.at_or_below), empty.count, empty.sum_s) == ({0}, 0, 0.0)
    figures = RunFigures(
        elapsed_s=12.5, measured_s=10.0, operations=2_000, throughput=180.0, target=200.0, lanes=4,
        returns={"READ": {"OK": 1_500, "NOT_FOUND": 100, "ERROR": 7},
                 "UPDATE": {"OK": 390, "UNEXPECTED_STATE": 3}},
        latency={"READ": lat, "Intended-READ-FAILED": latency_of(histogram(900))},
        nodes={"127.0.0.2:9042": (1_200, 4), "127.0.0.1:9042": (800, 0)},
        error_kinds={"ReadTimeout": 5, "Unavailable": 2})
    labels = RunLabels("run", "cassandra", "native CQL v4", "17")
    registry = CollectorRegistry()
    registry.register(RunCollector(lambda: figures, lambda: labels))
    page = parse(generate_latest(registry).decode())  # through the text format and back
    run = {"phase": "run", "db": "cassandra", "client": "native CQL v4", "run_id": "17"}
    for samples in page.values():
        for s in samples:
            assert {k: s.labels[k] for k in run} == run
    ops, errors = page["workbench_operations"], page["workbench_errors"]
    assert value(ops, "workbench_operations_total", operation="READ", status="NOT_FOUND") == 100
    assert len([s for s in ops if s.name == "workbench_operations_total"]) == 5
    # errors: every status but OK, BATCHED_OK and NOT_FOUND (results/model.py's one rule)
    assert {(s.labels["operation"], s.labels["kind"], s.value) for s in errors
            if s.name == "workbench_errors_total"} == {("READ", "ERROR", 7),
                                                       ("UPDATE", "UNEXPECTED_STATE", 3)}
    check_histograms(page)
    lat_samples = page["workbench_latency_seconds"]
    assert value(lat_samples, "workbench_latency_seconds_bucket", operation="READ", outcome="ok",
                 time="service", le="0.00025") == 5
    assert value(lat_samples, "workbench_latency_seconds_count", operation="READ", outcome="failed",
                 time="response") == 1
    nodes = page["workbench_node_requests"] + page["workbench_node_failed"]
    assert value(nodes, "workbench_node_requests_total", node="127.0.0.2:9042") == 1_200
    assert value(nodes, "workbench_node_failed_total", node="127.0.0.2:9042") == 4
    assert value(nodes, "workbench_node_failed_total", node="127.0.0.1:9042") == 0
    client = page["workbench_client_errors"]  # the driver's kinds (Binding.error_kinds), live
    assert {(s.labels["kind"], s.value) for s in client if s.name == "workbench_client_errors_total"} == {
        ("ReadTimeout", 5), ("Unavailable", 2)}
    for name, expected in (("workbench_throughput_ops", 180.0), ("workbench_target_rate_ops", 200.0),
                           ("workbench_achieved_rate_ops", 200.0), ("workbench_lanes", 4),
                           ("workbench_elapsed_seconds", 12.5)):
        assert value(page[name], name) == expected
    assert [f.type for f in families(figures, labels)] == [
        "counter", "counter", "histogram", "counter", "counter", "counter",
        "gauge", "gauge", "gauge", "gauge", "gauge"]


def test_measurement_names():
    assert split_measurement("READ") == ("READ", "ok", "service")
    assert split_measurement("Intended-READ-MODIFY-WRITE-FAILED") == (
        "READ-MODIFY-WRITE", "failed", "response")
    assert split_measurement("SCAN-LATENCY-PER-RECORD") == ("SCAN-LATENCY-PER-RECORD", "ok", "service")


def test_prometheus_client_is_imported_only_by_a_run_with_metrics():
    code = ("import sys; import workbench.cli, workbench.commands.bench, workbench.drive.phase, "
            "workbench.drive.background; assert 'prometheus_client' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
