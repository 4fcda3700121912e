"""Server images for the Docker provider, built on this machine with no image registry.

    workbench images build            # base, cassandra and hbase; a second build is a no-op
    workbench images list

Three images, each from the one before:
- `workbench/base:bookworm-java17`: Debian 12 with Debian's OpenJDK 17 runtime. From a local
  `debian:bookworm` image when the engine has one (apt-get in a build step, host network), else
  from a root filesystem made here with `debootstrap --variant=minbase --include=openjdk-17-jre-headless`
  (cached as a tar under the workbench cache) and imported.
- `workbench/cassandra:VERSION`: the locked Cassandra jars (the same fetcher and checksums as the
  local provider) under /opt/cassandra/lib, a config under /etc/cassandra, and an entry point that
  honours the official `cassandra` image's environment contract (CASSANDRA_SEEDS,
  CASSANDRA_CLUSTER_NAME, CASSANDRA_LISTEN_ADDRESS, MAX_HEAP_SIZE, HEAP_NEWSIZE, JVM_EXTRA_OPTS,
  ...), so the provider can start either image the same way.
- `workbench/hbase:VERSION`: the locked HBase jars under /opt/hbase/lib; its entry point runs the
  command line the provider gives it (the same one the local provider runs).
- `workbench/ferretdb:VERSION`: FerretDB (the binary gobuild.py builds) and Debian's PostgreSQL 15
  (apt-get in a build step, host network). Its entry point honours the official `mongo` image's
  contract: `mongod [--port N] [--bind_ip A]`, data under /data/db, MONGO_INITDB_ROOT_USERNAME
  and MONGO_INITDB_ROOT_PASSWORD (a login, checked by PostgreSQL); so the provider can start it
  or a real `mongo` image the same way. PostgreSQL listens on 127.0.0.1:$WORKBENCH_POSTGRES_PORT
  (5432 by default) inside the container; FERRETDB_BACKEND=sqlite leaves it out.

Every image carries the label org.workbench.inputs: a hash of what went into it (jar lockfile,
templates, entry point, the base image's id). A build whose inputs match an existing image is
skipped, so `build` is cheap to call before every `up`.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from string import Template
from typing import Any

from workbench.clusters import distributions, paths
from workbench.clusters.launch import template_text
from workbench.clusters.progress import OnProgress, report
from workbench.databases import resolve, server, servers
from workbench.errors import ClusterError

BASE = "workbench/base:bookworm-java17"
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = ("openjdk-17-jre-headless",)
LOCAL_BASES = ("debian:bookworm", "debian:bookworm-slim", "debian:12", "debian:12-slim")
INPUTS_LABEL = "org.workbench.inputs"
KINDS = tuple(s.kind for s in servers() if s.image)  # the servers with an image (databases/)


def image_name(kind: str) -> str:
    return f"workbench/{kind}:{resolve(server(kind).version)(kind)}"


# What the servers' descriptors name: each image's version, files, inputs and content.
def distribution_version(kind: str) -> str:
    """The pinned release of a server built from jars (Cassandra, HBase)."""
    return distributions.VERSIONS[kind]


def ferretdb_version(kind: str) -> str:
    from workbench.clusters import gobuild

    return gobuild.VERSION


def distribution_inputs(kind: str) -> bytes:
    """What an image of jars is built from beyond its files: the jars' lock file."""
    return (distributions.LOCK_DIR / f"{kind}-{distributions.VERSIONS[kind]}.lock").read_bytes()


def ferretdb_inputs(kind: str) -> bytes:
    from workbench.clusters import gobuild

    return gobuild.PINNED_SUM.encode()


def distribution_content(kind: str, cache: Path, progress: OnProgress) -> tuple[dict, dict]:
    """(context path -> source, build options) of an image of jars: the locked jars under lib/."""
    lib = distributions.fetch(kind, cache, progress=progress)
    report(progress, "build", f"{image_name(kind)}: building from {lib}")
    return {"lib": lib}, {}


def ferretdb_content(kind: str, cache: Path, progress: OnProgress) -> tuple[dict, dict]:
    """FerretDB's binary (built from its pinned source); apt-get fetches PostgreSQL (host network)."""
    from workbench.clusters import gobuild

    binary = gobuild.fetch(cache, progress)
    report(progress, "build", f"{image_name(kind)}: building from {binary} and Debian's postgresql-15")
    return {"bin/ferretdb": binary}, {"network_mode": "host"}


