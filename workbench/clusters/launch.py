"""Helpers shared by the local server kinds: node plans, templates, probes, start-up errors."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from workbench.errors import ClusterError


@dataclass(frozen=True)
class NodePlan:
    """How to start one node: its identity, files, command line and the ports it will bind."""

    name: str
    address: str
    port: int
    dir: Path
    log: Path
    console_log: Path
    argv: tuple[str, ...]
    ports: tuple[tuple[str, int, str], ...]  # (address, port, what) that must be free


class NotReady(Exception):
    """A node did not become ready before the deadline (turned into a StartupError)."""

    def __init__(self, node: str, what: str) -> None:
        super().__init__(f"{node} {what}")
        self.node = node
        self.what = what


class StartupError(ClusterError):
    """A server died or timed out during start-up: names its log and shows the last lines."""

    def __init__(self, message: str, log: Path, hint: str | None = None) -> None:
        super().__init__(f"{message}; see {log}", hint=hint)
        self.log = log
        self.tail = tail(log, 15)

    def __str__(self) -> str:
        text = super().__str__()
        if self.tail:
            text += "\n" + "\n".join("    " + line for line in self.tail.splitlines())
        return text


def template_text(name: str) -> str:
    return resources.files("workbench.clusters").joinpath("templates", name).read_text()


def tcp_open(address: str, port: int, timeout: float = 0.5) -> bool:
    """True if something accepts TCP connections on address:port."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def tail(path: Path, lines: int) -> str:
    """The last `lines` lines of a text file ('' if missing), read from the end."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            data = handle.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])
