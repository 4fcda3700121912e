"""The headless layers never import textual (ARCHITECTURE.md): checked in a fresh interpreter."""

import subprocess
import sys

HEADLESS = [
    "workbench.config.properties",
    "workbench.config.spec",
    "workbench.core.controller",
    "workbench.core.workers",
    "workbench.core.popularity",
    "workbench.metrics.recorder",
    "workbench.metrics.snapshot",
    "workbench.bindings.registry",
    "workbench.bindings.memory",
    "workbench.results.exporters",
    "workbench.results.importers",
    "workbench.results.from_run",
    "workbench.cli",
]


def test_headless_packages_do_not_import_textual():
    code = (
        "import sys, importlib\n"
        f"for name in {HEADLESS!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"textual imported: {proc.stdout} {proc.stderr}"


def test_every_headless_package_is_listed():
    # A new headless package must be added to HEADLESS above.
    import pkgutil

    import workbench

    packages = {m.name for m in pkgutil.iter_modules(workbench.__path__) if m.ispkg}
    checked = {name.split(".")[1] for name in HEADLESS}
    headless = packages - {"ui"}
    assert headless <= checked | {"commands", "clusters"}, headless - checked
