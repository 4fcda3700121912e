"""Every run names the database client that measured it (bindings/clients.py), from its properties."""

from __future__ import annotations

from importlib import metadata

import pytest

import workbench
from workbench.bindings.clients import client_name, client_record
from workbench.config.spec import spec_from_args
from workbench.results.from_run import environment
from workbench.results.model import RunResult


@pytest.mark.parametrize(("db", "properties", "expected"), [
    ("cassandra", {}, "native CQL v4"),
    ("cassandra", {"cassandra.driver": "python"},
     f"cassandra-driver {metadata.version('cassandra-driver')} (CQL v4)"),
    ("cassandra", {"cassandra.driver": "python", "cassandra.protocolversion": "5"},
     f"cassandra-driver {metadata.version('cassandra-driver')} (CQL v5)"),
    ("hbase", {}, "native HBase RPC"),
    ("hbase", {"hbase.client": "async"},
     f"HBase Thrift (thriftpy2 {metadata.version('thriftpy2')}, asyncio)"),
    ("mongodb", {}, f"pymongo {metadata.version('pymongo')} (asyncio)"),
    ("memory", {}, "memory (in-process)"),
])
def test_the_client_is_named_from_the_properties_as_the_binding_reads_them(db, properties, expected):
    assert client_name(db, properties) == expected


def test_a_run_records_its_client_before_it_starts_and_names_properties_it_refuses():
    spec, _ = spec_from_args([], ["db=cassandra", "cassandra.driver=python"], "run")
    env = environment(spec)
    assert env["client"]["name"].startswith("cassandra-driver ")
    assert env["client"]["compiled"] in (True, False)
    refused = client_record("cassandra", {"cassandra.driver": "banana"})
    assert "properties refused" in refused["name"] and "cassandra.driver" in refused["name"]
    # the retired clients (0.3.0) name their replacement
    assert "hbase.client=native" in client_record("hbase", {"hbase.client": "happybase"})["name"]
    assert "cassandra.driver=native" in client_record("cassandra", {"cassandra.driver": "acsylla"})["name"]


def test_the_one_line_client_says_compiled_or_python_and_the_loop():
    env = {"client": {"name": "native CQL v4", "compiled": True, "event_loop": "uvloop 0.21.0"}}
    assert RunResult("run", "cassandra", 1, 1, 1.0, environment=env).client == \
        "native CQL v4 (hot path compiled, uvloop 0.21.0)"
    env = {"client": {"name": "native HBase RPC", "compiled": False}, "event_loop": "asyncio"}
    assert RunResult("run", "hbase", 1, 1, 1.0, environment=env).client == \
        "native HBase RPC (hot path in Python, asyncio)"
    assert RunResult("run", "hbase", 1, 1, 1.0).client == "not recorded"  # stored before clients were named
    assert RunResult("run", "", 1, 1, 1.0, source="ycsb-text").client == "YCSB (imported)"


def test_the_version_is_written_in_one_place():
    assert metadata.version("ycsb-workbench") == workbench.__version__
    assert environment()["workbench"] == workbench.__version__
