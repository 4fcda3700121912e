"""The databases installed here, found only through the `workbench.databases` entry point group:
the built-ins (pyproject.toml) exactly as a third-party package's (docs/ADDING-A-DATABASE.md).

Each entry point names a `Database` (databases/base.py) under the database's name. They are read
once a process; a broken one is refused in one line naming its package.
"""

from __future__ import annotations

import functools
from importlib import metadata

from workbench.databases.base import Database, Server
from workbench.errors import ConfigError

GROUP = "workbench.databases"


_VERSIONS: dict[str, str] = {}  # a database's name -> the version of the package that registered it


@functools.cache
def _installed() -> dict[str, Database]:
    found: dict[str, Database] = {}
    for entry in metadata.entry_points(group=GROUP):
        where = f"{entry.dist.name if entry.dist else '?'}: {entry.value}"
        try:
            described = entry.load()
        except Exception as exc:  # a plug-in that cannot be imported: say which, and why
            raise ConfigError(f"the database {entry.name!r} ({where}) cannot be loaded: {exc}",
                              "reinstall or uninstall that package") from None
        if not isinstance(described, Database) or described.name != entry.name:
            raise ConfigError(f"the entry point {entry.name!r} ({where}) is not a Database named "
                              f"{entry.name!r}", "see docs/ADDING-A-DATABASE.md")
        if entry.name not in found and entry.dist is not None:
            _VERSIONS[entry.name] = entry.dist.version
        found.setdefault(entry.name, described)
    if not found:
        raise ConfigError(f"no database is registered (entry point group {GROUP!r} is empty)",
                          "reinstall the workbench (pip install -e . in its checkout, or its wheel); "
                          "a stale ycsb_workbench.egg-info earlier on the path hides its entry points")
    return found


def databases() -> tuple[Database, ...]:
    """Every installed database: the built-ins first, then the others by name."""
    return tuple(sorted(_installed().values(), key=lambda d: (d.order, d.name)))


def names() -> tuple[str, ...]:
    return tuple(d.name for d in databases())


def database(name: str) -> Database:
    """The database `-db NAME` names, or one line listing those installed."""
    found = _installed().get(name)
    if found is None:
        raise ConfigError(f"unknown database {name!r}", f"installed: {', '.join(names())}")
    return found


def find(name: str) -> Database | None:
    return _installed().get(name)


def package_version(name: str) -> str | None:
    """The version of the installed package that registered the database `name` (an in-process
    database is that package). Read from the entry point's own distribution: asking which
    distribution holds a module (importlib.metadata.packages_distributions) reads every installed
    package's file list, about half a second a process."""
    _installed()
    return _VERSIONS.get(name)


def in_process(name: str) -> bool:
    """Whether the database `name` runs inside the workbench (no cluster). A binding registered at
    run time without a descriptor (tests) has no cluster either."""
    found = _installed().get(name)
    return found is None or found.in_process


def serving(kind: str) -> tuple[Database, Server | None]:
    """The database a cluster of this kind serves, and its Server (None: an external cluster,
    whose kind is the database's name)."""
    for db in databases():
        server = db.server(kind)
        if server is not None:
            return db, server
    db = _installed().get(kind)
    if db is not None and db.external_port:
        return db, None
    kinds = [s.kind for d in databases() for s in d.servers]
    raise ConfigError(f"unknown cluster kind {kind!r}", f"kinds: {', '.join(kinds)}")


def server(kind: str) -> Server:
    """The Server of a preset's kind (a started cluster: local or Docker)."""
    found = serving(kind)[1]
    if found is None:
        raise ConfigError(f"a {kind} cluster is only external here", "use a cluster file with "
                          'provider = "external"')
    return found


def servers() -> tuple[Server, ...]:
    """Every kind of cluster the workbench can start."""
    return tuple(s for d in databases() for s in d.servers)
