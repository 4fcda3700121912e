"""JDK discovery: find installed JDKs and pick one the servers support.

Candidates come from JAVA_HOME, the `java` on PATH and /usr/lib/jvm/*. Cassandra 5.0 and HBase 2.6
run on Java 17 or 11; Java 24+ cannot start them (Cassandra's security manager, Hadoop's
getSubject), so a JDK outside SUPPORTED is refused with a message naming what was found.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import ClusterError

# Preference order: the first supported major version found wins.
SUPPORTED = (17, 11)
JVM_ROOT = Path("/usr/lib/jvm")


@dataclass(frozen=True)
class Jdk:
    """One installed Java runtime."""

    home: Path
    major: int
    version: str

    @property
    def java(self) -> Path:
        return self.home / "bin" / "java"

    def describe(self) -> str:
        return f"{self.version} at {self.home}"


def _version_of(home: Path) -> str | None:
    release = home / "release"
    if release.is_file():
        match = re.search(r'^JAVA_VERSION="([^"]+)"', release.read_text(errors="replace"), re.M)
        if match:
            return match.group(1)
    # No release file (some vendor layouts): ask the binary itself.
    try:
        out = subprocess.run(
            [str(home / "bin" / "java"), "-version"], capture_output=True, text=True, timeout=20
        ).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "([^"]+)"', out)
    return match.group(1) if match else None


def _major(version: str) -> int:
    # "1.8.0_392" is Java 8; "17.0.15" is 17.
    parts = version.split(".")
    return int(parts[1]) if parts[0] == "1" else int(re.match(r"\d+", parts[0]).group(0))


def _candidate_homes() -> list[Path]:
    homes: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        homes.append(Path(os.environ["JAVA_HOME"]))
    on_path = shutil.which("java")
    if on_path:
        # /usr/bin/java -> /etc/alternatives/java -> <home>/bin/java
        homes.append(Path(os.path.realpath(on_path)).parent.parent)
    if JVM_ROOT.is_dir():
        homes.extend(sorted(JVM_ROOT.iterdir()))
    return homes


def discover() -> list[Jdk]:
    """Every distinct JDK found, in discovery order (JAVA_HOME first)."""
    seen: set[Path] = set()
    found: list[Jdk] = []
    for home in _candidate_homes():
        real = Path(os.path.realpath(home))
        if real in seen or not (real / "bin" / "java").is_file():
            continue
        seen.add(real)
        version = _version_of(real)
        if version:
            found.append(Jdk(home=real, major=_major(version), version=version))
    return found


def choose(jdks: list[Jdk] | None = None) -> Jdk:
    """The JDK to run servers with: JAVA_HOME if supported, else the best supported one."""
    jdks = discover() if jdks is None else jdks
    env_home = os.environ.get("JAVA_HOME")
    if env_home:
        chosen = Path(os.path.realpath(env_home))
        for jdk in jdks:
            if jdk.home == chosen and jdk.major in SUPPORTED:
                return jdk
    for major in SUPPORTED:
        for jdk in jdks:
            if jdk.major == major:
                return jdk
    wanted = " or ".join(str(m) for m in SUPPORTED)
    if not jdks:
        raise ClusterError(
            "no Java runtime found (looked at JAVA_HOME, PATH and /usr/lib/jvm)",
            hint=f"install Java {wanted}, e.g. apt-get install openjdk-17-jre-headless",
        )
    names = "; ".join(j.describe() for j in jdks)
    raise ClusterError(
        f"no supported Java runtime: found {names}; Cassandra 5.0 and HBase 2.6 need Java {wanted}",
        hint=f"install Java {wanted} or point JAVA_HOME at one",
    )


# Extra flags for the JVMs of the servers the workbench starts (local processes and Docker
# containers), for example `-XX:+UseZGC` to measure another collector, or `-XX:TieredStopAtLevel=1`
# (C1 only: a node starts and warms up with about half the CPU, then runs slower; the test suite's
# short-lived nodes use it, tests/conftest.py). Read when a node starts; a cluster keeps the flags it
# was started with (a restart or an added node takes the cluster's, not the environment's), and
# every run on it records them (its manifest's cluster.jvm_flags), so that runs on servers started
# with other flags are said not to be comparable.
SERVER_FLAGS_ENV = "WORKBENCH_SERVER_JVM_FLAGS"


def server_flags() -> tuple[str, ...]:
    """The flags WORKBENCH_SERVER_JVM_FLAGS asks for (split as a shell would); () when unset."""
    text = os.environ.get(SERVER_FLAGS_ENV, "")
    try:
        flags = tuple(shlex.split(text))
    except ValueError as exc:
        raise ClusterError(f"{SERVER_FLAGS_ENV}={text!r} cannot be read: {exc}",
                           hint="give JVM flags separated by spaces, e.g. -XX:TieredStopAtLevel=1") from None
    bad = [f for f in flags if not f.startswith("-") or f in ("-cp", "-classpath", "-jar")]
    if bad:
        raise ClusterError(f"{SERVER_FLAGS_ENV} holds {bad[0]!r}, which is not a JVM option",
                           hint="give only options that start with '-' (no class path, no jar), "
                                "e.g. -XX:TieredStopAtLevel=1")
    return flags


def with_flags(argv: tuple[str, ...], flags: tuple[str, ...]) -> tuple[str, ...]:
    """A JVM's command line with `flags` before its class path (after the @argfile and the
    workbench's own flags: a later -XX option wins, so the user's do)."""
    if not flags:
        return argv
    at = argv.index("-cp") if "-cp" in argv else 1
    return (*argv[:at], *flags, *argv[at:])
