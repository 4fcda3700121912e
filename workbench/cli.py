"""The `workbench` command: argparse entry points shared by every sub-command.

User errors (WorkbenchError) become one line on stderr and exit status 2; bugs still raise.
"""

from __future__ import annotations

import argparse
import importlib
import os
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
    "workbench.commands.check",
    "workbench.commands.experiment",
    "workbench.commands.lesson",
    "workbench.commands.cluster", "workbench.commands.images", "workbench.commands.servers",
)


# Each top-level command and the module that registers it (tests/unit/test_cli_hardening.py
# checks this against what the modules register). A command line that names one imports that
# module only: every command starts faster, as every test that starts the CLI does.
COMMANDS = {
    "load": "workbench.commands.bench", "run": "workbench.commands.bench",
    "keys": "workbench.commands.keys", "demo": "workbench.commands.demo",
    "runs": "workbench.commands.runs", "check": "workbench.commands.check",
    "experiment": "workbench.commands.experiment", "report": "workbench.commands.experiment",
    "lesson": "workbench.commands.lesson", "cluster": "workbench.commands.cluster",
    "images": "workbench.commands.images", "servers": "workbench.commands.servers",
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or only of the command argv names (the first word that is
    not an option; anything else, `--help` alone or a misspelt command, gets them all)."""
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Benchmark Cassandra and HBase the way YCSB does, interactively.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = next((a for a in argv or () if not a.startswith("-")), None)
    for name in (COMMANDS[named],) if named in COMMANDS else COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser(sys.argv[1:] if argv is None else argv)
    except WorkbenchError as exc:  # e.g. an installation that registers no database: one line
        print(f"workbench: error: {exc}", file=sys.stderr)
        return exc.exit_status
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
    except BrokenPipeError:
        return _closed_pipe()


def _closed_pipe() -> int:
    """The reader of our output went away (`workbench runs show 3 | head -1`): end quietly with
    the status a command killed by SIGPIPE has in a shell (128 + 13), as `yes | head` does.
    What the command recorded (a run in the store) is kept; stdout goes to /dev/null so that
    the interpreter's last flush does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return 128 + 13


def _open_app(_args: argparse.Namespace) -> int:
    from workbench.ui.launch import open_app

    return open_app()


if __name__ == "__main__":
    raise SystemExit(main())
