"""Inputs that used to hang, trace back or lose a run (issue 14), each refused or survived."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = ROOT / "workbench" / "workloads"


def workbench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("workbench: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_recordcount_zero_ends_with_one_line_for_every_read_workload():
    # recordcount=0 is YCSB's "largest int": 2^31 records to preload into memory.
    uniform = ("-p", "requestdistribution=uniform")
    for workload, extra in (("workloada", ()), ("workloadc", ()), ("workloada", uniform)):
        done = workbench("run", "-P", str(WORKLOAD / workload), "-db", "memory", "-p", "recordcount=0",
                         "-p", "operationcount=10", *extra, timeout=60)
        line = one_error_line(done)
        assert "preload 2,147,483,647 records" in line and "memory.preload=false" in line


def test_recordcount_zero_on_an_empty_store_counts_not_found():
    done = workbench("run", "-P", str(WORKLOAD / "workloadc"), "-db", "memory", "-p", "recordcount=0",
                     "-p", "operationcount=25", "-p", "memory.preload=false", "-q", timeout=60)
    assert done.returncode == 0, done.stderr
    assert "[READ], Return=NOT_FOUND, 25" in done.stdout


def test_too_many_workers_are_refused_in_one_line():
    line = one_error_line(workbench("run", "-P", str(WORKLOAD / "workloada"), "-db", "memory",
                                    "--workers", "1000", timeout=60))
    assert "workers (1000) is more than the lanes (threadcount=1)" in line
    line = one_error_line(workbench("run", "-P", str(WORKLOAD / "workloada"), "-db", "memory",
                                    "--workers", "1000", "-threads", "1000", timeout=60))
    assert "workers (1000) is far more than this machine's" in line and "per core" in line


def test_empty_table_name_is_refused():
    line = one_error_line(workbench("run", "-P", str(WORKLOAD / "workloada"), "-db", "memory",
                                    "-p", "table=", timeout=60))
    assert "table must not be empty" in line


def test_export_targets_are_checked_before_the_run(tmp_path):
    for target, expected in ((f"ycsb={tmp_path}/missing/x.txt", "does not exist"),
                             (f"ycsb={tmp_path}", "is a directory")):
        done = workbench("run", "-P", str(WORKLOAD / "workloada"), "-db", "memory", "--export", target,
                         timeout=60)
        assert expected in one_error_line(done)
        assert done.stdout == ""  # refused before any operation: no results printed


def test_an_export_that_fails_at_the_end_keeps_the_results(tmp_path):
    # /proc accepts the check (root may write there) but refuses the file: the run's text still
    # reaches stdout and the other export is written.
    good = tmp_path / "ok.csv"
    done = workbench("run", "-P", str(WORKLOAD / "workloada"), "-db", "memory", "-q",
                     "--export", "csv=/proc/workbench-test.csv", "--export", f"ycsb={good}", timeout=60)
    if done.returncode == 2 and "cannot be written" in done.stderr:
        return  # not root: refused up front, which the test above covers
    assert done.returncode == 2, done.stderr
    assert "[OVERALL], Throughput(ops/sec)" in done.stdout
    assert good.read_text().startswith("[OVERALL]")
    assert one_error_line(done).startswith("workbench: error: --export csv=/proc/workbench-test.csv")


def test_a_command_line_builds_only_the_command_it_names_and_the_table_of_commands_is_complete():
    import argparse
    import importlib

    from workbench.cli import COMMAND_MODULES, COMMANDS, build_parser

    def choices(parser: argparse.ArgumentParser) -> set[str]:
        return {c for a in parser._actions if isinstance(a, argparse._SubParsersAction) for c in a.choices}

    registered = {}
    for module in COMMAND_MODULES:  # what each module registers, on a parser of its own
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        registered.update(dict.fromkeys(sub.choices, module))
    assert registered == COMMANDS
    assert choices(build_parser([])) == choices(build_parser(["--help"])) == set(COMMANDS)
    assert choices(build_parser(["rnu"])) == set(COMMANDS)  # a misspelt command: argparse lists them all
    for command, module in COMMANDS.items():
        assert choices(build_parser([command, "--help"])) == {c for c, m in COMMANDS.items() if m == module}


def test_an_unknown_replica_choice_is_one_line_before_any_connection():
    line = one_error_line(workbench("run", "-P", str(WORKLOAD / "workloada"), "-db", "cassandra",
                                    "-p", "cassandra.replicas=banana", "-p", "hosts=127.0.0.250",
                                    "--no-store", timeout=60))
    assert "cassandra.replicas='banana' is not valid (choose one of: shuffle, first)" in line


def test_a_closed_pipe_ends_a_command_quietly_with_sigpipes_status():
    import os

    for args in (("cluster", "presets"), ("lesson", "list")):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the command writes a byte (`| head -0`)
        try:
            done = subprocess.run([sys.executable, "-m", "workbench", *args], stdout=write,
                                  stderr=subprocess.PIPE, text=True, timeout=60, cwd=ROOT)
        finally:
            os.close(write)
        assert done.returncode == 141 and done.stderr == "", (args, done.returncode, done.stderr)
