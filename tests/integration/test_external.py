"""The external provider against clusters the local provider started: a cluster file names them,
`cluster up` checks that they answer and remembers them, `--cluster NAME` runs against them and
records what they are, fault injection and logs are refused, `down` forgets without touching."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.clusters import ports
from workbench.clusters.launch import tcp_open
from workbench.results.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.servers


def workbench(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(tmp_path / "state"),
               WORKBENCH_STORE=str(tmp_path / "runs.db"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=ROOT)


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.strip().splitlines() if not ln.startswith("checking ")]  # progress
    assert len(lines) == 1 and lines[0].startswith("workbench: error:"), proc.stderr
    return lines[0]


def test_an_existing_cassandra_is_checked_remembered_run_against_and_forgotten(cassandra_node, tmp_path):
    host, port = cassandra_node.contact_points[0]
    lab = tmp_path / "lab.toml"
    lab.write_text(f'kind = "cassandra"\nprovider = "external"\nhosts = ["{host}"]\nport = {port}\n'
                   '[replication]\nclass = "SimpleStrategy"\nreplication_factor = 1\n')
    up = workbench(tmp_path, "cluster", "up", str(lab))  # the file says external: no --provider needed
    assert up.returncode == 0, up.stderr
    assert "lab: external cassandra 5.0.9, 1 node(s) known to its contact points" in up.stdout
    status = workbench(tmp_path, "cluster", "status")
    assert "lab: external cassandra" in status.stdout and f"up          {host}:{port}" in status.stdout

    for phase in ("load", "run"):
        done = workbench(tmp_path, phase, "-P", "workloada", "--cluster", "lab",
                         "-p", "recordcount=200", "-p", "operationcount=200",
                         "-p", "cassandra.keyspace=ext_test")
        assert done.returncode == 0, done.stderr
    with RunStore(tmp_path / "runs.db", write=False) as s:
        last = s.list()[0]
        recorded = s.result(last.id).environment["cluster"]
    assert last.phase == "run" and last.db == "cassandra" and last.operations == 200
    assert recorded["provider"] == "external" and recorded["server_version"] == "5.0.9"
    assert recorded["nodes"] == 1 and recorded["addresses"] == [f"{host}:{port}"]

    for action in (["pause", "lab", "host1"], ["kill", "lab", "host1"], ["logs", "lab"]):
        line = one_line_error(workbench(tmp_path, "cluster", *action))
        assert "lab is an external cluster: the workbench does not own its servers" in line
    down = workbench(tmp_path, "cluster", "down", "lab")
    assert down.returncode == 0 and "forgotten" in down.stdout
    assert tcp_open(host, port)  # the server itself still runs
    assert "no cluster named 'lab'" in one_line_error(workbench(tmp_path, "run", "-P",
                                                                "workloada",
                                                                "--cluster", "lab"))


def _lab_role(cluster, secret: str) -> str:
    """A login of the test's own on the secure node, whose password appears nowhere else."""
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster as Driver

    from workbench.clusters.external import ExternalSpec
    from workbench.databases.cassandra.cluster_external import cassandra_client

    host, port = cluster.contact_points[0]
    spec = ExternalSpec(name="admin", kind="cassandra", hosts=(host,), port=port, tls=True,
                        ca_file=str(cluster.tls_ca))
    driver = Driver([host], port=port, protocol_version=4, **cassandra_client(spec),
                    auth_provider=PlainTextAuthProvider(*cluster.credentials))
    try:
        session = driver.connect()
        role = f"lab_{os.getpid()}"
        session.execute(f"CREATE ROLE IF NOT EXISTS {role} WITH PASSWORD = '{secret}' AND LOGIN = true")
        # the preset's authorizer is AllowAllAuthorizer: a login may do anything, no GRANT
        return role
    finally:
        driver.shutdown()


def _everything_under(*roots: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for root in roots for p in sorted(root.rglob("*")) if p.is_file()}


