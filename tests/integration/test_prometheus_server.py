"""A real Prometheus (Debian's `prometheus` package, /usr/bin/prometheus; .ci/run installs it)
scrapes `workbench run --metrics` on a real Cassandra node (the session's `cassandra_node`) every
second, on loopback, and the figures are queried back over its HTTP API: operations by operation
and status, requests per node, the latency histogram through histogram_quantile, the node's CPU
(workbench_server_cpu: its process read from /proc, so the run names the cluster), and the last
value scraped no more than the run's own result.

Prometheus runs from a temporary config and data directory on a free loopback port, and is
stopped by its PID at the end whatever happened.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.servers
ROOT = Path(__file__).resolve().parents[2]
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")
PROMETHEUS = Path("/usr/bin/prometheus")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


def wait_for(what: str, check, timeout: float = 60.0):
    """check() until it gives something true (polled, not slept on); its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = check()
        except (urllib.error.URLError, ConnectionError):
            found = None
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


class Prometheus:
    def __init__(self, api: str) -> None:
        self.api = api

    def query(self, promql: str) -> list[dict]:
        answer = get(f"{self.api}/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    def values(self, promql: str) -> dict[tuple, float]:
        """The instant vector as {(label values but __name__, job, instance): value}."""
        return {tuple(sorted((k, v) for k, v in r["metric"].items()
                             if k not in ("__name__", "job", "instance"))): float(r["value"][1])
                for r in self.query(promql)}


@pytest.fixture
def prometheus(tmp_path: Path):
    """A Prometheus of the test's own scraping 127.0.0.1:<port> every second: (it, port)."""
    if not PROMETHEUS.exists():
        pytest.skip("Debian's prometheus package is not installed (.ci/run installs it)")
    target, web = free_port(), free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: workbench\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{target}']\n")
    log = (tmp_path / "prometheus.log").open("w")
    proc = subprocess.Popen([str(PROMETHEUS), f"--config.file={config}",
                             f"--web.listen-address=127.0.0.1:{web}",
                             f"--storage.tsdb.path={tmp_path / 'tsdb'}"],
                            stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    api = f"http://127.0.0.1:{web}"
    try:
        def ready():
            assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
            with urllib.request.urlopen(f"{api}/-/ready", timeout=5) as answer:
                return answer.status == 200
        wait_for("Prometheus ready", ready)
        # Its discovery hands the targets to the scraper some seconds after the start: a run
        # started before that would go unscraped for its first seconds.
        wait_for("the target is active", lambda: get(f"{api}/api/v1/targets")["data"]["activeTargets"])
        yield Prometheus(api), target
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_prometheus_scrapes_a_run_on_cassandra_and_answers_for_it(suite_servers, cassandra_node, prometheus,
                                                                    tmp_path: Path):
    prom, port = prometheus
    host, cql = cassandra_node.contact_points[0]
    node = f"{host}:{cql}"
    # --cluster: the run knows the node's process, and samples its CPU from /proc
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    props = ["--cluster", cassandra_node.name, "-p", f"cassandra.keyspace=prom_{os.getpid()}",
             "-p", "recordcount=500"]
    load = subprocess.run([sys.executable, "-m", "workbench", "load", "-P", WORKLOAD_A, *props, "-q",
                           "--no-store"], capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert load.returncode == 0, load.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "run", "-P", WORKLOAD_A, *props, "-p", "operationcount=0",
         "-p", "maxexecutiontime=240", "-target", "400", "-threads", "4",
         "--store", str(tmp_path / "runs.db"), "--metrics", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    try:
        run_id = None
        while run_id is None:
            line = proc.stderr.readline()
            assert line, "the run ended before it started"
            match = re.search(r"recording run (\d+) in", line)
            run_id = match.group(1) if match else None
        this = f'run_id="{run_id}",db="cassandra",phase="run"'

        def reads() -> float | None:
            got = prom.values(f'workbench_operations_total{{{this},operation="READ",status="OK"}}')
            return next(iter(got.values()), None)

        first = wait_for("a scrape with READs", reads)
        wait_for("a later scrape with more READs", lambda: (reads() or 0) > first)
        requests = prom.values(f"workbench_node_requests_total{{{this}}}")
        assert list(requests) == [(("client", "native CQL v4"), ("db", "cassandra"), ("node", node),
                                   ("phase", "run"), ("run_id", run_id))], requests
        assert next(iter(requests.values())) > 0
        assert prom.values(f"workbench_node_failed_total{{{this}}}") == {
            key: 0.0 for key in requests}
        assert prom.values(f"workbench_target_rate_ops{{{this}}}") and all(
            v == 400 for v in prom.values(f"workbench_target_rate_ops{{{this}}}").values())
        p99 = prom.values(f'histogram_quantile(0.99, workbench_latency_seconds_bucket{{{this},'
                          f'operation="READ",outcome="ok",time="response"}})')
        assert len(p99) == 1 and 0 < next(iter(p99.values())) <= 10, p99
        # the servers' side: the node's process (by its address) and the client's own, busy
        for who in (host, "client"):
            cpu = wait_for(f"{who}'s CPU scraped", lambda who=who: prom.values(
                f'max_over_time(workbench_server_cpu{{{this},node="{who}"}}[10m])'))
            assert list(cpu) == [(("client", "native CQL v4"), ("db", "cassandra"), ("node", who),
                                  ("phase", "run"), ("run_id", run_id))], cpu
            assert next(iter(cpu.values())) > 0, (who, cpu)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    final = int(re.search(r"^\[READ\], Operations, (\d+)$", out, re.M).group(1))
    # the endpoint closed with the run: the last value scraped is at most the run's own count
    last = prom.values(f'last_over_time(workbench_operations_total{{{this},operation="READ"}}[10m])')
    assert len(last) == 1 and first < next(iter(last.values())) <= final, (last, final)
