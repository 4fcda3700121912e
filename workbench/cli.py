"""The `workbench` command: argparse entry points shared by every sub-command.

User errors (WorkbenchError) become one line on stderr and exit status 2; bugs still raise.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from workbench import __version__
from workbench.errors import WorkbenchError

# Modules under workbench.commands that contribute sub-commands, in --help order.
COMMAND_MODULES = (
    "workbench.commands.bench",  # load, run
    "workbench.commands.keys",
    "workbench.commands.demo",
    "workbench.commands.runs",
    "workbench.commands.experiment",
    "workbench.commands.lesson",
    "workbench.commands.cluster", "workbench.commands.images", "workbench.commands.servers",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Benchmark Cassandra and HBase the way YCSB does, interactively.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None and argv is None and sys.stdin.isatty() and sys.stdout.isatty():
        func = _open_app  # `workbench` alone, in a terminal: the interactive app
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except WorkbenchError as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        # Commands clean up after themselves on the way out (servers down, results written).
        print("workbench: interrupted", file=sys.stderr)
        return 130


def _open_app(_args: argparse.Namespace) -> int:
    from workbench.ui.launch import open_app

    return open_app()


if __name__ == "__main__":
    raise SystemExit(main())
