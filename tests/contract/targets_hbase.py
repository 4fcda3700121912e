"""The HBase binding joins the contract suite: a fresh table per test on the session's server."""

from __future__ import annotations

import itertools
import os

SCAN_ORDER = "key"  # HBase scans return rows in key order

_tables = itertools.count()


SERVER = "hbase_server"  # the session fixture target() takes (tests/support/lifetimes.py)


def target(request) -> list[str]:
    """-p overrides for a fresh table on the HBase started by the `hbase_server` fixture."""
    return overrides(request.getfixturevalue(SERVER))


def overrides(cluster) -> list[str]:
    """-p overrides for a fresh table on an HBase cluster."""
    host, port = cluster.contact_points[0]
    table = f"usertable_{os.getpid()}_{next(_tables)}"
    return ["db=hbase", f"hbase.host={host}", f"hbase.port={port}", f"table={table}"]
