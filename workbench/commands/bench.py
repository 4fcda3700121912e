"""`workbench load` and `workbench run`: YCSB's client, headless.

YCSB's flags are accepted as YCSB spells them (-P, -p, -threads, -target, -s, -db, -l).
Results go to stdout in YCSB's text format, status lines to stderr every status.interval,
files wherever --export says. Ctrl-C stops the run cleanly: what was measured so far is still
printed and exported (exit status 130). A run whose operations failed exits with 1, a run
that could not go on (bad input, a database that went away) with 2, after reporting.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config.bindings import BINDINGS
from workbench.config.spec import spec_from_args
from workbench.drive.phase import StoreChoice, execute_phase
from workbench.errors import WorkbenchError
from workbench.results import client_limits
from workbench.results.exporters import DESCRIPTIONS, check_target, export
from workbench.results.model import RunResult
from workbench.results.paced import run_pacing
from workbench.results.store import ENV
from workbench.results.ycsb_text import write_ycsb_text

if TYPE_CHECKING:
    from workbench.clusters.base import Cluster
    from workbench.drive.metrics_endpoint import MetricsEndpoint

EXIT_OK, EXIT_OP_ERRORS, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 130


def add_ycsb_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-P", dest="files", action="append", default=[], metavar="FILE",
                   help="workload file (YCSB .properties); repeatable, later files override")
    p.add_argument("-p", dest="props", action="append", default=[], metavar="KEY=VALUE",
                   help="set a property; overrides every -P file")
    p.add_argument("-threads", type=int, metavar="N", help="lanes (YCSB threads): requests in flight")
    p.add_argument("-target", type=float, metavar="OPS", help="target operations/s over all lanes")
    p.add_argument("-db", metavar="NAME", help=f"database binding: {', '.join(BINDINGS)} (default memory)")
    p.add_argument("-l", dest="label", metavar="LABEL", help="label prefixed to status lines")
    p.add_argument("-s", action="store_true", help="accepted for YCSB compatibility (status is always on)")
    p.add_argument("--workers", type=int, metavar="K", help="worker processes that share the lanes")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run the workers as Ray actors on a Ray cluster: auto, HOST:PORT of its head, "
                        "or ray://HOST:10001 (pip install 'ycsb-workbench[ray]'); -p ray.cpus, "
                        "ray.resources, ray.strategy=spread|pack, ray.onlost=continue|stop")
    p.add_argument("--cluster", metavar="NAME",
                   help="a cluster started by `workbench cluster up`: sets -db and its hosts and ports")


def overrides_from(args: argparse.Namespace) -> list[str]:
    """--cluster first, then -p values, then the dedicated flags, which win (more specific)."""
    out: list[str] = []
    if getattr(args, "cluster", None):
        from workbench.drive.targets import cluster_overrides

        out += cluster_overrides(args.cluster)
    out += args.props
    for flag, key in (("threads", "threadcount"), ("target", "target"), ("db", "db"),
                      ("label", "label"), ("workers", "workers"), ("ray", "ray.address")):
        value = getattr(args, flag, None)
        if value is not None:
            out.append(f"{key}={value}")
    return out


def register(subparsers) -> None:
    for phase, help_text in (("load", "insert the records (YCSB -load)"),
                             ("run", "run the transactions (YCSB -t)")):
        p = subparsers.add_parser(phase, help=help_text, description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        add_ycsb_arguments(p)
        kinds = "; ".join(f"{k}: {v}" for k, v in DESCRIPTIONS.items())
        p.add_argument("--export", action="append", default=[], metavar="KIND=FILE",
                       help=f"write the results to FILE; repeatable. Kinds: {kinds}")
        p.add_argument("--ycsb-layout", choices=("0.17", "master"), default="0.17",
                       help="YCSB text layout: 0.17.0 (95th, 99th) or master (adds the 50th)")
        p.add_argument("-q", "--quiet", action="store_true",
                       help="no status lines (nor the recorded run's ID) on stderr")
        add_store_arguments(p)
        p.add_argument("--tui", action="store_true",
                       help="watch the run in the app's Run screen; the results print when you quit it")
        p.add_argument("--metrics", metavar="[HOST:]PORT",
                       help="serve the running phase to Prometheus at http://HOST:PORT/metrics (HOST "
                            "127.0.0.1 when left out; names and labels: docs/PROMETHEUS.md)")
        p.set_defaults(func=lambda args, phase=phase: run_phase_command(args, phase))


def workload_name(files: list[str]) -> str:
    """What the run store calls the workload: the -P files' names (workloada), '' for -p only."""
    return ",".join(Path(f).name for f in files)


def store_choice(args: argparse.Namespace) -> StoreChoice:
    """False with --no-store, else the --store path (None: the default store)."""
    return False if getattr(args, "no_store", False) else getattr(args, "store", None)


