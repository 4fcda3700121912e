"""Where the workbench keeps downloaded jars (cache) and running clusters (state).

Cache: ${WORKBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/workbench}
State: ${WORKBENCH_STATE_DIR:-${XDG_STATE_HOME:-~/.local/state}/workbench}; each cluster lives in
<state>/clusters/<name>/ (state.json, node directories, logs).
"""

from __future__ import annotations

import os
from pathlib import Path


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var)
    # XDG says relative values are invalid and must be ignored.
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / fallback


def cache_dir() -> Path:
    """Root of the jar cache (shared by every cluster and every test run)."""
    override = os.environ.get("WORKBENCH_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    return _xdg("XDG_CACHE_HOME", ".cache") / "workbench"


def state_dir() -> Path:
    """Root of cluster state: one directory per cluster under clusters/."""
    override = os.environ.get("WORKBENCH_STATE_DIR")
    if override:
        return Path(override).expanduser()
    return _xdg("XDG_STATE_HOME", ".local/state") / "workbench"


def private_dir(path: Path) -> Path:
    """`path` (and missing parents) as a directory only its owner can enter (0700)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Replace `path` atomically with `text`, readable by its owner only (0600) from the start:
    the file is created with that mode, never chmod-ed after the text is in it."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an old .tmp left by a crash keeps its mode otherwise
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)
