"""A run's manifest: everything that makes its figures what they are, recorded with every run.

    manifest = build_manifest(spec, props, "run", files=["workloada"], cluster=cluster)

Made once per phase in the parent process, before the phase starts (drive/phase.py), never on the
hot path nor in a worker; completed when the phase ends with what only the run itself learnt (the
event loop, the server version a binding saw when no cluster named it). One JSON object:

    format     1
    workbench  {version, commit, modified}: commit and modified only when run from a git checkout
    command    the exact command line (sys.argv, shell-quoted; secrets masked)
    phase, db
    workload   {files: [{name, path, sha256, bytes}], overrides: ["KEY=VALUE"...], seed}: the -P
               files' digests and the properties the files did not set, so that `-P files -p
               overrides` gives the run's properties again (`workbench runs rerun`)
    client     environment.client (bindings/clients.py)
    server     {product, version, settings} (server_settings.py): "unknown" where not seen
    cluster    its name, provider, nodes, CPU caps and the servers' extra JVM flags (absent: no
               cluster named, -p hosts)
    host       {name, cpu_model, cpus, cpus_usable, memory_bytes, kernel, load_average}
    rerun_of   the run this one re-ran (`workbench runs rerun`), when it is one

The run store keeps it in its own column (schema 5), the JSON export as run.manifest, `runs show`
prints it (`manifest_lines`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import shlex
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import __version__
from workbench.bindings.clients import client_record
from workbench.config import catalog
from workbench.config.properties import parse_properties
from workbench.results.masking import mask
from workbench.results.server_settings import UNKNOWN, cluster_shape, server

if TYPE_CHECKING:
    from workbench.clusters.base import Cluster
    from workbench.config.spec import WorkloadSpec

FORMAT = 1
GIT_TIMEOUT_S = 2.0
PACKAGE = Path(__file__).resolve().parents[1]  # workbench/


def build_manifest(spec: WorkloadSpec, props: dict[str, str], phase: str, *,
                   files: Sequence[str | Path] = (), cluster: Cluster | None = None,
                   argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The manifest of a phase about to run; `props` are its merged properties (unmasked: they
    are masked here), `files` the -P files they came from."""
    records, from_files = workload_files(files)
    overrides = [f"{k}={mask(k, v)}" for k, v in props.items() if from_files.get(k) != v]
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "workbench": dict(_this_process()),
        "command": command_line(_argv() if argv is None else argv),
        "phase": phase,
        "db": spec.db,
        "workload": {"files": records, "overrides": overrides, "seed": spec.seed},
        "client": client_record(spec.db, dict(spec.binding_properties)),
        "server": server(spec.db, props, cluster),
        "host": host(),
    }
    shape = cluster_shape(cluster)
    if shape is not None:
        manifest["cluster"] = shape
    return manifest


def complete(manifest: dict[str, Any], environment: dict[str, Any]) -> dict[str, Any]:
    """The manifest with what the run learnt as it ran: the client's event loop, and the server
    its binding saw ("server: ..." in its notes) when no cluster named it."""
    if not manifest:
        return manifest
    out = dict(manifest)
    if isinstance(environment.get("client"), dict):
        out["client"] = dict(environment["client"])
    seen = next((str(n).removeprefix("server: ") for n in environment.get("notes") or ()
                 if str(n).startswith("server: ")), "")
    if seen and out.get("server", {}).get("version") == UNKNOWN:
        product = next((p for p in ("FerretDB", "MongoDB") if p in seen), out["server"]["product"])
        out["server"] = {**out["server"], "product": product, "version": seen}
    return out


def workload_files(files: Sequence[str | Path]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Each -P file (a path or a shipped workload's name) with its digest, and the properties the
    files set, later files over earlier ones (as config/properties.py merges them)."""
    records, values = [], {}
    for name in files:
        path = catalog.workload_file(name).resolve()
        try:
            data = path.read_bytes()
        except OSError:
            records.append({"name": str(name), "path": str(path), "sha256": UNKNOWN})
            continue
        records.append({"name": str(name), "path": str(path), "sha256": hashlib.sha256(data).hexdigest(),
                        "bytes": len(data)})
        for key, value, _ in parse_properties(data.decode("latin-1"), str(path)):
            values[key] = value
    return records, values


def digest(path: str | Path) -> str | None:
    """sha256 of a file's bytes, None when it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _argv() -> list[str]:
    """sys.argv, with `python -m workbench` spelt so (sys.argv[0] is then __main__.py's path)."""
    if sys.argv and sys.argv[0].endswith("__main__.py"):
        return [sys.executable, "-m", "workbench", *sys.argv[1:]]
    return list(sys.argv)


def command_line(argv: Sequence[str]) -> str:
    """argv shell-quoted, with the value of any KEY=VALUE that names a secret masked."""
    shown = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        shown.append(f"{key}={mask(key, value)}" if sep else arg)
    return shlex.join(shown)


def equivalent_command(manifest: dict[str, Any]) -> str:
    """The `workbench load|run` command that gives the run's phase and properties again."""
    workload = manifest.get("workload") or {}
    words = ["workbench", str(manifest.get("phase", "run"))]
    for record in workload.get("files") or ():
        words += ["-P", record["path"]]
    for item in workload.get("overrides") or ():
        words += ["-p", item]
    return shlex.join(words)


def build() -> dict[str, Any]:
    """This workbench's version, and the git commit (with whether tracked files were changed)
    when the package is a checkout's own, not an installed copy."""
    out: dict[str, Any] = {"version": __version__}
    if shutil.which("git") is None or _git("ls-files", "--error-unmatch", "__init__.py") is None:
        return out
    commit = _git("rev-parse", "HEAD")
    if commit:
        out["commit"] = commit.strip()
        status = _git("status", "--porcelain", "--untracked-files=no")
        if status is not None:
            out["modified"] = bool(status.strip())
    return out


@functools.cache
def _this_process() -> dict[str, Any]:
    """build() once a process: the code a process runs is what it imported when it started, and
    an experiment or the app runs many phases (three git commands each, otherwise)."""
    return build()


def _git(*args: str) -> str | None:
    """git's output in the package's folder; None on any failure (a run never fails for it)."""
    try:
        done = subprocess.run(["git", *args], cwd=PACKAGE, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def host() -> dict[str, Any]:
    """The machine the client ran on, as the run starts."""
    try:
        usable: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    try:
        load: list[float] | str = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = UNKNOWN
    return {"name": socket.gethostname(), "cpu_model": _cpu_model(), "cpus": os.cpu_count(),
            "cpus_usable": usable, "memory_bytes": _memory_bytes(),
            "kernel": f"{platform.system()} {platform.release()}", "load_average": load}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or UNKNOWN


def _memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
