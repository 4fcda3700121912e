"""FerretDB, built here from its pinned Go module source, and cached like the server jars.

No registry this project may use serves FerretDB's binaries, but the Go module proxy serves its
source. `go install ...@v1.24.2` gives a binary that panics at start (the module's
build/version/version.txt is empty), so the build is done by hand:

1. `go mod download -json` the pinned module; its checksum (the `h1:` sum that go.sum and the Go
   checksum database use) must equal PINNED_SUM, or nothing is built;
2. the module's directory is copied into a scratch folder, the version written into
   version.txt, and `go build ./cmd/ferretdb` run there (CGO off: SQLite is pure Go);
3. the binary goes to <cache>/distributions/ferretdb-<version>/ferretdb with a `.sha256` beside
   it; a cached binary whose digest no longer matches, or that does not name the pinned version,
   is built again.

Without a Go toolchain, `fetch()` raises one line naming the ways on: install Go, or use the Docker
provider or an external MongoDB-protocol server. Two processes building at once (parallel tests)
take turns on a lock file; the second finds the first one's binary.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from workbench.clusters import paths
from workbench.clusters.distributions import _sha256
from workbench.clusters.progress import OnProgress, report
from workbench.errors import ClusterError

MODULE = "github.com/FerretDB/FerretDB"
VERSION = "1.24.2"
# The module zip's hash as the Go checksum database records it (go.sum line of v1.24.2).
PINNED_SUM = "h1:trrUU0LbmusMbyubhPS1IELncvrIwKrsRT2LW1UUWCw="
GO_CANDIDATES = ("/usr/local/go/bin/go", "/usr/lib/go/bin/go")
NO_GO_HINT = ("install Go 1.21 or later (https://go.dev/dl; it fetches the toolchain FerretDB needs), "
              "or run it in Docker (`workbench cluster up ferretdb-postgres --provider docker`), or point "
              "the workbench at a running MongoDB-protocol server (`--provider external`, "
              'kind = "mongodb")')


def binary_dir(cache: Path | None = None) -> Path:
    return (cache or paths.cache_dir()) / "distributions" / f"ferretdb-{VERSION}"


def binary_path(cache: Path | None = None) -> Path:
    return binary_dir(cache) / "ferretdb"


def find_go() -> str | None:
    """The `go` command: on PATH, or where Go's own installer or Debian put it."""
    found = shutil.which("go")
    if found:
        return found
    return next((c for c in GO_CANDIDATES if os.access(c, os.X_OK)), None)


def cached(cache: Path | None = None) -> Path | None:
    """The cached binary if it is intact (its recorded digest) and the pinned version, else None."""
    binary = binary_path(cache)
    stamp = binary.with_suffix(".sha256")
    try:
        if stamp.read_text().split()[0] != _sha256(binary):
            return None
    except (OSError, IndexError):
        return None
    return binary if version_of(binary) == VERSION else None


def version_of(binary: Path) -> str | None:
    """What `ferretdb --version` says it is ("1.24.2"), or None if it does not run."""
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        if line.startswith("version:"):
            return line.split(":", 1)[1].strip().removeprefix("v")
    return None


def _go(go: str, args: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    done = subprocess.run([go, *args], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ClusterError(f"FerretDB {VERSION}: {what} failed: {' / '.join(last) or 'no output'}",
                           hint="the Go module proxy must be reachable (GOPROXY), "
                                "and Go 1.21 or later installed")
    return done.stdout


def fetch(cache: Path | None = None, progress: OnProgress = True) -> Path:
    """The FerretDB binary, built once from the pinned module source (see the module docstring)."""
    found = cached(cache)
    if found is not None:
        report(progress, "fetch", f"ferretdb {VERSION}: binary already built and verified")
        return found
    go = find_go()
    if go is None:
        raise ClusterError(f"FerretDB {VERSION} is built from its Go source here, and no Go toolchain "
                           "was found (`go` on PATH or /usr/local/go/bin)", hint=NO_GO_HINT)
    target = binary_dir(cache)
    target.mkdir(parents=True, exist_ok=True)
    with (target / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building it right now
        found = cached(cache)
        if found is not None:
            return found
        return _build(go, target, progress)


def _say(progress: OnProgress, message: str) -> None:
    if progress is True:
        from rich.console import Console

        Console(stderr=True).print(message, highlight=False)
    report(progress, "fetch", message)


def _build(go: str, target: Path, progress: OnProgress) -> Path:
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-buildvcs=false", "GOTOOLCHAIN": "auto"}
    started = time.monotonic()
    _say(progress, f"ferretdb {VERSION}: downloading the module source through the Go module proxy")
    info = json.loads(_go(go, ["mod", "download", "-json", f"{MODULE}@v{VERSION}"], target, env,
                          "go mod download"))
    if info.get("Sum") != PINNED_SUM:
        raise ClusterError(f"FerretDB {VERSION}: the module's checksum {info.get('Sum')!r} is not the pinned "
                           f"{PINNED_SUM}", hint="the module proxy served other bytes; nothing was built")
    scratch = Path(tempfile.mkdtemp(prefix="ferretdb-build-", dir=target))
    try:
        source = scratch / "src"
        shutil.copytree(info["Dir"], source)
        for folder, dirs, files in os.walk(source):  # the module cache is read-only
            for entry in dirs + files:
                os.chmod(os.path.join(folder, entry), 0o755 if entry in dirs else 0o644)
            os.chmod(folder, 0o755)
        (source / "build" / "version" / "version.txt").write_text(f"v{VERSION}\n")
        _say(progress, f"ferretdb {VERSION}: building with {go} (about 3 minutes on 2 cores; once)")
        built = scratch / "ferretdb"
        _go(go, ["build", "-trimpath", "-o", str(built), "./cmd/ferretdb"], source, env, "go build")
        if version_of(built) != VERSION:
            raise ClusterError(f"FerretDB {VERSION}: the binary built does not report version {VERSION}",
                               hint="the module source or the Go toolchain is not what was pinned")
        final = target / "ferretdb"
        os.replace(built, final)
        final.with_suffix(".sha256").write_text(f"{_sha256(final)}  ferretdb\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _say(progress, f"ferretdb {VERSION}: built and verified in {time.monotonic() - started:.0f} s: {final}")
    return final
