"""What a database is to the workbench, said once: the `Database` descriptor and the `Server`s
(cluster kinds) that serve it.

Everything the rest of the program asks about a database is a field here: its binding and how
its client is chosen, its client's name, its properties, the cluster kinds that serve it with
their local and Docker plans, presets, settle and resize steps, the external cluster file's
default port and health check, and what the demo and the experiments run on it. Code outside a
database's own files asks the descriptor instead of comparing a name with a literal.

A field that is code is a `Ref`: the callable itself, or its "module:attribute" path (a module
alone: "module"), imported when first asked for (`resolve`). The built-in descriptors name the
modules of clusters/ and bindings/ by path, as an entry point does, so that this floor imports
nothing above the ground floor and every floor above may ask it (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Ref = str | Callable[..., Any]  # a callable (or a module), or its "module:attribute" path


def resolve(ref: Ref) -> Any:
    """The object a Ref names: imported now ("module" alone is the module)."""
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    found = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        found = getattr(found, part)
    return found


def no_server_sources(cluster: Any) -> list:
    """The default of Database.server_sources: no server figures (issue 54 fills it)."""
    return []


UNKNOWN = "unknown"  # a figure or setting the workbench did not see (never a guess)


@dataclass(frozen=True)
class Server:
    """A kind of cluster that serves a database (a preset's `kind`): how the local and Docker
    providers start it and what can be done to it once it runs. Every Ref is optional: a server
    without one cannot be started that way (or settled, resized)."""

    kind: str  # a preset's `kind`; an external cluster file's kind is the database's name
    label: str = ""  # how a sentence names it: "Cassandra", "FerretDB"
    spec: Ref = ""  # the preset's typed spec class (clusters/specs.py's ClusterSpec and more)
    local: Ref = ""  # the local provider's kind module (clusters/local.py: render, launch, wait_ready)
    docker: Ref = ""  # the Docker planner class (clusters/docker_plans.py)
    image: Ref = ""  # (kind) -> {context path: (text, mode)} of the workbench's Docker image
    image_inputs: Ref = ""  # (kind) -> bytes: what, beyond those files, an image is built from
    image_content: Ref = ""  # (kind, cache, progress) -> ({context path: source}, build options)
    version: Ref = ""  # (kind) -> the server's pinned version, as an image's tag
    needs_java: bool = True  # a JDK is chosen before it starts
    client_nodes: tuple[str, ...] = ()  # the nodes that serve clients where others do not
    listens_on: Ref = ""  # (spec) -> [(address, port, what)]: the ports a local cluster needs free
    shape: Ref = ""  # (spec) -> (processes, where clients connect) of a preset not started
    heap_label: str = "heap"  # what a preset's `heap` sizes, as `cluster status` says it
    settle: Ref = ""  # (cluster, binding properties, table, timeout) -> what was settled (clusters/settle.py)
    # the same, and the table compacted into as few files as the server makes (a major
    # compaction): every `workbench check` starts from the same files (clusters/settle.py)
    compact: Ref = ""
    resize: Ref = ""  # (cluster, verb) -> the kind module that adds and removes its nodes, or raises
    # (provider, cluster, node or None, "flush" | "compact") -> one line a node (`cluster flush`)
    maintain: Ref = ""


@dataclass(frozen=True)
class Database:
    """One database as the workbench knows it. `name` is what `-db` and an experiment's
    `databases` say; the entry point of group `workbench.databases` has the same name."""

    name: str
    description: str
    binding: str  # "module:Class" of its binding (bindings/base.py's protocol)
    prefix: str  # every "<prefix>..." property belongs to it
    label: str = ""  # how a sentence names it ("Cassandra"); empty: its name
    bare_keys: frozenset[str] = frozenset()  # YCSB-era names without the prefix
    # "module:function" taking the run's properties and giving the "module:Class" of the client
    # they choose (the client factory: a binding never imports its siblings to choose one).
    chooser: str = ""
    # (properties) -> the client's name as a run records it ("native CQL v4"); raises the
    # binding's ConfigError for properties it refuses. Empty: the description's first words.
    client_name: Ref = ""
    drivers: tuple[str, ...] = ()  # the client packages whose versions a run records
    servers: tuple[Server, ...] = ()  # the cluster kinds that serve it; () runs in-process
    overrides: Ref = ""  # (cluster) -> the -p overrides that point its binding at the cluster
    default_preset: str = ""  # the preset an experiment starts when it names only the database
    demo_preset: str = ""  # the preset `workbench demo` starts ("" and servers: not in the demo)
    demo_properties: tuple[str, ...] = ()  # -p properties every demo step adds
    drop: str = ""  # the property that drops its table: a load starts empty, a run keeps the load's
    nodes_sweep: bool = False  # an experiment may sweep its preset's `nodes` and add one mid-run
    up_down_s: float = 0.0  # a guess at a cluster's start and stop, for an experiment's estimate
    external_port: int = 0  # an external cluster file's default port (0: no external clusters)
    external_check: Ref = ""  # (ExternalSpec) -> (version, nodes): the cluster answers, or raises
    external_keys: frozenset[str] = frozenset()  # the cluster file's keys past hosts and port
    # (props, spec or None) -> the server settings that change the figures, for a run's manifest
    settings: Ref = ""
    # (cluster) -> the server's figures for a run (issue 54 fills them in)
    server_sources: Callable[[Any], list] = field(default=no_server_sources, compare=False)
    order: int = 100  # where lists show it: the built-ins first, then the others by name

    @property
    def in_process(self) -> bool:
        """It runs inside the workbench: no cluster, no preset."""
        return not self.servers

    @property
    def title(self) -> str:
        return self.label or self.name

    def server(self, kind: str) -> Server | None:
        return next((s for s in self.servers if s.kind == kind), None)

    def load(self, name: str) -> Any:
        """This database's field `name`, its Ref resolved."""
        return resolve(getattr(self, name))
