"""`workbench images ...`: the Docker provider's server images, built here with no registry.

    workbench images build              # base (Debian + Java 17), cassandra, hbase; cached
    workbench images build --kind hbase
    workbench images list
"""

from __future__ import annotations

import argparse
import sys
import time

from workbench.clusters import images


def register(subparsers) -> None:
    top = subparsers.add_parser(
        "images", help="build and list the Docker provider's server images (no registry needed)",
        description="Build the images `cluster up --provider docker` runs: Debian with Java 17 (from a "
        "local debian:bookworm image, or debootstrap), and the locked Cassandra and HBase jars. "
        "The engine is found through DOCKER_HOST or the default socket.")
    sub = top.add_subparsers(dest="images_command", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="build what is missing or out of date (a no-op otherwise)")
    build.add_argument("--kind", choices=images.KINDS, action="append",
                       help="only this server's image (repeatable; default: both)")
    build.set_defaults(func=cmd_build)
    listing = sub.add_parser("list", help="the workbench's images in the engine")
    listing.set_defaults(func=cmd_list)


def _say(event) -> None:
    print(event.message, file=sys.stderr, flush=True)


def cmd_build(args: argparse.Namespace) -> int:
    started = time.monotonic()
    kinds = tuple(args.kind) if args.kind else images.KINDS
    result = images.build(kinds, progress=_say)
    for kind, outcome in result.items():
        print(f"{images.image_name(kind)}: {outcome}")
    print(f"done in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    rows = images.listing()
    if not rows:
        print("no workbench images: `workbench images build` makes them")
    for tag, inputs, size in rows:
        print(f"{tag:<36} {size / 2**20:8.0f} MiB  inputs {inputs}")
    return 0
