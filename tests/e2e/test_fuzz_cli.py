"""The command line under generated input (hypothesis): `load`, `run`, `keys` and `cluster`
through their real argument parser, in a real `workbench` process each time.

For every input: the command ends within a time bound, exits 0 or 2 (1 only when operations
failed), prints no traceback, and a refusal is one `workbench: error:` line naming what was
wrong (argparse's own refusals end with its one `error:` line after the usage).

CI runs a bounded number of examples with a fixed seed; a nightly-size run is a flag away:

    WORKBENCH_FUZZ_EXAMPLES=500 WORKBENCH_FUZZ_RANDOM=1 python3 -m pytest tests/e2e/test_fuzz_cli.py

Runs only ever use the memory binding, and `cluster` only ever sees presets that cannot start
(every generated preset has at least one invalid field) and a private, empty state directory:
no server is started and no address outside this machine is touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("WORKBENCH_FUZZ_EXAMPLES", "12"))
TIME_BOUND_S = 90  # generous: a loaded 2-core machine; a hang is what this catches
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                derandomize=not os.environ.get("WORKBENCH_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

KNOWN = ["recordcount", "operationcount", "readproportion", "updateproportion", "insertproportion",
         "scanproportion", "readmodifywriteproportion", "deleteproportion", "requestdistribution",
         "fieldcount", "fieldlength", "threadcount", "target", "maxexecutiontime", "zipfian.constant",
         "hotspotdatafraction", "insertstart", "insertcount", "table", "maxscanlength", "seed",
         "fieldlengthdistribution", "status.interval", "measurement.interval", "workers",
         "memory.preload", "readallfields", "dataintegrity"]


def near_miss(name: str) -> st.SearchStrategy[str]:
    return st.sampled_from([name, name.upper(), name[:-1], name + "s", name.replace("count", "_count"),
                            " " + name, name + "."])


names = st.one_of(st.sampled_from(KNOWN).flatmap(near_miss), st.text(min_size=0, max_size=12))
values = st.one_of(
    st.sampled_from(["0", "1", "-1", "10", "200", "0.5", "1.5", "", " ", "abc", "1e3", "nan", "inf",
                     "2147483648", "99999999999999999999", "zipfian", "uniform", "latest", "true",
                     "false", "0x10", "１２"]),
    st.integers(min_value=-10, max_value=3000).map(str),
    st.text(max_size=8),
)
props = st.lists(st.tuples(names, values), max_size=5)


def _ok_text(s: str) -> bool:
    return "\x00" not in s  # argv cannot carry NUL bytes


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_STATE_DIR=str(cwd / "state"), WORKBENCH_PRESETS_DIR=str(cwd / "presets"))
    return subprocess.run([sys.executable, "-m", "workbench", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=TIME_BOUND_S, stdin=subprocess.DEVNULL)


def check(done: subprocess.CompletedProcess, operations: bool = False) -> None:
    err = done.stderr.decode(errors="replace")
    assert "Traceback" not in err, err
    allowed = (0, 1, 2) if operations else (0, 2)
    assert done.returncode in allowed, (done.returncode, err)
    if done.returncode == 1:
        assert "operations failed" in err, err
    if done.returncode == 2:
        ours = [line for line in err.splitlines() if line.startswith("workbench: error:")]
        if ours:
            assert len(ours) == 1, err
            assert len(ours[0]) > len("workbench: error: ") + 5
        else:  # argparse: usage, then one line naming the error
            assert err.strip().splitlines()[-1].startswith("workbench") and "error:" in err, err


def workload_file(draw_lines: list[tuple[str, str]], garbage: list[bytes]) -> bytes:
    lines = [f"{k}={v}".encode(errors="surrogateescape") for k, v in draw_lines] + garbage
    return b"\n".join(lines)


file_lines = st.lists(st.tuples(names, values), max_size=6)
garbage = st.lists(st.one_of(st.binary(max_size=12), st.sampled_from(
    [b"=", b"==x", b"\\", b"#comment", b"key", b"\xff\xfe", b"recordcount=1\\", b"a b c"])), max_size=3)
flags = st.lists(st.sampled_from([
    ["-threads", "0"], ["-threads", "3"], ["-threads", "-2"], ["-threads", "x"], ["-target", "100"],
    ["-target", "-5"], ["-target", "abc"], ["--workers", "2"], ["--workers", "0"], ["--workers", "1000"],
    ["-db", "nosuchdb"], ["-db", ""], ["-l", "label"], ["-s"], ["--export", "ycsb=out.txt"],
    ["--export", "nokind=out.txt"], ["--export", "ycsb=/nonexistent/dir/x.txt"], ["--export", "csv=."],
    ["--export", "json"], ["--cluster", "no-such-cluster"], ["--ycsb-layout", "master"], ["-q"],
]), max_size=4)


@FUZZ
@given(phase=st.sampled_from(["load", "run"]), base=st.sampled_from(["workloada", "workloadc", "workloade",
                                                                      "mine", None]),
       lines=file_lines, junk=garbage, overrides=props, extra=flags)
def test_load_and_run(phase, base, lines, junk, overrides, extra):
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        args = [phase]
        if base == "mine":
            (cwd / "mine").write_bytes(workload_file(lines, junk))
            args += ["-P", "mine"]
        elif base:
            args += ["-P", str(ROOT / "workbench" / "workloads" / base)]
        for k, v in overrides:
            if _ok_text(k + v):
                args += ["-p", f"{k}={v}"]
        for flag in extra:
            args += flag
        # Bounded and local: the memory binding, small runs, a time limit (given last: they win).
        args += ["-db", "memory", "-p", "maxexecutiontime=3", "-q"]
        check(run_cli(args, cwd), operations=True)


@FUZZ
@given(base=st.sampled_from(["workloada", "workloadd", "mine"]), lines=file_lines, junk=garbage,
       overrides=props, samples=st.sampled_from(["-1", "0", "1", "500", "x", ""]))
def test_keys(base, lines, junk, overrides, samples):
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        if base == "mine":
            (cwd / "mine").write_bytes(workload_file(lines, junk))
            args = ["keys", "-P", "mine"]
        else:
            args = ["keys", "-P", str(ROOT / "workbench" / "workloads" / base)]
        for k, v in overrides:
            if _ok_text(k + v):
                args += ["-p", f"{k}={v}"]
        check(run_cli([*args, "--samples", samples], cwd))


bad_presets = st.one_of(
    st.text(max_size=40),
    st.builds(lambda kind, nodes, heap: f'kind = "{kind}"\nnodes = {nodes}\nheap = "{heap}"\n',
              st.sampled_from(["cassandra", "hbase", "mongo", ""]),
              st.sampled_from(["0", "10", "-1", '"two"']),  # never a valid node count: nothing starts
              st.sampled_from(["1G", "abc", ""])),
)


@FUZZ
@given(action=st.sampled_from(["status", "logs", "down", "pause", "resume", "kill", "restart", "up",
                               "presets"]),
       name=st.one_of(st.sampled_from(["no-such", "cassandra-single", "", "../x"]), st.text(max_size=8)),
       node=st.sampled_from(["node1", "", "x"]), preset=bad_presets)
def test_cluster(action, name, node, preset):
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        if not _ok_text(name + preset):
            return
        if action == "up":
            (cwd / "bad.toml").write_text(preset)
            args = ["cluster", "up", "bad.toml"]
        elif action in ("status", "presets"):
            args = ["cluster", action] + ([name] if action == "status" and name else [])
        elif action in ("logs", "down"):
            args = ["cluster", action, name]
        else:
            args = ["cluster", action, name, node]
        check(run_cli(args, cwd))