# -- the Cassandra image's files --------------------------------------------------------------
CASSANDRA_ENTRYPOINT = r"""#!/bin/sh
# workbench/cassandra entry point: the official cassandra image's environment contract.
set -e
CONF=${CASSANDRA_CONF:-/etc/cassandra}
if [ "$1" = cassandra ]; then
    shift
    [ "$1" = -f ] && shift
    mkdir -p /var/lib/cassandra /var/log/cassandra
    own_address() { getent hosts "$(cat /proc/sys/kernel/hostname)" | awk '{ print $1; exit }'; }
    : "${CASSANDRA_LISTEN_ADDRESS:=auto}"
    [ "$CASSANDRA_LISTEN_ADDRESS" = auto ] && CASSANDRA_LISTEN_ADDRESS=$(own_address)
    : "${CASSANDRA_BROADCAST_ADDRESS:=$CASSANDRA_LISTEN_ADDRESS}"
    [ "$CASSANDRA_BROADCAST_ADDRESS" = auto ] && CASSANDRA_BROADCAST_ADDRESS=$(own_address)
    : "${CASSANDRA_BROADCAST_RPC_ADDRESS:=$CASSANDRA_BROADCAST_ADDRESS}"
    : "${CASSANDRA_RPC_ADDRESS:=0.0.0.0}"
    : "${CASSANDRA_SEEDS:=$CASSANDRA_BROADCAST_ADDRESS}"
    set_yaml() { sed -i -E "s|^(# )?($1:).*|\2 $2|" "$CONF/cassandra.yaml"; }
    sed -i -E "s|(- seeds:).*|\1 \"$CASSANDRA_SEEDS\"|" "$CONF/cassandra.yaml"
    set_yaml listen_address "$CASSANDRA_LISTEN_ADDRESS"
    set_yaml broadcast_address "$CASSANDRA_BROADCAST_ADDRESS"
    set_yaml rpc_address "$CASSANDRA_RPC_ADDRESS"
    set_yaml broadcast_rpc_address "$CASSANDRA_BROADCAST_RPC_ADDRESS"
    [ -n "$CASSANDRA_CLUSTER_NAME" ] && set_yaml cluster_name "'$CASSANDRA_CLUSTER_NAME'"
    [ -n "$CASSANDRA_NUM_TOKENS" ] && set_yaml num_tokens "$CASSANDRA_NUM_TOKENS"
    [ -n "$CASSANDRA_ENDPOINT_SNITCH" ] && set_yaml endpoint_snitch "$CASSANDRA_ENDPOINT_SNITCH"
    [ -n "$CASSANDRA_DC" ] && sed -i -E "s|^dc=.*|dc=$CASSANDRA_DC|" "$CONF/cassandra-rackdc.properties"
    [ -n "$CASSANDRA_RACK" ] && sed -i -E "s|^rack=.*|rack=$CASSANDRA_RACK|" \
        "$CONF/cassandra-rackdc.properties"
    HEAP=${MAX_HEAP_SIZE:-1G}
    # G1 (jvm.options) sizes the young generation itself, as Cassandra's own scripts do with it.
    NEW=""
    if [ -n "$HEAP_NEWSIZE" ] && ! grep -q '^-XX:+UseG1GC' "$CONF/jvm.options"; then
        NEW="-Xmn$HEAP_NEWSIZE"
    fi
    # shellcheck disable=SC2086 # JVM_OPTS and JVM_EXTRA_OPTS are lists of flags
    exec java "@$CONF/jvm.options" "-Xms$HEAP" "-Xmx$HEAP" $NEW \
        -javaagent:/opt/cassandra/lib/jamm-0.4.0.jar \
        -Dcassandra.logdir=/var/log/cassandra -Dcassandra.storagedir=/var/lib/cassandra \
        "-Dcassandra.config=file://$CONF/cassandra.yaml" "-Dlogback.configurationFile=$CONF/logback.xml" \
        $JVM_OPTS $JVM_EXTRA_OPTS -cp "$CONF:/opt/cassandra/lib/*" \
        org.apache.cassandra.service.CassandraDaemon "$@"
fi
exec "$@"
"""

HBASE_ENTRYPOINT = r"""#!/bin/sh
# workbench/hbase entry point: runs the command line it is given (the provider's java ...).
set -e
exec "$@"
"""


