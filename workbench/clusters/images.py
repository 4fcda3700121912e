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
- `workbench/ferretdb:VERSION`: FerretDB (the binary databases/mongodb/cluster_ferretdb_build.py
  builds) and Debian's PostgreSQL 15
  (apt-get in a build step, host network). Its entry point honours the official `mongo` image's
  contract: `mongod [--port N] [--bind_ip A]`, data under /data/db, MONGO_INITDB_ROOT_USERNAME
  and MONGO_INITDB_ROOT_PASSWORD (a login, checked by PostgreSQL); so the provider can start it
  or a real `mongo` image the same way. PostgreSQL listens on 127.0.0.1:$WORKBENCH_POSTGRES_PORT
  (5432 by default) inside the container; FERRETDB_BACKEND=sqlite leaves it out.

Each server's files (and FerretDB's version, inputs and content) are its database folder's
cluster_image.py, named by the server's descriptor; this module builds them.

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
from typing import Any

from workbench.clusters import distributions, paths
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


# What the servers' descriptors name: the version, inputs and content of an image of jars
# (Cassandra's, HBase's); each server's files, and FerretDB's all, are its folder's cluster_image.py.
def distribution_version(kind: str) -> str:
    """The pinned release of a server built from jars (Cassandra, HBase)."""
    return distributions.VERSIONS[kind]


def distribution_inputs(kind: str) -> bytes:
    """What an image of jars is built from beyond its files: the jars' lock file."""
    return (distributions.LOCK_DIR / f"{kind}-{distributions.VERSIONS[kind]}.lock").read_bytes()


def distribution_content(kind: str, cache: Path, progress: OnProgress) -> tuple[dict, dict]:
    """(context path -> source, build options) of an image of jars: the locked jars under lib/."""
    lib = distributions.fetch(kind, cache, progress=progress)
    report(progress, "build", f"{image_name(kind)}: building from {lib}")
    return {"lib": lib}, {}


# -- the images' files (each server's cluster_image.py in its database's folder) ---------------
def _files(kind: str) -> dict[str, tuple[str, int]]:
    """Context path -> (text, mode) of the small files an image is built from (its server's)."""
    return resolve(server(kind).image)(kind)


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
