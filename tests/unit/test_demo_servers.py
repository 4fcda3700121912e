"""`workbench demo` takes down what it started, whenever Ctrl-C lands (workbench/drive/demo.py).

The provider here records calls instead of starting JVMs: what is tested is the demo's own
bookkeeping around `up()`; tests/e2e/test_demo.py presses Ctrl-C on real servers.
"""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest
from rich.console import Console

from workbench.clusters import local
from workbench.drive.demo import DemoServer
from workbench.errors import ClusterError


class Recorder:
    """A LocalProvider stand-in: `up` brings the cluster into existence, then does `then`."""

    def __init__(self, then, running_before: bool = False) -> None:
        self.then, self.calls = then, []
        self.existing = {"cassandra-single"} if running_before else set()

    def __call__(self):  # constructed by DemoServer as LocalProvider()
        return self

    def clusters(self):
        return sorted(self.existing)

    def status(self, name):
        return SimpleNamespace(nodes=[SimpleNamespace(status="running")])

    def up(self, spec):
        self.calls.append(("up", spec.name))
        if "cassandra-single" in self.existing:
            raise ClusterError("cluster 'cassandra-single' is already running (node1)", hint="down it")
        self.existing.add(spec.name)
        return self.then()

    def down(self, name):
        self.calls.append(("down", name))
        self.existing.discard(name)


def interrupted():
    raise KeyboardInterrupt  # Ctrl-C at the end of up(): the nodes serve, up() has not returned


def failed_start():
    raise ClusterError("node1 exited during start-up", hint="see its log")  # it stopped its nodes


@pytest.mark.parametrize("then, running_before, downed", [
    (interrupted, False, True),
    (failed_start, False, False),
    (interrupted, True, False),  # someone else's cluster: up() refused it, it stays
])
def test_ctrl_c_as_the_nodes_come_up_still_takes_them_down(monkeypatch, then, running_before, downed):
    provider = Recorder(then, running_before)
    monkeypatch.setattr(local, "LocalProvider", provider)
    with pytest.raises((KeyboardInterrupt, ClusterError)):
        DemoServer("cassandra", Console(file=io.StringIO()).print).__enter__()
    assert (("down", "cassandra-single") in provider.calls) == downed, provider.calls
