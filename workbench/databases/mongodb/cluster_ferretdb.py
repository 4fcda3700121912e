"""FerretDB 1.24 as local processes: a MongoDB-protocol server on a private PostgreSQL or on SQLite.

backend = "postgresql" starts two nodes:
  - `postgres`: Debian's PostgreSQL server binaries on a cluster of our own (initdb'd into the
    cluster's data directory on first start), listening on 127.0.0.1:postgres_port (password
    login, the password in <run_dir>/postgres.password) and on a Unix socket in the cluster's own
    0700 directory, through which FerretDB logs in;
  - `ferretdb`: the binary cluster_ferretdb_build.py built, on address:port, telemetry off, no debug listener.
backend = "sqlite" starts `ferretdb` alone, its SQLite files in the data directory.

PostgreSQL refuses to run as root. Run by root, both initdb and postgres are started through
`unshare --user --map-user=65534`: inside that user namespace they are an unprivileged user,
while their files stay root's (0700 directories are still theirs to enter). Its PID is
postgres's own (unshare execs it), so pause, kill and stop reach the real server. PostgreSQL is
stopped with SIGINT (its "fast" shutdown: SIGTERM would wait for FerretDB's connections).

Ready means a real round trip through FerretDB: insert, find and delete a document.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import secrets
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from workbench.clusters import processes as procs
from workbench.clusters.base import Node
from workbench.clusters.launch import NodePlan, NotReady, tcp_open
from workbench.clusters.specs import CLIENT_CA, data_home
from workbench.databases.mongodb import cluster_ferretdb_build as gobuild
from workbench.databases.mongodb.cluster_spec import FERRETDB_PASSWORD, FERRETDB_USER, FerretDBSpec
from workbench.errors import ClusterError

STOP_SIGNALS = {"postgres": signal.SIGINT}
PROBE_DB = "workbench_ready_probe"
SOCKET_LIMIT = 100  # sun_path holds 108 bytes; PostgreSQL refuses longer socket paths
NO_POSTGRES_HINT = ("install Debian's PostgreSQL server (`apt-get install postgresql-15`), or use the "
                    "ferretdb-sqlite preset, which needs no PostgreSQL")


def fetch(cache: Path, progress: object) -> Path:
    """The FerretDB binary (built from source once, then cached)."""
    return gobuild.fetch(cache, progress)  # type: ignore[arg-type]


def fetch_report(cache: Path | None, progress: bool) -> str:
    """`workbench servers fetch ferretdb`: the binary built (or found) and verified, in one line."""
    binary = gobuild.fetch(cache, progress=progress)
    return (f"ferretdb {gobuild.VERSION}: built from {gobuild.MODULE} (module sum {gobuild.PINNED_SUM}), "
            f"verified: {binary}")


@functools.cache
def postgres_bin() -> Path:
    """The directory of the newest PostgreSQL server binaries installed (Debian's layout, or
    whatever `pg_config --bindir` names)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                   key=lambda p: int(re.sub(r"\D", "", Path(p).parts[-3]) or 0))
    if found:
        return Path(found[-1]).parent
    try:
        bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True,
                                timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        bindir = ""
    if bindir and (Path(bindir) / "postgres").exists() and (Path(bindir) / "initdb").exists():
        return Path(bindir)
    raise ClusterError("the ferretdb-postgres preset needs PostgreSQL's server programs (postgres, initdb), "
                       "and none were found under /usr/lib/postgresql", hint=NO_POSTGRES_HINT)


@functools.cache
def postgres_version() -> str:
    """"15.18" from `postgres --version`."""
    out = subprocess.run([str(postgres_bin() / "postgres"), "--version"], capture_output=True,
                         text=True, timeout=30).stdout
    match = re.search(r"\(PostgreSQL\)\s+([\d.]+)", out)
    return match.group(1) if match else "unknown"


def describe(spec: FerretDBSpec) -> str:
    """The server's honest name, as every report shows it: never "MongoDB"."""
    under = f"PostgreSQL {postgres_version()}" if spec.backend == "postgresql" else "SQLite"
    return f"FerretDB {gobuild.VERSION} on {under} (MongoDB protocol)"


def _unprivileged(argv: list[str]) -> list[str]:
    """PostgreSQL will not run as root: as root, run it as 'nobody' in a user namespace of its own."""
    if os.geteuid() != 0:
        return argv
    return ["unshare", "--user", "--map-user=65534", "--map-group=65534", *argv]


def socket_dir(run_dir: Path) -> Path:
    return run_dir / "pg"


def password_file(run_dir: Path) -> Path:
    return run_dir / FERRETDB_PASSWORD


