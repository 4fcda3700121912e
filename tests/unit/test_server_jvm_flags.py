"""WORKBENCH_SERVER_JVM_FLAGS (clusters/java.py): extra flags for the servers' JVMs, read when a
cluster starts, kept by the cluster (its state, restarts, added nodes) and recorded in every run's
manifest, where runs on servers started with other flags are said not to be comparable. (That a
real node runs with them, and keeps them through a restart: tests/integration/.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.clusters import maintenance
from workbench.clusters import state as store
from workbench.clusters.base import Cluster, Node
from workbench.clusters.java import SERVER_FLAGS_ENV, server_flags, with_flags
from workbench.config.spec import spec_from_args
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.errors import ClusterError
from workbench.results.comparable import differing
from workbench.results.manifest import build_manifest
from workbench.results.manifest_text import manifest_lines

C1 = ("-XX:TieredStopAtLevel=1",)


def node(name: str, flags: tuple[str, ...] = ()) -> Node:
    return Node(name, "127.0.0.1", 9042, 0, 0, Path("/x"), Path("/x"), Path("/x"),
                argv=("java", "@jvm.options", "-Xmx1G", "-cp", "conf:lib/*", "Main"), jvm_flags=flags)


def manifest_of(tmp_path: Path, *nodes: Node, provider: str = "local") -> dict:
    spec = CassandraSpec(name="c", nodes=len(nodes))
    cluster = Cluster("c", "cassandra", spec, nodes, tmp_path, provider=provider, server_version="5.0.9")
    wspec, props = spec_from_args([], ["db=cassandra"], "run")
    return build_manifest(wspec, props.as_dict(), "run", cluster=cluster, argv=["workbench"])


def test_the_flags_are_read_as_a_shell_splits_them_and_none_when_unset(monkeypatch):
    monkeypatch.delenv(SERVER_FLAGS_ENV, raising=False)
    assert server_flags() == ()
    monkeypatch.setenv(SERVER_FLAGS_ENV, "  -XX:TieredStopAtLevel=1   '-Dname=a b' ")
    assert server_flags() == ("-XX:TieredStopAtLevel=1", "-Dname=a b")


@pytest.mark.parametrize("text, named", [("-Xmx1G oops", "'oops'"), ("-cp /tmp", "'-cp'"),
                                         ("-Dx='unclosed", "cannot be read")])
def test_what_is_not_a_jvm_option_is_refused_in_one_line(monkeypatch, text, named):
    monkeypatch.setenv(SERVER_FLAGS_ENV, text)
    with pytest.raises(ClusterError) as caught:
        server_flags()
    assert SERVER_FLAGS_ENV in str(caught.value) and named in str(caught.value)
    assert "-XX:TieredStopAtLevel=1" in caught.value.hint


def test_the_flags_go_before_the_class_path_where_they_win_over_the_argfile():
    argv = ("java", "@jvm.options", "-Xmx1G", "-cp", "conf:lib/*", "Main")
    assert with_flags(argv, C1) == ("java", "@jvm.options", "-Xmx1G", *C1, "-cp", "conf:lib/*", "Main")
    assert with_flags(argv, ()) == argv
    assert with_flags(("java", "-jar", "x.jar"), C1) == ("java", *C1, "-jar", "x.jar")


def test_the_cluster_state_keeps_each_nodes_flags_and_an_older_state_has_none(tmp_path):
    cluster = Cluster("c", "cassandra", CassandraSpec(name="c", nodes=2), (node("node1", C1), node("node2")),
                      tmp_path, provider="local")
    store.save(cluster, "running")
    loaded, _ = store.load(tmp_path)
    assert [n.jvm_flags for n in loaded.nodes] == [C1, ()]
    doc = json.loads((tmp_path / store.STATE_FILE).read_text())
    for n in doc["nodes"]:
        del n["jvm_flags"]
    (tmp_path / store.STATE_FILE).write_text(json.dumps(doc))
    older, _ = store.load(tmp_path)
    assert [n.jvm_flags for n in older.nodes] == [(), ()]


def test_a_run_records_the_flags_and_runs_with_other_flags_are_not_comparable(tmp_path):
    plain = manifest_of(tmp_path, node("node1"), node("node2"))
    c1 = manifest_of(tmp_path, node("node1", C1), node("node2", C1))
    mixed = manifest_of(tmp_path, node("node1", C1), node("node2"))
    assert plain["cluster"]["jvm_flags"] == "none"
    assert c1["cluster"]["jvm_flags"] == "-XX:TieredStopAtLevel=1"
    assert mixed["cluster"]["jvm_flags"] == {"node1": "-XX:TieredStopAtLevel=1", "node2": ""}
    assert "JVM flags -XX:TieredStopAtLevel=1" in "\n".join(manifest_lines(c1))
    assert not any("JVM flags" in line for line in manifest_lines(plain))
    assert [(d.field, d.baseline, d.other) for d in differing(plain, c1)] == \
        [("jvm_flags", "none", "-XX:TieredStopAtLevel=1")]
    assert differing(c1, manifest_of(tmp_path, node("node1", C1), node("node2", C1))) == []
    # a run recorded before manifests named the flags had none: it still compares with a new one
    older = {**plain, "cluster": {k: v for k, v in plain["cluster"].items() if k != "jvm_flags"}}
    assert differing(older, plain) == []
    # an external cluster's flags are not the workbench's to know: not compared
    external = manifest_of(tmp_path, node("node1"), provider="external")
    assert "jvm_flags" not in external["cluster"]
    assert [d.field for d in differing(external, external)] == []


def test_a_tool_in_a_servers_container_runs_without_the_servers_flags():
    argv = ["nodetool", "flush", Path("ks")]
    assert maintenance.tool_argv(node("node1", C1), argv) == ["env", "-u", "JAVA_TOOL_OPTIONS", "nodetool",
                                                             "flush", "ks"]
    assert maintenance.tool_argv(node("node1"), argv) == ["nodetool", "flush", "ks"]
