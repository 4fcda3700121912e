"""The demo as the app shows it: the same steps as `workbench demo --no-tui` (start each
database's default local preset, load workload A, run A and C, write the exports, take the
server down), run on the session's thread so the Run screen shows every phase as it happens.
"""

from __future__ import annotations

from pathlib import Path

from workbench.config import catalog
from workbench.drive.session import RunRequest, Session
from workbench.drive.targets import binding_overrides
from workbench.results.exporters import export

WORKLOADS = catalog.SHIPPED_WORKLOADS
PRESETS = {"cassandra": "cassandra-single", "hbase": "hbase-standalone"}
RUNS = (("load", "workloada"), ("run", "workloada"), ("run", "workloadc"))


def demo_overrides(db: str, phase: str, overrides: list[str], records: int, bound: list[str],
                   threads: int) -> list[str]:
    """The -p overrides of one demo step (the app's demo runs the very same steps); `bound`
    ends a run phase (_run_bound), a load ends with its records."""
    common = [*overrides, f"recordcount={records}", f"threadcount={threads}", "status.interval=5"]
    common += bound if phase == "run" else []
    if db == "cassandra":
        common.append("cassandra.drop=true" if phase == "load" else "cassandra.drop=false")
    if db == "hbase":
        common.append("hbase.drop=true" if phase == "load" else "hbase.drop=false")
    if db == "memory":
        common += ["memory.store=demo"]
    return common


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
