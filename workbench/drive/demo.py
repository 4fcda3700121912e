"""The demo's one script, for the command line (`workbench demo --no-tui`, commands/demo.py) and
the app (`demo_task`, on the session's thread so that the Run screen shows every phase): start
each database's default local preset, load workload A, run A and C, write the exports, take the
server down. Both run these steps with the same overrides, servers and exports; they differ only
in how a phase is shown (status lines, or the Run screen).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.config import catalog
from workbench.databases import database, databases
from workbench.drive.session import RunRequest, Session
from workbench.drive.targets import binding_overrides
from workbench.errors import ClusterError
from workbench.results.exporters import export
from workbench.results.model import RunResult

WORKLOADS = catalog.SHIPPED_WORKLOADS
RUNS = (("load", "workloada"), ("run", "workloada"), ("run", "workloadc"))


def demo_databases() -> tuple[str, ...]:
    """The databases the demo can run: those in-process and those with a demo preset."""
    return tuple(d.name for d in databases() if d.in_process or d.demo_preset)


def demo_overrides(db: str, phase: str, overrides: list[str], records: int, bound: list[str],
                   threads: int) -> list[str]:
    """The -p overrides of one demo step; `bound` ends a run phase (commands/demo.py's
    _run_bound), a load ends with its records: a load drops the table, a run keeps the load's."""
    common = [*overrides, f"recordcount={records}", f"threadcount={threads}", "status.interval=5"]
    common += bound if phase == "run" else []
    described = database(db)
    if described.drop:
        common.append(f"{described.drop}={'true' if phase == 'load' else 'false'}")
    return common + list(described.demo_properties)


def write_exports(result: RunResult, out: Path, db: str, workload: str, phase: str) -> None:
    """A step's YCSB text and CSV files in the demo's folder."""
    stem = out / f"{db}-{workload}-{phase}"
    export(result, f"ycsb={stem}.txt")
    export(result, f"csv={stem}.csv")


class DemoServer:
    """The database's default local preset, started on entry and always taken down on exit;
    the memory binding needs none. A cluster of the preset's name that runs already is not the
    demo's: up() refuses it, and it stays."""

    def __init__(self, db: str, say: Callable[[str], None], provider: Any = None) -> None:
        self.db, self.say, self.provider = db, say, provider
        self.cluster: Any = None
        self.overrides: list[str] = [f"db={db}"]

    def __enter__(self) -> DemoServer:
        if database(self.db).in_process:
            return self
        from workbench import interrupts
        from workbench.clusters import presets
        from workbench.clusters.local import LocalProvider

        name = database(self.db).demo_preset
        if self.provider is None:
            self.provider = LocalProvider()
        provider = self.provider
        try:
            running_before = name in provider.clusters() and any(
                n.status != "down" for n in provider.status(name).nodes)
        except ClusterError:  # a state file it cannot read: up() says so; never take it down
            running_before = True
        self.say(f"starting {name} (jars are fetched the first time)")
        try:
            self.cluster = provider.up(presets.load(name))
            self.overrides = binding_overrides(self.cluster)
            interrupts.check()
        except BaseException as exc:
            # A Ctrl-C after the nodes are up but before the `with` holds them (the end of up(),
            # the lines above) would leave them running: __exit__ is not called for an __enter__
            # that raised. (A failed start has stopped its own nodes already.)
            if not running_before and not isinstance(exc, ClusterError) and name in provider.clusters():
                self.say(f"stopping {name}")
                with contextlib.suppress(Exception):
                    provider.down(name)
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self.cluster is not None:
            self.say(f"stopping {self.cluster.name}")
            self.provider.down(self.cluster.name)


def demo_task(databases: list[str], records: int, bound: list[str], threads: int, out: Path):
    """A session task (see Session.start_task) running the demo's steps."""

    def task(session: Session) -> None:
        def say(message: str) -> None:
            session.activity = message

        for db in databases:
            if session.stopping:
                return
            in_process = database(db).in_process
            provider = None if in_process else session.provider(progress=lambda e: say(e.message))
            with DemoServer(db, say, provider) as server:
                for phase, workload in RUNS:
                    say(f"{phase} {workload} on {db}")
                    request = RunRequest(
                        (str(WORKLOADS / workload),),
                        tuple(demo_overrides(db, phase, server.overrides, records, bound, threads)),
                        (phase,), f"{db} {workload}", server.cluster.name if server.cluster else None)
                    done = session.run_phase(request, phase, source="demo")
                    if done is None or session.error:
                        return
                    write_exports(done.result, out, db, workload, phase)
                    if done.result.outcome != "completed":
                        return
        say(f"demo done: exports written to {out}/ (4 Compare shows the runs side by side)")

    return task