def test_login_and_tls_come_from_the_file_and_the_password_is_written_nowhere(cassandra_secure, tmp_path):
    host, port = cassandra_secure.contact_points[0]
    secret = f"pw-{os.urandom(8).hex()}"
    role = _lab_role(cassandra_secure, secret)
    text = (f'kind = "cassandra"\nprovider = "external"\nhosts = ["{host}"]\nport = {port}\n'
            f'username = "{role}"\nPASSWORD\ntls = true\nca_file = "{cassandra_secure.tls_ca}"\n')
    files = tmp_path / "mine"
    files.mkdir()
    good, bad, env_file = files / "secure.toml", files / "wrong.toml", files / "fromenv.toml"
    good.write_text(text.replace("PASSWORD", f'password = "{secret}"'))
    bad.write_text(text.replace("PASSWORD", 'password = "not-the-password"'))
    env_file.write_text(text.replace("PASSWORD", 'password_env = "WB_TEST_LAB_PASSWORD"'))
    up = workbench(tmp_path, "cluster", "up", str(good))
    assert up.returncode == 0, up.stderr
    assert "secure: external cassandra 5.0.9" in up.stdout

    out = tmp_path / "exports"
    out.mkdir()
    common = ["-P", "workloada", "--cluster", "secure", "-p", "recordcount=50", "-p", "operationcount=50",
              "-p", "cassandra.keyspace=ext_secure"]
    assert workbench(tmp_path, "load", *common).returncode == 0
    done = workbench(tmp_path, "run", *common, f"--export=ycsb={out / 'run.txt'}",
                     f"--export=csv={out / 'run.csv'}", f"--export=json={out / 'run.json'}",
                     f"--export=timeseries={out / 'series.csv'}")
    assert done.returncode == 0, done.stderr  # logged in over TLS with the role's password
    assert "[READ], Return=OK" in done.stdout

    # The servers' side of a run on it (issue 54): what Cassandra answers over CQL (its thread
    # pools, read on a connection of the sampler's own with the same login and TLS), and one note
    # that its processes are not on this machine, so no CPU of theirs.
    timed = workbench(tmp_path, "run", *common[:4], "-p", "cassandra.keyspace=ext_secure", "-p",
                      "operationcount=0", "-p", "maxexecutiontime=4", "-p", "recordcount=50",
                      f"--export=json={out / 'timed.json'}")
    assert timed.returncode == 0, timed.stderr
    run = json.loads((out / "timed.json").read_text())["run"]
    seen = [i["server"].get(host, {}) for i in run["intervals"] if i["duration_s"] > 0.9]
    assert len(seen) >= 3 and all(any(k.startswith("queue.") for k in f) for f in seen[1:]), seen
    assert not any("cpu" in f for f in seen)
    assert "process: no process figures: an external cluster's processes are not on this machine" \
        in run["server_notes"], run["server_notes"]

    # The state keeps no password, in a directory only its owner enters.
    state = tmp_path / "state" / "external"
    assert (state.stat().st_mode & 0o777, (state / "secure").stat().st_mode & 0o777) == (0o700, 0o700)
    assert (state / "secure" / "state.json").stat().st_mode & 0o777 == 0o600
    written = _everything_under(tmp_path / "state", out)
    written.update({p: p.read_bytes() for p in tmp_path.glob("runs.db*")})
    assert written and len(written) >= 6
    leaked = [str(p) for p, data in written.items() if secret.encode() in data]
    assert leaked == [], f"the password is in {leaked}"
    shown = workbench(tmp_path, "runs", "show", "2")
    assert shown.returncode == 0 and secret not in shown.stdout + shown.stderr

    # The password is read again from the user's file: gone, it is one line naming it.
    good.rename(files / "moved.toml")
    line = one_line_error(workbench(tmp_path, "run", *common))
    assert "its password is read from its cluster file" in line and str(good) in line
    (files / "moved.toml").rename(good)

    # From an environment variable the file names: required at up and at every run.
    line = one_line_error(workbench(tmp_path, "cluster", "up", str(env_file)))
    assert "WB_TEST_LAB_PASSWORD, which is not set" in line
    with_env = {"WB_TEST_LAB_PASSWORD": secret}
    up = workbench(tmp_path, "cluster", "up", str(env_file), env=with_env)
    assert up.returncode == 0, up.stderr
    env_common = [*common[:2], "--cluster", "fromenv", *common[4:]]
    done = workbench(tmp_path, "run", *env_common, env=with_env)
    assert done.returncode == 0 and "[READ], Return=OK" in done.stdout, done.stderr
    line = one_line_error(workbench(tmp_path, "run", *env_common))
    assert "WB_TEST_LAB_PASSWORD, which is not set" in line
    leaked = [str(p) for p, data in _everything_under(tmp_path / "state").items() if secret.encode() in data]
    assert leaked == []

    line = one_line_error(workbench(tmp_path, "cluster", "up", str(bad)))
    assert "wrong: Cassandra at" in line and "does not answer" in line