def make_tls(spec: FerretDBSpec, run_dir: Path) -> tuple[Path, Path]:
    """A self-signed certificate for the server's address (openssl), its key, and the copy
    clients trust (<run_dir>/tls/ca.pem); made once per cluster directory."""
    folder = run_dir / "tls"
    cert, key = folder / "server.pem", folder / "server.key"
    if cert.exists() and key.exists():
        return cert, key
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    argv = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650",
            "-keyout", str(key), "-out", str(cert), "-subj", f"/CN=workbench-{spec.name}",
            "-addext", f"subjectAltName=IP:{spec.address},DNS:localhost"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise ClusterError("client_tls = true needs the openssl command to make a certificate",
                           hint="apt-get install openssl") from None
    if done.returncode != 0:
        raise ClusterError(f"openssl could not make a certificate: {done.stderr.strip()[-200:]}")
    (run_dir / CLIENT_CA).write_bytes(cert.read_bytes())
    return cert, key


def _initdb(spec: FerretDBSpec, run_dir: Path, data: Path) -> None:
    """A new PostgreSQL cluster in `data` (kept data from `down --keep-data` is reused)."""
    if (data / "PG_VERSION").exists():
        return
    data.parent.mkdir(parents=True, exist_ok=True)
    secret = password_file(run_dir)
    secret.write_text(secrets.token_urlsafe(18) + "\n")
    secret.chmod(0o600)
    argv = _unprivileged([str(postgres_bin() / "initdb"), "-D", str(data), "-U", "ferretdb",
                          "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={secret}",
                          "-E", "UTF8", "--locale=C", "--no-sync"])
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except FileNotFoundError as exc:
        raise ClusterError(f"cannot run {exc.filename}", hint=NO_POSTGRES_HINT) from None
    if done.returncode != 0:
        last = " / ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise ClusterError(f"initdb failed for {spec.name}: {last}",
                           hint="as root this needs user namespaces (`unshare --user`); "
                                "or use ferretdb-sqlite")


def plans(spec: FerretDBSpec, run_dir: Path, binary: Path, java: object = None) -> list[NodePlan]:
    """Prepare the directories (and PostgreSQL's cluster) and say how to start each node."""
    logs = run_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    data = data_home(spec, run_dir)
    state = run_dir / "ferretdb"
    state.mkdir(parents=True, exist_ok=True)
    out: list[NodePlan] = []
    a = spec.address
    flags = ["--debug-addr=-", "--telemetry=disable", f"--state-dir={state}", "--log-format=text",
             "--log-level=info"]
    if spec.client_tls:  # TLS only: no plain listener
        cert, key = make_tls(spec, run_dir)
        flags += ["--listen-addr=", f"--listen-tls={a}:{spec.port}", f"--listen-tls-cert-file={cert}",
                  f"--listen-tls-key-file={key}"]
    else:
        flags.append(f"--listen-addr={a}:{spec.port}")
    if spec.backend == "postgresql":
        sockets = socket_dir(run_dir)
        if len(str(sockets)) + len(f"/.s.PGSQL.{spec.postgres_port}") > SOCKET_LIMIT:
            raise ClusterError(f"the cluster directory {run_dir} is too long a path for PostgreSQL's "
                               "Unix socket", hint="set WORKBENCH_STATE_DIR to a shorter directory")
        sockets.mkdir(mode=0o700, parents=True, exist_ok=True)
        pgdata = data / "postgres"
        _initdb(spec, run_dir, pgdata)
        log = logs / "postgres.log"
        argv = _unprivileged([
            str(postgres_bin() / "postgres"), "-D", str(pgdata), "-p", str(spec.postgres_port),
            "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={sockets}",
            "-c", f"shared_buffers={spec.shared_buffers}",
            "-c", f"fsync={'on' if spec.postgres_fsync else 'off'}",
            "-c", "logging_collector=off", "-c", "max_connections=100"])
        out.append(NodePlan("postgres", "127.0.0.1", spec.postgres_port, pgdata, log, log, tuple(argv),
                            (("127.0.0.1", spec.postgres_port, "PostgreSQL"),)))
        if spec.login:  # each client's login goes on to PostgreSQL, over TCP with its password
            url = f"postgres://127.0.0.1:{spec.postgres_port}/postgres"
        else:  # FerretDB logs in through the private socket, which trusts the ferretdb role
            url = f"postgres:///postgres?host={sockets}&port={spec.postgres_port}&user={FERRETDB_USER}"
        backend = ["--handler=postgresql", f"--postgresql-url={url}"]
    else:
        files = data / "sqlite"
        files.mkdir(parents=True, exist_ok=True)
        backend = ["--handler=sqlite", f"--sqlite-url=file:{files}/"]
    log = logs / "ferretdb.log"
    out.append(NodePlan("ferretdb", a, spec.port, state, log, log, (str(binary), *backend, *flags),
                        ((a, spec.port, "FerretDB"),)))
    return out


