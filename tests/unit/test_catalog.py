"""Presets, experiments and workloads found by name from any directory: the user's folders
(./presets, ./workloads, ~/.config/workbench) first and listed as such, then the shipped ones."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.config import catalog
from workbench.config.properties import merge
from workbench.errors import ConfigError


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A working directory outside the checkout, in a home of its own (~/.config/workbench)."""
    cwd, config = tmp_path / "lab", tmp_path / ".config"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("WORKBENCH_PRESETS_DIR", raising=False)
    return cwd, config / "workbench"


def workbench(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          cwd=cwd, env=dict(os.environ), timeout=120)


def test_shipped_files_are_found_by_name_from_any_directory(elsewhere):
    assert catalog.available("clusters")["cassandra-single"] == \
        catalog.SHIPPED_PRESETS / "clusters" / "cassandra-single.toml"
    assert {"five-mixes", "saturation"} <= set(catalog.available("experiments"))
    assert merge(["workloadb"], []).get("readproportion") == "0.95"
    assert merge(["workloads/workloadc"], []).get("readproportion") == "1"  # YCSB's habit
    assert all(e.origin == "shipped" for e in catalog.entries("workloads"))


def test_the_users_folders_come_first_and_are_named(elsewhere):
    cwd, config = elsewhere
    (cwd / "presets" / "clusters").mkdir(parents=True)
    (cwd / "presets" / "clusters" / "cassandra-single.toml").write_text(
        'kind = "cassandra"\ndescription = "my own single node"\n')
    (config / "workloads").mkdir(parents=True)
    (config / "workloads" / "workloadb").write_text("readproportion=0.5\nupdateproportion=0.5\n")
    (config / "workloads" / "mine").write_text("readproportion=1\n")
    (config / "presets" / "experiments").mkdir(parents=True)
    (config / "presets" / "experiments" / "class.toml").write_text(
        'description = "our class"\ndatabases = ["memory"]\nworkloads = ["mine"]\n')

    entries = {e.name: e for e in catalog.entries("clusters")}
    assert entries["cassandra-single"].origin == "./presets/clusters" and entries["cassandra-single"].shadows
    assert entries["cassandra-3"].shipped
    assert merge(["workloadb"], []).get("readproportion") == "0.5"  # the user's copy wins
    assert merge(["mine"], []).get("readproportion") == "1"

    listing = workbench(cwd, "cluster", "presets")
    assert listing.returncode == 0, listing.stderr
    line = next(x for x in listing.stdout.splitlines() if x.startswith("cassandra-single "))
    assert "./presets/clusters (over shipped)" in line and "my own single node" in line
    assert "shipped" in next(x for x in listing.stdout.splitlines() if x.startswith("hbase-standalone"))

    experiments = workbench(cwd, "experiment", "list")
    assert experiments.returncode == 0, experiments.stderr
    row = next(x for x in experiments.stdout.splitlines() if x.strip().startswith("class "))
    assert "~/.config/workbench/presets/experiments" in row and "our class" in row
    assert "five-mixes" in experiments.stdout
    shown = workbench(cwd, "experiment", "show", "class")
    assert shown.returncode == 0 and "mine" in shown.stdout, shown.stderr


def test_a_broken_experiment_of_the_user_is_listed_with_its_mistake(elsewhere):
    cwd, _ = elsewhere
    (cwd / "presets" / "experiments").mkdir(parents=True)
    (cwd / "presets" / "experiments" / "broken.toml").write_text('databases = ["oracle"]\n')
    listing = workbench(cwd, "experiment", "list")
    assert listing.returncode == 0, listing.stderr
    assert "not usable" in next(x for x in listing.stdout.splitlines() if "broken" in x)


def test_a_name_that_is_nothing_names_the_workloads_there_are(elsewhere):
    with pytest.raises(ConfigError) as raised:
        merge(["workloadz"], [])
    assert "workload file not found: workloadz" in str(raised.value) and "workloada" in str(raised.value)
    with pytest.raises(ConfigError):
        merge(["some/dir/workloada"], [])  # a real path is never replaced by a shipped name
