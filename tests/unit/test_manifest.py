"""A run's manifest (results/manifest.py, server_settings.py, manifest_text.py): what it holds,
made from the spec, the cluster, the files and the machine, with no server asked."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest
from engine_helpers import make_spec

from workbench import __version__
from workbench.clusters.base import Cluster, Node
from workbench.clusters.external import ExternalSpec
from workbench.config.spec import spec_from_args
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.databases.hbase.cluster_spec import HBaseSpec
from workbench.databases.mongodb.server_settings import write_concern
from workbench.drive.phase import Phase
from workbench.results import manifest as manifest_module
from workbench.results.manifest import build_manifest, command_line, complete, equivalent_command, host
from workbench.results.manifest_text import manifest_lines
from workbench.results.server_settings import server

ROOT = Path(__file__).resolve().parents[2]


def node(name: str, cpus: float = 0.0) -> Node:
    return Node(name, "127.0.0.1", 9042, 0, 0, Path("/x"), Path("/x"), Path("/x"), cpus=cpus)


def test_the_host_is_described_as_it_is():
    h = host()
    assert h["cpus"] == os.cpu_count() >= 1
    assert 1 <= h["cpus_usable"] <= h["cpus"]
    assert h["memory_bytes"] > 2**26  # more than 64 MiB
    assert h["kernel"] == f"{platform.system()} {platform.release()}"
    assert len(h["load_average"]) == 3 and all(x >= 0 for x in h["load_average"])
    assert h["cpu_model"] and h["cpu_model"] != "unknown"
    assert h["name"]


def test_the_workload_files_digests_overrides_and_seed(tmp_path):
    a = tmp_path / "a.properties"
    a.write_bytes(b"recordcount=100\noperationcount=200\nreadproportion=0.5\nupdateproportion=0.5\n")
    b = tmp_path / "b.properties"
    b.write_bytes(b"operationcount=300\n")
    spec, props = spec_from_args([str(a), str(b)], ["seed=11", "operationcount=400", "recordcount=100",
                                                    "db=memory"], "run")
    m = build_manifest(spec, props.as_dict(), "run", files=[str(a), str(b)], argv=["workbench", "run"])
    files = m["workload"]["files"]
    assert [f["sha256"] for f in files] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in (a, b)]
    assert [f["bytes"] for f in files] == [a.stat().st_size, b.stat().st_size]
    # what the files did not set, or set otherwise: recordcount=100 is the file's own value
    assert m["workload"]["overrides"] == ["operationcount=400", "seed=11", "db=memory"]
    assert m["workload"]["seed"] == 11
    assert (m["phase"], m["db"], m["command"]) == ("run", "memory", "workbench run")
    again, props_again = spec_from_args([f["path"] for f in files], m["workload"]["overrides"], "run")
    assert props_again.as_dict() == props.as_dict()  # -P files -p overrides: the same properties
    assert equivalent_command(m) == \
        f"workbench run -P {a} -P {b} -p operationcount=400 -p seed=11 -p db=memory"


def test_a_shipped_workload_is_named_by_its_file_and_a_run_without_seed_says_so():
    spec, props = spec_from_args(["workloada"], ["db=memory"], "run")
    m = build_manifest(spec, props.as_dict(), "run", files=["workloada"], argv=["workbench"])
    [f] = m["workload"]["files"]
    assert f["name"] == "workloada" and Path(f["path"]) == ROOT / "workbench" / "workloads" / "workloada"
    assert m["workload"]["seed"] is None and m["workload"]["overrides"] == ["db=memory"]
    assert "seed none" in manifest_lines(m)[3]


def test_secrets_never_reach_the_manifest():
    assert command_line(["workbench", "run", "-p", "cassandra.password=hunter2", "-p", "hosts=a b"]) == \
        "workbench run -p 'cassandra.password=***' -p 'hosts=a b'"
    spec, props = make_spec("cassandra.password=hunter2")
    m = build_manifest(spec, props.as_dict(), "run", argv=["workbench", "-p", "cassandra.password=hunter2"])
    assert "hunter2" not in repr(m)
    assert "cassandra.password=***" in m["workload"]["overrides"]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_the_commit_of_a_checkout_and_none_for_an_installed_copy(tmp_path, monkeypatch):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    built = manifest_module.build()
    assert built["version"] == __version__
    assert built["commit"] == head and isinstance(built["modified"], bool)
    # a copy of the package inside the work tree that git does not track (installed in its .venv)
    copy = ROOT / ".venv" / f"manifest-test-{os.getpid()}"
    copy.mkdir()
    try:
        (copy / "__init__.py").write_text("")
        monkeypatch.setattr(manifest_module, "PACKAGE", copy)
        assert manifest_module.build() == {"version": __version__}
    finally:
        shutil.rmtree(copy)
    monkeypatch.setattr(manifest_module, "PACKAGE", tmp_path)  # outside any work tree
    assert manifest_module.build() == {"version": __version__}
    monkeypatch.setattr(manifest_module, "PACKAGE", copy)  # gone: git fails, the run does not
    assert manifest_module.build() == {"version": __version__}
    monkeypatch.setenv("PATH", str(tmp_path))  # no git at all
    monkeypatch.setattr(manifest_module, "PACKAGE", ROOT / "workbench")
    assert manifest_module.build() == {"version": __version__}


def test_a_local_cassandra_cluster_gives_its_settings_shape_and_cpu_caps(tmp_path):
    spec = CassandraSpec(name="c3", nodes=3, heap="2G", memtable_heap_space="64MiB", commitlog_sync="batch",
                         replication_factor=3, cpus=1.5)
    cluster = Cluster("c3", "cassandra", spec, (node("node1", 1.5), node("node2", 1.5), node("node3", 0.5)),
                      tmp_path, provider="local", server_version="5.0.9")
    wspec, props = spec_from_args([], ["db=cassandra", "cassandra.readconsistencylevel=one",
                                       "cassandra.replication.factor=3"], "run")
    m = build_manifest(wspec, props.as_dict(), "run", cluster=cluster, argv=["workbench"])
    s = m["server"]
    assert (s["product"], s["version"]) == ("Cassandra", "5.0.9")
    settings = s["settings"]
    assert (settings["heap"], settings["memtable_heap_space"], settings["commitlog_sync"]) == \
        ("2G", "64MiB", "batch")
    assert (settings["read_consistency"], settings["write_consistency"]) == ("ONE", "QUORUM")
    assert settings["replication"].startswith("SimpleStrategy, factor 3")
    assert settings["compaction"].startswith("SizeTieredCompactionStrategy")
    assert m["cluster"]["cpu_caps"] == {"node1": 1.5, "node2": 1.5, "node3": 0.5}
    assert (m["cluster"]["provider"], m["cluster"]["nodes"]) == ("local", 3)
    text = "\n".join(manifest_lines(m))
    assert "heap 2G" in text and "CPU caps node1 1.5, node2 1.5, node3 0.5" in text


def test_an_external_cluster_says_unknown_for_what_cannot_be_seen(tmp_path):
    spec = ExternalSpec(name="prod", kind="cassandra", hosts=("10.0.0.1",))
    cluster = Cluster("prod", "cassandra", spec, (), tmp_path, provider="external", nodes_seen=6)
    wspec, props = spec_from_args([], ["db=cassandra"], "run")
    m = build_manifest(wspec, props.as_dict(), "run", cluster=cluster, argv=["workbench"])
    settings = m["server"]["settings"]
    assert m["server"]["version"] == "unknown"
    assert settings["heap"] == settings["memtable_heap_space"] == settings["commitlog_sync"] == "unknown"
    assert settings["read_consistency"] == "QUORUM"  # the binding's own default: known
    assert m["cluster"] == {"name": "prod", "provider": "external", "kind": "cassandra", "nodes": 6,
                            "cpu_caps": "unknown"}


def test_hbase_heap_block_cache_and_regions(tmp_path):
    spec = HBaseSpec(name="h", heap="1G", regionservers=2, regionserver_heap="768M")
    cluster = Cluster("h", "hbase", spec, (node("master"), node("rs1"), node("rs2")), tmp_path,
                      provider="docker")
    wspec, props = spec_from_args([], ["db=hbase", "hbase.presplit=8"], "run")
    s = server("hbase", props.as_dict(), cluster)["settings"]
    assert s["heap"] == "master 1G, each of 2 RegionServers 768M"
    assert s["block_cache"].startswith("0.4 of the heap")  # the rendered hbase-site.xml sets none
    assert s["regions"].startswith("8 ")
    assert server("hbase", {}, None)["settings"]["heap"] == "unknown"


def test_mongodb_write_concern_from_the_property_or_the_url():
    assert write_concern({}) == "w=1"  # YCSB's default URL
    assert write_concern({"mongodb.url": "mongodb://h/ycsb?w=majority&journal=true"}) == \
        "w=majority, journal=true"
    assert write_concern({"mongodb.url": "mongodb://h/ycsb"}).startswith("the server's default")
    assert write_concern({"mongodb.writeConcern": "journaled"}) == "journaled (mongodb.writeConcern)"


def test_completed_with_the_server_the_binding_saw_and_the_event_loop():
    spec, props = spec_from_args([], ["db=mongodb"], "run")
    m = build_manifest(spec, props.as_dict(), "run", argv=["workbench"])
    assert m["server"]["version"] == "unknown"
    done = complete(m, {"client": {"name": "pymongo", "compiled": False, "event_loop": "asyncio"},
                        "notes": ["server: FerretDB 1.24.0 on PostgreSQL 15 (MongoDB protocol)"]})
    assert done["server"]["product"] == "FerretDB" and done["server"]["version"].startswith("FerretDB 1.24")
    assert done["client"]["event_loop"] == "asyncio"
    assert m["server"]["version"] == "unknown"  # the one made at the start is left as it was


def test_every_phase_has_its_manifest_recorded_or_not():
    spec, props = make_spec("recordcount=10", "operationcount=50")
    phase = Phase(spec, props.as_dict(), "run", store=False, files=())
    assert phase.open().manifest["db"] == "memory"
    made = phase.manifest
    assert phase.open().manifest is made  # made once
