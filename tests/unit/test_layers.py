"""The layer rules of docs/ARCHITECTURE.md, checked from the sources: every module sits on a
floor, nothing imports a module of a floor above its own (at the top of a file or inside a
function), no module imports itself through others, the picture in ARCHITECTURE.md names the
floors in this order, and no Python file is longer than 600 lines."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"
ARCHITECTURE = PACKAGE.parent / "docs" / "ARCHITECTURE.md"
MAX_LINES = 600

# Bottom to top: a module may import its own floor and the floors below it. "" is the package's
# own modules (workbench/__init__.py, errors.py, speedups.py, interrupts.py): the ground floor.
# A name with a "*" is a pattern of modules inside a folder, tried before the folders. A database's
# folder (databases/<name>/) holds modules of several floors, each on its floor by its name: its
# descriptor (__init__.py) on the databases floor, protocol/ on the protocols floor, cluster*.py
# on the clusters floor, binding*.py and the binding's parts (and server_settings.py, read from its
# properties) on the bindings floor, figures.py with the servers' figures (which read clusters and
# fill metrics) above metrics; a module of the folder named none of these stands on the
# descriptor's floor.
FLOORS = (
    ("ground", ("", "errors", "speedups", "interrupts")),
    ("protocols", ("protocols", "databases.*.protocol", "databases.*.protocol.*")),
    ("databases", ("databases",)),
    ("config", ("config",)),
    ("clusters", ("clusters", "databases.*.cluster*")),
    ("bindings", ("bindings", "databases.*.binding*", "databases.*.options", "databases.*.schema",
                  "databases.*.errors", "databases.*.python_driver", "databases.*.native",
                  "databases.*.admin", "databases.*.server_settings")),
    ("metrics", ("metrics",)),
    ("core", ("core",)),
    ("results", ("results",)),
    ("server figures", ("databases.*_figures", "databases.*.figures")),
    ("drive", ("drive",)),
    ("experiments", ("experiments",)),
    ("lessons", ("lessons",)),
    ("ui", ("ui",)),
    ("commands", ("commands",)),
    ("entry points", ("cli", "__main__")),
)


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(("workbench", *path.relative_to(PACKAGE).with_suffix("").parts))
        out[name.removesuffix(".__init__")] = path
    return out


def _imports(name: str, source: str, is_package: bool, modules) -> set[str]:
    """The workbench modules `name` imports anywhere in its source (relative imports resolved)."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                parts = package.split(".")
                module = ".".join(parts[:len(parts) - node.level + 1] + ([module] if module else []))
            if module == "workbench" or module.startswith("workbench."):
                for alias in node.names:
                    full = f"{module}.{alias.name}"
                    found.add(full if full in modules else module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("workbench")}
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path.read_text(), path.name == "__init__.py", modules)
            for name, path in modules.items()}


def floor_of(module: str) -> int:
    inside = module.partition(".")[2]
    for index, (_, names) in enumerate(FLOORS):  # a pattern first: it is a part of a folder
        if any("*" in name and fnmatch.fnmatchcase(inside, name) for name in names):
            return index
    top = inside.split(".")[0]
    for index, (_, names) in enumerate(FLOORS):
        if top in names:
            return index
    raise AssertionError(f"{module} is on no floor: add its folder to FLOORS and to ARCHITECTURE.md")


def test_every_module_is_on_a_floor():
    for module in _modules():
        floor_of(module)


def test_nothing_imports_a_module_of_a_floor_above_its_own():
    def named(module: str) -> str:
        return f"{module} ({FLOORS[floor_of(module)][0]})"

    upward = sorted(f"{named(module)} imports {named(target)}" for module, targets in _graph().items()
                    for target in targets if floor_of(target) > floor_of(module))
    assert upward == []


def _folder(module: str) -> str | None:
    """The database folder a module is in (workbench.databases.<name>.*), or None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "databases" and parts[2] in _folders() else None


def _folders() -> set[str]:
    return {p.parent.name for p in (PACKAGE / "databases").glob("*/__init__.py")}


def test_no_database_folder_imports_another():
    # a database is one folder: removing one leaves the others whole
    crossing = sorted(f"{module} imports {target}" for module, targets in _graph().items()
                      for target in targets
                      if _folder(module) and _folder(target) and _folder(module) != _folder(target))
    assert crossing == []


def test_no_module_imports_itself_through_others():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert circles == []


def test_the_rules_catch_an_upward_import_and_a_circle():
    # the checks themselves: a binding importing the engine is upward; a <-> b is a circle
    assert floor_of("workbench.core.runner") > floor_of("workbench.bindings.base")
    assert floor_of("workbench.errors") == 0 and floor_of("workbench.cli") == len(FLOORS) - 1
    # the descriptors sit below every floor that asks them; the servers' figures above metrics
    assert floor_of("workbench.databases.cassandra") < floor_of("workbench.config.bindings")
    assert floor_of("workbench.databases.gc_figures") > floor_of("workbench.metrics.server")
    # a database's folder: each module on the floor its name says, anything else on the descriptor's
    def of(module: str) -> str:
        return FLOORS[floor_of(f"workbench.databases.{module}")][0]

    assert [of(m) for m in ("cassandra", "cassandra.protocol.cql", "hbase.protocol", "hbase.cluster",
                            "mongodb.cluster_ferretdb", "hbase.binding", "cassandra.options",
                            "hbase.native", "mongodb.figures", "toy.anything")] == [
        "databases", "protocols", "protocols", "clusters", "clusters", "bindings", "bindings",
        "bindings", "server figures", "databases"]
    modules = {"workbench.core.a", "workbench.core.b"}
    sources = {"workbench.core.a": "from . import b\n",
               "workbench.core.b": "def f():\n    import workbench.core.a\n"}
    found = {name: _imports(name, sources[name], False, modules) for name in modules}
    assert found == {"workbench.core.a": {"workbench.core.b"}, "workbench.core.b": {"workbench.core.a"}}


def test_architecture_md_draws_the_floors_in_this_order():
    picture = ARCHITECTURE.read_text().split("```")[1]
    drawn = [m.group(1) for m in re.finditer(r"^ ?([a-z_]+(?:/\*_[a-z]+)?)(?:/|\.py)", picture, re.MULTILINE)]
    # one line a floor: its first folder or module (errors.py stands for the ground floor), a
    # pattern as its path (databases/*_figures.py)
    expected = [(names[0] or names[1]).replace(".", "/") for _, names in reversed(FLOORS)]
    assert [d for d in drawn if d in expected] == expected, drawn


def test_no_python_file_is_longer_than_600_lines():
    long = {str(p.relative_to(PACKAGE.parent)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}
