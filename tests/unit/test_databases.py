"""The databases' descriptors (workbench/databases/): found through the entry point group, each
Ref naming something that exists, the lookups by name and by cluster kind."""

from __future__ import annotations

import dataclasses
from importlib import metadata

import pytest

from workbench import databases
from workbench.databases.base import Database, Server, resolve
from workbench.errors import ConfigError


def test_the_built_ins_are_the_entry_point_groups():
    group = {e.name: e.value for e in metadata.entry_points(group="workbench.databases")}
    assert {"memory", "cassandra", "hbase", "mongodb"} <= set(group)
    assert databases.names()[:4] == ("memory", "cassandra", "hbase", "mongodb")
    for name in ("memory", "cassandra", "hbase", "mongodb"):
        assert databases.database(name) is metadata.EntryPoint(name, group[name], "").load()


def test_every_ref_of_the_built_ins_names_something_that_exists():
    for db in databases.databases():
        things = [db, *db.servers]
        for thing in things:
            for f in dataclasses.fields(thing):
                value = getattr(thing, f.name)
                if f.name in ("binding", "chooser") or (isinstance(value, str) and ":" in value):
                    if value:
                        assert resolve(value) is not None, f"{db.name}.{f.name} = {value}"
                elif f.name in ("local",) and value:
                    assert resolve(value).__name__ == value


def test_a_database_by_name_and_by_its_servers_kind():
    assert databases.database("hbase").prefix == "hbase."
    assert databases.serving("ferretdb")[0].name == "mongodb"  # FerretDB serves the mongodb database
    assert databases.serving("mongodb") == (databases.database("mongodb"), None)  # an external cluster
    assert databases.server("cassandra").kind == "cassandra"
    assert databases.database("memory").in_process and not databases.database("cassandra").in_process
    with pytest.raises(ConfigError, match=r"unknown database 'redis' \(installed: memory, cassandra"):
        databases.database("redis")
    with pytest.raises(ConfigError, match="unknown cluster kind 'redis'"):
        databases.serving("redis")


def test_resolve_takes_a_path_or_the_thing_itself():
    assert resolve("workbench.databases.base:Database") is Database
    assert resolve("workbench.databases.base").Server is Server
    assert resolve(len) is len