def _cassandra_yaml() -> str:
    """The image's own cassandra.yaml: the local provider's template with single-node defaults,
    addresses left for the entry point, and tokens chosen by Cassandra (num_tokens)."""
    text = Template(template_text("cassandra.yaml")).substitute(
        node_name="(any)", cluster_name="Test Cluster", num_tokens=16, initial_token="",
        seeds="127.0.0.1:7000", listen_address="127.0.0.1", rpc_address="127.0.0.1",
        broadcast_rpc="broadcast_rpc_address: 127.0.0.1", storage_port=7000, native_port=9042,
        data_dir="/var/lib/cassandra", commitlog_sync="periodic",
        commitlog_sync_extra="commitlog_sync_period: 10000ms", commitlog_total_space="256MiB",
        memtable_heap_space="128MiB", memtable_offheap_space="128MiB", concurrent_reads=32,
        concurrent_writes=32, authenticator="AllowAllAuthenticator", client_encryption="",
        auto_bootstrap="false",
    )
    lines = [line for line in text.splitlines() if not line.startswith("initial_token:")]
    return "\n".join(lines) + "\nbroadcast_address: 127.0.0.1\n"


def _files(kind: str) -> dict[str, tuple[str, int]]:
    """Context path -> (text, mode) of the small files an image is built from (its server's)."""
    return resolve(server(kind).image)(kind)


def cassandra_files(kind: str) -> dict[str, tuple[str, int]]:
    return {
        "Dockerfile": ("\n".join((
            f"FROM {BASE}",
            "COPY lib/ /opt/cassandra/lib/",
            "COPY conf/ /etc/cassandra/",
            "COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh",
            "ENV CASSANDRA_HOME=/opt/cassandra CASSANDRA_CONF=/etc/cassandra",
            "VOLUME /var/lib/cassandra",
            "EXPOSE 7000 9042",
            'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
            'CMD ["cassandra", "-f"]',
        )) + "\n", 0o644),
        "conf/cassandra.yaml": (_cassandra_yaml(), 0o644),
        "conf/logback.xml": (template_text("logback.xml"), 0o644),
        "conf/jvm.options": (template_text("cassandra-jvm.options"), 0o644),
        "conf/cassandra-rackdc.properties": ("dc=datacenter1\nrack=rack1\n", 0o644),
        "docker-entrypoint.sh": (CASSANDRA_ENTRYPOINT, 0o755),
    }


def ferretdb_files(kind: str) -> dict[str, tuple[str, int]]:
    return {
        "Dockerfile": ("\n".join((
            f"FROM {BASE}",
            "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
            "--no-install-recommends postgresql-15 && rm -rf /var/lib/apt/lists/*",
            "COPY bin/ferretdb /usr/local/bin/ferretdb",
            "COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh",
            "VOLUME /data/db",
            "EXPOSE 27017",
            'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
            'CMD ["mongod"]',
        )) + "\n", 0o644),
        "docker-entrypoint.sh": (template_text("ferretdb-entrypoint.sh"), 0o755),
    }


def hbase_files(kind: str) -> dict[str, tuple[str, int]]:
    return {
        "Dockerfile": ("\n".join((
            f"FROM {BASE}",
            "COPY lib/ /opt/hbase/lib/",
            "COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh",
            "ENV HBASE_HOME=/opt/hbase",
            'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
        )) + "\n", 0o644),
        "docker-entrypoint.sh": (HBASE_ENTRYPOINT, 0o755),
    }


def _inputs(kind: str, base_id: str) -> str:
    digest = hashlib.sha256(base_id.encode())
    digest.update(resolve(server(kind).image_inputs)(kind))
    for name, (text, mode) in sorted(_files(kind).items()):
        digest.update(f"{name}:{mode}:".encode() + text.encode())
    return digest.hexdigest()[:16]


# -- building ---------------------------------------------------------------------------------
def _find(client: Any, name: str) -> Any | None:
    from docker.errors import ImageNotFound

    try:
        return client.images.get(name)
    except ImageNotFound:
        return None


def _stream(client: Any, progress: OnProgress, label: str, **kwargs: Any) -> None:
    """Run a build through the low-level API, reporting its steps; raise on a failed step."""
    last = ""
    for chunk in client.api.build(decode=True, rm=True, forcerm=True, **kwargs):
        if "error" in chunk:
            raise ClusterError(f"building {label} failed: {chunk['error'].strip()}",
                               hint=f"the step before it: {last}" if last else None)
        line = chunk.get("stream", "").strip()
        if line.startswith("Step "):
            last = line
            report(progress, "build", f"{label}: {line}")


