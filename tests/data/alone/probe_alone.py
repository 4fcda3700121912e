"""Collected only by tests/unit/test_alone.py (-o python_files=probe_*.py): a test marked alone."""

import pytest


@pytest.mark.alone
def test_alone():
    pass
