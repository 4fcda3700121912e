"""The HBase binding on HBase's own RPC (`hbase.client=native`) against HBase 2.5 in the contract
suite: the session's `hbase25_server` (version = "2.5", pinned 2.5.8). Reads and puts go to the
RegionServer, scans and deletes through the Thrift gateway, as in targets_hbase_native.py."""

from __future__ import annotations

from targets_hbase import SCAN_ORDER, overrides

__all__ = ["SCAN_ORDER", "SERVER", "target"]


SERVER = "hbase25_server"  # the session fixture target() takes (tests/support/lifetimes.py)


def target(request) -> list[str]:
    return [*overrides(request.getfixturevalue(SERVER)), "hbase.client=native"]
