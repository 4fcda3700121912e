"""Credentials and TLS against a real Cassandra that requires both (PasswordAuthenticator, TLS on
the CQL port with a certificate the provider made): both load drivers get in with the right
settings, and each wrong setting is refused with one line and exit status 2."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.servers


def workbench(suite_servers, cluster, phase: str, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(suite_servers.state_dir))
    argv = [sys.executable, "-m", "workbench", phase, "--cluster", cluster.name,
            "-P", str(ROOT / "workbench" / "workloads" / "workloada"), "-p", "recordcount=200",
            "-p", "operationcount=400", "-p", "table=secure", "-threads", "4", "-q", *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


def test_the_cluster_requires_a_login_and_tls(cassandra_secure):
    from cassandra import AuthenticationFailed
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster, NoHostAvailable

    host, port = cassandra_secure.contact_points[0]
    assert cassandra_secure.credentials == ("cassandra", "cassandra")
    assert cassandra_secure.tls_ca.read_text().startswith("-----BEGIN CERTIFICATE-----")
    # The keystore and the cassandra.yaml that holds its password are the owner's alone.
    for node in cassandra_secure.nodes:
        conf = node.dir / "conf"
        modes = conf.stat().st_mode & 0o777, (conf / "cassandra.yaml").stat().st_mode & 0o777
        assert modes == (0o700, 0o600)
        assert "keystore_password" in (conf / "cassandra.yaml").read_text()
    tls = cassandra_secure.run_dir / "tls"
    assert tls.stat().st_mode & 0o777 == 0o700
    assert {p.name: p.stat().st_mode & 0o777 for p in tls.iterdir()}.get("keystore.p12") == 0o600
    context = ssl.create_default_context(cafile=str(cassandra_secure.tls_ca))
    context.check_hostname = False

    def connect(**kwargs) -> None:
        cluster = Cluster([host], port=port, protocol_version=4, connect_timeout=5, **kwargs)
        try:
            cluster.connect().execute("SELECT release_version FROM system.local")
        finally:
            cluster.shutdown()

    connect(ssl_context=context, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"))
    with pytest.raises(NoHostAvailable):  # plain text on a TLS port
        connect(auth_provider=PlainTextAuthProvider("cassandra", "cassandra"))
    with pytest.raises((NoHostAvailable, AuthenticationFailed)) as refused:
        connect(ssl_context=context, auth_provider=PlainTextAuthProvider("cassandra", "wrong"))
    assert "Bad credentials" in str(refused.value) or "Authentication" in str(refused.value)


@pytest.mark.parametrize("driver", ["native", "python"])
def test_load_and_run_with_credentials_over_tls(suite_servers, cassandra_secure, driver):
    load = workbench(suite_servers, cassandra_secure, "load", "-p", "cassandra.drop=true",
                     "-p", f"cassandra.driver={driver}")
    assert load.returncode == 0, load.stderr
    assert "[INSERT], Return=OK, 200" in load.stdout
    run = workbench(suite_servers, cassandra_secure, "run", "-p", f"cassandra.driver={driver}")
    assert run.returncode == 0, run.stderr
    reads = int(run.stdout.split("[READ], Return=OK, ")[1].split()[0])
    updates = int(run.stdout.split("[UPDATE], Return=OK, ")[1].split()[0])
    assert reads + updates == 400


@pytest.mark.parametrize("driver", ["native", "python"])
@pytest.mark.parametrize(("wrong", "said"), [
    ("cassandra.password=wrong", "AuthenticationFailed"),
    ("cassandra.useSSL=false", "cannot connect"),
])
def test_a_wrong_setting_is_one_clear_line_and_exit_2(suite_servers, cassandra_secure, driver,
                                                       wrong, said):
    run = workbench(suite_servers, cassandra_secure, "run", "-p", f"cassandra.driver={driver}",
                    "-p", wrong)
    assert run.returncode == 2, (run.stdout, run.stderr)
    errors = [line for line in run.stderr.splitlines() if line.startswith("workbench:")]
    assert len(errors) == 1 and said in errors[0], run.stderr
