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
        description="Apache Cassandra over CQL (its own client by default, or acsylla, or the Python driver)",
    )
)
register(
    BindingInfo(
        name="hbase",
        target="workbench.bindings.hbase:HBaseBinding",
        prefix="hbase.",
        bare_keys=frozenset({"columnfamily", "clientbuffering", "writebuffersize", "durability"}),
        description="Apache HBase over its Thrift gateway (happybase)",
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


def load_binding_class(name: str):
    """Import and return the binding class registered under name."""
    info = BINDINGS.get(name)
    if info is None:
        raise BindingError(
            f"unknown database binding '{name}'",
            f"choose one of: {', '.join(sorted(BINDINGS))}",
        )
    module_name, _, class_name = info.target.partition(":")
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
