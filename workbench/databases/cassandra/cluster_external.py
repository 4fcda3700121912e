"""An external Cassandra cluster (clusters/external.py, kind = "cassandra"): the check that it
answers (its release and node count) and the cassandra-driver arguments of its login and TLS, which
the servers' figures also use."""

from __future__ import annotations

from typing import Any

from workbench.clusters.external import ExternalSpec, reason
from workbench.errors import ClusterError


def cassandra_client(spec: ExternalSpec) -> dict[str, Any]:
    """cassandra-driver Cluster arguments for this cluster's login and TLS."""
    kwargs: dict[str, Any] = {}
    if spec.username:
        from cassandra.auth import PlainTextAuthProvider

        kwargs["auth_provider"] = PlainTextAuthProvider(spec.username, spec.login_password())
    if spec.tls:
        import ssl

        try:
            context = ssl.create_default_context(cafile=spec.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ClusterError(f"{spec.name}: cannot use ca_file {spec.ca_file}: {exc}") from None
        context.check_hostname = False  # contact points are often addresses; the chain is checked
        kwargs["ssl_context"] = context
    return kwargs


def check_cassandra(spec: ExternalSpec) -> tuple[str, int]:
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    from cassandra.cluster import Cluster as Driver

    profile = ExecutionProfile(request_timeout=10)
    driver = Driver(list(spec.hosts), port=spec.client_port, protocol_version=4, connect_timeout=10,
                    control_connection_timeout=10, execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                    **cassandra_client(spec))
    try:
        row = driver.connect().execute("SELECT release_version FROM system.local").one()
        return str(row.release_version), len(driver.metadata.all_hosts())
    except Exception as exc:  # NoHostAvailable, AuthenticationFailed, ...
        where = ", ".join(f"{h}:{spec.client_port}" for h in spec.hosts)
        raise ClusterError(f"{spec.name}: Cassandra at {where} does not answer: {reason(exc)}",
                           hint="check hosts, port, login and TLS in the cluster file") from None
    finally:
        driver.shutdown()
