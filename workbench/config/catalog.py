"""Where cluster presets, experiments and workload files are found by name.

The shipped ones are package data (`workbench/presets/`, `workbench/workloads/`), so an installed
wheel has them wherever it runs. A user's own folders come first and shadow a shipped file of
the same name:

1. `$WORKBENCH_PRESETS_DIR` (presets only; tests and scripts point it at a folder of their own),
2. `./presets/...` and `./workloads/` in the working directory,
3. the per-user folder `$XDG_CONFIG_HOME/workbench/` (default `~/.config/workbench/`), with the
   same `presets/clusters`, `presets/experiments` and `workloads` layout,
4. the shipped files.

`entries()` names each file's origin so `cluster presets` and `experiment list` can say where a
name comes from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
SHIPPED_PRESETS = PACKAGE / "presets"
SHIPPED_WORKLOADS = PACKAGE / "workloads"

# kind -> (path under a presets root, file suffix); workloads have no suffix and no presets root.
KINDS = {"clusters": ("presets/clusters", ".toml"), "experiments": ("presets/experiments", ".toml"),
         "lessons": ("presets/lessons", ".toml"), "workloads": ("workloads", "")}


@dataclass(frozen=True)
class Entry:
    name: str
    path: Path
    origin: str  # "shipped", "./presets/clusters", "~/.config/workbench/workloads", ...
    shadows: bool = False  # a user's file that hides a shipped one of the same name

    @property
    def shipped(self) -> bool:
        return self.origin == "shipped"


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "workbench"


def _shown(path: Path) -> str:
    """A folder as a user would type it: ./x for the working directory, ~/x under home."""
    for root, label in ((Path.cwd(), "."), (Path.home(), "~")):
        try:
            return f"{label}/{path.relative_to(root)}"
        except ValueError:
            continue
    return str(path)


def search_dirs(kind: str) -> list[tuple[Path, str]]:
    """(folder, origin) in search order for `kind` ("clusters", "experiments", "workloads")."""
    sub, _ = KINDS[kind]
    dirs: list[Path] = []
    if kind != "workloads" and os.environ.get("WORKBENCH_PRESETS_DIR"):
        dirs.append(Path(os.environ["WORKBENCH_PRESETS_DIR"]) / kind)
    dirs += [Path.cwd() / sub, user_config_dir() / sub]
    shipped = PACKAGE / sub
    found = [(d, _shown(d)) for d in dirs if d.resolve() != shipped]
    return found + [(shipped, "shipped")]


def _files(folder: Path, suffix: str) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")
                  and (p.suffix == suffix if suffix else not p.name.endswith("~")))


def entries(kind: str) -> list[Entry]:
    """Every name of `kind`, first folder wins, in name order."""
    _, suffix = KINDS[kind]
    found: dict[str, Entry] = {}
    shipped_names: set[str] = set()
    for folder, origin in search_dirs(kind):
        for path in _files(folder, suffix):
            name = path.stem if suffix else path.name
            if origin == "shipped":
                shipped_names.add(name)
            found.setdefault(name, Entry(name, path, origin))
    return [Entry(e.name, e.path, e.origin, shadows=not e.shipped and e.name in shipped_names)
            for _, e in sorted(found.items())]


def available(kind: str) -> dict[str, Path]:
    """Name -> file for `kind`, first folder wins."""
    return {e.name: e.path for e in entries(kind)}


def workload_file(given: str | Path) -> Path:
    """The file `-P given` means: the path itself when it exists; otherwise, for a bare name or
    YCSB's habitual `workloads/NAME`, that workload from the user's folders or the shipped ones.
    A path that is neither is returned unchanged (the reader then says it was not found)."""
    path = Path(given)
    if path.exists():
        return path
    parts = path.parts
    if len(parts) == 1 or (len(parts) == 2 and parts[0] == "workloads"):
        found = available("workloads").get(parts[-1])
        if found is not None:
            return found
    return path
