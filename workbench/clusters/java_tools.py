"""Short-lived Java tools run against a cluster, made cheaper to start.

The workbench runs Java for a second or two at a time: `nodetool` (settle, `cluster flush`),
HBase's RegionMover, and its own small programs shipped as source files (databases/hbase/tools/,
the pre-split table). Two things make those calls cost half:

- FLAGS: C1 only (`-XX:TieredStopAtLevel=1`). A tool that ends within seconds never gains from
  C2, whose compiler threads would burn CPU meanwhile: one `nodetool compactionstats` took 1.8
  CPU-seconds as the server's flags have it and 0.95 with C1 only (2026-11-29, Java 17).
- compiled(): a tool shipped as a source file is compiled once with the JDK's javac into the
  workbench's cache, keyed by the source, the jars it is compiled against and the Java, and run
  from its classes after that. Java's source-file mode compiled it in memory at every call: an
  HBase `cluster flush` took 4.1 CPU-seconds so, 1.9 from classes with C1 only.

Where no javac sits beside the java (a JRE), or it fails, compiled() returns None and the caller
runs the source file as before, whose error then names what is missing.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from workbench.clusters import paths

FLAGS = ("-XX:TieredStopAtLevel=1",)
COMPILE_TIMEOUT_S = 300.0


def compiled(java: str | Path, source: Path, libs: str, cache: Path | None = None) -> Path | None:
    """The folder holding `source`'s classes compiled against `libs` (a class path of jars),
    compiled now if no earlier call did; None where it cannot be (the caller runs the source)."""
    javac = Path(java).with_name("javac")
    if not javac.is_file():
        return None
    key = hashlib.sha256(b"\0".join([source.read_bytes(), libs.encode(),
                                     str(Path(java).resolve()).encode()])).hexdigest()[:16]
    root = (cache or paths.cache_dir()) / "java-tools"
    target = root / f"{source.stem}-{key}"
    if (target / f"{source.stem}.class").is_file():
        return target
    try:
        root.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{source.stem}-", dir=root))
    except OSError:
        return None  # a cache it may not write: the source file, as before
    try:
        # -proc:none: no annotation processors looked for in the hundreds of jars
        argv = [str(javac), *(f"-J{flag}" for flag in FLAGS), "-nowarn", "-proc:none",
                "-cp", libs, "-d", str(building), str(source)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0 or not (building / f"{source.stem}.class").is_file():
            return None
        try:
            building.rename(target)  # whole, or not at all
        except OSError:
            pass  # another process compiled it meanwhile: theirs is the same
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return target if (target / f"{source.stem}.class").is_file() else None


def program(java: str | Path, source: Path, libs: str, classpath: str | None = None) -> list[str]:
    """The java arguments that run the tool `source` on `classpath` (default: `libs`): its
    classes from the cache (compiled()), or the source file where they cannot be had."""
    cp = classpath or libs
    classes = compiled(java, source, libs)
    return ["-cp", cp, str(source)] if classes is None else ["-cp", f"{classes}:{cp}", source.stem]
