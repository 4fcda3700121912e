"""`workbench servers ...`: the server distributions and the Java runtimes that run them.

    workbench servers fetch            # download + verify Cassandra and HBase jars into the cache
    workbench servers fetch hbase
    workbench servers fetch cassandra --version 4.1   # another pinned release (4.1.10)
    workbench servers fetch ferretdb   # build FerretDB from its pinned Go module source (needs Go)
    workbench servers jdks             # which JDKs were found and which one would be used
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.clusters import distributions, java
from workbench.databases import resolve, server, servers
from workbench.errors import ClusterError


def register(subparsers) -> None:
    top = subparsers.add_parser(
        "servers",
        help="fetch the pinned Cassandra / HBase jars, build FerretDB; list Java runtimes",
        description="Server distributions are pinned jar lists (with sha256) fetched from Maven "
        "Central into the cache; FerretDB is built from its pinned Go module source (checksummed) "
        "with the Go toolchain; once cached no network is needed.",
    )
    sub = top.add_subparsers(dest="servers_command", metavar="ACTION", required=True)
    fetch = sub.add_parser("fetch", help="download and verify the jars (resumes, skips cached)")
    fetch.add_argument("names", nargs="*", metavar="NAME",
                       help=f"{' | '.join(SERVERS)} (default: the jars; ferretdb needs Go)")
    fetch.add_argument("--cache-dir", type=Path, metavar="DIR",
                       help="jar cache (default: $WORKBENCH_CACHE_DIR or $XDG_CACHE_HOME/workbench)")
    releases = "; ".join(f"{name} {distributions.choices(name)}" for name in distributions.SERIES)
    fetch.add_argument("--version", default="", metavar="V",
                       help=f"the pinned release of the one server named: {releases}")
    fetch.add_argument("--quiet", action="store_true", help="no progress bar")
    fetch.set_defaults(func=cmd_fetch)
    jdks = sub.add_parser("jdks", help="list the Java runtimes found and the one servers use")
    jdks.set_defaults(func=cmd_jdks)


# the jar distributions, then the servers built another way (their kind module's fetch: FerretDB)
SERVERS = (*distributions.VERSIONS, *(s.kind for s in servers() if s.kind not in distributions.VERSIONS
                                      and hasattr(resolve(s.local), "fetch_report")))


def cmd_fetch(args: argparse.Namespace) -> int:
    names = args.names or list(distributions.VERSIONS)
    for name in names:
        if name not in SERVERS:
            raise ClusterError(f"unknown server {name!r}", hint=f"use {', '.join(SERVERS)}")
    if args.version:
        if len(names) != 1 or names[0] not in distributions.VERSIONS:
            raise ClusterError(f"--version {args.version} names a release of one server",
                               hint=f"name it alone: {' or '.join(distributions.VERSIONS)}, e.g. "
                                    f"`workbench servers fetch cassandra --version {args.version}`")
        # an unknown release: one line naming those there are
        series = " or ".join(distributions.SERIES[names[0]])
        distributions.resolve(names[0], args.version, hint=f"use --version {series}")
    for name in names:
        if name not in distributions.VERSIONS:  # built its own way (its kind module says how)
            print(resolve(server(name).local).fetch_report(args.cache_dir, not args.quiet))
            continue
        target = distributions.fetch(name, args.cache_dir, progress=not args.quiet, version=args.version)
        count = len(distributions.read_lock(name, args.version))
        print(f"{name} {distributions.resolve(name, args.version)}: {count} jars verified in {target}")
    return 0


def cmd_jdks(args: argparse.Namespace) -> int:
    found = java.discover()
    for jdk in found:
        ok = "supported" if jdk.major in java.SUPPORTED else "not supported"
        print(f"{jdk.version:<12} {ok:<14} {jdk.home}")
    chosen = java.choose(found)  # raises ClusterError (exit 2) if none fits
    print(f"servers run with: {chosen.describe()}", file=sys.stderr)
    return 0
