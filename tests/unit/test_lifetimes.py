"""The suite's own plumbing (tests/support/lifetimes.py): which session servers a test needs, the tests of
the rarely used ones run together, and each server stops after its last user."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from tests.support import lifetimes


class Item:
    def __init__(self, nodeid: str, *fixtures: str, needs: tuple[str, ...] = ()) -> None:
        self.nodeid, self.fixturenames, self._needs = nodeid, ["request", *fixtures], needs

    def iter_markers(self, name: str):
        return [SimpleNamespace(args=(n,)) for n in self._needs] if name == "needs" else []


def test_a_test_needs_the_servers_it_names_or_marks():
    assert lifetimes.needs(Item("a", "tmp_path", "cassandra_node")) == {"cassandra_node"}
    assert lifetimes.needs(Item("b", needs=("hbase25_server",))) == {"hbase25_server"}
    assert lifetimes.needs(Item("c", "suite_servers", "docker_suite")) == set()


def test_the_tests_of_a_rarely_used_server_run_where_the_first_of_them_stands():
    items = [Item("i1", "cassandra_node"), Item("i2", "cassandra_cluster3"), Item("i3", "hbase_server"),
             Item("i4", needs=("cassandra41_node",)), Item("i5", "cassandra_cluster3"),
             Item("c1", needs=("cassandra41_node",)), Item("c2", "cassandra_node")]
    lifetimes.order(items)
    assert [i.nodeid for i in items] == ["i1", "i2", "i5", "i3", "i4", "c1", "c2"]


def test_each_server_stops_after_its_last_user_and_only_once_started():
    items = [Item("t1", "cassandra_node", "hbase_server"), Item("t2", "cassandra_node"),
             Item("t3", "hbase_server")]
    plan = lifetimes.Lifetimes()
    plan.plan(items)
    stopped: list[str] = []
    plan.started("cassandra_node", lambda: stopped.append("cassandra"))
    plan.started("hbase_server", lambda: stopped.append("hbase"))
    assert plan.retire_after(items[0]) == [] and stopped == []
    assert plan.retire_after(items[1]) == ["cassandra_node"] and stopped == ["cassandra"]
    assert plan.retire_after(items[1]) == []  # stopped once
    assert plan.retire_after(items[2]) == ["hbase_server"] and stopped == ["cassandra", "hbase"]
    never = lifetimes.Lifetimes()
    never.plan(items)
    assert never.retire_after(items[1]) == []  # not started (its tests skipped): nothing to stop


def test_every_file_that_takes_a_session_server_by_name_says_which():
    """A test that takes a server by request.getfixturevalue must name it (needs, or a contract
    target's SERVER): else lifetimes cannot see it, and its server could stop before it runs."""
    tests = Path(__file__).resolve().parents[1]
    takers = [p for p in tests.rglob("*.py")
              if "getfixturevalue(" in p.read_text() and p.parent.name != "unit"]
    assert len(takers) >= 7  # the five contract targets, test_cli_cluster, test_server_versions
    for path in takers:
        text = path.read_text()
        assert "pytest.mark.needs(" in text or re.search(r'^SERVER = "\w+"', text, re.M), path
