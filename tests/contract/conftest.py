"""The binding contract: every binding passes the same tests (test_binding_contract.py).

A binding joins by adding a target to TARGETS: a function that takes pytest's `request` and
returns the -p overrides that point the binding at a live server (starting it through the
project's own provider fixtures, e.g. request.getfixturevalue("cassandra_node")).
"""

from __future__ import annotations

import itertools

import pytest

_stores = itertools.count()


def memory_target(request) -> list[str]:
    return ["db=memory", f"memory.store=contract-{next(_stores)}", "memory.preload=false"]


TARGETS = {
    "memory": memory_target,
}

# How each binding orders scan results: "key" (lexicographic) or "token" (partitioner order).
SCAN_ORDER = {"memory": "key"}


@pytest.fixture(params=sorted(TARGETS))
def target(request) -> tuple[str, list[str]]:
    """(binding name, -p overrides) for one binding; each test gets a fresh table or store."""
    name = request.param
    return name, TARGETS[name](request)
