"""The client is a suspect too (issue 54, 8): every tick carries the lanes' event-loop lag and, paced,
how late operations started after their intended time, as the "client" node's figures of the
interval (live and stored); a binding that holds the loop shows as loop lag, one that only makes
its lane wait does not."""

from __future__ import annotations

import pytest
from engine_helpers import cleanup_store, make_spec, register_stall_binding, run_phase

from workbench.metrics.server import CLIENT

STALL_MS = 400


def _stalled(block: bool, workers: int):
    register_stall_binding()
    spec, _ = make_spec("db=stall", "recordcount=100", "operationcount=1200", "target=1000",
                        f"threadcount={workers}", "readproportion=1", "updateproportion=0",
                        f"workers={workers}", f"stall.ms={STALL_MS}", f"stall.block={str(block).lower()}")
    try:
        outcome, snapshots = run_phase(spec)
    finally:
        cleanup_store(spec)
    return outcome, snapshots


@pytest.mark.parametrize("workers", [1, 2])
def test_a_binding_that_blocks_the_loop_shows_as_loop_lag_and_start_gap(workers):
    outcome, snapshots = _stalled(True, workers)
    # (a tick whose drain no worker answered in time carries none: on a loaded machine, some)
    client = [s.server.get(CLIENT, {}) for s in snapshots]
    assert sum("loop_lag_ms" in c and "start_gap_ms" in c for c in client) >= len(client) / 2, client
    assert max(c.get("loop_lag_ms", 0.0) for c in client) >= STALL_MS * 0.8
    assert max(c.get("start_gap_ms", 0.0) for c in client) >= STALL_MS * 0.8
    # the same figures in the stored intervals (the run store, the exports)
    stored = [i.server.get(CLIENT, {}).get("loop_lag_ms") for i in outcome.intervals]
    assert stored == [c.get("loop_lag_ms") for c in client]


def test_a_lane_that_waits_without_blocking_leaves_the_loop_free():
    _outcome, snapshots = _stalled(False, 1)
    client = [s.server.get(CLIENT, {}) for s in snapshots]
    # the lane's operations started late (the schedule went on without it), the loop kept turning
    assert max(c["start_gap_ms"] for c in client) >= STALL_MS * 0.8
    assert max(c["loop_lag_ms"] for c in client) < STALL_MS / 2


def test_an_unpaced_run_has_no_start_gap():
    spec, _ = make_spec("recordcount=100", "operationcount=3000", "threadcount=2")
    try:
        _outcome, snapshots = run_phase(spec)
    finally:
        cleanup_store(spec)
    client = [s.server.get(CLIENT, {}) for s in snapshots]
    assert all("start_gap_ms" not in c for c in client) and any("loop_lag_ms" in c for c in client)


def test_a_runs_verdict_counts_its_whole_measured_seconds_on_its_manifests_cores():
    from workbench.results.client_limits import of_run
    from workbench.results.model import Interval, RunResult

    def second(elapsed: float, cpu: float | None, duration: float = 1.0, warmup: bool = False):
        figures = {"loop_lag_ms": 2.0, **({"cpu": cpu} if cpu is not None else {})}
        return Interval(elapsed, duration, 100, 100, warmup=warmup,
                        server={CLIENT: figures, "127.0.0.1": {"cpu": 0.1}})

    # a warm-up second at rest, three busy seconds, and the run's 2 ms last tick without figures
    intervals = [second(1, 0.0, warmup=True), second(2, 0.9), second(3, 0.9), second(4, 0.9),
                 second(4.002, None, duration=0.002)]
    result = RunResult("run", "memory", 4002, 400, 100.0, intervals=intervals,
                       manifest={"host": {"cpus": 4, "cpus_usable": 1}})
    assert of_run(result).line == "client-limited: the workers used 0.9 of 1 cores; the servers' CPU was 0.1"
    assert of_run(result, cores=4).line == ""
