"""State files: one JSON document per cluster, so a later (or restarted) workbench finds it.

<state>/clusters/<name>/state.json records the spec, every node's PID with its /proc start time,
its directories, log files and command line. It is written before the first JVM starts and after
every change, atomically, so `status` and `down` work after the workbench itself crashed.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from workbench.clusters.base import Cluster, Node
from workbench.clusters.specs import spec_type

STATE_FILE = "state.json"


def cluster_dir(root: Path, name: str) -> Path:
    return root / "clusters" / name


def save(cluster: Cluster, phase: str) -> None:
    """Write the cluster's state; phase is starting, running, failed or kept."""
    doc = {
        "name": cluster.name,
        "kind": cluster.kind,
        "provider": cluster.provider,
        "phase": phase,
        "spec": dataclasses.asdict(cluster.spec),
        "clients": list(cluster.clients),
        "server_version": cluster.server_version,
        "nodes": [
            {**dataclasses.asdict(n), "log": str(n.log), "console_log": str(n.console_log),
             "dir": str(n.dir), "argv": list(n.argv), "status": "unknown"}
            for n in cluster.nodes
        ],
    }
    path = cluster.run_dir / STATE_FILE
    tmp = path.with_suffix(".tmp")
    cluster.run_dir.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(doc, indent=2))
    os.replace(tmp, path)


def load(run_dir: Path) -> tuple[Cluster, str] | None:
    """(cluster, phase) from run_dir/state.json, or None if there is no state there."""
    try:
        doc = json.loads((run_dir / STATE_FILE).read_text())
    except FileNotFoundError:
        return None
    spec = spec_type(doc["kind"])(**doc["spec"])
    nodes = tuple(
        Node(**{**n, "log": Path(n["log"]), "console_log": Path(n["console_log"]),
                "dir": Path(n["dir"]), "argv": tuple(n["argv"]),
                "jvm_flags": tuple(n.get("jvm_flags", ()))})
        for n in doc["nodes"]
    )
    cluster = Cluster(name=doc["name"], kind=doc["kind"], spec=spec, nodes=nodes,
                      run_dir=run_dir, provider=doc["provider"], clients=tuple(doc["clients"]),
                      server_version=doc.get("server_version", ""))
    return cluster, doc["phase"]


def names(root: Path) -> list[str]:
    """Every cluster with a state file under root."""
    base = root / "clusters"
    if not base.is_dir():
        return []
    return sorted(p.parent.name for p in base.glob(f"*/{STATE_FILE}"))
