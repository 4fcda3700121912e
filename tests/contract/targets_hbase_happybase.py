"""The HBase binding on happybase in pool threads (`hbase.client=happybase`) in the contract suite.

The same server as targets_hbase.py (the asyncio client, the default): both clients must keep
YCSB's semantics, so both pass the suite.
"""

from __future__ import annotations

from targets_hbase import SCAN_ORDER
from targets_hbase import target as async_target

__all__ = ["SCAN_ORDER", "target"]


def target(request) -> list[str]:
    return [*async_target(request), "hbase.client=happybase"]
