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
    assert "workbench.commands.background" in names and "workbench.cli" in names
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
    for module in ("workbench.bindings.cassandra_python", "workbench.bindings.cassandra_acsylla"):
        code = (f"import sys, {module}\n"
                "sys.exit(1 if 'workbench.bindings.cassandra' in sys.modules else 0)\n")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{module} imports workbench.bindings.cassandra {proc.stderr}"
