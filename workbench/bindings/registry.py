"""Loading a binding by name: the class its properties choose (the registry's table is
config/bindings.py, data that validating a workload file reads without importing a driver).
"""

from __future__ import annotations

import importlib

from workbench.config.bindings import BINDINGS
from workbench.errors import BindingError


def _attribute(target: str):
    module_name, _, name = target.partition(":")
    return getattr(importlib.import_module(module_name), name)


def load_binding_class(name: str, properties: dict[str, str] | None = None):
    """Import and return the binding class registered under name: the one the properties choose
    where the binding has several clients (a ConfigError names a property it refuses)."""
    info = BINDINGS.get(name)
    if info is None:
        raise BindingError(
            f"unknown database binding '{name}'",
            f"choose one of: {', '.join(sorted(BINDINGS))}",
        )
    target = _attribute(info.chooser)(properties or {}) if info.chooser else info.target
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise BindingError(
            f"the {name} binding is not available in this version ({module_name} is missing)",
            f"available here: {', '.join(sorted(n for n in BINDINGS if _importable(n)))}",
        ) from None
    return getattr(module, class_name)


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(BINDINGS[name].target.partition(":")[0]) is not None


def make_binding(spec, context: dict):
    """The binding of a WorkloadSpec with its client chosen from its properties (the client
    factory), for one worker: context holds phase, worker and workers."""
    properties = dict(spec.binding_properties)
    return load_binding_class(spec.db, properties)(spec, properties, context)