def build_base(client: Any, cache: Path, progress: OnProgress = True) -> str:
    """The base image (Debian + Java 17); returns its id. Built once, then reused."""
    found = _find(client, BASE)
    if found is not None:
        report(progress, "build", f"{BASE}: up to date")
        return found.id
    local = next((name for name in LOCAL_BASES if _find(client, name) is not None), None)
    if local is not None:
        report(progress, "build", f"{BASE}: from the local image {local}")
        dockerfile = (f"FROM {local}\nRUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install "
                      f"-y --no-install-recommends {' '.join(PACKAGES)} && rm -rf /var/lib/apt/lists/*\n")
        _stream(client, progress, BASE, fileobj=_context({"Dockerfile": (dockerfile, 0o644)}, {}),
                custom_context=True, tag=BASE, network_mode="host",
                labels={INPUTS_LABEL: f"from {local}"})
    else:
        tar = rootfs(cache, progress)
        report(progress, "build", f"{BASE}: importing {tar} ({tar.stat().st_size >> 20} MiB)")
        client.api.import_image_from_file(str(tar), repository=BASE.split(":")[0], tag=BASE.split(":")[1],
                                          changes=[f'LABEL {INPUTS_LABEL}="debootstrap {SUITE}"',
                                                   'CMD ["/bin/sh"]'])
    found = _find(client, BASE)
    if found is None:
        raise ClusterError(f"the engine did not keep {BASE} after building it")
    return found.id


def rootfs(cache: Path, progress: OnProgress = True) -> Path:
    """Debian's root filesystem with Java 17, made once with debootstrap and kept as a tar."""
    folder = cache / "images"
    tar = folder / f"rootfs-{SUITE}-java17.tar"
    if tar.exists():
        return tar
    if shutil.which("debootstrap") is None:
        raise ClusterError("no base image and no debootstrap to make one",
                           hint="apt-get install debootstrap (or load a debian:bookworm image into "
                           "the engine)")
    if os.geteuid() != 0:
        raise ClusterError("debootstrap needs root to make the base image's root filesystem",
                           hint="run `workbench images build` once as root")
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="rootfs-", dir=folder))
    try:
        report(progress, "build", f"{BASE}: debootstrap {SUITE} with {', '.join(PACKAGES)} "
                                  "(a minute or two, once)")
        done = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
                               SUITE, str(work / "root"), MIRROR], capture_output=True, text=True,
                              check=False)
        if done.returncode:
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            raise ClusterError(f"debootstrap failed: {' / '.join(tail)}",
                               hint=f"it needs {MIRROR} (Debian's packages) to be reachable")
        shutil.rmtree(work / "root" / "var" / "cache" / "apt" / "archives", ignore_errors=True)
        part = tar.with_suffix(".part")
        subprocess.run(["tar", "-C", str(work / "root"), "--numeric-owner", "-cf", str(part), "."],
                       check=True)
        os.replace(part, tar)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tar


def _context(files: dict[str, tuple[str, int]], folders: dict[str, Path]) -> io.BufferedRandom:
    """A build context tar (in a temporary file): the small files, and whole folders of jars (or,
    for a prefix naming a file, that file: FerretDB's binary)."""
    handle = tempfile.TemporaryFile()
    with tarfile.open(fileobj=handle, mode="w") as tar:
        for name, (text, mode) in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
        for prefix, folder in folders.items():
            if folder.is_file():
                tar.add(str(folder), arcname=prefix)
                continue
            for path in sorted(folder.glob("*.jar")):
                tar.add(str(path), arcname=f"{prefix}/{path.name}")
    handle.seek(0)
    return handle


def build(kinds: tuple[str, ...] = KINDS, client: Any = None, cache: Path | None = None,
          progress: OnProgress = True) -> dict[str, str]:
    """Build what is missing or out of date; kind -> 'built' | 'up to date'."""
    from workbench.clusters import engine

    client = client or engine.connect()
    cache = Path(cache) if cache else paths.cache_dir()
    base_id = build_base(client, cache, progress)
    result = {}
    for kind in kinds:
        name, inputs = image_name(kind), _inputs(kind, base_id)
        found = _find(client, name)
        if found is not None and found.labels.get(INPUTS_LABEL) == inputs:
            report(progress, "build", f"{name}: up to date")
            result[kind] = "up to date"
            continue
        content, extra = resolve(server(kind).image_content)(kind, cache, progress)
        with _context(_files(kind), content) as context:
            _stream(client, progress, name, fileobj=context, custom_context=True, tag=name,
                    labels={INPUTS_LABEL: inputs, "org.workbench.kind": kind}, **extra)
        result[kind] = "built"
    return result


def listing(client: Any = None) -> list[tuple[str, str, int]]:
    """(tag, inputs label, size in bytes) of the workbench's images."""
    from workbench.clusters import engine

    client = client or engine.connect()
    rows = []
    for image in client.images.list(name="workbench/*"):
        for tag in image.tags:
            rows.append((tag, image.labels.get(INPUTS_LABEL, ""), image.attrs.get("Size", 0)))
    return sorted(rows)
