"""`workbench ...` run in the test's own process, for tests of what a command does rather than
of the process it runs in.

An interpreter's start-up, the command line's imports and scipy's (the summaries) cost a second or
more per command on a busy 2-core machine, more than most of the short runs these tests make.
Tests that signal, kill or race real processes, that check what a fresh process prints (the
fuzzed command line, the runs' own command-line tests), or that make rate sweeps (their paced
steps last longer the lower the calibration measured, and in a loaded test process it measured
lower), keep starting `python -m workbench`.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def workbench(store: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m workbench ARGS` with WORKBENCH_STORE=store, through the same entry point
    (`workbench.cli.main`) in this process; its exit status and captured output, as
    subprocess.run(..., capture_output=True, text=True) gives them."""
    from workbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    before = os.environ.get("WORKBENCH_STORE")
    os.environ["WORKBENCH_STORE"] = str(store)
    try:
        with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(args))
            except SystemExit as exc:  # argparse's refusals (2) and --help (0)
                status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        if before is None:
            os.environ.pop("WORKBENCH_STORE", None)
        else:
            os.environ["WORKBENCH_STORE"] = before
    return subprocess.CompletedProcess(["workbench", *args], status, out.getvalue(), err.getvalue())
