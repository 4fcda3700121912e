"""Cluster presets: every shipped preset loads into a valid spec; field types are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.clusters import presets
from workbench.clusters.base import Cluster, Node
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.drive.targets import binding_overrides
from workbench.errors import ClusterError


@pytest.mark.parametrize("name", sorted(presets.available()))
def test_every_shipped_preset_loads(name):
    spec = presets.load(name)
    assert spec.name == name
    assert presets.describe(presets.available()[name])


def test_the_secure_preset_asks_for_a_login_and_tls_and_targets_pass_them_on(tmp_path):
    spec = presets.load("cassandra-secure")
    assert isinstance(spec, CassandraSpec)
    assert (spec.authenticator, spec.client_tls) == ("PasswordAuthenticator", True)
    node = Node("node1", "127.0.0.1", 9042, 1, 1, tmp_path / "log", tmp_path / "out", tmp_path)
    handle = Cluster(spec.name, spec.kind, spec, (node,), tmp_path)
    props = binding_overrides(handle)
    assert "cassandra.username=cassandra" in props and "cassandra.password=cassandra" in props
    assert "cassandra.useSSL=true" in props
    assert f"cassandra.ssl.cafile={tmp_path / 'tls' / 'ca.pem'}" in props
    plain = presets.load("cassandra-single")
    assert not any(p.startswith(("cassandra.username", "cassandra.useSSL"))
                   for p in binding_overrides(Cluster(plain.name, plain.kind, plain, (node,), tmp_path)))


@pytest.mark.parametrize(("line", "said"), [
    ('client_tls = "yes"', "key 'client_tls' must be bool"),
    ("nodes = true", "key 'nodes' must be int"),
    ('authenticator = "Kerberos"', "authenticator must be one of"),
    ('docker_network = "overlay"', "docker_network must be 'host' or 'bridge'"),
    ('docker_memory = "lots"', "docker_memory 'lots' must look like 512M"),
    ("docker_cpus = -1", "docker_cpus must be 0"),
])
def test_a_wrong_field_type_or_value_is_refused(tmp_path: Path, line, said):
    preset = tmp_path / "mine.toml"
    preset.write_text(f'kind = "cassandra"\n{line}\n')
    with pytest.raises(ClusterError, match=said):
        presets.load(str(preset))


def test_the_gateways_server_transport_and_protocol_reach_its_flags_and_the_binding(tmp_path: Path):
    from workbench.databases.hbase.cluster import thrift_flags

    default = presets.load("hbase-standalone")
    assert thrift_flags(default) == ["-threadpool"]
    node = Node("thrift", "127.0.0.1", 9090, 1, 1, tmp_path / "log", tmp_path / "out", tmp_path)
    assert binding_overrides(Cluster("h", "hbase", default, (node,), tmp_path)) == [
        "db=hbase", "hbase.host=127.0.0.1", "hbase.port=9090", "hbase.zookeeper=127.0.0.1:2181"]
    preset = tmp_path / "hsha.toml"
    preset.write_text('kind = "hbase"\nthrift_server = "hsha"\nthrift_transport = "framed"\n'
                      'thrift_protocol = "compact"\n')
    spec = presets.load(str(preset))
    assert thrift_flags(spec) == ["-hsha", "-f", "-c"]
    props = binding_overrides(Cluster("h", "hbase", spec, (node,), tmp_path))
    assert props[-2:] == ["hbase.transport=framed", "hbase.protocol=compact"]
    preset.write_text('kind = "hbase"\nthrift_server = "nonblocking"\n')
    with pytest.raises(ClusterError, match='framed transport only: set thrift_transport = "framed"'):
        presets.load(str(preset))
    preset.write_text('kind = "hbase"\nthrift_transport = "zlib"\n')
    with pytest.raises(ClusterError, match="thrift_transport 'zlib' must be one of buffered, framed"):
        presets.load(str(preset))


def test_hbase_names_its_servers_by_their_address_not_the_host_name(tmp_path):
    """Debian's /etc/hosts maps the host name to 127.0.1.1: a master that advertised the host
    name was never reached by its own RegionServer (found on a bare Debian 12)."""
    from xml.etree import ElementTree

    from workbench.databases.hbase import cluster as hbase_local

    spec = presets.load("hbase-standalone")
    hbase_local.plans(spec, tmp_path, tmp_path / "lib", Path("/usr/bin/java"))
    site = ElementTree.parse(tmp_path / "hbase" / "conf" / "hbase-site.xml").getroot()
    conf = {p.findtext("name"): p.findtext("value") for p in site.iter("property")}
    assert conf["hbase.master.hostname"] == spec.address == "127.0.0.1"
    assert conf["hbase.unsafe.regionserver.hostname"] == spec.address


def test_a_restarted_regionserver_is_the_one_that_started_after_the_restart():
    """A killed RegionServer's node stays in ZooKeeper until its session times out: the restarted
    one is told apart by its start code (ms)."""
    from workbench.databases.hbase.cluster import registered_in

    old, new = "127.0.0.2,16020,1700000000000", "127.0.0.2,16020,1700000060000"
    assert registered_in([old], "127.0.0.2", 16020)
    assert not registered_in([old], "127.0.0.2", 16020, since_ms=1700000050000)
    assert registered_in([old, new], "127.0.0.2", 16020, since_ms=1700000050000)
    assert not registered_in([new], "127.0.0.3", 16020) and not registered_in([new], "127.0.0.2", 16021)
    assert not registered_in(["127.0.0.2,16020,"], "127.0.0.2", 16020, since_ms=1)
