"""`workbench check`'s suite: a standard sanity check of a cluster (or the memory binding).

    load   its own table, `workbench_check` (table=, never the user's) when a probe of 100 reads on
           it fails or misses a record; on the memory binding every run's worker process preloads
           its records (memory.preload), so it is loaded every time
    settle on a cluster the workbench started here, its table flushed and compacted (a major
           compaction where the server has one: Cassandra's `nodetool compact`), no compaction
           running (clusters/settle.py), so each check meets the same files; elsewhere said once
    A      workload A at its maximum throughput (closed loop: no target unless -target caps it),
           warm-up excluded (measurement.warmup), until the throughput of three 2-second windows
           agrees within 5% after the minimum (measurement.minimum, measurement.stable) or the
           time is up (maxexecutiontime)
    C      workload C the same way
    paced  workload A paced at half A's maximum: response times (Intended-READ, Intended-UPDATE,
           coordinated omission corrected), for their p99

              warm-up  minimum  cap (maxexecutiontime)   whole suite at most
    default   5 s      20 s     50 s (A, C), 40 s paced  140 s + the load and settle
    --quick   3 s      12 s     16 s each                 48 s + the load and settle

Every run's lanes run in a worker process (as in the app), so that the controller's per-second
ticks never wait for a lane. The paced run's achieved rate against the offered one, and whether
the load was delivered (results/paced.py), print under the verdicts.
Each run is recorded in the run store like any other (source "check", workload "workbench-check
A|C|paced|load"). -p overrides go after the check's own settings (so `-p maxexecutiontime=...`
changes them), except the table. WORKBENCH_CHECK_SCALE (for tests) multiplies every duration and
the snapshot interval (at most 1 s) by its value, keeping the measured intervals' number.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.config.spec import spec_from_args
from workbench.databases import in_process, server
from workbench.drive.phase import StoreChoice, execute_phase
from workbench.errors import ConfigError, WorkbenchError
from workbench.results import baseline as baseline_file
from workbench.results.manifest import build_manifest
from workbench.results.model import RunResult
from workbench.results.significance import run_series
from workbench.results.store import RunStore

if TYPE_CHECKING:
    from workbench.clusters.base import Cluster

TABLE = "workbench_check"
SOURCE = "check"
WORKLOAD = "workbench-check"
RECORDCOUNT = 10_000
SCALE_ENV = "WORKBENCH_CHECK_SCALE"
# (warm-up s, minimum s, cap s of A and C, cap s of the paced run)
DURATIONS = {False: (5.0, 20.0, 50.0, 40.0), True: (3.0, 12.0, 16.0, 16.0)}
STABLE_PCT = 5
SETTLE_TIMEOUT_S = 120.0  # the table's flush and compaction before A (10,000 records: seconds)
# Properties that do not change what the suite measures, left out of its workload digest.
NOT_WORKLOAD = ("maxexecutiontime", "measurement.", "snapshot.interval", "status.interval", "target",
                "label", "db", "workers", "ray.", "eventloop", "table", "seed", "hdrhistogram.")


@dataclass(frozen=True)
class CheckPlan:
    """What the suite runs: the -P files and -p overrides of every phase but its own settings."""

    files: tuple[str, ...]  # the user's -P files, after the shipped workload's
    overrides: tuple[str, ...]  # --cluster's, the user's -p and flags (threads, target, db)
    quick: bool = False
    cluster: Cluster | None = None
    scale: float = 1.0

    def settings(self, phase: str) -> list[str]:
        warmup, minimum, cap, paced_cap = (x * self.scale for x in DURATIONS[self.quick])
        out = [f"recordcount={RECORDCOUNT}", f"snapshot.interval={min(1.0, self.scale):g}"]
        if phase in ("A", "C"):
            out += [f"measurement.warmup={warmup:g}", f"measurement.minimum={minimum:g}",
                    f"measurement.stable={STABLE_PCT}", f"maxexecutiontime={math.ceil(cap)}"]
        elif phase == "paced":
            out += [f"measurement.warmup={warmup:g}", f"measurement.minimum={minimum:g}",
                    f"maxexecutiontime={math.ceil(paced_cap)}"]
        return out

    def phase_args(self, phase: str, target: float | None = None) -> tuple[list[str], list[str], str]:
        """-P files, -p overrides and the YCSB phase (load or run) of a phase of the suite."""
        shipped = "workloadc" if phase == "C" else "workloada"
        overrides = [*self.settings(phase), *self.overrides]
        if phase == "probe":
            overrides += ["operationcount=100", "maxexecutiontime=30"]
        if target is not None:
            overrides.append(f"target={target:g}")
        overrides.append(f"table={TABLE}")  # last: never the user's table
        return [shipped, *self.files], overrides, "load" if phase == "load" else "run"

    def spec(self, phase: str, target: float | None = None) -> tuple[Any, dict[str, str], list[str], str]:
        files, overrides, ycsb_phase = self.phase_args(phase, target)
        spec, props = spec_from_args(files, overrides, ycsb_phase)
        return spec, props.as_dict(), files, ycsb_phase

    def workload_digest(self) -> str:
        return workload_digest({phase: self.spec(phase)[1] for phase in ("A", "C")})

    def manifest(self) -> dict[str, Any]:
        """The manifest phase A will have (before running it: checked against the baseline's)."""
        spec, props, files, ycsb_phase = self.spec("A")
        return build_manifest(spec, props, ycsb_phase, files=files, cluster=self.cluster)


def workload_digest(props: dict[str, dict[str, str]]) -> str:
    """sha256 of what A and C measure (phase -> properties): their properties but timing, target,
    the table and the connection (a binding's own properties)."""
    from workbench.config.bindings import binding_for_property  # noqa: PLC0415

    shown = {phase: sorted((k, v) for k, v in p.items() if binding_for_property(k) is None and not any(
        k == n or (n.endswith(".") and k.startswith(n)) for n in NOT_WORKLOAD)) for phase, p in props.items()}
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()


def scale_from_env() -> float:
    text = os.environ.get(SCALE_ENV, "")
    if not text:
        return 1.0
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 10:
        raise ConfigError(f"{SCALE_ENV}={text} is not a factor between 0 and 10", f"unset {SCALE_ENV}")
    return value


@dataclass
class CheckRun:
    """The suite's runs (A, C, paced) and their IDs in the run store."""

    results: dict[str, RunResult] = field(default_factory=dict)
    run_ids: dict[str, int | None] = field(default_factory=dict)
    loaded: bool = False


def run_check(plan: CheckPlan, *, store: StoreChoice = None, status: bool = True,
              say: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> CheckRun:
    """Load when needed, then A, C and the paced run, each recorded in the run store."""
    out = CheckRun()
    spec, _, _, _ = plan.spec("A")
    if not in_process(spec.db) and not _probe(plan):  # in-process: each run's worker preloads it
        say(f"workbench: check: loading {RECORDCOUNT if 'recordcount' not in _user_keys(plan) else 'the'} "
            f"records into its own table {TABLE}")
        _phase(plan, "load", out, store, status)
        out.loaded = True
    _settle(plan, say)
    for phase in ("A", "C"):
        say(f"workbench: check: workload {phase} at its maximum throughput")
        _phase(plan, phase, out, store, status)
    series = run_series(out.results["A"], "throughput")
    if not series or not sum(series):
        raise WorkbenchError("check: workload A measured no throughput, so no paced rate can be set",
                             "see the run's errors above; is the database up?")
    target = sum(series) / len(series) / 2
    say(f"workbench: check: workload A paced at {target:,.0f} ops/s (half its maximum)")
    _phase(plan, "paced", out, store, status, target)
    return out


def _settle(plan: CheckPlan, say: Callable[[str], None]) -> str:
    """Before A, on a cluster the workbench started here: the check's table flushed and compacted
    and no compaction running (clusters/settle.py), so that every check measures the same files
    and no background work that earlier runs left. Measured on a Cassandra node (BENCHMARKS.md,
    `bench_check_error_rate.py`): without it, checks in a row saw the table's SSTables grow from
    one to three and throughput C fall from 29,000 to 16,000 ops/s. Elsewhere it is said once."""
    cluster = plan.cluster
    if cluster is None:  # the memory binding: each run's worker loads a table of its own
        return ""
    from workbench.clusters.settle import settle  # noqa: PLC0415

    why = ""
    if cluster.provider != "local":
        why = (f"the workbench flushes and compacts only the clusters it started here, not a "
               f"{cluster.provider} {cluster.kind} cluster")
    elif not server(cluster.kind).settle:
        why = f"the workbench has no settle step for {cluster.kind}"
    if why:
        said = f"not settled: the check measures the table as earlier runs left it ({why})"
        say(f"workbench: check: {said}")
        return said
    spec, _, _, _ = plan.spec("A")
    lines: list[str] = []
    settle(cluster, properties=spec.binding_properties, table=spec.table,
           timeout=SETTLE_TIMEOUT_S, say=lines.append, compact=True)
    said = lines[-1].strip() if lines else "settled"
    say(f"workbench: check: {said}")
    return said


def _user_keys(plan: CheckPlan) -> set[str]:
    return {o.partition("=")[0] for o in plan.overrides}


def _probe(plan: CheckPlan) -> bool:
    """Does the check's table hold its records? 100 reads, not recorded; any failure says no."""
    spec, props, files, _ = plan.spec("probe")
    try:
        done = execute_phase(spec, props, "run", status=False, store=False, files=files, cluster=plan.cluster)
    except WorkbenchError:
        return False
    result = done.result
    return result.outcome == "completed" and result.operations > 0 and not result.error_count()


def _phase(plan: CheckPlan, phase: str, out: CheckRun, store: StoreChoice, status: bool,
           target: float | None = None) -> None:
    spec, props, files, ycsb_phase = plan.spec(phase, target)
    done = execute_phase(spec, props, ycsb_phase, status=status, store=store, source=SOURCE,
                         workload=f"{WORKLOAD} {phase}", cluster=plan.cluster, files=files, processes=True)
    result = done.result
    if result.outcome in ("failed", "interrupted"):
        raise WorkbenchError(f"check: the {phase} run {result.outcome}: "
                             f"{result.environment.get('error', 'see above')}",
                             "fix the cause and run the check again")
    if phase != "load":
        out.results[phase] = result
        out.run_ids[phase] = done.run_id


def previous_check(store: StoreChoice, db: str,
                   cluster: str | None) -> tuple[dict[str, RunResult], str] | None:
    """The newest completed check on the same database and cluster in the run store (its runs
    A, C, paced) and how to say it, or None."""
    if store is False:
        return None
    try:
        runs = RunStore(store if store not in (None, True) else None, create=False, write=False)
    except WorkbenchError:
        return None  # no store yet: no previous check
    with runs:
        rows = [r for r in runs.list(db=db, workload=WORKLOAD, limit=500) if r.source == SOURCE]
        for i, row in enumerate(rows):
            if row.workload != f"{WORKLOAD} paced" or row.status != "completed":
                continue
            paced = runs.result(row.id)
            if ((paced.manifest or {}).get("cluster") or {}).get("name") != cluster:
                continue
            found = {"paced": (row.id, paced)}
            for earlier in rows[i + 1:]:
                phase = earlier.workload.removeprefix(f"{WORKLOAD} ")
                if phase == "paced":
                    break
                if phase in ("A", "C") and phase not in found and earlier.status == "completed":
                    found[phase] = (earlier.id, runs.result(earlier.id))
            if len(found) == 3:
                ids = ", ".join(f"{p} #{found[p][0]}" for p in baseline_file.PHASES)
                return {p: r for p, (_, r) in found.items()}, f"the previous check in the run store ({ids})"
    return None


def digests_differ(doc: dict[str, Any], digest: str) -> bool:
    return doc.get("workload_digest") != digest


def manifests_of(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Phase A's manifest and properties in a baseline document (what `comparable` is given)."""
    return (doc.get("manifests") or {}).get("A") or {}, (doc.get("properties") or {}).get("A") or {}


def allowed(names: Sequence[str]) -> None:
    from workbench.results.comparable import FIELDS  # noqa: PLC0415

    for name in names:
        if name not in FIELDS:
            raise ConfigError(f"--allow-different {name}: not a field that can differ",
                              f"one of {', '.join(FIELDS)}")
