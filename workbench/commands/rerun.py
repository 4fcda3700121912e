"""`workbench runs rerun ID`: a stored run, run again with its phase, workload files and properties.

The new run is recorded in the same store like any run, its manifest naming the run it re-ran.
A workload file changed since the run (its sha256 differs) or gone is not used: the run's recorded
properties are, and one warning line says so. The store keeps no passwords: a run that had one
takes it from its cluster (found again by name), or from `-p KEY=VALUE`, which sets nothing else.
Output and exit status as `workbench run`'s: YCSB's text on stdout, 1 when operations failed, 2
when the run cannot be run again.
"""

from __future__ import annotations

import argparse
import sys

from workbench.commands.bench import add_store_arguments, exit_status
from workbench.drive.rerun import prepare, run_again
from workbench.results.manifest import equivalent_command
from workbench.results.masking import mask
from workbench.results.store import RunStore
from workbench.results.ycsb_text import write_ycsb_text


def add_parser(sub) -> None:
    """`rerun` among the `runs` actions (commands/runs.py)."""
    p = sub.add_parser("rerun", help="run a stored run again with its phase, workload files and properties",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store_arguments(p, recording=False)
    p.add_argument("id", type=int, help="the run's ID (see runs list)")
    p.add_argument("-p", dest="props", action="append", default=[], metavar="KEY=VALUE",
                   help="a secret the store does not keep (a password), if the run had one")
    p.add_argument("-q", "--quiet", action="store_true", help="no status lines on stderr")
    p.set_defaults(func=rerun_command)


def rerun_command(args: argparse.Namespace) -> int:
    with RunStore(args.store, create=False, write=False) as store:
        row = store.row(args.id)
        result = store.result(args.id)
    rerun, cluster = prepare(args.id, result, args.props)
    for warning in rerun.warnings:
        print(f"workbench: warning: {warning}", file=sys.stderr)
    if not args.quiet:
        overrides = [f"{k}={mask(k, v)}" for k, _, v in (o.partition("=") for o in rerun.overrides)]
        shown = {"phase": rerun.phase,
                 "workload": {"files": [{"path": f} for f in rerun.files], "overrides": overrides}}
        print(f"workbench: re-running run {args.id}: {equivalent_command(shown)}", file=sys.stderr)
    done = run_again(rerun, cluster, store=args.store, status=not args.quiet, workload=row.workload)
    write_ycsb_text(done.result, sys.stdout)
    sys.stdout.flush()
    if done.run_id is not None:
        print(f"workbench: run {done.run_id} re-ran run {args.id}", file=sys.stderr)
    if done.store_error:
        print(f"workbench: error: {done.store_error} (the results are on stdout)", file=sys.stderr)
        return 2
    return exit_status(done.result)
