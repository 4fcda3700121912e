"""The native clients against the reference, on real servers started by the project's own code.

One seeded operation stream (YCSB workloads A-F, and a mix with scans, inserts and deletes; one
lane; `dataintegrity=true`) runs through the native client into one table and through the
reference client into another: cassandra-driver for Cassandra (one node; three nodes at RF 2),
the Thrift path for HBase; on the default releases and on the second pinned ones (Cassandra 4.1,
HBase 2.5). Every operation must come back the same from both: status, every
read's values byte for byte, every NOT_FOUND, every scan's keys in the same order. Then every
key of each table is read back through the other client: both tables hold the same rows, and
each client reads the other's writes as its own.

Three nodes at RF 2 run E and the mix (every operation between them: the mix has A's reads and
updates), at QUORUM, and at ONE for reads with writes at ALL: writes at ONE could
leave a replica behind for a moment, and a read at ONE right after an update could then see the
older value from either client; that is the database's consistency, not a client's difference.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path

import pytest

from tests.support.differential import read_back, scan_back, stream

pytestmark = pytest.mark.servers

WORKLOADS = Path(__file__).resolve().parents[2] / "workbench" / "workloads"
# (workload file, overrides): YCSB's A-F, then a mix with every operation, deletes included
MIXES = [(w, []) for w in ("workloada", "workloadb", "workloadc", "workloadd", "workloade", "workloadf")] + [
    ("workloada", ["readproportion=0.3", "updateproportion=0.2", "scanproportion=0.15",
                   "insertproportion=0.15", "deleteproportion=0.1", "readmodifywriteproportion=0.1"]),
]
COMMON = ["recordcount=150", "operationcount=300", "threadcount=1", "dataintegrity=true", "fieldcount=4",
          "fieldlength=24", "maxscanlength=12"]
_tables = itertools.count()


# The second releases: A, E and the mix, which together have every operation
SOME = [MIXES[0], MIXES[4], MIXES[6]]
# On three nodes, where each table made costs seconds of schema agreement: E (scans, over the
# token ring's ranges) and the mix (every operation, A's reads and updates among them)
THREE_NODES = [MIXES[4], MIXES[6]]


def _differ(base: list[str], reference: list[str], native: list[str], mixes=MIXES) -> None:
    """Each mix through both clients (tables of their own), then each table through both."""
    for number, (workload, extra) in enumerate(mixes):
        path = str(WORKLOADS / workload)
        tag = f"{os.getpid()}_{next(_tables)}"
        mine = [*base, *COMMON, *extra, f"table=diff_native_{tag}"]
        theirs = [*base, *COMMON, *extra, f"table=diff_reference_{tag}"]
        seed = 1000 + number
        native_log, keys, native_verify = asyncio.run(stream(path, [*mine, *native], seed))
        reference_log, reference_keys, reference_verify = asyncio.run(
            stream(path, [*theirs, *reference], seed))
        label = f"{workload} {' '.join(extra)}".strip()
        assert len(native_log) >= 150 + 300, label
        assert keys == reference_keys, label
        for i, (a, b) in enumerate(zip(native_log, reference_log, strict=True)):
            assert a == b, f"{label}: operation {i} differs: native {a} / reference {b}"
        # every value a read found is the one YCSB's dataintegrity expects; a read of a deleted
        # key is UNEXPECTED_STATE, as in YCSB (verifyRow of no cells)
        reads = [entry[2] for entry in native_log if entry[0] == "READ"]
        assert native_verify == reference_verify, label
        assert native_verify.get("OK", 0) == reads.count("OK"), (label, native_verify)
        assert native_verify.get("UNEXPECTED_STATE", 0) == reads.count("NOT_FOUND"), (label, native_verify)
        assert any((entry[0] == "READ" and entry[2] == "OK") or (entry[0] == "SCAN" and entry[4])
                   for entry in native_log), label  # something was read
        # every row of each table, read through each client: one and the same
        rows = {
            (table, client): asyncio.run(
                read_back(path, [*base, *COMMON, *extra, f"table={table}", *props], keys))
            for table in (f"diff_native_{tag}", f"diff_reference_{tag}")
            for client, props in (("native", native), ("reference", reference))
        }
        first = next(iter(rows.values()))
        for where, found in rows.items():
            assert found == first, f"{label}: {where} reads other rows than the native client its own"
        if any(entry[0] == "SCAN" for entry in native_log):
            starts = keys[:: max(len(keys) // 8, 1)]
            scans = [asyncio.run(scan_back(path, [*base, *COMMON, *extra, f"table=diff_native_{tag}", *props],
                                           starts, 10))
                     for props in (native, reference)]
            assert scans[0] == scans[1], f"{label}: the clients' scans of one table differ"
        if extra:  # the mix: deletes happened (and the read-back above saw them alike)
            assert any(entry[0] == "DELETE" and entry[2] == "OK" for entry in native_log), label


def _cassandra(cluster, keyspace: str, factor: int, read: str, write: str) -> list[str]:
    host, port = cluster.contact_points[0]
    return ["db=cassandra", f"hosts={host}", f"port={port}", f"cassandra.keyspace={keyspace}",
            f"cassandra.replication.factor={factor}", "cassandra.drop=true",
            f"cassandra.readconsistencylevel={read}", f"cassandra.writeconsistencylevel={write}"]


NATIVE_CQL = ["cassandra.driver=native"]
CASSANDRA_DRIVER = ["cassandra.driver=python"]


def test_native_cql_and_cassandra_driver_agree_on_one_node(cassandra_node):
    _differ(_cassandra(cassandra_node, "diff1", 1, "ONE", "ONE"), CASSANDRA_DRIVER, NATIVE_CQL)


@pytest.mark.parametrize(("read", "write"), [("QUORUM", "QUORUM"), ("ONE", "ALL")])
def test_native_cql_and_cassandra_driver_agree_on_three_nodes_at_rf2(cassandra_cluster3, read, write):
    _differ(_cassandra(cassandra_cluster3, "diff3", 2, read, write), CASSANDRA_DRIVER, NATIVE_CQL,
            THREE_NODES)


def test_native_hbase_rpc_and_the_thrift_path_agree(hbase_server):
    host, port = hbase_server.contact_points[0]
    _differ(["db=hbase", f"hbase.host={host}", f"hbase.port={port}"], ["hbase.client=async"],
            ["hbase.client=native"])


# The second pinned releases (Cassandra 4.1.10, HBase 2.5.8): A, E and the mix (SOME)
def test_native_cql_and_cassandra_driver_agree_on_cassandra_41(cassandra41_node):
    _differ(_cassandra(cassandra41_node, "diff41", 1, "ONE", "ONE"), CASSANDRA_DRIVER, NATIVE_CQL, SOME)


def test_native_hbase_rpc_and_the_thrift_path_agree_on_hbase_25(hbase25_server):
    host, port = hbase25_server.contact_points[0]
    _differ(["db=hbase", f"hbase.host={host}", f"hbase.port={port}"], ["hbase.client=async"],
            ["hbase.client=native"], SOME)
