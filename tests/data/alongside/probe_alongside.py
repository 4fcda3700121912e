"""Collected only by tests/unit/test_alongside.py (-o python_files=probe_*.py): where each tier ran."""

import json
import os
import socket
from pathlib import Path

import pytest


def _say(name: str) -> None:
    found = {"pid": os.getpid(), "interfaces": sorted(n for _, n in socket.if_nameindex()),
             "worker": os.environ.get("PYTEST_XDIST_WORKER", ""),
             "alone": os.environ.get("WORKBENCH_TESTS_ALONE_LOCK")}
    Path(os.environ["PROBE_DIR"], name).write_text(json.dumps(found))


def test_fast():
    _say("fast.json")
    assert not os.environ.get("PROBE_FAIL"), "failed on purpose"


@pytest.mark.servers
def test_heavy():
    _say("heavy.json")
