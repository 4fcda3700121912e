"""`workbench runs`: the run store's history. list, show, rerun, compare, export, import, delete.

Every `load`, `run` and `demo` (and every run in the app) is recorded unless --no-store is
given; these commands read the store back. A run whose process died (SIGKILL, a closed laptop)
shows as `incomplete` and still has everything up to its last interval.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from workbench.commands.bench import add_store_arguments
from workbench.commands.rerun import add_parser as add_rerun_parser
from workbench.errors import ConfigError, WorkbenchError
from workbench.results import client_limits
from workbench.results.check_verdicts import parse_tolerances
from workbench.results.comparable import not_comparable_lines
from workbench.results.compare import compare, comparison_view, write_comparison_csv
from workbench.results.exporters import DESCRIPTIONS, check_target, export
from workbench.results.importers import import_file
from workbench.results.manifest_text import manifest_lines
from workbench.results.model import RunResult
from workbench.results.paced import DELIVERED_WORD, lag_s, run_pacing
from workbench.results.server_summary import SUMMARY_COLUMNS, NodeSummary, node_summaries, summary_cells
from workbench.results.significance import TOLERANCES
from workbench.results.store import STATUSES, RunRow, RunStore
from workbench.results.ycsb_text import write_ycsb_text


def register(subparsers) -> None:
    runs = subparsers.add_parser("runs", help="the run store: list, show, rerun, compare, export, import, "
                                 "delete",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)

    p = sub.add_parser("list", help="the recorded runs, newest first")
    add_store_arguments(p, recording=False)
    p.add_argument("--db", help="only runs on this database (memory, cassandra, hbase)")
    p.add_argument("--workload", help="only runs whose workload name contains this (e.g. workloada)")
    p.add_argument("--label", help="only runs whose label contains this")
    p.add_argument("--since", metavar="DATE", help="only runs started on or after DATE (2026-11-23 or "
                   "2026-11-23T14:00, local time)")
    p.add_argument("--until", metavar="DATE", help="only runs started before DATE (a bare date: "
                   "until the end of that day)")
    p.add_argument("--status", choices=STATUSES, help="only runs with this status")
    p.add_argument("-n", "--limit", type=int, default=50, metavar="N",
                   help="at most N runs (default 50; 0: all)")
    p.set_defaults(func=list_command)

    p = sub.add_parser("show", help="one run: its manifest, YCSB-style summary, intervals and events")
    add_store_arguments(p, recording=False)
    p.add_argument("id", type=int, help="the run's ID (see runs list)")
    p.add_argument("--ycsb-layout", choices=("0.17", "master"), default="0.17",
                   help="YCSB text layout of the summary")
    p.set_defaults(func=show_command)
    add_rerun_parser(sub)

    p = sub.add_parser("compare", help="runs side by side, with differences against the baseline (the first "
                       "ID) and their 95%% intervals and verdicts")
    add_store_arguments(p, recording=False)
    p.add_argument("ids", type=int, nargs="+", metavar="ID",
                   help="two runs or more; the first is the baseline the others are measured against")
    p.add_argument("--csv", metavar="FILE", help="also write the comparison as CSV rows (the figures, each "
                   "difference with its interval and verdict, which run is the baseline)")
    p.add_argument("--tolerance", nargs="+", action="extend", default=[], metavar="FIGURE=PERCENT",
                   help="how much worse is still the same (as in check): throughput=10 (%% lower), "
                        "mean=10, p99=25 (%% higher)")
    p.set_defaults(func=compare_command)

    p = sub.add_parser("export", help="write a run as any --export kind, as the live run would have")
    add_store_arguments(p, recording=False)
    p.add_argument("id", type=int, help="the run's ID")
    kinds = "; ".join(f"{k}: {v}" for k, v in DESCRIPTIONS.items())
    p.add_argument("--export", action="append", default=[], metavar="KIND=FILE", required=True,
                   help=f"write the run to FILE; repeatable. Kinds: {kinds}")
    p.add_argument("--ycsb-layout", choices=("0.17", "master"), default="0.17")
    p.set_defaults(func=export_command)

    p = sub.add_parser("import", help="add YCSB text output (0.17.0 or master) or workbench JSON files")
    add_store_arguments(p, recording=False)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=import_command)

    p = sub.add_parser("delete", help="remove runs from the store")
    add_store_arguments(p, recording=False)
    p.add_argument("ids", type=int, nargs="+", metavar="ID")
    p.set_defaults(func=delete_command)


def _open(args: argparse.Namespace, write: bool = False) -> RunStore:
    """The store for reading (list, show, compare, export) or for changing it (import, delete)."""
    store = RunStore(args.store, create=write, write=write)
    store.mark_incomplete()
    return store


def _console() -> Console:
    # Piped into a file or another tool: wide enough that no figure is cut.
    return Console(highlight=False, width=None if sys.stdout.isatty() else 200)


def _date(text: str, flag: str, end_of_day: bool = False) -> float:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{flag} {text!r} is not a date",
                          "write it as 2026-11-23 or 2026-11-23T14:00") from None
    if end_of_day and len(text) <= 10:
        when += timedelta(days=1)
    return when.timestamp()


def _figure(value: float | int | None, fmt: str = "{:,.0f}") -> str:
    return "-" if value is None else fmt.format(value)


def list_command(args: argparse.Namespace) -> int:
    since = _date(args.since, "--since") if args.since else None
    until = _date(args.until, "--until", end_of_day=True) if args.until else None
    try:
        store = _open(args)
    except WorkbenchError as exc:
        if "no run store" not in str(exc):
            raise
        print(f"workbench: no runs recorded yet ({exc})", file=sys.stderr)
        return 0
    with store:
        rows = store.list(db=args.db, workload=args.workload, label=args.label, since=since,
                          until=until, status=args.status, limit=args.limit)
        total = store.conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    console = _console()
    if not rows:
        console.print(f"no runs match (the store {store.path} holds {total})")
        return 0
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
    for name, justify in (("ID", "right"), ("started", "left"), ("phase", "left"), ("db", "left"),
                          ("workload", "left"), ("label", "left"), ("status", "left"),
                          ("ops", "right"), ("ops/s", "right"), ("time s", "right")):
        table.add_column(name, justify=justify, no_wrap=name in ("ID", "started", "status"))
    for r in rows:
        table.add_row(str(r.id), r.started, r.phase, r.db or "?", r.workload or _origin(r), r.label,
                      _status(r.status), _figure(r.operations), _figure(r.throughput),
                      _figure(r.runtime_ms / 1000 if r.runtime_ms is not None else None, "{:,.1f}"))
    console.print(table)
    shown = f"{len(rows)} of {total} runs" if len(rows) < total else f"{total} runs"
    console.print(f"{shown} in {store.path}", style="dim")
    return 0


def _origin(r: RunRow) -> str:
    return Path(r.source.removeprefix("import:")).name if r.source.startswith("import:") else ""


def _status(status: str) -> str:
    colour = {"completed": "green", "running": "cyan", "incomplete": "yellow", "failed": "red",
              "interrupted": "yellow", "stopped": "yellow"}.get(status, "")
    return f"[{colour}]{status}[/]" if colour else status


def show_command(args: argparse.Namespace) -> int:
    with _open(args) as store:
        row = store.row(args.id)
        result = store.result(args.id)
    console = _console()
    where = f" from {row.source.removeprefix('import:')}" if row.source.startswith("import:") else \
        f" ({row.source})"
    what = f"{row.phase} {row.workload or '-'} on {result.database}" if result.database else \
        f"{row.phase}, imported"  # a YCSB text file names neither its workload nor its database
    console.print(f"[bold]run {row.id}[/]: {what}, {_status(row.status)}, started {row.started}{where}"
                  + (f", label {row.label!r}" if row.label else ""))
    if row.status == "incomplete":
        console.print("its process ended without finishing it: the figures cover the run up to its "
                      "last recorded interval", style="yellow")
    if result.environment.get("error"):
        console.print(f"error: {result.environment['error']}", style="red")
    server = (result.environment.get("cluster") or {}).get("server_version")
    if server:
        console.print(f"server: {server}")
    console.print(f"client: {result.client}", highlight=False)
    if result.environment.get("ray"):
        console.print(ray_placement(result.environment["ray"]), highlight=False)
    manifest = manifest_lines(result.manifest)
    if manifest:  # (none for a run recorded before runs had manifests)
        console.print("manifest:\n" + "\n".join(f"  {line}" for line in manifest), highlight=False,
                      markup=False, soft_wrap=True)
    if result.measurements or result.operations:
        sys.stdout.flush()
        write_ycsb_text(result, sys.stdout, layout=args.ycsb_layout)
        sys.stdout.flush()
    paced = run_pacing(result)  # a paced run: what its throughput is (results/paced.py)
    if paced is not None:
        console.print(f"paced: {paced.line()}", highlight=False, markup=False,
                      style=None if paced.verdict == DELIVERED_WORD else "yellow")
    limits = client_limits.of_run(result)  # the client the bottleneck (issue 54, 8)
    if limits.line:
        console.print(limits.line, highlight=False, markup=False, style="yellow")
    if result.intervals:
        console.print(_intervals_table(result))
    nodes = result.node_totals()
    if nodes:
        console.print(_nodes_table(result, nodes))
    summaries = node_summaries(result)
    if summaries:
        console.print(_server_table(summaries))
    if result.server_events:
        console.print("server events: " + "; ".join(
            f"{e.elapsed_s:.1f} s {e.kind} on {e.node}"
            + (f" {e.seconds * 1000:,.0f} ms" if e.seconds else "") + (f" ({e.detail})" if e.detail else "")
            for e in result.server_events), highlight=False)
    for note in result.server_notes:
        console.print(f"not seen: {note}", style="yellow", highlight=False)
    if result.events:
        console.print("events: " + "; ".join(
            f"{e.elapsed_s:.1f} s {e.kind}" + ("" if e.value is None else f" {e.value}")
            for e in result.events))
    return 0


def ray_placement(ray: dict) -> str:
    """One line: where a Ray run's workers ran, and what each did."""
    workers = ray.get("workers", [])
    parts = [f"worker {w.get('worker')} on {w.get('hostname', '?')} ({w.get('node_ip', '?')}, node "
             f"{str(w.get('node_id', '?'))[:8]}): {w.get('operations', 0):,} operations"
             + (", LOST" if w.get("lost") else "") for w in workers]
    return (f"Ray cluster {ray.get('address', '?')} (Ray {ray.get('ray', '?')}): {len(workers)} workers on "
            f"{ray.get('nodes', '?')} nodes; " + "; ".join(parts))


