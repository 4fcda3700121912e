#!/usr/bin/env python3
"""`workbench check`'s own error rates: false alarms in an A/A test, and its power (issue 55, 6).

Each repetition runs three checks, each a `workbench check --quick` in its own process:
  baseline   `--save-baseline`
  A/A        the same check again, `--baseline` the one just saved: nothing changed, so any figure
             judged "worse" is a false alarm (the goal: at most 1 repetition in 20)
  80%        the same check `-target` 0.8 x the baseline's throughput A (the mean per second of
             its measured window): a candidate held to 80% of the baseline's throughput, which
             should be judged worse (throughput A, tolerance -10%) in at least 19 of 20
on the memory binding (`check -db memory`) and on one real Cassandra node that the script starts
itself (`workbench cluster up cassandra-single --name bench-check-rate --first-address ADDRESS`
with a state folder of its own, `cluster down` at the end), after --warmup-checks checks that are
not counted (a node just started compiles its code during the first). The checks record into a run store
of the script's own, never the user's. Each check's document (`--save-baseline`: figures, their
per-second series, manifests) is kept in --keep DIR for a later look at the series.

-target caps the check's maximum-throughput runs (A and C) with paced lanes; the paced run then
runs at half what A reached (drive/check.py), so C and both p99 figures move too. Only the
throughput A verdict is the test of power; the others are printed.

    python bench/bench_check_error_rate.py [--db memory,cassandra] [--repeat 20] [--scale 0.5]
        [--threads N] [--cassandra-threads 8] [--address 127.0.0.71] [--warmup-checks 1] [--keep DIR]
        [--full]

--scale is WORKBENCH_CHECK_SCALE: every duration of the check times it, the snapshot interval
too, so each run keeps its number of measured intervals (0.5: about 25 s a check on the memory
binding instead of 50); it is printed with the figures. --full runs the default suite (without
--quick). Prints a line per repetition (each figure's difference and verdict), then per
database: the A/A repetitions with any figure worse (and by figure) and the 80% candidates judged
worse on throughput A, with the throughput they reached.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.results.baseline import FIGURES  # noqa: E402
from workbench.results.check_verdicts import judge  # noqa: E402

CLUSTER = "bench-check-rate"
SHORT = {"throughput A": "thrA", "throughput C": "thrC", "p99 READ": "p99R", "p99 UPDATE": "p99U",
         "errors": "err"}


def workbench(args: list[str], env: dict[str, str], timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=timeout)


def check(target: list[str], env: dict[str, str], keep: Path, name: str, *extra: str) -> dict:
    """One check; its document (what --save-baseline wrote) and exit status."""
    doc_path = keep / f"{name}.json"
    done = workbench(["check", *target, "-q", "--save-baseline", str(doc_path), *extra], env)
    if done.returncode not in (0, 1):
        print(done.stdout[-2000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"bench_check_error_rate: check {name} ended with exit status {done.returncode}")
    doc = json.loads(doc_path.read_text())
    doc["exit"] = done.returncode
    said = ("workbench: check: settled", "workbench: check: not settled")
    doc["settled"] = next((line.removeprefix("workbench: check: ") for line in done.stderr.splitlines()
                           if line.startswith(said)), "")
    return doc


def context(doc: dict) -> str:
    """The 1-minute load average when the check's run A started (its manifest's host), and how
    long its table's settle step took (drive/check.py), when it had one."""
    host = ((doc.get("manifests") or {}).get("A") or {}).get("host") or {}
    settled = doc.get("settled", "")
    took = settled.rpartition("(")[2].rstrip(")") if settled.startswith("settled") else ""
    return f"load {(host.get('load_average') or ['?'])[0]}" + (f", settled in {took}" if took else "")


def said(verdicts) -> str:
    cells = []
    for v in verdicts:
        diff = "" if v.pct is None else f"{v.pct:+.1f}%"
        cells.append(f"{SHORT[v.figure]} {diff} {v.verdict}".replace("  ", " "))
    return "; ".join(cells)


def repetitions(db: str, target: list[str], env: dict[str, str], repeat: int, keep: Path,
                warmups: int = 0) -> dict:
    for n in range(warmups):
        t0 = time.perf_counter()
        warm = check(target, env, keep, f"{db}-warmup-{n}")
        print(f"{db} warm-up check {n + 1}/{warmups} ({time.perf_counter() - t0:.0f} s, not counted): "
              f"throughput A {warm['figures']['throughput A']['value']:,.0f} ops/s ({context(warm)})",
              flush=True)
    aa_worse: Counter[str] = Counter()
    aa_any = power_hits = 0
    reached = []
    for rep in range(repeat):
        t0 = time.perf_counter()
        base = check(target, env, keep, f"{db}-{rep:02d}-baseline")
        against = str(keep / f"{db}-{rep:02d}-baseline.json")
        aa = check(target, env, keep, f"{db}-{rep:02d}-aa", "--baseline", against)
        aa_verdicts = judge(aa, base)
        bad = [v.figure for v in aa_verdicts if v.verdict == "worse"]
        aa_worse.update(bad)
        aa_any += bool(bad)
        cap = 0.8 * base["figures"]["throughput A"]["value"]
        held = check(target, env, keep, f"{db}-{rep:02d}-80pct", "--baseline", against,
                     "-target", f"{cap:.0f}")
        held_verdicts = judge(held, base)
        thr = next(v for v in held_verdicts if v.figure == "throughput A")
        power_hits += thr.verdict == "worse"
        reached.append(held["figures"]["throughput A"]["value"] / base["figures"]["throughput A"]["value"])
        print(f"{db} rep {rep + 1:2d}/{repeat} ({time.perf_counter() - t0:.0f} s): baseline throughput A "
              f"{base['figures']['throughput A']['value']:,.0f} ops/s ({context(base)})", flush=True)
        print(f"   A/A  exit {aa['exit']} ({context(aa)}): {said(aa_verdicts)}", flush=True)
        print(f"   80%  exit {held['exit']} ({context(held)}, -target {cap:,.0f}, reached {reached[-1]:.0%} "
              f"of the baseline): {said(held_verdicts)}", flush=True)
    return {"repeat": repeat, "aa_any": aa_any, "aa_worse": aa_worse, "power": power_hits, "reached": reached}


