"""A run of the whole suite puts the fast tier in a child pytest with a network namespace of its
own (tests/support/alongside.py); its failures fail the run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import alongside

ROOT = Path(__file__).resolve().parents[2]


def _whole_suite(tmp_path: Path, **more: str) -> tuple[subprocess.CompletedProcess, dict, dict, dict]:
    """pytest with no paths (as the whole suite runs), its testpaths the probe file alone."""
    env = {k: v for k, v in os.environ.items()
           if k not in (alongside.CHILD, "WORKBENCH_TESTS_SERIAL") and not k.startswith("PYTEST_XDIST")}
    env.update(PROBE_DIR=str(tmp_path), WORKBENCH_TESTS_OWN_CLUSTERS="tests/data/alongside/probe_own.py",
               **more)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "-o", "testpaths=tests/data/alongside", "-o", "python_files=probe_*.py"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    read = [json.loads((tmp_path / n).read_text()) if (tmp_path / n).exists() else {}
            for n in ("fast.json", "heavy.json", "own.json")]
    return done, read[0], read[1], read[2]


@pytest.mark.parametrize("processes", ["1", "2"])
def test_the_fast_tier_runs_in_a_child_with_only_loopback_and_the_run_passes(tmp_path, processes):
    done, fast, heavy, own = _whole_suite(tmp_path, WORKBENCH_TESTS_CHILD_PROCESSES=processes)
    assert done.returncode == 0, done.stdout[-3000:]
    if alongside._namespaces_work():
        assert fast["interfaces"] == ["lo"] and fast["pid"] != heavy["pid"], (fast, heavy)
        assert "the fast tier runs alongside" in done.stdout
        assert "the fast tier, run alongside" in done.stdout and "1 passed, 2 deselected" in done.stdout
        # the child's fast tier on as many processes as asked (xdist's report no deselected tests)
        if processes == "2":
            assert "created: 2/2 workers" in done.stdout and fast["worker"], fast
        else:
            assert "created:" not in done.stdout and not fast["worker"], fast
        assert fast["pid"] != own["pid"], fast
        # one lock file for the `alone` tests of both processes (tests/support/alone.py)
        assert fast["alone"] and fast["alone"] == heavy["alone"] == own["alone"], (fast, heavy, own)
        # a server test of a file that starts its own clusters: in the child's namespace too,
        # after the fast tier, and not in the parent (1 passed, 2 deselected there)
        assert own["interfaces"] == ["lo"] and own["pid"] not in (fast["pid"], heavy["pid"]), own
        assert "then tests/data/alongside/probe_own.py" in done.stdout
        reports = 1 if processes == "2" else 2  # the parent's, and the serial child's
        assert done.stdout.count("1 passed, 2 deselected") == reports, done.stdout[-3000:]
    else:  # no namespaces here (not root): one process runs both, as before
        assert fast["pid"] == heavy["pid"] == own["pid"], (fast, heavy, own)


def test_a_failure_in_the_fast_tier_fails_the_run(tmp_path):
    done, fast, heavy, _ = _whole_suite(tmp_path, PROBE_FAIL="1")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "failed on purpose" in done.stdout and heavy
    if alongside._namespaces_work():
        assert "the fast tier failed (exit status 1)" in done.stdout
        # and, after the parent's last line, the child's failures in brief with their messages
        last = [m.end() for m in re.finditer(r"^=+ [^\n]* in [\d.]+s[^\n]* =+$", done.stdout, re.M)][-1]
        tail = done.stdout[last:]
        assert "failures run alongside, in brief" in tail, done.stdout[-3000:]
        assert "FAILED tests/data/alongside/probe_alongside.py::test_fast - " in tail, tail
        assert "E   AssertionError: failed on purpose" in tail, tail


REPORT = """\
=================================== FAILURES ===================================
_ test_kinds[2] _
[gw1] linux -- Python 3.11.2 /check/.venv/bin/python
tests/unit/test_engine.py:318: in test_kinds
    assert totals == sorted(totals)
E   assert [32, 72] == [72, 32]
E     Full diff:
________________________________ TestApp.test_x ________________________________
tests/ui/test_app.py:9: in test_x
    assert False, "the app"
E   AssertionError: the app
E   assert False
_____________________ ERROR at setup of test_servers_up ______________________
tests/e2e/test_s.py:5: in up
    raise RuntimeError("no JDK")
E   RuntimeError: no JDK
=========================== short test summary info ============================
FAILED tests/unit/test_engine.py::test_kinds[2] - assert [32, 72] == [72, 32]
  Full diff:
FAILED tests/ui/test_app.py::TestApp::test_x - AssertionError: the app
ERROR tests/e2e/test_s.py::test_servers_up - RuntimeError: no JDK
============= 2 failed, 7 passed, 1 error in 3.10s =============
"""


def test_the_brief_names_each_failure_with_its_first_message_lines():
    assert alongside.brief(REPORT, per_failure=1) == [
        "FAILED tests/unit/test_engine.py::test_kinds[2] - assert [32, 72] == [72, 32]",
        "  tests/unit/test_engine.py:318: in test_kinds",
        "      assert totals == sorted(totals)",
        "  E   assert [32, 72] == [72, 32]",
        "FAILED tests/ui/test_app.py::TestApp::test_x - AssertionError: the app",
        "  tests/ui/test_app.py:9: in test_x",
        '      assert False, "the app"',
        "  E   AssertionError: the app",
        "ERROR tests/e2e/test_s.py::test_servers_up - RuntimeError: no JDK",
        "  tests/e2e/test_s.py:5: in up",
        '      raise RuntimeError("no JDK")',
        "  E   RuntimeError: no JDK"]
    assert len(alongside.brief(REPORT)) == 14 and alongside.brief("7 passed in 3.10s") == []
    assert alongside.brief(REPORT, width=12)[1:4] == ["  tests/unit/t", "      assert t", "  E   assert ["]


def test_every_test_moved_to_the_child_exists():
    """A renamed test in OWN_CLUSTERS would run in the parent and fail in the child: caught here."""
    for entry in alongside.OWN_CLUSTERS:
        path, _, name = entry.partition("::")
        text = (ROOT / path).read_text()
        assert not name or f"\ndef {name}(" in text or f"\nasync def {name}(" in text, entry
