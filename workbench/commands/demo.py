"""`workbench demo`: the quick start, end to end on real servers.

Fetches Cassandra and HBase (pinned jars from Maven Central, once), starts one local Cassandra
node and a local HBase, loads both, runs YCSB workloads A and C on each (20 seconds a run, long
enough to watch the live charts; the whole demo takes a few minutes), prints a side-by-side
table, writes YCSB-text and CSV exports of every run into a folder it names, and takes the
servers down again. Ctrl-C at any point stops the run and still takes every server down.
`--db memory` runs the same on the in-process memory binding (no servers, no Java).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from workbench import interrupts
from workbench.commands.bench import add_store_arguments, exit_status, store_choice
from workbench.config.spec import spec_from_args
from workbench.databases import database
from workbench.drive.demo import RUNS, WORKLOADS, DemoServer, demo_databases, demo_overrides, write_exports
from workbench.drive.phase import PhaseRun, execute_phase
from workbench.errors import ConfigError
from workbench.results.model import RunResult


def register(subparsers) -> None:
    p = subparsers.add_parser("demo", help="Cassandra vs HBase on workloads A and C, end to end",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", action="append", choices=demo_databases(),
                   help="databases to compare (default: cassandra and hbase)")
    p.add_argument("--records", type=int, default=100_000, help="records to load (default 100000)")
    p.add_argument("--seconds", type=int, default=20, help="how long each run of A and C lasts (default 20)")
    p.add_argument("--operations", type=int, help="operations per run instead of --seconds")
    p.add_argument("--threads", type=int, default=16, help="lanes (default 16)")
    p.add_argument("--out", help="folder for the exports (default results/demo-<time>)")
    add_store_arguments(p)
    p.add_argument("--no-tui", action="store_true", help=(
        "print to the terminal instead of opening the app (the default when stdout is not a terminal)"))
    p.set_defaults(func=demo_command)


def demo_command(args: argparse.Namespace) -> int:
    databases = args.db or [db for db in demo_databases() if not database(db).in_process]
    bound = _run_bound(args)  # bad input is refused before any server starts
    out = Path(args.out or f"results/demo-{time.strftime('%Y%m%d-%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    if not args.no_tui and sys.stdout.isatty() and sys.stdin.isatty():
        from workbench.ui.launch import open_demo

        session = open_demo(databases, args.records, bound, args.threads, out, store=store_choice(args))
        return _after_the_app(session, out)
    interrupts.install()  # a Ctrl-C swallowed by a driver's clean-up still stops the demo
    console = Console(stderr=True)
    results: dict[str, dict[str, RunResult]] = {}
    recorded: dict[str, list[int]] = {}  # demo step -> run IDs in the store, one per database
    status = 0
    for db in databases:
        console.rule(f"[bold]{db}")
        with DemoServer(db, console.print) as server:
            results[db] = {}
            for phase, workload in RUNS:
                interrupts.check()
                console.print(f"[cyan]{phase} {workload} on {db}[/] ({args.threads} lanes)")
                done = _one(db, phase, workload, server, args)
                result = done.result
                if done.run_id is not None:
                    recorded.setdefault(f"{phase} {workload}", []).append(done.run_id)
                if done.store_error:
                    console.print(f"workbench: error: {done.store_error}", style="red")
                    status = 2
                results[db][f"{phase} {workload}"] = result
                write_exports(result, out, db, workload, phase)
                status = max(status, exit_status(result))
                if result.outcome != "completed":
                    break
    Console().print(comparison(results))
    console.print(f"exports written to [bold]{out}/[/]")
    for step, ids in recorded.items():
        if len(ids) > 1:
            console.print(f"{step} side by side: [bold]workbench runs compare {' '.join(map(str, ids))}[/]")
    return status


def _after_the_app(session, out: Path) -> int:
    """What the demo made in the app, printed once the user has quit it."""
    results: dict = {}
    for done in session.finished:  # titles are "<db> <workload> <phase>" (see demo_task)
        db, workload, phase = done.title.split()
        results.setdefault(db, {})[f"{phase} {workload}"] = done.result
    if results:
        Console().print(comparison(results))
        print(f"workbench: exports written to {out}/", file=sys.stderr)
        ids = [str(done.run_id) for done in session.finished if done.run_id is not None]
        if ids:
            print(f"workbench: recorded as runs {', '.join(ids)} (workbench runs compare ID ID ...)",
                  file=sys.stderr)
    if session.error:
        print(f"workbench: error: {session.error}", file=sys.stderr)
        return 2
    return 0


def _run_bound(args: argparse.Namespace) -> list[str]:
    """How a run ends: after --operations operations if given, else after --seconds seconds."""
    if args.operations is not None:
        if args.operations < 1:
            raise ConfigError(f"--operations {args.operations}: a run needs at least one operation")
        return [f"operationcount={args.operations}"]
    if args.seconds < 1:
        raise ConfigError(f"--seconds {args.seconds}: a run needs at least one second")
    return ["operationcount=0", f"maxexecutiontime={args.seconds}"]


def _one(db: str, phase: str, workload: str, server: DemoServer, args) -> PhaseRun:
    common = demo_overrides(db, phase, server.overrides, args.records, _run_bound(args), args.threads)
    files = [str(WORKLOADS / workload)]
    spec, props = spec_from_args(files, common, phase)
    return execute_phase(spec, props.as_dict(), phase, store=store_choice(args), source="demo",
                         workload=workload, cluster=server.cluster, files=files)


def comparison(results: dict[str, dict[str, RunResult]]) -> Table:
    """Throughput and read/update p50/p95/p99 per database, side by side."""
    table = Table(title="workbench demo: YCSB workloads on each database")
    table.add_column("run")
    table.add_column("figure")
    for db in results:
        table.add_column(db, justify="right")
    runs = [f"{phase} {workload}" for phase, workload in RUNS]
    for run in runs:
        rows = [("throughput (ops/s)", lambda r: f"{r.throughput:,.0f}")]
        for op in ("INSERT", "READ", "UPDATE"):
            for p in (50.0, 95.0, 99.0):
                rows.append((f"{op} p{p:g} (us)", _pct(op, p)))
        for label, fn in rows:
            cells = [fn(results[db][run]) if run in results[db] else "-" for db in results]
            if any(c not in ("-", "") for c in cells):
                table.add_row(run, label, *cells)
        table.add_section()
    return table


def _pct(op: str, p: float):
    def cell(result: RunResult) -> str:
        m = result.measurement(op)
        return f"{m.percentiles.get(p, 0):,}" if m and m.operations else ""

    return cell
