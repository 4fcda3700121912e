"""`workbench check` says what its paced run's p99 figures are (issue 55, 7): the paced run's
achieved rate against the offered one, and whether the load was delivered, under the verdicts.
With WORKBENCH_CHECK_SCALE=0.15, as tests/integration/test_check.py, about 8 s."""

from __future__ import annotations

import re

import pytest

from tests.support.inprocess import workbench
from workbench.drive.check import SCALE_ENV


def test_the_check_says_its_paced_run_achieved_against_offered(tmp_path):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SCALE_ENV, "0.15")
        done = workbench(tmp_path / "runs.db", "check", "-db", "memory", "--quick", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("workbench: check: the paced run: ")]
    # half of A's maximum, offered; what it achieved and what that was
    assert re.search(r"the paced run: [\d,]+ of [\d,]+ ops/s offered \([\d.]+%\): ", line), line
    assert ("the offered load was delivered" in line or "not latency at the offered load" in line), line
