"""A run recorded live keeps a flat footprint (issue 52, 11): the run store's writer does not keep
the pages of the intervals it wrote (SQLite's page cache, 2 MB by default, grew by every
interval's row for the first minutes of a run), and every interval is in the store."""

from __future__ import annotations

import ctypes
import random
import sqlite3
import time
from pathlib import Path

import pytest
from engine_helpers import make_spec

from workbench.core.controller import StoredInterval
from workbench.metrics.histograms import encode, from_counts
from workbench.metrics.snapshot import OpStats
from workbench.results.recording import Recording


def sqlite_memory_used():
    """sqlite3_memory_used() of the SQLite library this process's sqlite3 module runs on."""
    paths = {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
             if "libsqlite3" in line}
    if len(paths) != 1:
        pytest.skip("the sqlite3 module's SQLite is not a shared library this test can find")
    lib = ctypes.CDLL(paths.pop())  # (the library already loaded: its own memory counters)
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return lib.sqlite3_memory_used


def an_interval(elapsed_s: float) -> StoredInterval:
    """One tick as a real server's latencies make it: four histograms of 9,000 values spread over
    a few milliseconds (the row is about 7.5 KB of JSON)."""
    rng = random.Random(52)
    histograms = {}
    for name in ("READ", "UPDATE", "Intended-READ", "Intended-UPDATE"):
        counts: dict[int, int] = {}
        for _ in range(9000):
            us = int(rng.lognormvariate(6.5, 0.6))
            counts[us] = counts.get(us, 0) + 1
        histograms[name] = from_counts(counts)
    return StoredInterval(elapsed_s, 1.0, 18000, int(elapsed_s) * 18000, 16, 0.0, False,
                          {n: OpStats.of(h) for n, h in histograms.items()},
                          {"READ": {"OK": 9000}, "UPDATE": {"OK": 9000}},
                          {n: encode(h) for n, h in histograms.items()},
                          nodes={"127.0.0.1:9042": (18000, 0)})


def written(recording: Recording, n: int) -> None:
    deadline = time.monotonic() + 120
    while recording._seq < n:  # the writer thread commits them one by one
        assert recording.error is None and time.monotonic() < deadline
        time.sleep(0.01)


def test_the_store_writer_does_not_keep_the_intervals_it_wrote(tmp_path):
    used = sqlite_memory_used()
    spec, props = make_spec("recordcount=10")
    recording = Recording.open(tmp_path / "runs.db", spec, props.as_dict(), phase="run", source="run")
    stored = an_interval(1.0)
    try:
        for seq in range(50):
            recording._on_tick(an_interval(seq + 1.0) if seq == 0 else stored, [])
        written(recording, 50)
        before = used()
        for _ in range(450):  # 3.4 MB of rows: more than SQLite's default cache holds
            recording._on_tick(stored, [])
        written(recording, 500)
        grown = used() - before
    finally:
        recording.finish(None, "the test is over")
    # Without a bound of its own the writer's cache grows by each row until 2 MB (+1.7 MB here).
    assert grown < 400_000, f"SQLite's memory grew by {grown:,} bytes over 450 intervals"
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        count, last = conn.execute("SELECT count(*), max(seq) FROM intervals WHERE run_id = ?",
                                   (recording.run_id,)).fetchone()
    assert (count, last) == (500, 499)  # every interval is in the store
