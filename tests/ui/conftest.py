"""Fixtures for the app's tests: every app gets its own state directory (no real clusters of
the developer's are seen or touched) and the jar cache of the machine."""

from __future__ import annotations

import pytest

from workbench.drive.session import Session


@pytest.fixture
def session(tmp_path, monkeypatch) -> Session:
    monkeypatch.setenv("WORKBENCH_STATE_DIR", str(tmp_path / "state"))
    return Session(state_dir=tmp_path / "state")
