"""`workbench check`: is this cluster as fast as it was? A standard suite with a verdict.

    workbench check --cluster lab --save-baseline lab.json      # once, on a good day
    workbench check --cluster lab --baseline lab.json --junit check.xml   # in CI, every night

The suite (drive/check.py): its own table loaded when missing, the maximum throughput of
workloads A and C (closed loop, warm-up excluded, until stable or the time is up), then response
times at half A's maximum (coordinated omission corrected). Under 3 minutes; --quick under 60 s.
The figures (throughput A, throughput C, p99 READ and p99 UPDATE at the paced rate, errors) are
held to a baseline: --baseline FILE, else the same cluster's (or database's) previous check in the
run store. Each difference comes with its 95% interval (per-second series, autocorrelation
counted) and a verdict; worse only when the whole interval lies beyond the tolerance (throughput
-10%, p99 +25%, errors any: see results/check_verdicts.py).

Exit status: 0 nothing worse (or no baseline), 1 a figure is worse, 2 bad input (a file that is
not a baseline, another workload's baseline, an unknown --tolerance figure) or runs that cannot be
compared: a manifest field that changes results differs (server version, client, record count,
cores, CPU caps, consistency, the servers' JVM flags) and --allow-different does not name it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from workbench.commands.bench import add_store_arguments, cluster_of, overrides_from, store_choice
from workbench.config.bindings import BINDINGS
from workbench.drive import check as suite
from workbench.errors import ConfigError, WorkbenchError
from workbench.results import baseline as baseline_file
from workbench.results.check_verdicts import judge, junit, parse_tolerances, table, worse
from workbench.results.comparable import FIELDS, FieldDifference, differing
from workbench.results.paced import DELIVERED_WORD, run_pacing

EXIT_OK, EXIT_WORSE, EXIT_BAD = 0, 1, 2


def register(subparsers) -> None:
    p = subparsers.add_parser("check", help="a standard sanity check with a verdict against a baseline "
                              "(exit status for CI)", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cluster", metavar="NAME", help="a cluster started by `workbench cluster up` (or "
                   "remembered): sets -db and its hosts and ports")
    p.add_argument("-db", metavar="NAME", help=f"database binding: {', '.join(BINDINGS)} (memory: the "
                   "in-process binding)")
    p.add_argument("--quick", action="store_true", help="the short suite: under 60 s (3 s warm-up, 12-16 s a "
                   "run) instead of under 3 minutes")
    p.add_argument("-P", dest="files", action="append", default=[], metavar="FILE",
                   help="a properties file applied after the shipped workloads A and C; repeatable")
    p.add_argument("-p", dest="props", action="append", default=[], metavar="KEY=VALUE",
                   help="set a property in every run of the suite (after its own settings)")
    p.add_argument("-threads", type=int, metavar="N", help="lanes (YCSB threads): requests in flight")
    p.add_argument("-target", type=float, metavar="OPS", help="cap the 'maximum' throughput runs at OPS "
                   "operations/s (the paced run still runs at half what A reached)")
    p.add_argument("--save-baseline", metavar="FILE", help="write this check's figures, their per-second "
                   "series and manifests as JSON, a baseline for later checks")
    p.add_argument("--baseline", metavar="FILE", help="compare against this baseline (default: the same "
                   "cluster's or database's previous check in the run store, if any)")
    p.add_argument("--tolerance", nargs="+", action="extend", default=[], metavar="FIGURE=PERCENT",
                   help="throughput=10 (%% lower), p99=25 (%% higher), errors=any or errors=POINTS "
                        "(percentage points more of the operations failed)")
    p.add_argument("--allow-different", nargs="+", action="extend", default=[], metavar="FIELD",
                   help=f"a manifest field meant to differ from the baseline's: {', '.join(FIELDS)}")
    p.add_argument("--junit", metavar="FILE", help="write the verdicts as JUnit XML (a test case a figure)")
    p.add_argument("-q", "--quiet", action="store_true", help="no status lines while the runs go")
    add_store_arguments(p)
    p.set_defaults(func=check_command)


def check_command(args: argparse.Namespace) -> int:
    # Bad input is refused before anything runs.
    tolerances = parse_tolerances(args.tolerance)
    suite.allowed(args.allow_different)
    if not args.cluster and not args.db:
        raise ConfigError("check needs a database", "give --cluster NAME or -db memory")
    cluster = cluster_of(args.cluster) if args.cluster else None
    plan = suite.CheckPlan(tuple(args.files), tuple(overrides_from(args)), args.quick, cluster,
                           suite.scale_from_env())
    db = plan.spec("A")[0].db
    digest = plan.workload_digest()
    store = store_choice(args)
    base, said = _baseline(args, store, db, digest)
    if base is not None:
        if suite.digests_differ(base, digest):
            raise ConfigError(f"{said} is another workload's baseline (its workload digest differs: other "
                              "workload files, -p properties or lanes)",
                              "give the same -P, -p and -threads as it had, or save a new baseline")
        base_manifest, base_props = suite.manifests_of(base)
        _refuse(differing(base_manifest, plan.manifest(), base_props, plan.spec("A")[1]), args, said)
    done = suite.run_check(plan, store=store, status=not args.quiet)
    doc = baseline_file.document(done.results, db=db, cluster=args.cluster, workload_digest=digest,
                                 run_ids=done.run_ids)
    if args.save_baseline:
        baseline_file.write(doc, args.save_baseline)
        print(f"workbench: wrote the baseline {args.save_baseline}", file=sys.stderr)
    verdicts = judge(doc, base, tolerances)
    from rich.console import Console  # noqa: PLC0415

    Console(highlight=False, width=None if sys.stdout.isatty() else 200).print(table(verdicts, said))
    paced = run_pacing(done.results["paced"]) if "paced" in done.results else None
    if paced is not None:  # what its p99 figures are: latency at the offered load, or not
        caveat = "" if paced.verdict == DELIVERED_WORD else "; its p99s are not latency at the offered load"
        print(f"workbench: check: the paced run: {paced.line()}{caveat}")
    ids = ", ".join(f"{p} #{done.run_ids.get(p)}" for p in baseline_file.PHASES if done.run_ids.get(p))
    if ids:
        print(f"workbench: check recorded as runs {ids}")
    if args.junit:
        junit(verdicts, args.junit, said)
        print(f"workbench: wrote {args.junit}", file=sys.stderr)
    if base is not None:  # again, with what the runs learnt (a server version seen by the binding)
        a_manifest, a_props = suite.manifests_of(doc)
        if _refuse(differing(base_manifest, a_manifest, base_props, a_props), args, said, raise_=False):
            return EXIT_BAD
    bad = worse(verdicts)
    if bad:
        print(f"workbench: check: worse than {said}: {', '.join(v.figure for v in bad)}", file=sys.stderr)
        return EXIT_WORSE
    return EXIT_OK


def _baseline(args: argparse.Namespace, store: Any, db: str, digest: str) -> tuple[dict | None, str]:
    """The baseline document and how to say it (stdout: which baseline was used)."""
    if args.baseline:
        doc, said = baseline_file.read(args.baseline), f"the baseline {args.baseline}"
    else:
        found = suite.previous_check(store, db, args.cluster)
        if found is None:
            said = "no baseline (none given, no previous check of " + (
                f"cluster {args.cluster}" if args.cluster else f"{db}") + " in the run store)"
            print(f"workbench: check: {said}")
            return None, said
        results, said = found
        props = {p: results[p].properties for p in ("A", "C")}
        doc = baseline_file.document(results, db=db, cluster=args.cluster,
                                     workload_digest=suite.workload_digest(props))
    print(f"workbench: check: baseline: {said}")
    return doc, said


def _refuse(diffs: list[FieldDifference], args: argparse.Namespace, said: str, raise_: bool = True) -> bool:
    """Say each differing field (one line each); refuse (exit status 2) unless all are allowed."""
    refused = [d for d in diffs if d.field not in args.allow_different]
    for d in diffs:
        print(d.line("baseline", "this check") + ("" if d in refused else " (allowed)"), file=sys.stderr)
    if refused and raise_:
        names = " ".join(d.field for d in refused)
        raise WorkbenchError(f"this check is not comparable with {said}: {names} differ",
                             f"add --allow-different {names} if it is meant (an upgrade check)")
    if refused:
        print(f"workbench: error: this check is not comparable with {said}", file=sys.stderr)
    return bool(refused)
