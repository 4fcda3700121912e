"""What the native clients' unit tests share: a transport that keeps every byte a connection
writes, and the fixture that runs a module's tests on both receive paths (the compiled one,
csrc/, where it is built, and the Python one)."""

from __future__ import annotations

import pytest


class Transport:
    def __init__(self) -> None:
        self.written = b""

    def write(self, data: bytes) -> None:
        self.written += data

    def abort(self) -> None:
        pass

    def close(self) -> None:
        pass


def both_receive_paths(*modules):
    """An autouse fixture for a test module: each test runs with every module's `_fast` set to
    the compiled path (skipped where it is not built) and to None (the Python)."""
    compiled = modules[0]._fast

    @pytest.fixture(autouse=True, params=["C", "Python"])
    def receive_path(request, monkeypatch):
        if request.param == "C" and compiled is None:
            pytest.skip("workbench._speedups is not built here")
        for module in modules:
            monkeypatch.setattr(module, "_fast", compiled if request.param == "C" else None)
        return request.param

    return receive_path
