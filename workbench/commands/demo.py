"""`workbench demo`: the quick start. Loads and runs YCSB workloads A and C on the in-process
memory binding and prints YCSB's results, so a fresh install shows the whole engine at work.
(Real Cassandra and HBase servers take over here once their bindings land.)"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.commands.bench import execute_phase, exit_status
from workbench.config.spec import spec_from_args
from workbench.results.exporters import export
from workbench.results.ycsb_text import write_ycsb_text

WORKLOADS = Path(__file__).resolve().parents[2] / "workloads"


def register(subparsers) -> None:
    p = subparsers.add_parser("demo", help="load and run workloads A and C on the memory binding")
    p.add_argument("--records", type=int, default=100_000, help="records to load (default 100000)")
    p.add_argument("--operations", type=int, default=200_000, help="operations per run")
    p.add_argument("--out", default="results/demo", help="folder for the exports")
    p.set_defaults(func=demo_command)


def demo_command(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    common = [f"recordcount={args.records}", f"operationcount={args.operations}", "threadcount=8"]
    status = 0
    for phase, workload in (("load", "workloada"), ("run", "workloada"), ("run", "workloadc")):
        files = [str(WORKLOADS / workload)]
        spec, props = spec_from_args(files, common, phase)
        print(f"== {phase} {workload} on memory ==", flush=True)
        result = execute_phase(spec, props.as_dict(), phase)
        write_ycsb_text(result, sys.stdout)
        stem = out / f"memory-{workload}-{phase}"
        for kind, suffix in (("ycsb", ".txt"), ("csv", ".csv"), ("json", ".json")):
            export(result, f"{kind}={stem}{suffix}")
        status = max(status, exit_status(result))
    print(f"exports written to {out}/")
    return status
