"""Cassandra's settings that change a run's figures, for its manifest (results/server_settings.py
asks the descriptor): from the cluster's spec (None: not a cluster the workbench started) and the
binding's properties with their defaults; "unknown" where not seen, never a guess."""

from __future__ import annotations

from typing import Any

from workbench.databases.base import UNKNOWN


def cassandra_settings(props: dict[str, str], spec: Any) -> dict[str, Any]:
    from workbench.databases.cassandra.options import PROPERTIES  # noqa: PLC0415

    def prop(key: str) -> str:
        return props.get(key, PROPERTIES[key][0])

    out: dict[str, Any] = {
        "heap": spec.heap if spec else UNKNOWN,
        "memtable_heap_space": spec.memtable_heap_space if spec else UNKNOWN,
        "memtable_offheap_space": spec.memtable_offheap_space if spec else UNKNOWN,
        "commitlog_sync": (f"{spec.commitlog_sync}" + (f" every {spec.commitlog_sync_period_ms} ms"
                                                       if spec.commitlog_sync == "periodic" else "")
                           ) if spec else UNKNOWN,
        "commitlog_total_space": spec.commitlog_total_space if spec else UNKNOWN,
        "concurrent_reads": spec.concurrent_reads if spec else UNKNOWN,
        "concurrent_writes": spec.concurrent_writes if spec else UNKNOWN,
        "num_tokens": spec.num_tokens if spec else UNKNOWN,
        # The binding creates its table with no compaction option: the server's default applies;
        # the workbench's cassandra.yaml sets no default_compaction, so that is SizeTiered.
        "compaction": ("SizeTieredCompactionStrategy (the server's default; the binding creates its "
                       "table with no compaction option)") if spec else
                      "the server's default (the binding creates its table with no compaction option)",
        "replication": f"{prop('cassandra.replication.class')}, factor "
                       f"{prop('cassandra.replication.factor')} (asked for a new keyspace)",
        "read_consistency": prop("cassandra.readconsistencylevel").upper(),
        "write_consistency": prop("cassandra.writeconsistencylevel").upper(),
    }
    if spec is not None:
        out["replication_factor_of_cluster"] = spec.replication_factor
    return out