def add_store_arguments(p: argparse.ArgumentParser, recording: bool = True) -> None:
    p.add_argument("--store", metavar="FILE", help="the run store (SQLite) to use; default "
                   f"${ENV} or $XDG_DATA_HOME/workbench/runs.db")
    if recording:
        p.add_argument("--no-store", action="store_true", help="do not record the run in the run store")


def run_phase_command(args: argparse.Namespace, phase: str) -> int:
    for item in args.export:  # reject a bad --export before spending time on the run
        check_target(item)
    spec, props = spec_from_args(args.files, overrides_from(args), phase)
    if args.metrics and args.tui:
        raise WorkbenchError("--metrics does not go with --tui", "leave out one of them")
    store_error = None
    if args.tui:
        result = _watch_in_app(args, phase)
        if result is None:
            print("workbench: the app was closed before the run started; nothing to report",
                  file=sys.stderr)
            return EXIT_INTERRUPTED
    else:
        cluster = cluster_of(args.cluster) if args.cluster else None
        metrics = open_metrics(args.metrics, args.quiet) if args.metrics else None
        try:
            done = execute_phase(spec, props.as_dict(), phase, layout=args.ycsb_layout,
                                 status=not args.quiet, store=store_choice(args), source=phase,
                                 workload=workload_name(args.files), cluster=cluster, files=args.files,
                                 metrics=metrics)
        finally:
            if metrics is not None:
                metrics.close()
        result, store_error = done.result, done.store_error
    write_ycsb_text(result, sys.stdout, layout=args.ycsb_layout)
    sys.stdout.flush()
    paced = run_pacing(result)  # a paced run: what its throughput is (results/paced.py)
    if paced is not None:
        print(f"workbench: paced: {paced.line()}", file=sys.stderr)
    limits = client_limits.of_run(result, cores=len(os.sched_getaffinity(0)))
    if limits.line:  # the client was the bottleneck (issue 54, 8): its figures measure this machine
        print(f"workbench: {limits.line}", file=sys.stderr)
    failed = False
    for item in args.export:  # one that fails still leaves the others (and stdout) written
        try:
            path = export(result, item, layout=args.ycsb_layout)
        except OSError as exc:
            print(f"workbench: error: --export {item}: {exc.strerror or exc} (the results are on "
                  "stdout and in the other exports)", file=sys.stderr)
            failed = True
            continue
        print(f"workbench: wrote {path}", file=sys.stderr)
    if store_error:
        print(f"workbench: error: {store_error} (the results are on stdout and in the exports)",
              file=sys.stderr)
        failed = True
    status = exit_status(result)
    return EXIT_FAILED if failed and status == EXIT_OK else status


def open_metrics(address: str, quiet: bool) -> MetricsEndpoint:
    """The --metrics endpoint, listening before the run starts (a port in use: exit status 2)."""
    from workbench.drive.metrics_endpoint import MetricsEndpoint  # prometheus_client: --metrics only

    endpoint = MetricsEndpoint.open(address)
    if not quiet:
        print(f"workbench: serving metrics at {endpoint.url}", file=sys.stderr)
    return endpoint


def cluster_of(name: str) -> Cluster:
    from workbench.drive.targets import find_cluster

    return find_cluster(name)


def _watch_in_app(args: argparse.Namespace, phase: str) -> RunResult | None:
    # The app draws on stderr (stdout may go to a file: the YCSB text is written there after).
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise WorkbenchError("--tui needs a terminal", "run it in a terminal, or leave out --tui")
    from workbench.drive.session import RunRequest
    from workbench.ui.launch import open_run

    overrides = overrides_from(args)
    request = RunRequest(tuple(args.files), tuple(overrides), (phase,), cluster=args.cluster)
    return open_run(request, store=store_choice(args))


def exit_status(result: RunResult) -> int:
    """Say on stderr how the run ended (binding notes, errors by kind) and pick the exit status."""
    for note in result.environment.get("notes", []):
        print(f"workbench: note: {note}", file=sys.stderr)
    kinds = result.environment.get("error_kinds")
    if kinds:
        listed = ", ".join(f"{k}={n}" for k, n in sorted(kinds.items()))
        print(f"workbench: failed operations by kind: {listed}", file=sys.stderr)
    if result.outcome == "failed":
        error = result.environment.get("error", "the run failed")
        print(f"workbench: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    if result.outcome == "interrupted":
        print("workbench: interrupted; the results above cover the run until then", file=sys.stderr)
        return EXIT_INTERRUPTED
    errors = result.error_count()
    if errors:
        print(f"workbench: {errors} operations failed (see the Return= lines)", file=sys.stderr)
        return EXIT_OP_ERRORS
    return EXIT_OK


__all__ = ["register", "WorkbenchError"]
