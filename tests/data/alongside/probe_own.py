"""Collected only by tests/unit/test_alongside.py: a server test of a file the run names as one
that starts its own clusters (WORKBENCH_TESTS_OWN_CLUSTERS), so it runs in the child."""

import json
import os
import socket
from pathlib import Path

import pytest


@pytest.mark.servers
def test_own():
    found = {"pid": os.getpid(), "interfaces": sorted(n for _, n in socket.if_nameindex()),
             "alone": os.environ.get("WORKBENCH_TESTS_ALONE_LOCK")}
    Path(os.environ["PROBE_DIR"], "own.json").write_text(json.dumps(found))