def _nodes_table(result: RunResult, nodes: dict[str, tuple[int, int]]) -> Table:
    """Requests and errors per node over the run, its share, and its busiest interval."""
    table = Table(title="requests per node (as the client sent them)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
    for name in ("node", "requests", "share", "errors", "peak req/s", "last seen s"):
        table.add_column(name, justify="left" if name == "node" else "right")
    total = sum(requests for requests, _ in nodes.values()) or 1
    for node, (requests, errors) in nodes.items():
        rates = [(i.nodes[node][0] / i.duration_s if i.duration_s > 0 else 0.0, i.elapsed_s)
                 for i in result.intervals if node in (i.nodes or {})]
        last = max((t for rate, t in rates if rate > 0), default=None)
        table.add_row(node, f"{requests:,}", f"{requests / total:.1%}", f"{errors:,}",
                      f"{max((r for r, _ in rates), default=0):,.0f}", "-" if last is None else f"{last:.1f}")
    return table


def _server_table(summaries: list[NodeSummary]) -> Table:
    """The servers' side per node over the run (results/server_summary.py)."""
    table = Table(title="servers (as they were sampled, once a second)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
    for name in SUMMARY_COLUMNS:
        table.add_column(name, justify="left" if name in ("node", "busiest queue") else "right")
    for summary in summaries:
        table.add_row(*summary_cells(summary))
    return table


def _intervals_table(result: RunResult) -> Table:
    ops = []
    for interval in result.intervals:
        ops += [n for n in interval.measurements if n not in ops and _shown(n)]
    table = Table(title="intervals (service time)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                  header_style="bold")
    behind = any(i.behind is not None for i in result.intervals)  # paced, and recorded
    for name in ("s", "ops", "ops/s", "lanes", "target") + (("behind s",) if behind else ()):
        table.add_column(name, justify="right")
    for name in ops:
        table.add_column(f"{name}\np50/p99 µs", justify="right")
    for i in result.intervals:
        cells = [f"{i.elapsed_s:.1f}", f"{i.operations:,}", f"{i.throughput:,.0f}", str(i.lanes),
                 _figure(i.target) + (" paused" if i.paused else "")]
        if behind:  # how far behind its schedule the interval ended (results/paced.py)
            lag = lag_s(i)
            cells.append("-" if lag is None else f"{lag:,.1f}")
        for name in ops:
            m = i.measurements.get(name)
            cells.append("" if m is None or not m.count else
                         f"{m.percentiles.get(50.0, 0):,}/{m.percentiles.get(99.0, 0):,}")
        table.add_row(*cells)
    return table


def _shown(name: str) -> bool:
    return not name.endswith("-FAILED") and name not in ("CLEANUP", "VERIFY") \
        and "LATENCY-PER-RECORD" not in name and not name.startswith("Intended-")


def compare_command(args: argparse.Namespace) -> int:
    if len(args.ids) < 2:
        raise ConfigError("runs compare needs two runs or more", "give two IDs or more (see runs list)")
    tolerances = parse_tolerances(args.tolerance, TOLERANCES)
    with _open(args) as store:
        rows = [store.row(i) for i in args.ids]
        results = [store.result(i) for i in args.ids]
    labels = [f"#{r.id} {res.database}" + (f" {r.workload}" if r.workload else "")
              + ("" if r.status == "completed" else f" ({r.status})")
              for r, res in zip(rows, results, strict=True)]
    comparison = compare(results, labels, {k: float(v) for k, v in tolerances.items()})
    _console().print(comparison_view(comparison))
    for line in not_comparable_lines(results, labels):  # said out loud (results/comparable.py)
        print(line)
    if args.csv:
        try:
            write_comparison_csv(comparison, args.csv)
        except OSError as exc:
            raise WorkbenchError(f"--csv {args.csv}: {exc.strerror or exc}",
                                 "choose a path you can write to") from None
        print(f"workbench: wrote {args.csv}", file=sys.stderr)
    return 0


def export_command(args: argparse.Namespace) -> int:
    for item in args.export:
        check_target(item)
    with _open(args) as store:
        result = store.result(args.id)
    for item in args.export:
        try:
            path = export(result, item, layout=args.ycsb_layout)
        except OSError as exc:
            raise WorkbenchError(f"--export {item}: {exc.strerror or exc}",
                                 "choose a path you can write to") from None
        print(f"workbench: wrote {path}", file=sys.stderr)
    return 0


def import_command(args: argparse.Namespace) -> int:
    # Every file is read before anything is written: one bad file adds nothing.
    results = [(import_file(f), f"import:{Path(f).resolve()}", "") for f in args.files]
    results = [(r if r.started_at is not None else _dated(r, Path(f.removeprefix("import:"))), f, w)
               for r, f, w in results]
    with _open(args, write=True) as store:
        ids = store.add_many(results)
        for run_id, f in zip(ids, args.files, strict=True):
            print(f"workbench: imported {f} as run {run_id}", file=sys.stderr)
    return 0


def _dated(result: RunResult, path: Path) -> RunResult:
    """YCSB text has no start time: the file's modification time less the runtime stands in."""
    result.started_at = path.stat().st_mtime - result.runtime_ms / 1000
    return result


def delete_command(args: argparse.Namespace) -> int:
    with _open(args, write=True) as store:
        store.delete(args.ids)
    print(f"workbench: deleted run{'s' if len(args.ids) > 1 else ''} "
          f"{', '.join(map(str, args.ids))}", file=sys.stderr)
    return 0
