"""Textual is imported nowhere outside workbench/ui/ (ARCHITECTURE.md): every other module of the
package is imported in a fresh interpreter, and no source file outside the UI names textual."""

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import workbench

PACKAGE = Path(workbench.__file__).parent


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if info.name == "workbench.ui" or info.name.startswith("workbench.ui."):
            continue
        if info.name == "workbench.__main__":
            continue
        names.append(info.name)
    return names


def test_headless_modules_do_not_import_textual():
    names = _modules()
    assert "workbench.drive.background" in names and "workbench.cli" in names
    code = (
        "import sys, importlib\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"textual imported: {proc.stdout} {proc.stderr}"


def test_no_source_outside_the_ui_names_textual():
    pattern = re.compile(r"^\s*(import textual|from textual)", re.MULTILINE)
    offenders = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                 if "ui" not in path.relative_to(PACKAGE).parts[:1] and pattern.search(path.read_text())]
    assert offenders == []


def test_the_cassandra_driver_modules_do_not_import_the_binding():
    # cassandra.py imports the driver modules lazily; they must not import it back.
    for module in ("workbench.databases.cassandra.python_driver",
                   "workbench.databases.cassandra.protocol.session"):
        code = (f"import sys, {module}\n"
                "sys.exit(1 if 'workbench.databases.cassandra.binding' in sys.modules else 0)\n")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{module} imports workbench.databases.cassandra.binding {proc.stderr}"


def _import_graph() -> dict[str, set[str]]:
    """Module -> the workbench modules it imports (at the top or inside a function), from the
    sources."""
    import ast

    files = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(("workbench", *path.relative_to(PACKAGE).with_suffix("").parts))
        files[name.removesuffix(".__init__")] = path
    graph = {}
    for name, path in files.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("workbench"):
                found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files else node.module
                          for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("workbench")}
        graph[name] = {m for m in found if m in files and m != name}
    return graph


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def test_no_import_circle_through_the_front_ends_or_the_headless_layer():
    graph = _import_graph()
    layers = ("workbench.commands", "workbench.ui", "workbench.drive", "workbench.lessons", "workbench.cli")
    circles = sorted(m for m in graph if m.startswith(layers) and m in _reaches(graph, m))
    assert circles == [], f"modules that import themselves through others: {circles}"


def test_the_command_line_imports_the_app_only_to_open_it_and_the_headless_layer_never():
    graph = _import_graph()
    for module, imports in graph.items():
        ui = {m for m in imports if m.startswith("workbench.ui")}
        if module.startswith("workbench.commands"):
            assert ui <= {"workbench.ui.launch"}, f"{module} imports {ui}"
        if module.startswith(("workbench.drive", "workbench.lessons", "workbench.experiments")):
            assert not ui, f"{module} imports {ui}"
            front = {m for m in imports if m.startswith("workbench.commands")}
            assert module.startswith("workbench.experiments") or not front, f"{module} imports {front}"
