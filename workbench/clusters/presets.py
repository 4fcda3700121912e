"""Cluster presets: TOML files in presets/clusters/ folders (config/catalog.py) turned into frozen specs.

A preset is `kind = "cassandra"|"hbase"`, an optional `description`, and any fields of the
matching spec (see specs.py; `version = "4.1"` picks another pinned release than the default, as
distributions.SERIES lists them); Cassandra's keyspace replication goes in a `[replication]` table
(`class`, `replication_factor`). The cluster name defaults to the preset's file name. Errors name
the file and the key.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from workbench.clusters.specs import ClusterSpec, spec_type
from workbench.config import catalog
from workbench.databases import servers
from workbench.errors import ClusterError


def available() -> dict[str, Path]:
    """Preset name -> file; a user's folder wins over the shipped presets (config/catalog.py)."""
    return catalog.available("clusters")


def _find(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".toml" and path.is_file():
        return path
    presets = available()
    if name_or_path in presets:
        return presets[name_or_path]
    raise ClusterError(
        f"unknown cluster preset {name_or_path!r}",
        hint=f"known presets: {', '.join(presets) or 'none'}; or give a path to a .toml file",
    )


def _takes(kind: object, field: str) -> bool:
    """Whether a preset of this kind has the field (its server's spec class, databases/)."""
    typed = spec_type(kind) if isinstance(kind, str) else None
    return typed is not None and field in {f.name for f in dataclasses.fields(typed)}


def _table_to_fields(path: Path, data: dict) -> dict:
    fields = {k: v for k, v in data.items() if k not in ("kind", "description", "replication")}
    replication = data.get("replication")
    if replication is not None:
        if not _takes(data.get("kind"), "replication_class") or not isinstance(replication, dict):
            able = " and ".join(s.kind for s in servers() if _takes(s.kind, "replication_class"))
            raise ClusterError(f"{path}: key 'replication' is only a table for {able} presets")
        for key, value in replication.items():
            if key not in ("class", "replication_factor"):
                raise ClusterError(f"{path}: unknown key 'replication.{key}'",
                                   hint="use class and replication_factor")
            fields["replication_class" if key == "class" else key] = value
    return fields


def load(name_or_path: str, **overrides: object) -> ClusterSpec:
    """The spec for a preset name (or .toml path), with keyword overrides (None = keep)."""
    path = _find(name_or_path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ClusterError(f"{path}: not valid TOML: {exc}") from exc
    kind = data.get("kind")
    typed = spec_type(kind) if isinstance(kind, str) else None
    if typed is None:
        kinds = [s.kind for s in servers() if s.spec]
        raise ClusterError(f"{path}: key 'kind' must be one of {', '.join(kinds)}")
    known = {f.name: f for f in dataclasses.fields(typed) if f.name != "kind"}
    fields = {"name": path.stem, **_table_to_fields(path, data)}
    fields.update({k: v for k, v in overrides.items() if v is not None})
    for key, value in fields.items():
        if key not in known:
            raise ClusterError(f"{path}: unknown key {key!r} for a {kind} preset",
                               hint=f"known keys: {', '.join(sorted(known))}")
        wanted = str(known[key].type)
        if wanted == "bool":
            ok = isinstance(value, bool)
        else:
            expected = {"int": int, "float": (int, float), "str": str}.get(wanted, object)
            ok = isinstance(value, expected) and not isinstance(value, bool)
        if not ok:
            raise ClusterError(f"{path}: key {key!r} must be {wanted}, not {value!r}")
    try:
        return typed(**fields)
    except ClusterError as exc:
        raise ClusterError(f"{path}: {exc.message}", hint=exc.hint) from exc


def describe(path: Path) -> str:
    """The preset's one-line description (for listings)."""
    try:
        return str(tomllib.loads(path.read_text()).get("description", ""))
    except (OSError, tomllib.TOMLDecodeError):
        return "(unreadable)"
