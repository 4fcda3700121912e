"""The suite holds its marks to account (tests/support/marks.py, used by tests/conftest.py)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.support import marks


class Item:
    def __init__(self, nodeid: str, fixtures: list[str], mark: str | None = None) -> None:
        self.nodeid, self.fixturenames, self.mark = nodeid, fixtures, mark

    def get_closest_marker(self, name: str):
        return name if name == self.mark else None


def test_a_test_using_a_server_fixture_without_its_mark_is_refused_at_collection():
    fine = [Item("a", ["tmp_path"]), Item("b", ["hbase_server"], "servers"),
            Item("c", ["docker_cassandra", "suite_servers"], "docker")]
    marks.refuse_unmarked_server_tests(fine)
    with pytest.raises(pytest.UsageError, match="not marked servers.*: d$"):
        marks.refuse_unmarked_server_tests([*fine, Item("d", ["tmp_path", "cassandra_node"])])


def test_a_jvm_that_inherited_a_tests_tag_is_found(tmp_path):
    java = tmp_path / "java"  # a process whose name is java, as a JVM's is
    shutil.copy(shutil.which("sleep"), java)
    child = subprocess.Popen([str(java), "300"], env={marks.TAG: "t-1"})
    other = subprocess.Popen([str(java), "300"], env={marks.TAG: "t-2"})
    try:
        # Popen returns once the exec has begun; the kernel fills in the new program's arguments
        # and environment a moment later, and until then /proc shows them empty (a loaded CI
        # rehearsal once read them in that moment): wait for them, as a server is only looked for
        # long after it started
        deadline = time.monotonic() + 30
        while not all(Path(f"/proc/{p.pid}/environ").read_bytes() for p in (child, other)):
            assert time.monotonic() < deadline, "the processes never showed their environments"
            time.sleep(0.01)
        found = marks.tagged_server_processes("t-1")
        assert [pid for pid, _ in found] == [child.pid]
        assert f"{java} 300" in found[0][1]
    finally:
        for p in (child, other):
            p.kill()
            p.wait()
    assert marks.tagged_server_processes("t-1") == []
