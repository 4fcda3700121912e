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
