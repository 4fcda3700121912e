"""The JSON run file: exact round trip of the whole RunResult."""

from __future__ import annotations

import json

import pytest
from test_results_builders import build_run, reference

from workbench.errors import WorkbenchError
from workbench.results.jsonfile import read_json, write_json
from workbench.results.ycsb_text import read_ycsb_text


def test_workbench_run_round_trips_to_an_equal_result(tmp_path) -> None:
    run = build_run()
    run.intervals[0].measurements["READ"].percentiles[99.999] = 12345
    path = tmp_path / "run.json"
    write_json(run, path)
    back = read_json(path)
    assert back == run
    assert isinstance(back.events[1].value, tuple)
    assert 99.999 in back.intervals[0].measurements["READ"].percentiles
    assert back.measurements[0].histogram == run.measurements[0].histogram


def test_imported_ycsb_text_round_trips_with_its_extra_lines(tmp_path) -> None:
    run = read_ycsb_text(reference("hbase-workloada-run.txt"))
    path = tmp_path / "run.json"
    write_json(run, path)
    back = read_json(path)
    assert back == run
    assert back.environment["ycsb_extra"][0] == ("TOTAL_GCS_G1_Young_Generation", "Count", 14)


def test_file_is_plain_json_with_a_format_marker(tmp_path) -> None:
    path = tmp_path / "run.json"
    write_json(build_run(ticks=1), path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert (doc["format"], doc["version"]) == ("workbench-run", 1)
    assert doc["run"]["measurements"][0]["percentiles"]["__pairs__"][0][0] == 50.0


def test_other_json_is_refused(tmp_path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(WorkbenchError, match="not a workbench run"):
        read_json(path)


def test_the_manifest_is_exported_as_it_is_and_read_back(tmp_path) -> None:
    run = build_run(ticks=1)
    run.manifest = {"format": 1, "command": "workbench run -P workloada", "host": {"cpus": 8},
                    "workload": {"files": [{"path": "/w/workloada", "sha256": "ab" * 32}], "seed": 7}}
    path = tmp_path / "run.json"
    write_json(run, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["run"]["manifest"] == run.manifest
    assert read_json(path).manifest == run.manifest
    write_json(build_run(ticks=1), path)
    assert json.loads(path.read_text(encoding="utf-8"))["run"]["manifest"] == {}  # a run without one
