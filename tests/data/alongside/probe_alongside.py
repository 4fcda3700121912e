"""Collected only by tests/unit/test_alongside.py (-o python_files=probe_*.py): where each tier ran."""

import json
import os
import socket
import time
from pathlib import Path

import pytest


def where() -> dict:
    return {"pid": os.getpid(), "interfaces": sorted(n for _, n in socket.if_nameindex()),
            "netns": os.readlink("/proc/self/ns/net")}


def _say(name: str, **more) -> None:
    Path(os.environ["PROBE_DIR"], name).write_text(json.dumps({**where(), **more}))


def test_fast():
    # In the child (alongside.CHILD), the own-cluster tests run beside this: their probe's file
    # comes while this one waits (one after the other, it never would).
    seen = None
    if os.environ.get("WORKBENCH_TESTS_ALONGSIDE"):
        own, deadline = Path(os.environ["PROBE_DIR"], "own.json"), time.monotonic() + 60
        while not (seen := own.exists()) and time.monotonic() < deadline:
            time.sleep(0.05)
    _say("fast.json", saw_own=seen)
    assert not os.environ.get("PROBE_FAIL"), "failed on purpose"


@pytest.mark.servers
def test_heavy():
    _say("heavy.json")
