"""The servers' Cassandra figures on a node that requires a login and TLS (issue 54, 7): the
source's own blocking CQL connection (databases/cassandra/protocol/blocking.py) logs in with the cluster's
credentials over TLS, as the driver it replaced did, and reads the node's thread pools."""

from __future__ import annotations

import time

import pytest

from workbench.databases.cassandra.figures import CqlFigures, server_sources

pytestmark = pytest.mark.servers


def test_the_cql_source_logs_in_over_tls_and_reads_the_thread_pools(cassandra_secure):
    [cql] = [s for s in server_sources(cassandra_secure) if isinstance(s, CqlFigures)]
    try:
        samples = []
        for _ in range(3):  # the first: counters to compare with; then a second's figures
            samples.append(cql.sample(time.time()))
            time.sleep(1.0)
    finally:
        cql.close()
    node = cassandra_secure.nodes[0].address
    assert [[s.node for s in answer] for answer in samples] == [[node]] * 3, samples
    figures = samples[-1][0].figures
    assert "queue.MutationStage.pending" in figures and "compactions_pending" in figures, figures
    assert figures["compactions_running"] >= 0 and figures["requests"] >= 0, figures