def summary(db: str, got: dict) -> None:
    n = got["repeat"]
    by = ", ".join(f"{f} {got['aa_worse'][f]}" for f in FIGURES)
    reached = sorted(got["reached"])
    print(f"{db}: A/A false alarms (any figure worse) {got['aa_any']} of {n} (by figure: {by})")
    print(f"{db}: 80% candidates judged worse on throughput A {got['power']} of {n} (reached "
          f"{reached[0]:.0%}-{reached[-1]:.0%} of the baseline's throughput A, median "
          f"{reached[len(reached) // 2]:.0%})", flush=True)


def free(address: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def with_cassandra(args, env: dict[str, str], keep: Path) -> dict:
    if not args.address.startswith("127."):
        raise SystemExit("benchmarks only target 127.0.0.0/8")
    if not (free(args.address, 9042) and free(args.address, 7000)):
        raise SystemExit(f"{args.address}: ports 9042/7000 are taken; give another --address 127.0.0.K")
    state = tempfile.mkdtemp(prefix="bench-check-rate-state-")
    env = dict(env, WORKBENCH_STATE_DIR=state)
    t0 = time.perf_counter()
    up = workbench(["cluster", "up", "cassandra-single", "--name", CLUSTER, "--first-address", args.address,
                    "--heap", args.heap, "--quiet"], env)
    try:
        if up.returncode:
            raise SystemExit(f"cluster up failed:\n{up.stdout[-2000:]}\n{up.stderr[-2000:]}")
        print(f"cassandra: node {args.address} up in {time.perf_counter() - t0:.0f} s "
              f"(heap {args.heap}, state {state})", flush=True)
        target = ["--cluster", CLUSTER, *(["--quick"] if not args.full else []), "-threads",
                  str(args.cassandra_threads)]
        return repetitions("cassandra", target, env, args.repeat, keep, args.warmup_checks)
    finally:
        down = workbench(["cluster", "down", CLUSTER], env, timeout=300)
        print(f"cassandra: cluster down, exit status {down.returncode}", flush=True)
        if down.returncode == 0:
            shutil.rmtree(state, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", default="memory,cassandra", help="memory, cassandra or both")
    ap.add_argument("--repeat", type=int, default=20, help="repetitions (baseline, A/A, 80%%) per database")
    ap.add_argument("--scale", type=float, default=0.5, help="WORKBENCH_CHECK_SCALE for every check")
    ap.add_argument("--full", action="store_true", help="the default suite, not --quick")
    ap.add_argument("--threads", type=int, default=0, help="memory: -threads (0: the check's default)")
    ap.add_argument("--cassandra-threads", type=int, default=8, help="Cassandra: -threads")
    ap.add_argument("--address", default="127.0.0.71", help="loopback address of the Cassandra node")
    ap.add_argument("--heap", default="1G", help="the Cassandra node's heap")
    ap.add_argument("--warmup-checks", type=int, default=1, help="Cassandra: checks run first on the new "
                    "node, not counted (its JIT compiles during the first: throughput A climbed from 5,453 "
                    "to 12,395 ops/s in it, against about 20,000 after)")
    ap.add_argument("--keep", help="folder for every check's document (default: a temporary one)")
    args = ap.parse_args()
    keep = Path(args.keep or tempfile.mkdtemp(prefix="bench-check-rate-"))
    keep.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, WORKBENCH_STORE=str(keep / "runs.db"), WORKBENCH_CHECK_SCALE=f"{args.scale:g}")
    print(f"bench_check_error_rate: {os.cpu_count()} cores, {'full' if args.full else '--quick'} checks, "
          f"WORKBENCH_CHECK_SCALE={args.scale:g}, {args.repeat} repetitions a database, documents in {keep}",
          flush=True)
    results = {}
    for db in args.db.split(","):
        if db == "memory":
            target = ["-db", "memory", *(["--quick"] if not args.full else [])]
            if args.threads:
                target += ["-threads", str(args.threads)]
            results[db] = repetitions(db, target, env, args.repeat, keep)
        elif db == "cassandra":
            results[db] = with_cassandra(args, env, keep)
        else:
            raise SystemExit(f"unknown --db {db}: memory or cassandra")
    print()
    for db, got in results.items():
        summary(db, got)


if __name__ == "__main__":
    main()
