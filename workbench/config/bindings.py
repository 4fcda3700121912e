"""The bindings by name, as data: which module and class serve each, which properties belong to
it, and how its client is chosen, read from each database's descriptor (databases/) and open to
bindings registered at run time (tests). Kept apart from the binding modules so that validating a
workload file (spec.py) never imports a database driver; bindings/registry.py loads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.databases import databases


@dataclass(frozen=True)
class BindingInfo:
    name: str
    target: str  # "module:Class"
    prefix: str  # every "<prefix>..." property belongs to this binding
    bare_keys: frozenset[str] = frozenset()  # YCSB-era names without the prefix
    description: str = ""
    # "module:function" taking the run's properties and giving the "module:Class" of the client
    # they choose (the client factory: a binding never imports its siblings to choose one).
    chooser: str = ""


BINDINGS: dict[str, BindingInfo] = {}


def register(info: BindingInfo) -> None:
    BINDINGS[info.name] = info


def _installed() -> None:
    """The installed databases' bindings (workbench.databases entry points): a binding is a
    database's, said in its descriptor (databases/)."""
    for db in databases():
        register(BindingInfo(name=db.name, target=db.binding, prefix=db.prefix, bare_keys=db.bare_keys,
                             description=db.description, chooser=db.chooser))


_installed()


def binding_for_property(key: str) -> BindingInfo | None:
    """The binding that owns a property, if any."""
    for info in BINDINGS.values():
        if key.startswith(info.prefix) or key in info.bare_keys:
            return info
    return None
