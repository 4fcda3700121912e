"""A database from outside the workbench: tests/data/toy_database, a package of its own (its
pyproject.toml, descriptor, binding, properties), installed with pip into a directory of its own
and put on PYTHONPATH, works everywhere a database appears, with nothing under workbench/
naming it: the entry point group lists it, `workbench run -db toy` runs on it, its properties
are checked and refused like the others, `runs show` names its client, an experiment names it,
the demo runs on it, and the app's Workload screen offers it and runs on it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "tests" / "data" / "toy_database"
WORKBENCH = [sys.executable, "-m", "workbench"]


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory) -> dict[str, str]:
    """The environment of a process with the toy installed (pip install --target: its own
    pyproject.toml and entry point line, built from a copy so the source stays clean)."""
    work = tmp_path_factory.mktemp("toy")
    shutil.copytree(TOY, work / "source")
    site = work / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--disable-pip-version-check", "--target", str(site), str(work / "source")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    env["WORKBENCH_STORE"] = str(work / "runs.db")
    env["WORKBENCH_STATE_DIR"] = str(work / "state")
    return env


def workbench(env, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*WORKBENCH, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout)


def test_the_entry_point_group_lists_the_built_ins_and_the_toy(toy_env):
    code = ("from importlib.metadata import entry_points\n"
            "print(sorted(e.name for e in entry_points(group='workbench.databases')))\n"
            "from workbench import databases\nprint(databases.names())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=toy_env,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    group, names = done.stdout.splitlines()
    assert group == "['cassandra', 'hbase', 'memory', 'mongodb', 'toy']"
    assert names == "('memory', 'cassandra', 'hbase', 'mongodb', 'toy')"  # the built-ins first


def test_run_on_the_toy_and_runs_show_names_its_client(toy_env):
    done = workbench(toy_env, "run", "-db", "toy", "-p", "recordcount=200", "-p", "operationcount=1000",
                     "-p", "toy.store=mine")
    assert done.returncode == 0, done.stderr
    assert "[READ], Return=OK" in done.stdout and "[UPDATE], Return=OK" in done.stdout
    listed = workbench(toy_env, "runs", "list")
    assert listed.returncode == 0 and " toy " in listed.stdout, listed.stdout
    shown = workbench(toy_env, "runs", "show", "1")
    assert shown.returncode == 0, shown.stderr
    assert "run 1: run - on toy, completed" in shown.stdout
    assert "client: toy store 'mine' (in-process)" in shown.stdout
    assert "server: toy (in-process) 0.1.0" in shown.stdout  # its package's version


@pytest.mark.parametrize(("prop", "said"), [
    ("toy.bogus=1", "unknown toy property 'toy.bogus' (valid ones: toy.store, toy.preload)"),
    ("toy.preload=maybe", "toy.preload='maybe' is not true or false (write true or false)"),
    ("recordcount=0", "the toy would preload 2,147,483,647 records before this run (set recordcount to "
                      "1,000,000 or fewer, or -p toy.preload=false)"),
])
def test_its_properties_are_refused_like_the_others(toy_env, prop, said):
    done = workbench(toy_env, "run", "-db", "toy", "-p", "operationcount=10", "-p", prop)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == f"workbench: error: {said}"


def test_without_the_toy_installed_its_name_is_refused_in_one_line():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([*WORKBENCH, "run", "-db", "toy", "-p", "operationcount=10"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("workbench: error: unknown database binding 'toy'")


def test_an_installation_whose_metadata_registers_no_database_is_one_line(tmp_path):
    # a stale egg-info of the workbench ahead of the installed one (a checkout's old build)
    info = tmp_path / "ycsb_workbench.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: ycsb-workbench\nVersion: 0.2.0\n")
    (info / "entry_points.txt").write_text("[console_scripts]\nworkbench = workbench.cli:main\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    # run from tmp_path: `python -m` puts the working directory first on the path, and a fresh
    # clone's checkout holds the egg-info `pip install -e .` wrote (with the entry points), which
    # would come ahead of the stale one
    done = subprocess.run([*WORKBENCH, "run", "-db", "memory", "-p", "operationcount=10"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "workbench: error: no database is registered (entry point group 'workbench.databases' is empty) "
        "(reinstall the workbench (pip install -e . in its checkout, or its wheel); a stale "
        "ycsb_workbench.egg-info earlier on the path hides its entry points)"]


def test_an_experiment_names_the_toy(toy_env, tmp_path):
    path = tmp_path / "toy-mixes.toml"
    path.write_text(textwrap.dedent("""\
        name = "toy-mixes"
        databases = ["toy", "memory"]
        workloads = ["workloada"]
        warmup_s = 0
        measure_s = 1
        min_measure_s = 1
        [properties]
        recordcount = 200
        operationcount = 500
        """))
    done = workbench(toy_env, "experiment", "run", str(path), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "toy/workloada      1" in done.stdout and "memory/workloada   1" in done.stdout
    shown = workbench(toy_env, "experiment", "show", str(path))
    assert "databases toy, memory" in shown.stdout and "2 runs at scale full: 2 done" in shown.stdout


def test_the_demo_runs_on_the_toy(toy_env, tmp_path):
    done = workbench(toy_env, "demo", "--db", "toy", "--no-tui", "--records", "300", "--operations", "1000",
                     "--out", str(tmp_path / "demo"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "demo").glob("*.txt")) == [
        "toy-workloada-load.txt", "toy-workloada-run.txt", "toy-workloadc-run.txt"]


COMPOSER = """
import asyncio, sys, tempfile, time
from pathlib import Path
from textual.widgets import Select
from workbench.drive.session import Session
from workbench.ui.app import WorkbenchApp

async def main():
    session = Session(state_dir=Path(tempfile.mkdtemp()))
    app = WorkbenchApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        select = app.screen.query_one("#db", Select)
        print("offered", [value for _, value in select._options])
        select.value = "toy"
        deadline = time.monotonic() + 60
        while "db=toy" not in str(app.screen.query_one("#cmdline").content):
            assert time.monotonic() < deadline, str(app.screen.query_one("#cmdline").content)
            await pilot.pause(0.05)
        await pilot.press("ctrl+r")
        while len(session.finished) < 2 or session.busy:
            assert time.monotonic() < deadline, "the runs did not finish"
            await pilot.pause(0.05)
    for done in session.finished:
        print("ran", done.result.db, done.result.phase, done.result.outcome,
              done.result.environment["client"]["name"])

asyncio.run(main())
"""


def test_the_workload_screen_offers_the_toy_and_runs_on_it(toy_env):
    done = subprocess.run([sys.executable, "-c", COMPOSER], capture_output=True, text=True, env=toy_env,
                          cwd=ROOT, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "offered ['memory', 'cassandra', 'hbase', 'mongodb', 'toy']" in lines
    assert [line for line in lines if line.startswith("ran ")] == [
        "ran toy load completed toy store 'default' (in-process)",
        "ran toy run completed toy store 'default' (in-process)"]
