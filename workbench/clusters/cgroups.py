"""Per-node CPU caps for local server processes: one machine standing for several.

On one machine every node of a local cluster shares the same cores, so adding a node can never
add capacity. A cap gives each node its own share: `cpus = 0.5` in a preset (or `--cpus 0.5` on
`cluster up` / `add-node`) puts each server process of the cluster in a control group of the
kernel's cpu controller of its own, limited to half a core (CFS quota 50 ms every 100 ms). With
caps, a node added brings its own half core, until the machine's cores run out. (The Docker
provider caps containers with the engine's CPU quota, the same mechanism.)

Both cgroup layouts: v1 (a `cpu` hierarchy, /sys/fs/cgroup/cpu: cpu.cfs_quota_us and
cpu.cfs_period_us) and v2 (the unified hierarchy at /sys/fs/cgroup with the cpu controller:
cpu.max). Each capped process gets `workbench/<tag>-<cluster>-<node>` under the root, made when
the process starts and removed when it stops. Where neither can be written (not root, a
read-only /sys/fs/cgroup, no cpu controller), `require()` says so in one line.
"""

from __future__ import annotations

import errno
import hashlib
import os
import time
from pathlib import Path

from workbench.errors import ClusterError

V1 = Path("/sys/fs/cgroup/cpu")
V2 = Path("/sys/fs/cgroup")
PERIOD_US = 100_000
PARENT = "workbench"


def _layout() -> tuple[str, Path] | None:
    """("v1" | "v2", the root) of a cpu controller this process may use, or None."""
    if (V1 / "cpu.cfs_period_us").exists():
        return "v1", V1
    if "cpu" in _read(V2 / "cgroup.controllers").split():
        return "v2", V2
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def problem() -> str | None:
    """Why caps cannot be set here (None: they can): made and removed once to find out."""
    layout = _layout()
    if layout is None:
        return "this machine has no cgroup cpu controller mounted (/sys/fs/cgroup/cpu or cgroup v2 with cpu)"
    try:
        parent = _parent(*layout)
        probe = parent / f"probe-{os.getpid()}"
        probe.mkdir(exist_ok=True)
        probe.rmdir()
    except OSError as exc:
        return f"the cgroup cpu controller cannot be written here ({exc.strerror or exc})"
    return None


def require(cpus: float) -> None:
    """One clear line when a cap was asked for and cannot be set."""
    if cpus <= 0:
        return
    why = problem()
    if why is not None:
        raise ClusterError(f"cpus = {cpus:g} caps each node's processors, and {why}",
                           "run as root on a machine with cgroups, use the Docker provider (its CPU quota), "
                           "or leave cpus out (every node then shares the machine's cores)")


def _parent(layout: str, root: Path) -> Path:
    parent = root / PARENT
    parent.mkdir(exist_ok=True)
    if layout == "v2":  # let the children of the root, and theirs, use the cpu controller
        for folder in (root, parent):
            if "cpu" not in _read(folder / "cgroup.subtree_control").split():
                (folder / "cgroup.subtree_control").write_text("+cpu")
    return parent


def group_name(state_dir: Path, cluster: str, node: str) -> str:
    """The node's group: unique per state folder (two users' clusters of one name differ)."""
    tag = hashlib.sha256(str(Path(state_dir).resolve()).encode()).hexdigest()[:8]
    return f"{tag}-{cluster}-{node}"


def cap(pid: int, cpus: float, name: str) -> Path:
    """Put process `pid` (every thread of it) in group `name`, limited to `cpus` cores."""
    layout = _layout()
    if layout is None:
        require(cpus)
    kind, root = layout  # type: ignore[misc]
    group = _parent(kind, root) / name
    group.mkdir(exist_ok=True)
    quota = max(1000, round(cpus * PERIOD_US))
    if kind == "v1":
        (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(quota))
    else:
        (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
    (group / "cgroup.procs").write_text(str(pid))
    return group


def release(name: str, wait_s: float = 5.0) -> None:
    """Remove the group once its process has gone (an empty group; a no-op if there is none)."""
    layout = _layout()
    if layout is None:
        return
    group = layout[1] / PARENT / name
    deadline = time.monotonic() + wait_s
    while group.exists():
        try:
            group.rmdir()
        except OSError as exc:  # EBUSY while the exiting process is still in it
            if exc.errno not in (errno.EBUSY, errno.ENOTEMPTY) or time.monotonic() > deadline:
                return
            time.sleep(0.05)
    try:
        group.parent.rmdir()  # the last group gone: the machine's cgroups as they were
    except OSError:
        pass  # other nodes' groups are still in it


def cap_of(pid: int) -> float | None:
    """The cores process `pid` may use by its cpu group's quota (None: no quota, or not known)."""
    layout = _layout()
    if layout is None:
        return None
    kind, root = layout
    for line in _read(Path(f"/proc/{pid}/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        if kind == "v1" and "cpu" in controllers.split(","):
            quota = _read(root / path.lstrip("/") / "cpu.cfs_quota_us").strip()
            period = _read(root / path.lstrip("/") / "cpu.cfs_period_us").strip()
            if quota and period and int(quota) > 0:
                return int(quota) / int(period)
            return None
        if kind == "v2" and controllers == "":
            found = _read(root / path.lstrip("/") / "cpu.max").split()
            if len(found) == 2 and found[0] != "max":
                return int(found[0]) / int(found[1])
            return None
    return None
