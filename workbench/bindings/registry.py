"""Binding registry: name -> where the class lives and which properties it understands.

Metadata lives here, apart from the binding modules, so that validating a workload file never
imports a database driver.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from workbench.errors import BindingError


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


register(
    BindingInfo(
        name="memory",
        target="workbench.bindings.memory:MemoryBinding",
        prefix="memory.",
        description="in-process ordered store (engine tests and demos)",
    )
)


register(
    BindingInfo(
        name="cassandra",
        target="workbench.bindings.cassandra:CassandraBinding",
        prefix="cassandra.",
        bare_keys=frozenset({"hosts", "port"}),
        description="Apache Cassandra over CQL (its own client by default, or cassandra-driver)",
    )
)
register(
    BindingInfo(
        name="hbase",
        target="workbench.bindings.hbase:HBaseBinding",
        prefix="hbase.",
        bare_keys=frozenset({"columnfamily", "clientbuffering", "writebuffersize", "durability"}),
        description="Apache HBase over its own RPC (reads, puts) and its Thrift gateway",
        chooser="workbench.bindings.hbase_options:binding_target",
    )
)
register(
    BindingInfo(
        name="mongodb",
        target="workbench.bindings.mongodb:MongoDBBinding",
        prefix="mongodb.",
        bare_keys=frozenset({"batchsize"}),
        description="MongoDB and MongoDB-protocol servers such as FerretDB (pymongo's asyncio client)",
    )
)


def binding_for_property(key: str) -> BindingInfo | None:
    """The binding that owns a property, if any."""
    for info in BINDINGS.values():
        if key.startswith(info.prefix) or key in info.bare_keys:
            return info
    return None


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
