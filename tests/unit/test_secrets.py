"""Secrets on disk: files that hold one are 0600 from their creation, in 0700 directories, and
an external cluster's password is read again from where the user keeps it, never from state."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from workbench.clusters import paths
from workbench.clusters.external import ExternalProvider, _cluster, _save, load_file
from workbench.errors import ClusterError


def test_a_private_file_is_never_readable_by_others_even_under_a_permissive_umask(tmp_path):
    old = os.umask(0)
    try:
        where = paths.private_dir(tmp_path / "a" / "b")
        target = where / "secret.json"
        (where / "secret.json.tmp").write_text("left by a crash")
        os.chmod(where / "secret.json.tmp", 0o666)
        paths.write_private(target, "s3cret")
    finally:
        os.umask(old)
    assert where.stat().st_mode & 0o777 == 0o700
    assert target.stat().st_mode & 0o777 == 0o600 and target.read_text() == "s3cret"
    assert not (where / "secret.json.tmp").exists()


def _lab(tmp_path, line: str):
    path = tmp_path / "lab.toml"
    path.write_text(f'kind = "cassandra"\nprovider = "external"\nhosts = ["127.0.0.1"]\n'
                    f'username = "bench"\n{line}\n')
    return path


def test_the_state_of_an_external_cluster_names_the_file_not_the_password(tmp_path, monkeypatch):
    path = _lab(tmp_path, 'password = "hunter2-xyz"')
    spec = load_file(path)
    assert spec.login_password() == "hunter2-xyz" and spec.source == str(path.resolve())
    _save(_cluster(spec, tmp_path / "state" / "external" / "lab", "5.0", 1))
    text = (tmp_path / "state" / "external" / "lab" / "state.json").read_text()
    assert "hunter2-xyz" not in text and json.loads(text)["spec"]["source"] == str(path.resolve())
    provider = ExternalProvider(state_dir=tmp_path / "state")
    remembered = provider._load("lab")
    assert remembered.credentials == ("bench", "hunter2-xyz")  # read again from the file
    path.write_text(path.read_text().replace("hunter2-xyz", "changed"))
    assert remembered.credentials == ("bench", "changed")
    path.unlink()
    with pytest.raises(ClusterError, match="password is read from its cluster file.*no cluster file"):
        remembered.credentials  # noqa: B018
    assert provider.down("lab") == {"host1": "forgotten"}  # forgetting needs no password


def test_a_password_from_the_environment(tmp_path, monkeypatch):
    spec = load_file(_lab(tmp_path, 'password_env = "WB_UNIT_PW"'))
    monkeypatch.delenv("WB_UNIT_PW", raising=False)
    with pytest.raises(ClusterError, match="WB_UNIT_PW, which is not set"):
        spec.login_password()
    monkeypatch.setenv("WB_UNIT_PW", "from-env")
    assert spec.login_password() == "from-env"
    with pytest.raises(ClusterError, match="password or password_env, not both"):
        load_file(_lab(tmp_path, 'password = "a"\npassword_env = "B"'))


def test_the_file_read_again_may_have_moved_its_password_to_the_environment(tmp_path, monkeypatch):
    path = _lab(tmp_path, 'password = "first"')
    spec = load_file(path)
    remembered = dataclasses.replace(spec, password="")  # what the state gives back
    path.write_text(path.read_text().replace('password = "first"', 'password_env = "WB_UNIT_PW2"'))
    monkeypatch.setenv("WB_UNIT_PW2", "now-from-env")
    assert remembered.login_password() == "now-from-env"
    path.write_text(path.read_text().replace('password_env = "WB_UNIT_PW2"', ""))
    assert remembered.login_password() == ""  # neither any more: no password (and no loop)


def test_a_docker_tls_cluster_keeps_its_keystore_in_a_folder_only_its_owner_enters(tmp_path, monkeypatch):
    from workbench.clusters import docker_plans, java
    from workbench.clusters.docker_provider import DockerProvider
    from workbench.databases.cassandra import cluster as cassandra_local
    from workbench.databases.cassandra.cluster_spec import CassandraSpec

    def fake_tls(spec, run_dir, java_path, private=True):
        assert not private  # the container's own user reads the keystore through its mount
        cassandra_local.tls_dir(run_dir).mkdir(parents=True, exist_ok=True)
        (cassandra_local.tls_dir(run_dir) / "keystore.p12").write_bytes(b"key")
        return "keystore-pw-123"

    monkeypatch.setattr(cassandra_local, "make_tls", fake_tls)
    monkeypatch.setattr(java, "choose", lambda: type("Jdk", (), {"java": tmp_path / "java"})())
    provider = DockerProvider(state_dir=tmp_path / "state", client=object())
    run_dir = provider.root / "sec"
    old = os.umask(0o022)
    try:
        plan = docker_plans.plan(CassandraSpec(name="sec", nodes=1, client_tls=True,
                                               authenticator="PasswordAuthenticator"), run_dir, provider.tag)
    finally:
        os.umask(old)
    conf = run_dir / "node1" / "conf"
    assert "keystore-pw-123" in (conf / "cassandra.yaml").read_text()
    assert run_dir.stat().st_mode & 0o777 == 0o700  # nobody else reaches the yaml or the keystore
    mounted = {Path(m.source) for m in plan.containers[0].mounts if not m.is_volume}
    assert conf in mounted and cassandra_local.tls_dir(run_dir) in mounted
    assert all(run_dir in p.parents for p in mounted)  # every mount is below the private folder


def test_a_password_in_a_connection_string_is_masked_wherever_a_run_is_recorded():
    from workbench.results.masking import masked

    shown = masked({"mongodb.url": "mongodb://bench:s3cr%40t@10.0.0.1:27017/ycsb?w=1&tls=true",
                    "cassandra.password": "s3cret", "hosts": "127.0.0.1",
                    "other.url": "mongodb://10.0.0.1:27017/ycsb?w=1"})
    assert shown == {"mongodb.url": "mongodb://bench:***@10.0.0.1:27017/ycsb?w=1&tls=true",
                     "cassandra.password": "***", "hosts": "127.0.0.1",
                     "other.url": "mongodb://10.0.0.1:27017/ycsb?w=1"}
