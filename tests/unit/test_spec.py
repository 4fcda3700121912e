"""WorkloadSpec defaults and validation (workbench/config/spec.py), and how the CLI reports errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from workbench.config.properties import Origin, Properties, merge
from workbench.config.spec import DISTRIBUTIONS, MAX_INT, WorkloadSpec, build_spec, spec_from_args
from workbench.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
WORKLOADS = sorted(p for p in (REPO / "workbench" / "workloads").iterdir() if p.is_file())


def spec_of(*overrides: str, phase: str = "run") -> WorkloadSpec:
    return build_spec(merge([], list(overrides)), phase)


def error_of(*overrides: str, phase: str = "run") -> str:
    with pytest.raises(ConfigError) as err:
        spec_of(*overrides, phase=phase)
    return str(err.value)


def write(tmp_path: Path, text: str, name: str = "workload") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---- defaults ---------------------------------------------------------------------------------


def test_defaults_are_ycsbs() -> None:
    spec = build_spec(Properties())
    assert spec.table == "usertable"
    assert (spec.fieldcount, spec.fieldlength, spec.fieldnameprefix) == (10, 100, "field")
    assert spec.field_names == tuple(f"field{i}" for i in range(10))
    assert (spec.readproportion, spec.updateproportion) == (0.95, 0.05)
    assert spec.insertproportion == spec.scanproportion == spec.readmodifywriteproportion == 0
    assert spec.operation_weights() == {"READ": 0.95, "UPDATE": 0.05}
    assert spec.requestdistribution == "uniform"
    assert (spec.minscanlength, spec.maxscanlength, spec.scanlengthdistribution) == (1, 1000, "uniform")
    assert (spec.insertorder, spec.zeropadding) == ("hashed", 1)
    assert (spec.hotspotdatafraction, spec.hotspotopnfraction) == (0.2, 0.8)
    assert (spec.exponential_percentile, spec.exponential_frac) == (95.0, 0.8571428571)
    assert (spec.readallfields, spec.writeallfields, spec.dataintegrity) == (True, False, False)
    assert (spec.fieldlengthdistribution, spec.minfieldlength) == ("constant", 1)
    assert spec.zipfian_constant == 0.99
    assert spec.insertstart == 0


def test_recordcount_zero_means_javas_max_int() -> None:
    spec = build_spec(Properties())
    assert spec.recordcount == 0
    assert spec.record_total == MAX_INT == 2**31 - 1
    assert spec.insert_total == MAX_INT


def test_insertcount_defaults_to_the_rest_of_recordcount() -> None:
    spec = spec_of("recordcount=1000", "insertstart=250")
    assert spec.insert_total == 750
    assert spec.phase_operation_count("load") == 750
    assert spec_of("recordcount=1000", "insertstart=250", "insertcount=100").insert_total == 100


@pytest.mark.parametrize("path", WORKLOADS, ids=lambda p: p.name)
@pytest.mark.parametrize("phase", ["load", "run"])
def test_every_shipped_workload_file_builds(path: Path, phase: str) -> None:
    spec, props = spec_from_args([str(path)], [], phase)
    assert spec.recordcount > 0
    assert spec.operation_weights(), "every shipped workload has an operation mix"
    assert props.origin("recordcount") is not None


@pytest.mark.parametrize(
    ("name", "weights", "distribution"),
    [
        ("workloada", {"READ": 0.5, "UPDATE": 0.5}, "zipfian"),
        ("workloadb", {"READ": 0.95, "UPDATE": 0.05}, "zipfian"),
        ("workloadc", {"READ": 1.0}, "zipfian"),
        ("workloadd", {"READ": 0.95, "INSERT": 0.05}, "latest"),
        ("workloade", {"SCAN": 0.95, "INSERT": 0.05}, "zipfian"),
        ("workloadf", {"READ": 0.5, "READ-MODIFY-WRITE": 0.5}, "zipfian"),
    ],
)
def test_core_workload_files_have_ycsbs_mix(name: str, weights: dict, distribution: str) -> None:
    spec, _ = spec_from_args([str(REPO / "workbench" / "workloads" / name)], [])
    assert spec.operation_weights() == weights
    assert spec.requestdistribution == distribution
    assert (spec.recordcount, spec.operationcount, spec.readallfields) == (1000, 1000, True)
    if name == "workloade":
        assert (spec.maxscanlength, spec.scanlengthdistribution) == (100, "uniform")


def test_values_are_typed() -> None:
    spec = spec_of(
        "fieldcount=3",
        "readproportion=0.25",
        "writeallfields=TRUE",
        "zipfian.constant=0.5",
        "exponential.percentile=90",
        "hdrhistogram.percentiles=50,99.9",
    )
    assert spec.fieldcount == 3 and isinstance(spec.fieldcount, int)
    assert spec.readproportion == 0.25
    assert spec.writeallfields is True
    assert spec.zipfian_constant == 0.5
    assert spec.exponential_percentile == 90.0
    assert spec.hdr_percentiles == (50.0, 99.9)


# ---- errors -----------------------------------------------------------------------------------


def test_unknown_property_names_file_line_key_and_the_close_match(tmp_path: Path) -> None:
    path = write(tmp_path, "recordcount=10\n# typo below\nreadproportio=0.5\n")
    with pytest.raises(ConfigError) as err:
        spec_from_args([path], [])
    message = str(err.value)
    assert f"{path}:3" in message
    assert "'readproportio'" in message
    assert "did you mean readproportion" in message


def test_unknown_property_from_the_command_line_says_so() -> None:
    message = error_of("recordcont=5")
    assert message.startswith("-p: unknown property 'recordcont'")
    assert "recordcount" in message


def test_unknown_property_without_any_close_match_points_to_the_docs() -> None:
    message = error_of("zzqqxx=1")
    assert "unknown property 'zzqqxx'" in message and "did you mean" not in message


@pytest.mark.parametrize(
    ("override", "kind"),
    [
        ("recordcount=ten", "a whole number"),
        ("fieldcount=1.5", "a whole number"),
        ("readproportion=lots", "a number"),
        ("readproportion=nan", "a number"),
        ("readallfields=yes", "true or false"),
    ],
)
def test_non_numeric_value_names_the_key_and_what_it_should_be(override: str, kind: str) -> None:
    key, _, value = override.partition("=")
    message = error_of(override)
    assert f"{key}='{value}' is not {kind}" in message
    assert f"write e.g. {key}=" in message


def test_negative_proportion_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "readproportion=0.5\nupdateproportion=-0.5\n")
    with pytest.raises(ConfigError) as err:
        spec_from_args([path], [])
    assert f"{path}:2" in str(err.value)
    assert "updateproportion must not be negative" in str(err.value)


ZERO_MIX = ("readproportion=0", "updateproportion=0")


def test_all_zero_mix_is_an_error_for_run() -> None:
    message = error_of(*ZERO_MIX)
    assert "operation mix is empty" in message
    assert "readproportion" in message


def test_all_zero_mix_is_fine_for_load() -> None:
    spec = spec_of(*ZERO_MIX, "recordcount=10", phase="load")
    assert spec.operation_weights() == {}
    assert spec.phase_operation_count("load") == 10


def test_unknown_distribution_lists_the_valid_choices() -> None:
    message = error_of("requestdistribution=zipf")
    assert "unknown requestdistribution 'zipf'" in message
    assert "valid choices: " + ", ".join(DISTRIBUTIONS) in message
    for choice in ("uniform", "zipfian", "latest", "hotspot", "sequential", "exponential"):
        assert choice in message


@pytest.mark.parametrize(
    ("override", "choices"),
    [
        ("insertorder=random", "hashed, ordered"),
        ("fieldlengthdistribution=normal", "constant, uniform, zipfian, histogram"),
        ("scanlengthdistribution=latest", "uniform, zipfian"),
        ("measurement.interval=all", "op, intended, both"),
    ],
)
def test_every_choice_property_lists_its_choices(override: str, choices: str) -> None:
    assert f"valid choices: {choices}" in error_of(override)


def test_insertstart_plus_insertcount_beyond_recordcount() -> None:
    message = error_of("recordcount=100", "insertstart=50", "insertcount=51")
    assert "insertstart (50) + insertcount (51) is more than recordcount (100)" in message
    assert message.startswith("-p: ")
    spec_of("recordcount=100", "insertstart=50", "insertcount=50")  # exactly fits


@pytest.mark.parametrize("phase", ["load", "run"])
def test_insertstart_beyond_recordcount_without_insertcount_is_rejected(phase: str) -> None:
    # insertcount would default to recordcount - insertstart < 0: load inserted nothing and run
    # looped forever looking for a key at or below the last inserted one.
    message = error_of("recordcount=1000", "insertstart=2000", phase=phase)
    assert "insertstart" in message and "recordcount" in message


def test_a_run_with_no_keys_to_choose_from_is_rejected() -> None:
    # insertstart == recordcount leaves the key range empty: a run drew key 1000 forever while the
    # last loaded key is 999 (YCSB divides by zero there).
    message = error_of("recordcount=1000", "insertstart=1000")
    assert "no keys" in message and "insertcount" in message
    assert spec_of("recordcount=1000", "insertstart=1000", phase="load").insert_total == 0
    # An insert-only run chooses no existing keys, so it is fine.
    spec_of(
        "recordcount=1000", "insertstart=1000", "readproportion=0", "updateproportion=0", "insertproportion=1"
    )


def test_dataintegrity_needs_constant_field_lengths() -> None:
    message = error_of("dataintegrity=true", "fieldlengthdistribution=uniform")
    assert "dataintegrity needs fieldlengthdistribution=constant" in message
    assert spec_of("dataintegrity=true").dataintegrity is True


@pytest.mark.parametrize("value", ["1", "1.0", "0", "-0.5"])
def test_zipfian_constant_must_be_positive_and_not_one(value: str) -> None:
    assert "zipfian.constant must be > 0 and not 1" in error_of(f"zipfian.constant={value}")


@pytest.mark.parametrize("value", ["0.5", "1.5", "2"])
def test_zipfian_constant_accepts_any_other_positive_value(value: str) -> None:
    assert spec_of(f"zipfian.constant={value}").zipfian_constant == float(value)


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        (("fieldcount=0",), "fieldcount must be at least 1"),
        (("minscanlength=10", "maxscanlength=5"), "maxscanlength is below minscanlength"),
        (("minfieldlength=200",), "minfieldlength must be between 0 and fieldlength"),
        (("hotspotdatafraction=1.5",), "hotspotdatafraction must be between 0 and 1"),
        (("exponential.percentile=100",), "exponential.percentile must be in (0, 100)"),
        (("workload=site.ycsb.workloads.RestWorkload",), "is not supported"),
        (("exportfile=out.txt",), "use --export ycsb=FILE"),
    ],
)
def test_other_rules(overrides: tuple[str, ...], fragment: str) -> None:
    assert fragment in error_of(*overrides)


def test_ycsb_keys_we_accept_or_ignore() -> None:
    spec = spec_of(
        "workload=site.ycsb.workloads.CoreWorkload",
        "measurementtype=hdrhistogram",
        "dotransactions=true",
        "measurement.trackjvm=false",
    )
    assert spec == WorkloadSpec()


def test_binding_prefixed_keys_go_into_binding_properties() -> None:
    props = Properties()
    props.set("memory.store", "x", Origin("f", 1))
    props.set("memory.latency_us", "5", Origin("-p"))
    spec = build_spec(props)
    assert spec.binding_properties == {"memory.store": "x", "memory.latency_us": "5"}
    assert spec.table == "usertable"


def test_the_error_points_at_the_value_that_won_the_merge(tmp_path: Path) -> None:
    good = write(tmp_path, "fieldcount=5\n", "good")
    bad = write(tmp_path, "\n\nfieldcount=many\n", "bad")
    with pytest.raises(ConfigError) as err:
        spec_from_args([good, bad], [])
    assert f"{bad}:3: fieldcount='many'" in str(err.value)
    spec, _ = spec_from_args([good, bad], ["fieldcount=7"])
    assert spec.fieldcount == 7


# ---- the CLI prints one line and exits with status 2 -------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("workbench: error: ")
    assert result.stdout == ""
    return lines[0]


def test_cli_unknown_property_in_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, "recordcount=10\nreadproportio=0.5\n")
    line = assert_one_line_error(run_cli("run", "-P", path))
    assert f"{path}:2" in line and "readproportio" in line and "readproportion" in line


def test_cli_missing_workload_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere" / "workloadz")
    line = assert_one_line_error(run_cli("run", "-P", missing))
    assert missing in line


def test_cli_unknown_distribution() -> None:
    line = assert_one_line_error(
        run_cli("run", "-P", "workloads/workloada", "-p", "requestdistribution=zipf")
    )
    assert "valid choices: uniform, zipfian, latest, hotspot, sequential, exponential" in line


def test_cli_all_zero_mix() -> None:
    line = assert_one_line_error(
        run_cli("run", "-P", "workloads/workloada", "-p", "readproportion=0", "-p", "updateproportion=0")
    )
    assert "operation mix is empty" in line
