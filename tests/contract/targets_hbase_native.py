"""The HBase binding on HBase's own RPC (`hbase.client=native`) in the contract suite.

The same server as targets_hbase.py: reads and puts go straight to the RegionServer, scans and
deletes through the Thrift gateway; YCSB's semantics must hold all the same.
"""

from __future__ import annotations

from targets_hbase import SCAN_ORDER
from targets_hbase import target as async_target

__all__ = ["SCAN_ORDER", "SERVER", "target"]


SERVER = "hbase_server"  # the session fixture target() takes (tests/support/lifetimes.py)


def target(request) -> list[str]:
    return [*async_target(request), "hbase.client=native"]
