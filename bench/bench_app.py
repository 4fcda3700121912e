"""The app's cost: the same run headless and under the app (`--tui`, in a real terminal).

For each database (the memory binding, and one Cassandra node started with the local provider
in a private state directory, loaded once), the same `workbench run` of workload A is made
`--repeat` times headless and `--repeat` times with `--tui` inside tmux (a real terminal of
`--size`, drawing at the app's normal rate), alternating which goes first. Throughput is the
run's own `[OVERALL], Throughput` line; the ratio app / headless of the medians is the figure
that matters (both measured in the same invocation, on the same server).

The app's own CPU is the app process's user+system time (from /proc) between the first and the
last tick it drew, divided by that wall time: what drawing (and merging ticks) costs while the
lanes run in their worker process. The headless run's single process does everything itself,
so its CPU is not comparable and not printed.

    python bench/bench_app.py [--db memory,cassandra] [--operations 400000]
        [--cassandra-operations 60000] [--records 10000] [--lanes 16] [--repeat 3]
        [--warmup 2] [--size 120x40] [--address 127.0.0.63]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")
THROUGHPUT = re.compile(r"^\[OVERALL\], Throughput\(ops/sec\), ([0-9.]+)", re.MULTILINE)
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def throughput(text: str) -> float:
    found = THROUGHPUT.search(text)
    if not found:
        raise SystemExit(f"no [OVERALL] throughput in the run's output:\n{text[-2000:]}")
    return float(found.group(1))


def headless(args: list[str], env: dict[str, str]) -> float:
    proc = subprocess.run([sys.executable, "-m", "workbench", "run", *args, "-q"],
                          capture_output=True, text=True, env=env, timeout=1800)
    return throughput(proc.stdout)


class Tmux:
    """A private tmux server (its own socket) holding one pane at a time."""

    def __init__(self, size: str) -> None:
        self.socket = f"workbench-bench-{os.getpid()}"
        self.width, self.height = size.split("x")

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              check=False).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "app")

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "app"],
                              capture_output=True).returncode == 0

    def close(self) -> None:
        self.tmux("kill-server")


def under_app(args: list[str], env: dict[str, str], tmux: Tmux, out: Path) -> tuple[float, float]:
    """One run with --tui in tmux; (throughput, app CPU in % of one core while drawing)."""
    command = " ".join([f"exec {sys.executable} -m workbench run", *map(_quote, args), "--tui",
                        f"> {out}"])
    envs = [f"{k}={v}" for k, v in env.items() if k.startswith(("WORKBENCH", "PYTHON"))]
    tmux.tmux("new-session", "-d", "-s", "app", "-x", tmux.width, "-y", tmux.height,
              "env", *envs, "sh", "-c", command)
    pid = int(tmux.tmux("display-message", "-p", "-t", "app", "#{pane_pid}").strip())
    first = last = None
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        screen = tmux.screen()
        if first is None and "▶ running" in screen and "ops/s" in screen:
            first = (time.monotonic(), cpu_s(pid))
        if "■ " in screen:  # the phase ended: its figures are final
            break
        time.sleep(0.2)
    else:
        raise SystemExit("the app's run did not end in time")
    last = (time.monotonic(), cpu_s(pid))
    tmux.tmux("send-keys", "-t", "app", "q")
    while tmux.alive():
        time.sleep(0.1)
    cpu = (last[1] - first[1]) / (last[0] - first[0]) * 100 if first and last[0] > first[0] else float("nan")
    return throughput(out.read_text()), cpu


def _quote(arg: str) -> str:
    return arg if re.fullmatch(r"[\w./=:,-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


def measure(name: str, args: list[str], env: dict[str, str], repeat: int, size: str,
            warmup: int = 0) -> None:
    tmux = Tmux(size)
    for _ in range(warmup):  # a JVM server speeds up over its first runs: not counted
        print(f"  {name} warm-up: headless {headless(args, env):,.0f} ops/s", flush=True)
    plain: list[float] = []
    app: list[float] = []
    cpus: list[float] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for rep in range(repeat):
                order = ("headless", "app") if rep % 2 == 0 else ("app", "headless")
                for side in order:
                    if side == "headless":
                        plain.append(headless(args, env))
                    else:
                        ops, cpu = under_app(args, env, tmux, Path(tmp) / f"app-{rep}.txt")
                        app.append(ops)
                        cpus.append(cpu)
                print(f"  {name} rep {rep + 1}: headless {plain[-1]:,.0f} ops/s, app {app[-1]:,.0f} ops/s"
                      f" (app process {cpus[-1]:.0f}% of a core)", flush=True)
    finally:
        tmux.close()
    ratio = statistics.median(app) / statistics.median(plain)
    pairs = statistics.median(a / h for a, h in zip(app, plain, strict=True))
    print(f"{name}: headless median {statistics.median(plain):,.0f} ops/s, app median "
          f"{statistics.median(app):,.0f} ops/s, app/headless {ratio:.3f} (median of the "
          f"repetitions' ratios {pairs:.3f}); app process CPU while drawing: median "
          f"{statistics.median(cpus):.0f}% of one core\n", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", default="memory,cassandra")
    ap.add_argument("--operations", type=int, default=400_000, help="operations per memory run")
    ap.add_argument("--cassandra-operations", type=int, default=60_000)
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--lanes", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=2, help="uncounted runs on a fresh server first")
    ap.add_argument("--size", default="120x40", help="terminal size of the app, COLSxROWS")
    ap.add_argument("--address", default="127.0.0.63", help="loopback address of the Cassandra node")
    args = ap.parse_args()
    if not shutil.which("tmux"):
        raise SystemExit("bench_app needs tmux (apt-get install tmux)")
    common = ["-P", WORKLOAD_A, "-threads", str(args.lanes), "-p", f"recordcount={args.records}"]
    # Both sides record their runs (as users' runs are), into a store of this bench, not the user's.
    env = dict(os.environ, WORKBENCH_STORE=os.path.join(tempfile.mkdtemp(prefix="bench-app-"), "runs.db"))
    print(f"bench_app: {os.cpu_count()} cores, terminal {args.size}, {args.lanes} lanes, "
          f"{args.repeat} repetitions each, alternating\n", flush=True)
    for db in args.db.split(","):
        if db == "memory":
            measure("memory", [*common, "-db", "memory", "-p", f"operationcount={args.operations}"],
                    env, args.repeat, args.size)
        elif db == "cassandra":
            with_cassandra(args, common, env)
        else:
            raise SystemExit(f"unknown --db {db}")


def with_cassandra(args, common: list[str], env: dict[str, str]) -> None:
    from workbench.clusters.local import LocalProvider
    from workbench.databases.cassandra.cluster_spec import CassandraSpec

    state = tempfile.mkdtemp(prefix="workbench-bench-app-")
    env = {**env, "WORKBENCH_STATE_DIR": state}
    provider = LocalProvider(state_dir=Path(state), progress=True)
    name = "bench-app"
    provider.up(CassandraSpec(name=name, heap="1G", first_address=args.address))
    try:
        target = [*common, "--cluster", name]
        load = [sys.executable, "-m", "workbench", "load", *target, "-q", "-p", "cassandra.drop=true"]
        subprocess.run(load, check=True, env=env, stdout=subprocess.DEVNULL, timeout=1800)
        measure("cassandra", [*target, "-p", f"operationcount={args.cassandra_operations}"],
                env, args.repeat, args.size, warmup=args.warmup)
    finally:
        provider.down(name)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
