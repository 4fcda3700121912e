"""`workbench keys`: the key-popularity summary (commands/keys.py, core/popularity.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from workbench.config.keys import build_key_name
from workbench.config.properties import merge
from workbench.config.spec import build_spec
from workbench.core.popularity import popularity

REPO = Path(__file__).resolve().parents[2]


def run_keys(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", "keys", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def share(output: str, label: str) -> float:
    match = re.search(rf"^{re.escape(label)}\s+([\d.]+)% of draws \(([\d,]+) keys\)$", output, re.M)
    assert match, output
    return float(match.group(1)) / 100


def test_keys_on_workloada_shows_scrambled_zipfians_flat_skew() -> None:
    result = run_keys("-P", "workloads/workloada", "-p", "seed=1", "--samples", "20000")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert re.search(r"^distribution\s+zipfian \(constant 0\.99\)$", out, re.M)
    assert re.search(r"^keys\s+1,000$", out, re.M)
    assert re.search(r"^samples\s+20,000$", out, re.M)
    distinct = re.search(r"^distinct keys\s+([\d,]+) \(([\d.]+)% of the keys\)$", out, re.M)
    assert distinct and 900 <= int(distinct.group(1).replace(",", "")) <= 1000
    assert re.search(r"^hottest 1%\s+[\d.]+% of draws \(10 keys\)$", out, re.M)
    assert 0.10 <= share(out, "hottest 1%") <= 0.16
    assert 0.26 <= share(out, "hottest 10%") <= 0.32
    assert share(out, "hottest 0.1%") < share(out, "hottest 1%") < share(out, "hottest 10%")
    first = re.search(r"^first keys\s+(.+)$", out, re.M)
    assert first and len(first.group(1).split()) == 10
    assert all(re.fullmatch(r"user\d+", k) for k in first.group(1).split())


def test_keys_is_reproducible_with_a_seed() -> None:
    args = ("-P", "workloads/workloadb", "-p", "seed=7", "--samples", "2000")
    assert run_keys(*args).stdout == run_keys(*args).stdout


def test_keys_reports_a_bad_property_as_one_line_error() -> None:
    result = run_keys("-P", "workloads/workloada", "-p", "requestdistribution=zipf")
    assert result.returncode == 2
    assert result.stderr.startswith("workbench: error: ") and len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_keys_rejects_zero_samples() -> None:
    result = run_keys("-P", "workloads/workloada", "--samples", "0")
    assert result.returncode == 2
    assert "--samples" in result.stderr and "Traceback" not in result.stderr


def test_popularity_of_uniform_and_ordered_keys() -> None:
    spec = build_spec(merge([], ["recordcount=100", "seed=3", "insertorder=ordered"]), "run")
    pop = popularity(spec, 20_000, first=5)
    assert (pop.keys, pop.samples, pop.distinct) == (100, 20_000, 100)
    k, top10 = pop.hot_shares[0.1]
    assert k == 10 and 0.10 <= top10 <= 0.13  # uniform: about 10%
    assert sum(pop.counts.values()) == 20_000
    assert all(re.fullmatch(r"user\d{1,2}", key) for key in pop.first_keys)


def test_popularity_names_keys_as_a_run_would() -> None:
    spec = build_spec(merge([], ["recordcount=100", "seed=3", "zeropadding=25"]), "run")
    pop = popularity(spec, 50, first=50)
    hashed = {build_key_name(n, 25) for n in range(100)}
    assert set(pop.first_keys) <= hashed
