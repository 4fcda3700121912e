"""YCSB's final text summary: export, import, and the real 0.17.0 files."""

from __future__ import annotations

import io
import math

import pytest
from test_results_builders import build_run, reference

from workbench.errors import WorkbenchError
from workbench.results.model import Measurement, RunResult
from workbench.results.ycsb_text import format_ycsb_text, read_ycsb_text, write_ycsb_text

REAL = ["cassandra-workloada-load.txt", "cassandra-workloada-run.txt", "hbase-workloada-run.txt"]


@pytest.mark.parametrize("name", REAL)
def test_real_file_imports_and_exports_byte_for_byte(name: str) -> None:
    text = reference(name).read_text(encoding="utf-8")
    run = read_ycsb_text(reference(name))
    assert run.source == "ycsb-text"
    assert format_ycsb_text(run, "0.17") == text


def test_real_run_figures() -> None:
    run = read_ycsb_text(reference("cassandra-workloada-run.txt"))
    assert (run.phase, run.runtime_ms, run.operations) == ("run", 14974, 50000)
    assert run.throughput == 3339.1211433150793
    assert [m.name for m in run.measurements] == ["READ", "CLEANUP", "UPDATE"]
    read = run.measurement("READ")
    assert read == Measurement("READ", 24999, 1819.1159646385856, 150, 123327,
                               {95.0: 4647, 99.0: 12647}, {"OK": 24999})
    assert run.measurement("CLEANUP").returns == {}
    extra = run.environment["ycsb_extra"]
    assert extra[0] == ("TOTAL_GCS_G1_Young_Generation", "Count", 5)
    assert ("TOTAL_GC_TIME_%", "Time(%)", 0.29384266061172704) in extra
    assert len(extra) == 9


def test_load_file_is_recognised_as_a_load() -> None:
    run = read_ycsb_text(reference("cassandra-workloada-load.txt"))
    assert (run.phase, run.operations) == ("load", 20000)
    assert run.measurement("INSERT").average_us == 2788.9807


@pytest.mark.parametrize("layout", ["0.17", "master"])
def test_own_export_round_trips_exactly(layout: str) -> None:
    first = format_ycsb_text(build_run(), layout)
    again = format_ycsb_text(read_ycsb_text(first), layout)
    assert again == first


def test_layouts_differ_by_the_50th_percentile() -> None:
    run = build_run()
    old = format_ycsb_text(run, "0.17").splitlines()
    new = format_ycsb_text(run, "master").splitlines()
    p50 = f"[READ], 50thPercentileLatency(us), {run.measurement('READ').percentiles[50.0]}"
    assert p50 in new and p50 not in old
    assert [line for line in new if "50thPercentile" not in line] == old
    i = new.index(p50)
    assert new[i - 1].startswith("[READ], MaxLatency(us), ")
    assert new[i + 1].startswith("[READ], 95thPercentileLatency(us), ")


def test_order_and_number_formats() -> None:
    run = build_run()
    lines = format_ycsb_text(run).splitlines()
    assert lines[0] == f"[OVERALL], RunTime(ms), {run.runtime_ms}"
    assert lines[1].startswith("[OVERALL], Throughput(ops/sec), ")
    assert [line.split(", ")[1] for line in lines[2:9]] == [
        "Operations", "AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)",
        "95thPercentileLatency(us)", "99thPercentileLatency(us)", "Return=OK"]
    cleanup = [line for line in lines if line.startswith("[CLEANUP]")]
    assert len(cleanup) == 6 and not any("Return=" in line for line in cleanup)
    assert "[READ-FAILED], Return=ERROR, " in format_ycsb_text(run)
    assert not any("TOTAL_GC" in line for line in lines)


def test_large_average_prints_like_java() -> None:
    run = RunResult("run", "x", 1000, 1, 1.0, [Measurement("READ", 1, 12345678.0, 1, 2)])
    assert "[READ], AverageLatency(us), 1.2345678E7\n" in format_ycsb_text(run)


def test_percentiles_property_selects_lines_with_ycsb_ordinals() -> None:
    run = build_run()
    run.properties["hdrhistogram.percentiles"] = "90,99.9,99.99"
    text = format_ycsb_text(run)
    assert "[READ], 90thPercentileLatency(us), " in text
    assert "[READ], 99.9PercentileLatency(us), " in text
    assert "[READ], 99.99PercentileLatency(us), " in text
    assert "95thPercentile" not in text
    back = read_ycsb_text(text).measurement("READ")
    assert back.percentiles == {p: run.measurement("READ").percentiles[p]
                                for p in (90.0, 99.9, 99.99)}


def test_empty_measurement_prints_as_each_hdrhistogram_version_would() -> None:
    run = RunResult("run", "x", 1000, 0, 0.0, [Measurement("READ", 0, 0.0, 0, 0)])
    old = format_ycsb_text(run, "0.17")
    assert "[READ], AverageLatency(us), NaN\n" in old
    assert "[READ], MinLatency(us), 9223372036854775807\n" in old
    assert "[READ], MaxLatency(us), 0\n[READ], 95thPercentileLatency(us), 0\n" in old
    new = format_ycsb_text(run, "master")
    assert "[READ], AverageLatency(us), 0.0\n[READ], MinLatency(us), 0\n" in new
    back = read_ycsb_text(old).measurement("READ")
    assert (back.average_us, back.min_us, back.max_us) == (0.0, 0, 0)
    assert not math.isnan(back.average_us)


def test_write_to_stream_and_path(tmp_path) -> None:
    run = build_run()
    buf = io.StringIO()
    write_ycsb_text(run, buf, layout="master")
    path = tmp_path / "out.txt"
    write_ycsb_text(run, path, layout="master")
    assert buf.getvalue() == path.read_text(encoding="utf-8") == format_ycsb_text(run, "master")
    assert read_ycsb_text(path).measurement("UPDATE").operations == \
        run.measurement("UPDATE").operations


def test_noise_around_the_summary_is_ignored() -> None:
    text = ("Loading workload...\nStarting test.\n"
            + reference("hbase-workloada-run.txt").read_text(encoding="utf-8"))
    run = read_ycsb_text(text, db="hbase")
    assert run.db == "hbase" and run.measurement("UPDATE").max_us == 445951


def test_text_without_overall_is_refused() -> None:
    with pytest.raises(WorkbenchError, match="RunTime"):
        read_ycsb_text("[READ], Operations, 5\n")


def test_unknown_layout_is_refused() -> None:
    with pytest.raises(ValueError, match="0.17, master"):
        format_ycsb_text(build_run(), "0.16")
