"""The binding contract: every binding passes the same tests (test_binding_contract.py).

A binding joins with a module `targets_<name>.py` beside this file that defines
`target(request) -> list[str]`: the -p overrides that point the binding at a live server
(started through the project's own provider fixtures, e.g. request.getfixturevalue(
"cassandra_node")), with a fresh table, `SCAN_ORDER` ("key" or "token"), and `SERVER`: the name
of that fixture (tests/support/lifetimes.py stops it after the last test that needs it).
"""

from __future__ import annotations

import importlib
import itertools
from pathlib import Path

import pytest

_stores = itertools.count()


def memory_target(request) -> list[str]:
    return ["db=memory", f"memory.store=contract-{next(_stores)}", "memory.preload=false"]


TARGETS = {"memory": memory_target}
# How each binding orders scan results: "key" (lexicographic) or "token" (partitioner order).
SCAN_ORDER = {"memory": "key"}
SERVER = {}  # the session fixture each binding's target takes

for _path in sorted(Path(__file__).parent.glob("targets_*.py")):
    _module = importlib.import_module(_path.stem)
    _name = _path.stem.removeprefix("targets_")
    TARGETS[_name] = _module.target
    SCAN_ORDER[_name] = _module.SCAN_ORDER
    SERVER[_name] = _module.SERVER


# Every binding but the in-process memory one talks to a real server the suite starts.
@pytest.fixture(params=[pytest.param(name, marks=() if name == "memory" else
                                     (pytest.mark.servers, pytest.mark.needs(SERVER[name])))
                        for name in sorted(TARGETS)])
def target(request) -> tuple[str, list[str]]:
    """(binding name, -p overrides) for one binding; each test gets a fresh table or store."""
    name = request.param
    return name, TARGETS[name](request)