def test_an_existing_hbase_and_a_cluster_that_does_not_answer(hbase_server, tmp_path):
    host, port = hbase_server.contact_points[0]
    (tmp_path / "hb.toml").write_text(f'kind = "hbase"\nprovider = "external"\nhosts = ["{host}"]\n'
                                      f"port = {port}\n")
    up = workbench(tmp_path, "cluster", "up", str(tmp_path / "hb.toml"))
    assert up.returncode == 0, up.stderr
    assert "hb: external hbase version not reported, 1 node(s)" in up.stdout
    for phase in ("load", "run"):
        done = workbench(tmp_path, phase, "-P", "workloadc", "--cluster", "hb",
                         "-p", "recordcount=100", "-p", "operationcount=100", "-p", "table=ext_test")
        assert done.returncode == 0, done.stderr
    closed = next(p for p in range(19900, 20000) if ports.is_free("127.0.0.1", p))
    (tmp_path / "gone.toml").write_text(f'kind = "hbase"\nprovider = "external"\nhosts = ["127.0.0.1"]\n'
                                        f"port = {closed}\n")
    line = one_line_error(workbench(tmp_path, "cluster", "up", str(tmp_path / "gone.toml")))
    assert f"gone: HBase Thrift does not answer at 127.0.0.1:{closed}" in line
    assert "no external cluster" not in workbench(tmp_path, "cluster", "status").stdout
    assert "gone" not in workbench(tmp_path, "cluster", "status").stdout  # not remembered
    bad = tmp_path / "typo.toml"
    bad.write_text('kind = "hbase"\nprovider = "external"\nhost = ["127.0.0.1"]\n')
    assert f"{bad}: unknown key 'host' for an external cluster" in one_line_error(
        workbench(tmp_path, "cluster", "up", str(bad)))


