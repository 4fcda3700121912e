"""Distribution fetcher: the pinned server jars, downloaded from Maven Central and cached.

A lockfile (locks/<name>-<version>.lock, written by scripts/gen_locks.py) lists every jar as
`group:artifact:version[:classifier] size sha256`. `fetch("cassandra")` makes sure each of them is
in <cache>/distributions/<name>-<version>/ with the right checksum and returns that directory (use
it as the `lib/*` classpath). Each name has a default version (VERSIONS) and may have others
(SERIES: a preset's `version = "4.1"`); every function takes `version` ("" = the default).
Downloads go to `*.part`, resume with an HTTP Range request after an interruption, are checked
against the lockfile and renamed into place atomically; a jar in the cache that is truncated or
corrupted fails the check and is fetched again. Once every jar is cached no network is needed.
"""

from __future__ import annotations

import hashlib
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from workbench.clusters import paths
from workbench.clusters.progress import OnProgress
from workbench.errors import ClusterError

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
LOCK_DIR = Path(__file__).parent / "locks"
# Name -> the default pinned version; one lockfile each.
VERSIONS = {"cassandra": "5.0.9", "hbase": "2.6.1"}
# Name -> release series a preset can choose (`version = "4.1"`) -> its pinned version, the
# default first. Cassandra 4.1 officially supports Java 8 and 11; here it runs on Java 17 with
# the flags in templates/cassandra-4.1-jvm.options. HBase 2.5.8 is the only other 2.5/2.6 release
# whose hbase-thrift is on Maven Central.
SERIES = {
    "cassandra": {"5.0": "5.0.9", "4.1": "4.1.10"},
    "hbase": {"2.6": "2.6.1", "2.5": "2.5.8"},
}
CHUNK = 1 << 16
# Set to make running downloads return early (Ctrl-C, or another jar failed).
_stop = threading.Event()


