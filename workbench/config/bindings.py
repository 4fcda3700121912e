"""The bindings by name, as data: which module and class serve each, which properties belong to
it, and how its client is chosen. Kept apart from the binding modules so that validating a
workload file (spec.py) never imports a database driver; bindings/registry.py loads them.
"""

from __future__ import annotations

from dataclasses import dataclass


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
