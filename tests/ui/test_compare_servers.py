"""The Compare screen shows each node's CPU beside the client's figures (issue 54, 1): a line per
node with each run's mean cores, from the runs' per-second server figures."""

from __future__ import annotations

from test_compare import compared, shown

from workbench.drive.session import FinishedRun
from workbench.results.model import Interval, Measurement, RunResult
from workbench.ui.app import WorkbenchApp


def _run(cores: list[float]) -> RunResult:
    intervals = [Interval(float(k + 1), 1.0, 100, 100 * (k + 1),
                          server={"127.0.0.2": {"cpu": c}, "client": {"cpu": 0.25}})
                 for k, c in enumerate(cores)]
    read = Measurement("READ", 100 * len(cores), 500.0, 100, 900, {50.0: 480, 99.0: 880})
    return RunResult("run", "cassandra", 1000 * len(cores), 100 * len(cores), 100.0, [read],
                     intervals=intervals)


async def test_each_node_has_a_cpu_line(session):
    session.finished.append(FinishedRun("before", _run([1.0, 2.0])))
    session.finished.append(FinishedRun("after", _run([0.5, 0.5])))
    app = WorkbenchApp(session, mode="compare")
    async with app.run_test(size=(120, 50)) as pilot:
        await compared(pilot)
        lines = [" ".join(line.split()) for line in shown(app).splitlines()]
        assert "cpu 127.0.0.2 cores 1.50 0.50" in lines
        assert "cpu client cores 0.25 0.25" in lines
