"""FerretDB's local parts that need no server: the spec, the build's refusals, stale-lock handling."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from workbench.clusters import presets
from workbench.clusters.base import Node
from workbench.clusters.distributions import _sha256
from workbench.clusters.local import LocalProvider
from workbench.databases.mongodb import cluster_ferretdb as ferretdb_local
from workbench.databases.mongodb import cluster_ferretdb_build as gobuild
from workbench.databases.mongodb.cluster_spec import FerretDBSpec
from workbench.errors import ClusterError


def test_presets_are_ferretdb_on_postgresql_and_on_sqlite():
    pg, lite = presets.load("ferretdb-postgres"), presets.load("ferretdb-sqlite")
    assert (pg.kind, pg.backend, pg.port) == ("ferretdb", "postgresql", 27017)
    assert pg.postgres_port not in (5432, 27017)  # a port of its own, not Debian's PostgreSQL
    assert (lite.kind, lite.backend) == ("ferretdb", "sqlite")


@pytest.mark.parametrize("changes, field", [
    ({"backend": "mysql"}, "backend"), ({"port": 80}, "port"), ({"postgres_port": 27017}, "postgres_port"),
    ({"shared_buffers": "lots"}, "shared_buffers"), ({"address": "10.0.0.1"}, "address"),
])
def test_bad_specs_name_the_field(changes, field):
    with pytest.raises(ClusterError, match=field):
        FerretDBSpec(**changes)


def test_without_go_and_no_binary_the_error_names_the_ways_on(tmp_path, monkeypatch):
    monkeypatch.setattr(gobuild, "find_go", lambda: None)
    provider = LocalProvider(state_dir=tmp_path / "state", cache_dir=tmp_path / "empty-cache", progress=False)
    with pytest.raises(ClusterError) as caught:
        provider.up(FerretDBSpec(name="nogo", backend="sqlite"))
    text = str(caught.value)
    assert "no Go toolchain" in text and "--provider docker" in text and 'kind = "mongodb"' in text
    assert provider.clusters() == []  # nothing was started or recorded


def test_without_go_the_cli_says_one_line_and_exits_2(tmp_path):
    env = {**os.environ, "PATH": "/nonexistent", "WORKBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "WORKBENCH_STATE_DIR": str(tmp_path / "state")}
    code = "import workbench.databases.mongodb.cluster_ferretdb_build as g; g.GO_CANDIDATES = (); " \
           "from workbench.cli import main; raise SystemExit(main(['servers', 'fetch', 'ferretdb']))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Go toolchain" in lines[0], done.stderr


def test_a_tampered_cached_binary_is_not_used(tmp_path):
    folder = gobuild.binary_dir(tmp_path)
    folder.mkdir(parents=True)
    binary = folder / "ferretdb"
    binary.write_text("#!/bin/sh\necho 'version: v1.24.2'\n")
    binary.chmod(0o755)
    (folder / "ferretdb.sha256").write_text(f"{_sha256(binary)}  ferretdb\n")
    assert gobuild.cached(tmp_path) == binary
    binary.write_text("#!/bin/sh\necho 'version: v9.9.9'\n")  # changed after it was recorded
    assert gobuild.cached(tmp_path) is None


def test_a_stale_postmaster_pid_of_a_dead_server_is_removed(tmp_path):
    """After a SIGKILL, PostgreSQL's lock files name a process that is gone (or an unreaped zombie):
    the restart removes them; a live process's files are left for PostgreSQL to refuse."""
    sockets = tmp_path / "pg"
    sockets.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    (tmp_path / "postmaster.pid").write_text(f"{gone.pid}\n{tmp_path}\n1\n27432\n{sockets}\n127.0.0.1\n"
                                             "  999999999  999999999\nready\n")
    (sockets / ".s.PGSQL.27432.lock").write_text("x")
    node = Node("postgres", "127.0.0.1", 27432, 0, 0, tmp_path / "l", tmp_path / "l", tmp_path)
    ferretdb_local.before_restart(node)
    assert not (tmp_path / "postmaster.pid").exists() and not (sockets / ".s.PGSQL.27432.lock").exists()
    (tmp_path / "postmaster.pid").write_text(f"{os.getpid()}\n")  # this process: alive
    ferretdb_local.before_restart(node)
    assert (tmp_path / "postmaster.pid").exists()


def test_postgres_runs_unprivileged_under_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert ferretdb_local._unprivileged(["postgres"])[:2] == ["unshare", "--user"]
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert ferretdb_local._unprivileged(["postgres"]) == ["postgres"]


def test_a_run_on_ferretdb_is_labelled_so_and_one_on_mongodb_is_not():
    from workbench.results.model import RunResult

    def result(environment):
        return RunResult("run", "mongodb", 1000, 10, 10.0, environment=environment)

    named = {"cluster": {"server_version": "FerretDB 1.24.2 on PostgreSQL 15.18 (MongoDB protocol)"}}
    assert result(named).database == "mongodb (FerretDB)"
    noted = {"notes": ["server: FerretDB 1.24.2 (MongoDB protocol, reports 7.0.42)"]}
    assert result(noted).database == "mongodb (FerretDB)"  # a run with -db mongodb, no --cluster
    assert result({"notes": ["server: MongoDB 7.0.14"]}).database == "mongodb"
    assert result({}).database == "mongodb"
