"""`runs compare --tolerance FIGURE=PERCENT ...`: the same parser as `workbench check`'s, for the
figures runs compare judges (throughput, mean, p99). A tolerance wider than a difference turns its
verdict from worse to same; an unknown figure or a value that is not a number is one line, exit
status 2 (issue 55, 4 and 5).

The two runs are made up and stored: twenty 1-second intervals each, the second run 15% slower
with little noise, so its interval lies wholly beyond -10% and wholly within -20%.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.inprocess import workbench
from workbench.results.model import Interval, RunResult
from workbench.results.store import RunStore


def _run(per_second: int) -> RunResult:
    ops = [per_second + (15 if i % 2 else -15) for i in range(20)]
    intervals = [Interval(i + 1.0, 1.0, n, sum(ops[:i + 1])) for i, n in enumerate(ops)]
    return RunResult("run", "memory", sum(ops), 20_000, sum(ops) / 20, intervals=intervals)


def _stored(tmp_path: Path) -> Path:
    store = tmp_path / "runs.db"
    with RunStore(store) as runs:
        for per_second in (1000, 850):
            runs.add(_run(per_second), source="test", workload="workloada")
    return store


def _throughput_row(stdout: str) -> str:
    lines = [" ".join(line.split()) for line in stdout.splitlines()]
    return next(line for line in lines if line.startswith("throughput ops/s ("))


def test_a_wider_tolerance_turns_worse_into_same(tmp_path):
    store = _stored(tmp_path)
    default = workbench(store, "runs", "compare", "1", "2")
    assert default.returncode == 0, default.stderr
    row = _throughput_row(default.stdout)
    assert row.startswith("throughput ops/s (-10%)") and row.endswith(" worse"), row
    assert "-15.0%" in row
    wider = workbench(store, "runs", "compare", "1", "2", "--tolerance", "throughput=20", "p99=40")
    assert wider.returncode == 0, wider.stderr
    row = _throughput_row(wider.stdout)
    assert row.startswith("throughput ops/s (-20%)") and row.endswith(" same"), row
    assert "-15.0%" in row  # the same difference and interval, held to another bar


def one_line_error(proc, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("workbench: error:"), proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_bad_tolerances_are_one_line_exit_2(tmp_path):
    store = _stored(tmp_path)
    # errors is a figure of check, not of runs compare: named, with the figures that are
    one_line_error(workbench(store, "runs", "compare", "1", "2", "--tolerance", "errors=1"),
                   "--tolerance errors=1: unknown figure 'errors'", "throughput, mean, p99")
    one_line_error(workbench(store, "runs", "compare", "1", "2", "--tolerance", "throughput=ten"),
                   "'ten' is not a number of percent")
    one_line_error(workbench(store, "runs", "compare", "1", "2", "--tolerance", "p99"),
                   "--tolerance p99 is not FIGURE=PERCENT")
