"""The demo as the app shows it: the same steps as `workbench demo --no-tui` (start each
database's default local preset, load workload A, run A and C, write the exports, take the
server down), run on the session's thread so the Run screen shows every phase as it happens.
"""

from __future__ import annotations

from pathlib import Path

from workbench.commands.demo import PRESETS, RUNS, WORKLOADS, demo_overrides
from workbench.commands.targets import binding_overrides
from workbench.results.exporters import export
from workbench.ui.session import RunRequest, Session


def demo_task(databases: list[str], records: int, bound: list[str], threads: int, out: Path):
    """A session task (see Session.start_task) running the demo's steps."""

    def task(session: Session) -> None:
        for db in databases:
            if session.stopping:
                return
            provider = cluster = None
            try:
                overrides = ["db=memory"]
                if db != "memory":
                    from workbench.clusters import presets

                    provider = session.provider(progress=lambda e: setattr(session, "activity", e.message))
                    session.activity = f"starting {PRESETS[db]} (jars are fetched the first time)"
                    cluster = provider.up(presets.load(PRESETS[db]))
                    overrides = binding_overrides(cluster)
                for phase, workload in RUNS:
                    session.activity = f"{phase} {workload} on {db}"
                    request = RunRequest(
                        (str(WORKLOADS / workload),),
                        tuple(demo_overrides(db, phase, overrides, records, bound, threads)),
                        (phase,), f"{db} {workload}", cluster.name if cluster else None)
                    done = session.run_phase(request, phase, source="demo")
                    if done is None or session.error:
                        return
                    stem = out / f"{db}-{workload}-{phase}"
                    export(done.result, f"ycsb={stem}.txt")
                    export(done.result, f"csv={stem}.csv")
                    if done.result.outcome != "completed":
                        return
            finally:
                if cluster is not None:
                    session.activity = f"stopping {cluster.name}"
                    provider.down(cluster.name)
        session.activity = f"demo done: exports written to {out}/ (4 Compare shows the runs side by side)"

    return task
