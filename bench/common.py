"""What the bench scripts share: clocks, and workload A for the bare loops they compare with.

A bare loop is written directly on a driver. Each bench compares the workbench with two:
- *replay*: requests made up front (keys, fields, one constant value), so the loop does nothing
  per operation but call the driver. It is the driver's ceiling, and it skips work every YCSB
  client must do per operation.
- *workload*: workload A's own work done inline, the way a short program on the driver would do
  it: a scrambled-zipfian key per operation (YCSB's generator and key names), a 50/50 choice
  of read or update, a fresh random 100-byte value per update, rows read into dicts, and one
  latency taken per operation. It is the loop the workbench replaces.
"""

from __future__ import annotations

import random
import resource
import statistics
import time

from workbench.config.keys import build_key_name
from workbench.core.generators.scrambled import ScrambledZipfian
from workbench.core.values import random_value

FIELDS = [f"field{i}" for i in range(10)]


def cpu_seconds() -> float:
    """This process's user+system CPU time: every thread, the drivers' IO threads too."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def timed():
    """Start a clock; calling the result returns (wall s, CPU s) since then."""
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    return lambda: (time.perf_counter() - wall0, cpu_seconds() - cpu0)


def make_plan(records: int, ops: int) -> list[tuple[bool, str, int]]:
    """The replay loops' requests: (is_read, key, field index), scrambled zipfian keys."""
    rng = random.Random(7)
    zipf = ScrambledZipfian(rng, 0, records - 1)
    return [(rng.random() < 0.5, build_key_name(zipf.next()), rng.randrange(10)) for _ in range(ops)]


class WorkloadA:
    """Workload A's choices for one lane of a *workload* bare loop, made per operation."""

    def __init__(self, seed: int, records: int) -> None:
        self.rng = rng = random.Random(seed)
        self.zipf = ScrambledZipfian(rng, 0, records - 1)

    def next(self) -> tuple[bool, str, int, str | None]:
        """(is_read, key, field index, value of an update)."""
        rng = self.rng
        key = build_key_name(self.zipf.next())
        if rng.random() < 0.5:
            return True, key, 0, None
        return False, key, rng.randrange(10), random_value(rng, 100)


def compare_loops(replay, workload, workbench, repeat: int) -> None:
    """Run the three trials (each returns (ops/s, CPU us/op)) `repeat` times and print the table.

    One untimed trial of each comes first (the server's JIT and caches, the drivers' pools), and
    the order rotates per repetition, because the machine's noise drifts."""
    trials = {"replay": replay, "workload": workload, "workbench": workbench}
    for trial in trials.values():
        trial()
    rows = []
    for rep in range(repeat):
        names = list(trials)
        names = names[rep % 3:] + names[:rep % 3]
        got = {name: trials[name]() for name in names}
        rows.append((*got["replay"], *got["workload"], *got["workbench"]))
    print_comparison(rows)


def print_comparison(rows: list[tuple[float, float, float, float, float, float]]) -> None:
    """rows: (replay ops/s, us/op, workload ops/s, us/op, workbench ops/s, us/op) per repetition."""
    print("rep  replay ops/s  us/op  workload ops/s  us/op  workbench ops/s  us/op  "
          "wb/replay  wb/workload")
    for rep, (r, rc, w, wc, b, bc) in enumerate(rows):
        print(f"{rep:3d}  {r:12.0f}  {rc:5.0f}  {w:14.0f}  {wc:5.0f}  {b:15.0f}  {bc:5.0f}  "
              f"{b / r:9.2f}  {b / w:11.2f}", flush=True)
    for name, i in (("replay", 0), ("workload", 2)):
        ratios = [row[4] / row[i] for row in rows]
        print(f"median ratio workbench/{name} loop {statistics.median(ratios):.2f} "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f})")
