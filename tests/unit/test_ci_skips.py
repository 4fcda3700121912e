"""Under CI a servers, docker or Ray test cannot pass by skipping (tests/support/marks.py CiSkips, which
tests/conftest.py registers): a small suite of its own, run by a real pytest with the same plugin,
with and without CI=true."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[2]  # the checkout, where tests.support is found

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from tests.support import marks

def pytest_configure(config):
    config.addinivalue_line("markers", "servers: x")
    config.addinivalue_line("markers", "docker: x")
    config.pluginmanager.register(marks.CiSkips(), "workbench-ci-skips")
"""

SUITE = """
import pytest

def test_fast_passes():
    pass

@pytest.mark.skipif(True, reason="no chromium here")
def test_fast_skips():
    pass

@pytest.mark.servers
def test_server_passes():
    pass

@pytest.mark.servers
def test_server_without_jars():
    pytest.skip("needs the cassandra 5.0.9 jars")

@pytest.mark.docker
@pytest.mark.skipif(True, reason="no Docker engine answers")
def test_docker_without_engine():
    pass
"""

RAY = """
import pytest
pytestmark = pytest.mark.servers

@pytest.fixture
def netns():
    pytest.skip("cannot make a network namespace")

def test_ray_in_a_namespace(netns):
    pass
"""

MISSING = """
import pytest
pytest.importorskip("no_such_module_here", reason="the ray extra is not installed")
"""


def _run(tmp_path: Path, ci: str | None, files: dict[str, str]) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-q", "-rfs", str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def test_under_ci_a_skipped_server_docker_or_ray_test_fails_naming_why(tmp_path):
    done = _run(tmp_path, "true", {"test_suite.py": SUITE, "test_ray.py": RAY})
    out = done.stdout
    assert done.returncode == 1, out
    assert "this servers test would have been skipped (needs the cassandra 5.0.9 jars)" in out
    assert "this docker test would have been skipped (no Docker engine answers)" in out
    assert "this ray test would have been skipped (cannot make a network namespace)" in out
    # a fast-tier skip stays a skip; the tiers' line says what ran
    assert "tests run by tier: fast 1 passed, 1 skipped; servers 1 passed, 1 failed; docker 1 failed; " \
           "ray 1 failed" in out, out
    assert "1 failed, 2 passed, 1 skipped, 2 errors in" in out, out


def test_under_ci_a_test_module_skipped_whole_stops_the_run_naming_why(tmp_path):
    done = _run(tmp_path, "true", {"test_suite.py": SUITE, "test_missing.py": MISSING})
    assert done.returncode == 2, done.stdout
    assert "test_missing.py would have been skipped whole (the ray extra is not installed)" in done.stdout
    done = _run(tmp_path, None, {})  # the same folder without CI: the module skips
    assert done.returncode == 0 and "2 passed, 4 skipped in" in done.stdout, done.stdout


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_skips_stay_skips(tmp_path, ci):
    done = _run(tmp_path, ci, {"test_suite.py": SUITE, "test_ray.py": RAY, "test_missing.py": MISSING})
    out = done.stdout
    assert done.returncode == 0, out
    assert "tests run by tier: fast 1 passed, 1 skipped; servers 1 passed, 1 skipped; docker 1 skipped; " \
           "ray 1 skipped" in out, out
    assert "2 passed, 5 skipped" in out, out