def test_an_existing_mongodb_protocol_server_is_named_by_what_it_answers(ferretdb_server, tmp_path):
    """kind = "mongodb" with YCSB's URL: `up` names the server from buildInfo (FerretDB, not the
    MongoDB release it reports), runs go through --cluster and record that name."""
    host, port = ferretdb_server.contact_points[0]
    lab = tmp_path / "docs.toml"
    lab.write_text(f'kind = "mongodb"\nprovider = "external"\nurl = "mongodb://{host}:{port}/ext_docs?w=1"\n')
    up = workbench(tmp_path, "cluster", "up", str(lab))
    assert up.returncode == 0, up.stderr
    assert "docs: external mongodb FerretDB 1.24.2 (MongoDB protocol, reports 7.0.42)" in up.stdout
    for phase in ("load", "run"):
        done = workbench(tmp_path, phase, "-P", "workloada", "--cluster", "docs", "-p", "recordcount=200",
                         "-p", "operationcount=200", "-p", f"mongodb.drop={phase == 'load'}".lower())
        assert done.returncode == 0, done.stderr
    with RunStore(tmp_path / "runs.db", write=False) as s:
        last = s.list()[0]
        result = s.result(last.id)
    assert last.db == "mongodb" and last.operations == 200
    assert result.environment["cluster"]["server_version"].startswith("FerretDB 1.24.2 ")
    assert result.properties["mongodb.url"] == f"mongodb://{host}:{port}/ext_docs?w=1"
    assert any("FerretDB 1.24.2" in note for note in result.environment["notes"])  # the binding too
    shown = workbench(tmp_path, "runs", "show", str(last.id))
    assert "on mongodb (FerretDB)" in shown.stdout and "server: FerretDB 1.24.2 " in shown.stdout
    line = one_line_error(workbench(tmp_path, "cluster", "kill", "docs", "host1"))
    assert "does not own its servers" in line
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "mongodb"\nprovider = "external"\nurl = "mongodb://u:pw@127.0.0.1:1/x"\n')
    assert "key 'url' holds a password" in one_line_error(workbench(tmp_path, "cluster", "up", str(bad)))
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    gone = tmp_path / "gone.toml"
    gone.write_text(f'kind = "mongodb"\nprovider = "external"\nurl = "mongodb://127.0.0.1:{free}/x"\n')
    line = one_line_error(workbench(tmp_path, "cluster", "up", str(gone)))
    assert "no MongoDB-protocol server answers at 127.0.0.1" in line


def test_a_mongodb_login_and_tls_come_from_the_file_and_the_password_is_recorded_nowhere(
        ferretdb_secure, tmp_path):
    host, port = ferretdb_secure.contact_points[0]
    user, secret = ferretdb_secure.credentials
    text = (f'kind = "mongodb"\nprovider = "external"\n'
            f'url = "mongodb://{user}@{host}:{port}/ext_sec?w=1&authMechanism=PLAIN"\n'
            f'PASSWORD\ntls = true\nca_file = "{ferretdb_secure.tls_ca}"\n')
    good, wrong = tmp_path / "sec.toml", tmp_path / "wrong.toml"
    good.write_text(text.replace("PASSWORD", 'password_env = "WB_TEST_MONGO_PASSWORD"'))
    wrong.write_text(text.replace("PASSWORD", 'password = "not-the-password"'))
    env = {"WB_TEST_MONGO_PASSWORD": secret}
    up = workbench(tmp_path, "cluster", "up", str(good), env=env)
    assert up.returncode == 0, up.stderr
    assert "sec: external mongodb FerretDB 1.24.2" in up.stdout
    out = tmp_path / "exports"
    out.mkdir()
    common = ["-P", "workloada", "--cluster", "sec", "-p", "recordcount=100", "-p", "operationcount=100"]
    assert workbench(tmp_path, "load", *common, "-p", "mongodb.drop=true", env=env).returncode == 0
    done = workbench(tmp_path, "run", *common, f"--export=json={out / 'run.json'}",
                     f"--export=csv={out / 'run.csv'}", env=env)
    assert done.returncode == 0, done.stderr  # logged in over TLS
    assert "[READ], Return=OK" in done.stdout
    # the exports name the server as it answered, never MongoDB alone
    # (and the client that measured it, in the last column)
    named = ',mongodb (FerretDB),"FerretDB 1.24.2 (MongoDB protocol, reports 7.0.42)","pymongo '
    assert named in (out / "run.csv").read_text()
    assert "FerretDB 1.24.2" in (out / "run.json").read_text()
    written = _everything_under(tmp_path / "state", out)
    written.update({p: p.read_bytes() for p in tmp_path.glob("runs.db*")})
    leaked = [str(p) for p, data in written.items() if secret.encode() in data]
    assert leaked == [], f"the password is in {leaked}"
    line = one_line_error(workbench(tmp_path, "cluster", "up", str(wrong)))
    assert "refused the login" in line