def before_restart(node: Node, timeout: float = 15.0) -> None:
    """After a crash (kill), the postmaster.pid PostgreSQL left names a process that is gone, or a
    zombie nobody has reaped yet (which PostgreSQL takes for a live server). Once no orphaned
    backend holds the old shared memory any more, that file is stale: remove it, as a restart after
    a power cut would find it."""
    if node.name != "postgres":
        return
    pidfile = node.dir / "postmaster.pid"
    try:
        lines = pidfile.read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return
    if procs.state(pid) not in (None, "Z", "X"):
        return  # a live postmaster: PostgreSQL refuses to start, and says so in its log
    shmid = lines[6].split()[1] if len(lines) > 6 and len(lines[6].split()) == 2 else None
    deadline = time.monotonic() + timeout
    while shmid is not None and _attached(shmid) and time.monotonic() < deadline:
        time.sleep(0.05)
    pidfile.unlink(missing_ok=True)
    for socket_lock in Path(lines[4] if len(lines) > 4 else "/nonexistent").glob(".s.PGSQL.*.lock"):
        socket_lock.unlink(missing_ok=True)  # the same stale claim on the Unix socket


def _attached(shmid: str) -> bool:
    """True while processes are attached to the System V segment `shmid`."""
    try:
        rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    except OSError:
        return False
    for row in rows:
        cols = row.split()
        if len(cols) > 6 and cols[1] == shmid:
            return cols[6] != "0"
    return False


def launch_groups(spec: FerretDBSpec, run_dir: Path) -> list[list[str]]:
    # FerretDB connects to PostgreSQL on its first request: both can start at once.
    return [["postgres", "ferretdb"]] if spec.backend == "postgresql" else [["ferretdb"]]


def client_options(spec: FerretDBSpec, run_dir: Path) -> dict[str, object]:
    """pymongo's login and TLS options for this cluster (none, unless login or client_tls)."""
    out: dict[str, object] = {}
    if spec.login:
        out.update(username=FERRETDB_USER, password=password_file(run_dir).read_text().strip())
        # FerretDB 1.x takes PLAIN only; a real MongoDB image (docker_image) its own SCRAM, in admin
        out.update(authSource="admin") if spec.docker_image else out.update(authMechanism="PLAIN")
    if spec.client_tls:
        out.update(tls=True, tlsCAFile=str(run_dir / CLIENT_CA))
    return out


def probe(address: str, port: int, timeout_s: float = 5.0, **options: object) -> bool:
    """A real round trip through FerretDB to its backend: insert, find, delete one document."""
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    if not tcp_open(address, port):
        return False
    ms = int(timeout_s * 1000)
    client = MongoClient(address, port, serverSelectionTimeoutMS=ms, connectTimeoutMS=ms,
                         socketTimeoutMS=ms, retryWrites=False, retryReads=False, **options)
    try:
        probes = client[PROBE_DB]["probe"]
        probes.replace_one({"_id": "probe"}, {"_id": "probe", "ok": "yes"}, upsert=True)
        ok = probes.find_one({"_id": "probe"}) == {"_id": "probe", "ok": "yes"}
        client.drop_database(PROBE_DB)  # leaves no trace in a user's list of databases
        return ok
    except PyMongoError:  # the backend still starting, a lock, ...
        return False
    finally:
        client.close()


def wait_ready(spec: FerretDBSpec, names: list[str], final: bool, deadline: float,
               check: Callable[[], None], run_dir: Path | None = None) -> None:
    while time.monotonic() < deadline:
        check()
        if probe(spec.address, spec.port, max(1.0, min(5.0, deadline - time.monotonic())),
                 **client_options(spec, run_dir or Path("."))):
            return
        time.sleep(0.1)
    raise NotReady("ferretdb", "did not complete an insert/find/delete through the MongoDB protocol")


# -- what the database's descriptor names (__init__.py) -----------------------------------
def listens_on(spec: FerretDBSpec) -> list[tuple[str, int, str]]:
    """The client port (and PostgreSQL's) a local FerretDB of this spec needs free."""
    pg = [("127.0.0.1", spec.postgres_port, "PostgreSQL")] if spec.backend == "postgresql" else []
    return [(spec.address, spec.port, "FerretDB"), *pg]


def shape(spec: FerretDBSpec) -> tuple[str, str]:
    """(processes, where clients connect) of a preset not started: FerretDB, and its PostgreSQL."""
    return ("2" if spec.backend == "postgresql" else "1"), f"{spec.address}:{spec.port}"
