"""The MongoDB binding joins the contract suite: a fresh collection per test on the session's
FerretDB (the `ferretdb_server` fixture; no MongoDB server can be installed here)."""

from __future__ import annotations

import itertools
import os

SCAN_ORDER = "key"  # scans sort by _id

_tables = itertools.count()


SERVER = "ferretdb_server"  # the session fixture target() takes (tests/support/lifetimes.py)


def target(request) -> list[str]:
    """-p overrides for a fresh collection on the FerretDB started by the `ferretdb_server` fixture."""
    cluster = request.getfixturevalue(SERVER)
    host, port = cluster.contact_points[0]
    table = f"usertable_{os.getpid()}_{next(_tables)}"
    # Inserts as upserts, as YCSB advises for MongoDB when runs repeat: each run phase of the
    # suite inserts from recordcount up again, which insert_one refuses (DuplicateKeyError) and
    # the other bindings' inserts overwrite.
    return ["db=mongodb", f"mongodb.url=mongodb://{host}:{port}/ycsb?w=1", f"table={table}",
            "mongodb.upsert=true"]
