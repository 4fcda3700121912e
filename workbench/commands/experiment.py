"""`workbench experiment`: list, show and run experiment files (presets/experiments/*.toml).

An experiment is databases x workloads x one or two swept parameters x repetitions (see
workbench/experiments/plan.py for the file format). `run` starts the clusters it needs with the
local provider, one database at a time, records every run in the run store with the
experiment's name, step and repetition, and resumes: run it again after Ctrl-C, a SIGKILL or a
reboot and it makes only the runs that did not complete. `--scale laptop` divides record and
operation counts by the file's divisor (the scale is recorded with each run).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

from rich import box
from rich.console import Console
from rich.table import Table

from workbench import interrupts
from workbench.commands.bench import add_store_arguments, store_choice
from workbench.config import catalog
from workbench.errors import WorkbenchError
from workbench.experiments import plan
from workbench.experiments.runner import _minutes, _unthrottled, remaining, run_experiment
from workbench.experiments.stats import NOISY, cell, welch
from workbench.results.store import RunStore


def register(subparsers) -> None:
    exp = subparsers.add_parser("experiment", help="experiments: databases x workloads x sweeps x "
                                "repetitions, resumable", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = exp.add_subparsers(dest="experiment_command", metavar="ACTION", required=True)
    p = sub.add_parser("list", help="the shipped experiments")
    p.set_defaults(func=list_command)
    for name, help_text, func in (("show", "what an experiment would run, and what is done", show_command),
                                  ("run", "run (or resume) an experiment", run_command),
                                  ("report", "write its tidy CSV and self-contained HTML report",
                                   report_command)):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("experiment", help="a shipped experiment's name or a .toml file")
        p.add_argument("--scale", default="full", help="full (the studies' sizes) or a scale the file "
                       "defines, such as laptop")
        add_store_arguments(p, recording=name == "run")
        if name == "report":
            p.add_argument("--out", default="results", help="folder for the report (default results/)")
        p.set_defaults(func=func)
    # `workbench report EXPERIMENT`: the same as `workbench experiment report EXPERIMENT`.
    p = subparsers.add_parser("report", help="an experiment's tidy CSV and self-contained HTML report")
    p.add_argument("experiment", help="a shipped experiment's name or a .toml file")
    p.add_argument("--scale", default="full", help="full (the studies' sizes) or a scale the file defines")
    add_store_arguments(p, recording=False)
    p.add_argument("--out", default="results", help="folder for the report (default results/)")
    p.set_defaults(func=report_command)


def _console() -> Console:
    # Piped into a file or another tool: wide enough that no figure or step name is cut.
    return Console(highlight=False, width=None if sys.stdout.isatty() else 200)


def list_command(args: argparse.Namespace) -> int:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
    for column in ("experiment", "from", "runs", "scales", "description"):
        table.add_column(column, justify="right" if column == "runs" else "left")
    for entry in catalog.entries("experiments"):
        where = f"{entry.origin} (over shipped)" if entry.shadows else entry.origin
        try:
            e = plan.load(str(entry.path))
        except WorkbenchError as exc:  # a user's file with a mistake: listed, with the mistake
            table.add_row(entry.name, where, "-", "-", f"[red]not usable:[/] {exc}")
            continue
        table.add_row(entry.name, where, str(len(e.runs())), ", ".join(["full", *e.scales]), e.description)
    _console().print(table)
    return 0


def show_command(args: argparse.Namespace) -> int:
    e = plan.load(args.experiment)
    e.divisor(args.scale)
    todo, before = remaining(e, args.scale, store_choice(args))
    console = _console()
    console.print(f"[bold]{e.name}[/] ({e.path}): {e.description}")
    swept = "; ".join(f"{p} = {', '.join(map(str, v))}" for p, v in e.sweep) or "nothing"
    console.print(f"databases {', '.join(t.name for t in e.targets)}; workloads {', '.join(e.workloads)}; "
                  f"swept {swept}; {e.repetitions} repetitions; order {e.order}; load {e.load}; "
                  f"settle {e.settle}")
    console.print(f"{len(e.steps())} steps, {before + len(todo)} runs at scale {args.scale}: "
                  f"{before} done, {len(todo)} to make")
    typical, longest = e.expected_s(args.scale)
    window = e.window_s(args.scale)
    cap = e.calibration_cap_s(args.scale)
    servers = any(t.preset is not None for t in e.targets)  # a cluster the runner starts
    if window or e.warmup_s:
        console.print(f"each run: {e.warmup_s:g} s of warm-up (not measured), then at least "
                      f"{window:g} s measured"
                      + (f" ({e.first_warmup_s:g} s of warm-up for the first run on each cluster started)"
                         if servers and e.first_warmup_s > e.warmup_s else "")
                      + (f"; unthrottled calibration runs until stable, at most {cap:g} s"
                         if e.rates and window else ""))
    else:
        console.print("each run: its operation count, no warm-up (warmup_s = 0, min_measure_s = 0)")
    swept_rates = (f"; the rate sweep stops at its first saturated step, or goes on past "
                   f"{e.rates[-1]}% until one is" if e.rates and e.add_node_at_s is None else "")
    if e.add_node_at_s is not None:
        console.print(f"a node joins each paced run {e.add_node_at_s:g} s into its measured window, and is "
                      "decommissioned after it")
    extra = e.overhead_s(args.scale)
    console.print(f"expected: about {_minutes(typical)} of runs, at most {_minutes(longest)}{swept_rates}; "
                  f"with cluster starts, loads and settling about {_minutes(typical + extra)} in all")
    if todo:
        first = todo[0]
        unthrottled = None
        if first.step.rate not in (None, plan.UNTHROTTLED):
            try:
                unthrottled = _unthrottled(e, first, args.scale, store_choice(args))
            except WorkbenchError:  # its calibration runs are not done: say what it will be
                unthrottled = None
        if first.step.rate not in (None, plan.UNTHROTTLED) and unthrottled is None:
            console.print(f"next: {first.step.key} repetition {first.repetition}, paced at "
                          f"{first.step.rate}% of what {first.step.calibration().key} reaches")
        else:
            console.print(f"next: {first.step.key} repetition {first.repetition}, -p "
                          + " ".join(e.overrides(first, args.scale, unthrottled)))
    _summary(e, args.scale, store_choice(args), console)
    return 0


def run_command(args: argparse.Namespace) -> int:
    e = plan.load(args.experiment)
    store = store_choice(args)
    if store is False:
        raise WorkbenchError("an experiment needs the run store (it resumes from it)",
                             "leave out --no-store")
    console = Console(stderr=True, highlight=False)
    interrupts.install()  # a Ctrl-C swallowed by a driver's clean-up still stops the experiment
    status = run_experiment(e, args.scale, store=store, say=console.print)
    _summary(e, args.scale, store, _console())
    return status


def report_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from workbench.experiments.report import anova_tables, collect, write_csv, write_html

    e = plan.load(args.experiment)
    e.divisor(args.scale)
    store = store_choice(args)
    records = collect(e, args.scale, store)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        stem = out / f"{e.name}-{args.scale}"
        write_csv(e, args.scale, records, stem.with_suffix(".csv"))
        write_html(e, args.scale, records, stem.with_suffix(".html"))
    except OSError as exc:
        raise WorkbenchError(f"cannot write the report to {out}: {exc.strerror or exc}",
                             "choose a writable folder with --out") from None
    console = _console()
    _summary(e, args.scale, store, console)
    if e.anova:
        for title, rows in anova_tables(e, records, e.anova):
            table = Table(title=f"two-way ANOVA of throughput, {title}", title_justify="left",
                          box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
            for column in ("source", "SS", "df", "MS", "F", "p"):
                table.add_column(column, justify="left" if column == "source" else "right", no_wrap=True)
            for r in rows:
                table.add_row(r.source, f"{r.ss:,.1f}", str(r.df), f"{r.ms:,.1f}",
                              "" if r.f is None else f"{r.f:.2f}", "" if r.p is None else f"{r.p:.4f}")
            console.print(table)
    if e.add_node_at_s is not None:
        from workbench.experiments.report import join_table, shared_cores_note

        header, rows = join_table(records)
        table = Table(title="elastic speedup: before, during and after the join", title_justify="left",
                      box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
        for i, column in enumerate(header):
            table.add_column(column, justify="left" if i < 3 else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        console.print(shared_cores_note(e), soft_wrap=False)
    if plan.RATE in dict(e.sweep):
        from workbench.experiments.report import saturation_table

        header, rows = saturation_table(e, records)
        table = Table(title="saturation: response time against throughput", title_justify="left",
                      box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
        for i, column in enumerate(header):
            table.add_column(column, justify="left" if i == 0 else "right", no_wrap=i == 0)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    _spike_lines(records, console)
    print(f"workbench: wrote {stem.with_suffix('.csv')} and {stem.with_suffix('.html')}", file=sys.stderr)
    return 0


def _spike_lines(records: list, console: Console) -> None:
    """Each run with server figures: the seconds whose p99 is at least twice the run's median p99
    and the server events that overlapped each (results/spikes.py), as the HTML report says them."""
    for record in records:
        if record.timeline is None:
            continue
        head = f"run {record.run_id} ({record.step.key}, repetition {record.repetition})"
        if not record.timeline.spikes:
            console.print(f"{head}: no spike", soft_wrap=True)
            continue
        console.print(f"{head}: p99 spikes and the server events that overlapped them", soft_wrap=True)
        for line in record.timeline.spikes:
            console.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)


def _summary(e: plan.Experiment, scale: str, store: object, console: Console) -> None:
    """Throughput per step over its completed repetitions (n, mean, sd, 95% confidence interval)
    and, with two databases, Welch's t-test of the first against the second, step by step."""
    if store is False:
        return
    try:
        s = RunStore(store, create=False, write=False)
    except WorkbenchError:
        return
    with s:
        by_step: dict[str, list[float]] = defaultdict(list)
        named: dict[str, str] = {}  # step -> its database as the server answered ("mongodb (FerretDB)")
        for run_id, step, rep, status in s.experiment_runs(e.name, scale):
            if status == "completed" and rep:
                row = s.row(run_id)
                by_step[step].append(row.throughput or 0.0)
                if step not in named:
                    database = s.result(run_id).database
                    named[step] = database + step[len(row.db):] if step.startswith(row.db) else step
    if not by_step:
        return
    paced = _paced_summary(e, scale, store, console)  # latency at the offered load first
    table = Table(title=f"{e.name} at scale {scale}: throughput per step (completed repetitions)"
                  + (", a check that the offered load was delivered" if paced else ""),
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
    for column in ("step", "n", "mean ops/s", "sd", "95% CI"):
        table.add_column(column, justify="left" if column == "step" else "right", no_wrap=True)
    for step in e.steps_of(by_step):
        c = cell(by_step[step.key])
        table.add_row(named.get(step.key, step.key), str(c.n), f"{c.mean:,.0f}",
                      "-" if c.sd is None else f"{c.sd:,.0f}", c.interval())
    console.print(table)
    noisy = sum(cell(v).noisy for v in by_step.values())
    if noisy:
        console.print(f"{noisy} step(s) {NOISY}: their 95% interval is wider than their mean "
                      "(more repetitions, or a longer measure_s, narrow it)")
    if len(e.targets) >= 2:
        _welch_table(e, scale, by_step, console)
    print(f"every run: workbench runs list --label {e.name}", file=sys.stderr)


def _paced_summary(e: plan.Experiment, scale: str, store: object, console: Console) -> bool:
    """A paced experiment's latency at the offered load and whether each run delivered it
    (experiments/paced_report.py); False, printing nothing, for any other experiment."""
    from workbench.experiments.analysis import collect
    from workbench.experiments.paced_report import TITLE, is_paced, latency_table, notes

    try:
        records = collect(e, scale, store)
    except WorkbenchError:
        return False
    if not is_paced(e, records):
        return False
    header, rows = latency_table(e, records)
    table = Table(title=f"{e.name} at scale {scale}: {TITLE.lower()}", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
    for i, column in enumerate(header):
        table.add_column(column, justify="left" if i in (0, len(header) - 1) else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for line in notes(records):
        console.print(line, style="yellow", highlight=False, markup=False)
    return True


def _welch_table(e: plan.Experiment, scale: str, by_step: dict[str, list[float]], console: Console) -> None:
    first, second = e.targets[0], e.targets[1]
    table = Table(title=f"{first.name} vs {second.name}: Welch's t-test of throughput",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
    for column in ("workload / sweep", f"{first.name} mean", f"{second.name} mean", "difference",
                   "t", "df", "p", "verdict"):
        table.add_column(column, justify="left" if column == "workload / sweep" else "right",
                         no_wrap=column == "workload / sweep")
    rows = 0
    for step in e.steps():
        if step.target != first:
            continue
        twin = next(s for s in e.steps() if s.target == second and s.workload == step.workload
                    and s.values == step.values)
        a, b = by_step.get(step.key, []), by_step.get(twin.key, [])
        if len(a) < 2 or len(b) < 2:
            continue
        w = welch(a, b)
        ma, mb = cell(a).mean, cell(b).mean
        where = step.key.split("/", 1)[1]
        table.add_row(where, f"{ma:,.0f}", f"{mb:,.0f}", f"{(ma - mb) / mb * 100:+.1f}%" if mb else "-",
                      f"{w.t:.2f}", f"{w.df:.1f}", f"{w.p:.4f}", w.verdict())
        rows += 1
    if rows:
        console.print(table)
