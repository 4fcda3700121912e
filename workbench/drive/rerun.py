"""A stored run, run again (`workbench runs rerun ID`): what to run, from the run's manifest.

The manifest (results/manifest.py) holds the run's phase, its -P files with their digests and the
properties the files did not set: `-P files -p overrides` gives the run's properties again. A file
that changed since (or is gone) is not used: the run's recorded properties are, all of them as
overrides, and a warning says so, so the rerun still has the properties the run had. A run recorded
before runs had manifests is re-run from its recorded properties the same way.

Secrets are not kept by the store (results/masking.py): a masked value comes back from the
run's cluster (`--cluster`'s own overrides) or from `-p KEY=VALUE` given to the rerun, which
may set nothing else (a changed property would make another run, not this one again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.clusters.base import Cluster
from workbench.config.spec import spec_from_args
from workbench.drive.phase import PhaseRun, StoreChoice, execute_phase
from workbench.drive.targets import binding_overrides, find_cluster
from workbench.errors import ConfigError, WorkbenchError
from workbench.results.manifest import build_manifest, digest
from workbench.results.masking import MASK
from workbench.results.model import RunResult


@dataclass(frozen=True)
class Rerun:
    """What to run again: `workbench <phase> -P files -p overrides` on `cluster` (if any)."""

    run_id: int
    phase: str
    files: tuple[str, ...]
    overrides: tuple[str, ...]
    cluster: str | None
    warnings: tuple[str, ...] = ()


def is_masked(key: str, value: str) -> bool:
    """A value the store kept masked (a password, a connection string's password)."""
    return ("password" in key.lower() and value == MASK) or f":{MASK}@" in value


def plan_rerun(run_id: int, result: RunResult, given: list[str] | None = None,
               cluster_overrides: list[str] | None = None) -> Rerun:
    """The rerun of stored run `run_id` (its result as the store gives it back); `given`:
    -p KEY=VALUE for its masked secrets; `cluster_overrides`: what the run's cluster sets now
    (drive/targets.py). A WorkbenchError when it cannot be run again as it was."""
    if result.source != "workbench":
        raise WorkbenchError(f"run {run_id} was imported from YCSB's output, not run by the "
                             "workbench: its properties are not known", "run it with workbench load or run")
    if result.phase not in ("load", "run"):
        raise WorkbenchError(f"run {run_id} is a {result.phase!r} phase, which cannot be run again",
                             "re-run a load or a run")
    manifest: dict[str, Any] = result.manifest or {}
    workload = manifest.get("workload")
    warnings: list[str] = []
    files = tuple(str(f["path"]) for f in (workload or {}).get("files") or ())
    overrides = list((workload or {}).get("overrides") or ())
    changed = [_changed(run_id, f) for f in (workload or {}).get("files") or ()]
    if workload is None or any(changed):
        warnings += [w for w in changed if w] or [
            f"run {run_id} was recorded before runs had manifests: re-running it with its recorded "
            "properties"]
        files, overrides = (), [f"{k}={v}" for k, v in result.properties.items()]
    return Rerun(run_id, result.phase, files, tuple(_unmasked(run_id, overrides, given or [],
                                                               cluster_overrides or [])),
                 (manifest.get("cluster") or {}).get("name"), tuple(warnings))


def _changed(run_id: int, record: dict[str, Any]) -> str:
    """'' when the file still has the digest the run recorded, else one line saying how not."""
    now = digest(record["path"])
    if now == record.get("sha256"):
        return ""
    was = str(record.get("sha256"))[:12]
    how = "is gone" if now is None else f"changed (sha256 {was} then, {now[:12]} now)"
    return (f"{record['path']} {how} since run {run_id}: re-running with run {run_id}'s recorded "
            "properties, not the file's")


def _unmasked(run_id: int, overrides: list[str], given: list[str], cluster: list[str]) -> list[str]:
    """The overrides with every masked secret taken from `given` (-p), else the cluster's."""
    secrets = {k: v for k, _, v in (o.partition("=") for o in overrides) if is_masked(k, v)}
    supplied: dict[str, str] = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or key not in secrets:
            masked = ", ".join(secrets) or "none"
            raise ConfigError(f"runs rerun -p {item}: a rerun takes only the secrets its run's record "
                              f"masks ({masked}), nothing else",
                              "to change a property, run it anew with workbench load or run")
        supplied[key] = value
    from_cluster = dict(o.partition("=")[::2] for o in cluster)
    out = []
    for item in overrides:
        key, _, value = item.partition("=")
        if key in secrets:
            value = supplied.get(key, from_cluster.get(key, ""))
            if not value:
                raise ConfigError(f"run {run_id} used a secret ({key}) that the run store does not "
                                  "keep", f"give it again: workbench runs rerun {run_id} -p {key}=...")
        out.append(f"{key}={value}")
    return out


def prepare(run_id: int, result: RunResult, given: list[str] | None = None) -> tuple[Rerun, Cluster | None]:
    """The rerun of a stored run and the cluster it ran on (found again by its name: a cluster
    that is gone is a ClusterError naming the known ones)."""
    name = ((result.manifest or {}).get("cluster") or {}).get("name")
    cluster = find_cluster(name) if name else None
    overrides = binding_overrides(cluster) if cluster is not None else []
    return plan_rerun(run_id, result, given, overrides), cluster


def run_again(rerun: Rerun, cluster: Cluster | None, *, store: StoreChoice = None,
              status: bool = True, workload: str = "") -> PhaseRun:
    """Run it, recorded like any run, its manifest naming the run it re-ran (rerun_of)."""
    spec, props = spec_from_args(list(rerun.files), list(rerun.overrides), rerun.phase)
    manifest = {**build_manifest(spec, props.as_dict(), rerun.phase, files=rerun.files, cluster=cluster),
                "rerun_of": rerun.run_id}
    return execute_phase(spec, props.as_dict(), rerun.phase, status=status, store=store, source="rerun",
                         workload=workload, cluster=cluster, files=rerun.files, manifest=manifest)
