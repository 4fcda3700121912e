"""The distribution: a wheel holds everything the program reads at run time, under a name of its
own, and every third-party module the code imports is a declared dependency."""

from __future__ import annotations

import ast
import email
import importlib.metadata
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.wheel import build_wheel, tracked_files, wheel_names
from workbench import speedups

ROOT = Path(__file__).resolve().parents[2]
needs_checkout = pytest.mark.skipif(tracked_files() is None, reason="needs a git checkout and git")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@needs_checkout
def test_the_wheel_holds_every_file_of_the_package(wheel):
    names = wheel_names(wheel)
    package = [f for f in tracked_files() if f.startswith("workbench/")]
    missing = [f for f in package if f not in names]
    assert not missing, f"tracked files the wheel leaves out (pyproject's package-data): {missing}"
    # what the program finds by name: presets, experiments, workloads, templates
    for shipped in ("workbench/presets/clusters/cassandra-single.toml", "workbench/workloads/workloada",
                    "workbench/presets/experiments/five-mixes.toml",
                    "workbench/clusters/templates/cassandra-jvm.options"):
        assert shipped in names
    assert not [n for n in names if n.startswith(("tests/", "bench/", "presets/", "workloads/"))]
    # setup.py's optional extension: built into the wheel where it builds for the editable install
    if speedups.C is not None:
        assert [n for n in names if n.startswith("workbench/_speedups.") and n.endswith(".so")], sorted(names)


@needs_checkout
def test_the_distribution_has_a_name_of_its_own_and_both_commands(wheel):
    with zipfile.ZipFile(wheel) as z:
        meta = email.message_from_bytes(z.read(next(n for n in z.namelist() if n.endswith("/METADATA"))))
        scripts = z.read(next(n for n in z.namelist() if n.endswith("/entry_points.txt"))).decode()
    assert meta["Name"] == "ycsb-workbench"  # "workbench" on PyPI is someone else's project
    assert "workbench = workbench.cli:main" in scripts and "ycsb-workbench = workbench.cli:main" in scripts
    # the databases, found only through their entry point group (workbench/databases/registry.py)
    group = scripts.split("[workbench.databases]")[1].split("\n[")[0]
    assert sorted(line.split(" = ")[0] for line in group.strip().splitlines()) == [
        "cassandra", "hbase", "memory", "mongodb"]


def _imported_top_levels() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "workbench").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def _requirement_name(text: str) -> str:
    for stop in "<>=!~;[ (":
        text = text.split(stop)[0]
    return text.strip().lower().replace("_", "-")


def test_every_third_party_import_is_a_declared_dependency():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_requirement_name(r) for r in project["dependencies"]}
    # An optional extra's package (ray) is declared there, and imported only when asked for.
    declared |= {_requirement_name(r) for extra, reqs in project["optional-dependencies"].items()
                 if extra != "test" for r in reqs}
    distributions = importlib.metadata.packages_distributions()
    third_party = _imported_top_levels() - set(sys.stdlib_module_names) - {"workbench", "__future__"}
    # Hbase_thrift is not installed by anything: databases/hbase/protocol/thrift_idl.py makes it
    # from happybase's IDL.
    third_party.discard("Hbase_thrift")
    undeclared = {}
    for module in sorted(third_party):
        owners = {d.lower().replace("_", "-") for d in distributions.get(module, [])}
        assert owners, f"{module} is imported but no installed distribution provides it"
        if not owners & declared:
            undeclared[module] = sorted(owners)
    assert not undeclared, f"imported by workbench/ but not in [project] dependencies: {undeclared}"


def test_the_ray_extra_is_imported_only_by_a_run_that_asks_for_it():
    import subprocess

    code = ("import sys; import workbench.cli, workbench.core.controller, workbench.core.ray_workers, "
            "workbench.drive.background; assert 'ray' not in sys.modules, 'ray was imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_hbase_thrift_comes_from_happybases_idl_without_importing_happybase():
    import subprocess

    code = ("import sys; from workbench.databases.hbase.protocol import thrift_idl as hbase_idl; "
            "assert 'happybase' not in sys.modules, 'happybase was imported'; "
            "assert sys.modules['Hbase_thrift'] is hbase_idl.Hbase_thrift; "
            "import happybase; assert happybase.batch.Mutation is hbase_idl.Mutation")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _quick_start() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_quick_start_is_two_commands_in_a_venv_and_ci_runs_the_second():
    main, tests = _quick_start()
    for command in (main, tests):
        # Debian's and Ubuntu's python3 refuse `pip install` outside a virtual environment
        assert command.startswith("python3 -m venv .venv && .venv/bin/pip install -e ")
    assert main.endswith(".venv/bin/workbench demo")
    ci = (ROOT / ".ci" / "run").read_text()
    assert tests in ci.splitlines()
