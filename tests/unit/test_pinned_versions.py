"""Two pinned releases of Cassandra and HBase (distributions.SERIES): a preset's `version` picks
the lockfile, the jars, the JVM flags and what runs record; a version nobody pinned is one line
(no server, no download: tests/integration/test_server_versions.py starts the real ones)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from workbench.clusters import distributions, presets
from workbench.clusters.base import Cluster, Node
from workbench.clusters.docker_provider import DockerProvider
from workbench.clusters.launch import template_text
from workbench.databases.cassandra import cluster as cassandra_local
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.databases.hbase.cluster_spec import HBaseSpec
from workbench.errors import ClusterError
from workbench.results.from_run import environment

ROOT = Path(__file__).resolve().parents[2]


def workbench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, **env})


def one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("workbench: error: "), done.stderr
    return lines[0]


def test_a_version_nobody_pinned_is_one_line_naming_the_releases_there_are(tmp_path: Path):
    preset = tmp_path / "old.toml"
    preset.write_text('kind = "cassandra"\nversion = "3.11"\nnodes = 1\n')
    env = {"WORKBENCH_STATE_DIR": str(tmp_path / "state")}
    line = one_error_line(workbench("cluster", "up", str(preset), env=env))
    assert f"{preset}: invalid cluster spec: version '3.11': no cassandra 3.11 is pinned here" in line
    assert '"5.0" (5.0.9, the default) and "4.1" (4.1.10)' in line  # the cause: what there is
    assert 'set version to "5.0" or "4.1", or leave it out for 5.0.9' in line  # the fix
    assert not (tmp_path / "state" / "clusters").exists()  # refused before anything started
    line = one_error_line(workbench("cluster", "up", "cassandra-single", "--version", "3.11", env=env))
    assert "version '3.11': no cassandra 3.11 is pinned here" in line  # the flag, as the key

    line = one_error_line(workbench("servers", "fetch", "hbase", "--version", "2.4", env=env))
    assert 'no hbase 2.4 is pinned here, only "2.6" (2.6.1, the default) and "2.5" (2.5.8)' in line
    assert "use --version 2.6 or 2.5" in line
    line = one_error_line(workbench("servers", "fetch", "--version", "4.1", env=env))
    assert "names a release of one server" in line and "servers fetch cassandra --version 4.1" in line


@pytest.mark.parametrize(("text", "said"), [
    ('kind = "hbase"\nversion = "2.4"\n', "version '2.4': no hbase 2.4 is pinned here"),
    ('kind = "cassandra"\nversion = 4.1\n', "key 'version' must be str, not 4.1"),
])
def test_a_wrong_version_in_a_preset_is_refused(tmp_path: Path, text, said):
    preset = tmp_path / "mine.toml"
    preset.write_text(text)
    with pytest.raises(ClusterError, match=said):
        presets.load(str(preset))


def test_a_version_names_a_series_or_its_pinned_release_and_the_default_stays():
    assert CassandraSpec().release == distributions.VERSIONS["cassandra"] == "5.0.9"
    assert HBaseSpec().release == distributions.VERSIONS["hbase"] == "2.6.1"
    assert CassandraSpec(version="4.1").release == CassandraSpec(version="4.1.10").release == "4.1.10"
    assert HBaseSpec(version="2.5").release == "2.5.8"
    assert presets.load("cassandra-4.1-single").release == "4.1.10"
    assert presets.load("hbase-2.5-standalone").release == "2.5.8"
    assert presets.load("cassandra-single").release == "5.0.9"


@pytest.mark.parametrize(("name", "series"), [(n, s) for n in distributions.SERIES
                                                for s in distributions.SERIES[n]])
def test_every_release_has_a_lockfile_pinning_its_own_server_jars(name, series):
    pinned = distributions.SERIES[name][series]
    arts = distributions.read_lock(name, series)
    main = {"cassandra": "cassandra-all", "hbase": "hbase-server"}[name]
    assert [a.version for a in arts if a.artifact == main] == [pinned]
    assert all(a.size > 0 and len(a.sha256) == 64 for a in arts)
    assert distributions.dist_dir(name, Path("/c"), series) == Path(f"/c/distributions/{name}-{pinned}")
    if name == "hbase":  # the same exclusions as 2.6.1 (scripts/gen_locks.py)
        names = {a.artifact for a in arts}
        assert "servlet-api" not in names and "reload4j" not in names and "log4j-core" in names


def test_each_cassandra_release_gets_its_own_flags_and_jamm_and_the_same_yaml(tmp_path: Path):
    java, lib = Path("/usr/bin/java"), tmp_path / "lib"
    argv, yaml, options = {}, {}, {}
    for version in ("", "4.1"):
        spec = CassandraSpec(name="v", version=version, first_address="127.0.0.61")
        [plan] = cassandra_local.plans(spec, tmp_path / (version or "default"), lib, java)
        argv[version] = plan.argv
        conf = plan.dir / "conf"
        yaml[version] = (conf / "cassandra.yaml").read_text()
        options[version] = (conf / "jvm.options").read_text()
    assert f"-javaagent:{lib / 'jamm-0.4.0.jar'}" in argv[""]
    assert f"-javaagent:{lib / 'jamm-0.3.2.jar'}" in argv["4.1"]
    assert options[""] == template_text("cassandra-jvm.options")
    assert options["4.1"] == template_text("cassandra-4.1-jvm.options")
    # jamm 0.3.2 reflects into the JDK's classes: 4.1 on Java 17 needs java.base's packages open
    for package in ("java.io", "java.util.concurrent", "java.nio", "java.net"):
        assert f"--add-opens=java.base/{package}=ALL-UNNAMED" in options["4.1"].splitlines()
    # both releases read one cassandra.yaml (4.1 refuses unknown keys, and took every one of these)
    assert yaml[""].replace(str(tmp_path / "default"), "D") == yaml["4.1"].replace(str(tmp_path / "4.1"), "D")
    assert set(cassandra_local.JVM_OPTIONS) == set(distributions.SERIES["cassandra"])


def test_the_cluster_and_its_runs_name_the_release(tmp_path: Path):
    from workbench.clusters import local
    from workbench.commands.cluster import print_cluster

    spec = CassandraSpec(name="c41", version="4.1")
    node = Node("node1", "127.0.0.1", 9042, 1, 1, tmp_path / "log", tmp_path / "out", tmp_path)
    assert local.server_version(spec) == "4.1.10"
    assert local.server_version(HBaseSpec(version="2.5")) == "2.5.8"
    cluster = Cluster("c41", "cassandra", spec, (node,), tmp_path, server_version="4.1.10")
    assert environment(cluster=cluster)["cluster"]["server_version"] == "4.1.10"
    # a state file written before clusters named their release: the spec's says it
    older = Cluster("c41", "cassandra", spec, (node,), tmp_path)
    assert environment(cluster=older)["cluster"]["server_version"] == "4.1.10"
    out = io.StringIO()
    with redirect_stdout(out):
        print_cluster(cluster)
    assert out.getvalue().startswith("c41: cassandra 4.1.10, 1 process(es), replication ")


def test_the_docker_images_carry_the_default_release_only(tmp_path: Path):
    provider = DockerProvider(state_dir=tmp_path, client=object(), progress=False)
    with pytest.raises(ClusterError, match=r"cassandra 4\.1\.10 \(version = '4\.1'\) is served by the "
                                           r"local provider only: the images carry cassandra 5\.0\.9"):
        provider.up(CassandraSpec(name="x", version="4.1"))
    with pytest.raises(ClusterError, match="local provider only"):
        provider.up(HBaseSpec(name="y", version="2.5"))