@dataclass(frozen=True)
class Artifact:
    """One jar of a distribution, as pinned in its lockfile."""

    group: str
    artifact: str
    version: str
    classifier: str
    size: int
    sha256: str

    @property
    def filename(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"

    @property
    def url(self) -> str:
        group = self.group.replace(".", "/")
        return f"{MAVEN_CENTRAL}/{group}/{self.artifact}/{self.version}/{self.filename}"


def choices(name: str) -> str:
    """The releases of `name` there are, for messages: '"5.0" (5.0.9, the default) and "4.1"
    (4.1.10)'."""
    default = VERSIONS[name]
    items = [f'"{series}" ({full}{", the default" if full == default else ""})'
             for series, full in SERIES[name].items()]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def resolve(name: str, version: str = "", hint: str = "") -> str:
    """The pinned release for `version`: "" (the default), a series ("4.1") or a pinned release
    ("4.1.10"). Anything else is a ClusterError naming the releases there are (and `hint`, the
    fix in the caller's terms)."""
    if name not in VERSIONS:
        raise ClusterError(
            f"unknown distribution {name!r}", hint=f"use one of {', '.join(VERSIONS)}"
        )
    if not version:
        return VERSIONS[name]
    series = SERIES[name]
    if version in series:
        return series[version]
    if version in series.values():
        return version
    raise ClusterError(
        f"no {name} {version} is pinned here, only {choices(name)}",
        hint=hint or f"use {' or '.join(series)}, or nothing for {VERSIONS[name]}",
    )


def read_lock(name: str, version: str = "") -> list[Artifact]:
    """The artifacts pinned for distribution `name` ("cassandra" or "hbase") at `version`."""
    path = LOCK_DIR / f"{name}-{resolve(name, version)}.lock"
    artifacts = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            coords, size, sha = line.split()
            group, artifact, version, *rest = coords.split(":")
            artifacts.append(
                Artifact(group, artifact, version, rest[0] if rest else "", int(size), sha)
            )
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: malformed lock line {line!r}") from exc
    return artifacts


def dist_dir(name: str, cache: Path | None = None, version: str = "") -> Path:
    return (cache or paths.cache_dir()) / "distributions" / f"{name}-{resolve(name, version)}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _is_good(path: Path, art: Artifact) -> bool:
    try:
        return path.stat().st_size == art.size and _sha256(path) == art.sha256
    except FileNotFoundError:
        return False


def missing(name: str, cache: Path | None = None, version: str = "") -> list[Artifact]:
    """Artifacts not (correctly) in the cache; bad copies are removed so they are fetched again."""
    target = dist_dir(name, cache, version)
    arts = read_lock(name, version)
    # hashlib releases the GIL on large buffers, so a few threads cut the check time.
    with ThreadPoolExecutor(max_workers=4) as pool:
        good = list(pool.map(lambda a: _is_good(target / a.filename, a), arts))
    bad = [a for a, ok in zip(arts, good, strict=True) if not ok]
    for art in bad:
        (target / art.filename).unlink(missing_ok=True)
    return bad


def _download(art: Artifact, target: Path, advance: Callable[[int], None]) -> None:
    """Fetch one jar into target/<file>.part, resuming, then verify and rename it into place."""
    final, part = target / art.filename, target / (art.filename + ".part")
    for attempt in range(3):
        have = part.stat().st_size if part.exists() else 0
        if have > art.size:
            part.unlink()
            have = 0
        request = urllib.request.Request(art.url, headers={"User-Agent": "workbench"})
        if have:
            request.add_header("Range", f"bytes={have}-")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                # 206: the server honoured the Range; 200: it sent the whole file again.
                mode = "ab" if have and response.status == 206 else "wb"
                if mode == "wb" and have:
                    advance(-have)  # those bytes were counted as done before
                with part.open(mode) as out:
                    while chunk := response.read(CHUNK):
                        if _stop.is_set():
                            return
                        out.write(chunk)
                        advance(len(chunk))
        except urllib.error.HTTPError as exc:
            if exc.code == 416:  # Range not satisfiable: the .part is complete or wrong
                pass
            else:
                raise ClusterError(
                    f"cannot download {art.url}: HTTP {exc.code}",
                    hint="check network access to Maven Central",
                ) from exc
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            if attempt == 2:
                raise ClusterError(
                    f"cannot download {art.url}: {getattr(exc, 'reason', exc)}",
                    hint="check network access to Maven Central; run again to resume",
                ) from exc
            continue
        if _is_good(part, art):
            os.replace(part, final)
            return
        # Corrupt or wrong bytes: start this jar again from scratch.
        advance(-part.stat().st_size)
        part.unlink()
    raise ClusterError(
        f"{art.filename} from Maven Central does not match its pinned sha256 after 3 attempts",
        hint="the lockfile or the download is wrong; regenerate with scripts/gen_locks.py",
    )


def fetch(name: str, cache: Path | None = None, progress: OnProgress = True,
          version: str = "") -> Path:
    """Make sure distribution `name` (at `version`, "" = the default) is complete in the cache;
    return its jar directory. `progress`: a rich bar (True), nothing (False) or a callable taking
    ProgressEvents."""
    from workbench.clusters.progress import download_bar, report

    pinned = resolve(name, version)
    target = dist_dir(name, cache, pinned)
    target.mkdir(parents=True, exist_ok=True)
    todo = missing(name, cache, pinned)
    if not todo:
        report(progress, "fetch", f"{name} {pinned}: jars already cached and verified")
        return target
    total = sum(a.size for a in todo)
    with download_bar(f"{name} {pinned}", total, len(todo), enabled=progress) as advance:
        # Resumed bytes already on disk count as done.
        for art in todo:
            part = target / (art.filename + ".part")
            if part.exists():
                advance(min(part.stat().st_size, art.size))
        pool = ThreadPoolExecutor(max_workers=6)
        try:
            for future in [pool.submit(_download, a, target, advance) for a in todo]:
                future.result()
        except BaseException:
            # Ctrl-C or a failed jar: stop the other downloads now; their .part files stay
            # for the next attempt to resume.
            _stop.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            _stop.clear()
    report(progress, "fetch", f"{name} {pinned}: {len(todo)} jars fetched and verified",
           total, total)
    return target
