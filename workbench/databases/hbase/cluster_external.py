"""An external HBase cluster (clusters/external.py, kind = "hbase"): the check that its Thrift
gateways answer (Thrift1 has no call that says the server's version)."""

from __future__ import annotations

from workbench.clusters.external import ExternalSpec, reason
from workbench.errors import ClusterError


def check_hbase(spec: ExternalSpec) -> tuple[str, int]:
    import happybase

    errors = []
    for host in spec.hosts:
        try:
            conn = happybase.Connection(host, spec.client_port, timeout=10000,
                                        transport=spec.thrift_transport, protocol=spec.thrift_protocol)
            try:
                conn.tables()
            finally:
                conn.close()
        except Exception as exc:
            errors.append(f"{host}:{spec.client_port}: {reason(exc)}")
    if errors:
        raise ClusterError(f"{spec.name}: HBase Thrift does not answer at {'; '.join(errors)}",
                           hint="check hosts and port in the cluster file (the Thrift gateway, 9090)")
    # Thrift (1) has no call that says the server's version.
    return "", len(spec.hosts)
