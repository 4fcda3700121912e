"""The local provider with a real standalone HBase and its Thrift gateway."""

from __future__ import annotations

import happybase
import pytest

pytestmark = pytest.mark.servers


def test_hbase_serves_create_put_get_through_thrift(hbase_server, suite_servers):
    assert hbase_server.kind == "hbase"
    assert hbase_server.contact_points == [("127.0.0.1", hbase_server.spec.thrift_port)]
    assert hbase_server.replication is None
    status = suite_servers.provider.status(hbase_server.name)
    assert {n.name: n.status for n in status.nodes} == {"master": "running", "thrift": "running"}
    host, port = hbase_server.contact_points[0]
    conn = happybase.Connection(host, port, timeout=30000)
    try:
        assert b"workbench_ready_probe" not in conn.tables()  # the readiness probe cleans up
        conn.create_table("t_provider", {"f": {}})
        table = conn.table("t_provider")
        table.put(b"row", {b"f:q": b"value"})
        assert table.row(b"row") == {b"f:q": b"value"}
        conn.delete_table("t_provider", disable=True)
    finally:
        conn.close()


def test_restarting_the_thrift_gateway_serves_again(hbase_server, suite_servers):
    provider = suite_servers.provider
    old_pid = provider.status(hbase_server.name).node("thrift").pid
    restarted = provider.restart(hbase_server.name, "thrift")
    assert restarted.node("thrift").pid != old_pid
    assert restarted.node("thrift").status == "running"
