"""HBase's settings that change a run's figures, for its manifest (results/server_settings.py asks
the descriptor): from the cluster's spec (None: not a cluster the workbench started), the
workbench's hbase-site.xml and the binding's properties with their defaults."""

from __future__ import annotations

import re
from typing import Any

from workbench.databases.base import UNKNOWN

# HBase's own default share of the heap for the block cache (hbase-default.xml).
HBASE_BLOCK_CACHE_DEFAULT = "0.4"


def hbase_settings(props: dict[str, str], spec: Any) -> dict[str, Any]:
    from workbench.databases.hbase.options import DEFAULTS  # noqa: PLC0415

    out: dict[str, Any] = {}
    if spec is None:
        out.update(heap=UNKNOWN, block_cache=UNKNOWN)
    else:
        out["heap"] = spec.heap if not spec.distributed else \
            f"master {spec.heap}, each of {spec.regionservers} RegionServers {spec.regionserver_heap}"
        out["block_cache"] = _block_cache()
    out["regions"] = (f"{props.get('hbase.presplit', DEFAULTS['hbase.presplit'])} for a table the "
                      "binding creates (hbase.presplit)")
    out["durability"] = props.get("durability", DEFAULTS["durability"])
    out["clientbuffering"] = props.get("clientbuffering", DEFAULTS["clientbuffering"])
    return out


def _block_cache() -> str:
    """hfile.block.cache.size as the workbench's hbase-site.xml sets it (local and Docker clusters
    render the same template), else HBase's default."""
    from workbench.clusters.launch import template_text  # noqa: PLC0415

    found = re.search(r"<name>hfile\.block\.cache\.size</name>\s*<value>([^<]*)</value>",
                      template_text("hbase-site.xml"))
    if found:
        return f"{found.group(1)} of the heap (hfile.block.cache.size)"
    return f"{HBASE_BLOCK_CACHE_DEFAULT} of the heap (HBase's default hfile.block.cache.size)"
