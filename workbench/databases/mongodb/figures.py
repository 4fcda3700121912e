"""The MongoDB-protocol server's own figures: `serverStatus`, asked once a second with pymongo
(the binding's own URL: login and TLS as the run's), where the server answers it.

MongoDB answers opcounters (requests: the operations and commands it counted over the second,
less this source's own command) and globalLock's queue and active clients (queue.readers/
queue.writers .pending and .active). FerretDB 1.x answers part of it: only each command's count
(metrics.commands: requests from their totals); it has no opcounters, globalLock, connections, mem
or wiredTiger, and the run says so once (`notes`).
"""

from __future__ import annotations

from typing import Any

from workbench.metrics.server import NodeSample, SourceUnavailable

OWN_COMMANDS = 1  # this source's serverStatus, counted by the server like any other
SECTIONS = ("opcounters", "globalLock", "connections", "mem", "wiredTiger")


def counted(status: dict[str, Any]) -> float | None:
    """The operations the server counted since it started: opcounters (MongoDB), or the totals of
    metrics.commands (FerretDB); None when it says neither."""
    ops = status.get("opcounters")
    if isinstance(ops, dict):
        return float(sum(v for v in ops.values() if isinstance(v, int | float) and not isinstance(v, bool)))
    metrics = status.get("metrics")
    commands = metrics.get("commands") if isinstance(metrics, dict) else None
    if isinstance(commands, dict):
        return float(sum(c.get("total", 0) for c in commands.values()
                         if isinstance(c, dict) and isinstance(c.get("total", 0), int | float)))
    return None


def queue_figures(status: dict[str, Any]) -> dict[str, float]:
    """queue.readers/queue.writers .pending (globalLock.currentQueue) and .active
    (globalLock.activeClients), where the server says them."""
    lock = status.get("globalLock")
    out: dict[str, float] = {}
    if not isinstance(lock, dict):
        return out
    for part, what in (("currentQueue", "pending"), ("activeClients", "active")):
        section = lock.get(part)
        if isinstance(section, dict):
            for who in ("readers", "writers"):
                value = section.get(who)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    out[f"queue.{who}.{what}"] = float(value)
    return out


def lacks(status: dict[str, Any]) -> list[str]:
    """The serverStatus sections a server left out (FerretDB: all of SECTIONS)."""
    return [name for name in SECTIONS if name not in status]


class ServerStatus:
    """The source: one node (`node`, the name its figures go under) reached at `url`."""

    name = "serverStatus"

    def __init__(self, node: str, url: str, timeout_ms: int = 800) -> None:
        self.node, self._url, self._timeout_ms = node, url, timeout_ms
        self._client: Any = None
        self._last: float | None = None
        self.notes: list[str] = []  # what the run says once about this source

    def sample(self, now: float) -> list[NodeSample]:
        from pymongo import MongoClient
        from pymongo.errors import OperationFailure

        if self._client is None:
            self._client = MongoClient(self._url, serverSelectionTimeoutMS=self._timeout_ms,
                                       socketTimeoutMS=self._timeout_ms, connectTimeoutMS=self._timeout_ms,
                                       appname="workbench serverStatus")
        try:
            status = self._client.admin.command("serverStatus")
        except OperationFailure as exc:
            if exc.code in (13, 59, 115):  # unauthorized, no such command, not supported
                raise SourceUnavailable(f"no server figures: serverStatus refused ({exc.code}: "
                                        f"{str(exc)[:120]})") from None
            raise
        figures = queue_figures(status)
        total = counted(status)
        if total is not None and self._last is not None:
            figures["requests"] = max(0.0, total - self._last - OWN_COMMANDS)
        self._last = total
        missing = lacks(status)
        if missing and not self.notes:
            server = "FerretDB" if "ferretdbVersion" in status else str(status.get("process") or "the server")
            self.notes.append(f"{server} answers serverStatus without {', '.join(missing)}: "
                              + ("only its command counts (requests) are seen" if total is not None
                                 else "nothing is seen"))
        return [NodeSample(self.node, figures)]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def server_sources(cluster: Any) -> list[Any]:
    """The serverStatus source of a MongoDB-protocol cluster (the descriptor's `server_sources`):
    the first node that serves clients, by the binding's own URL."""
    from workbench.databases.gc_figures import node_keys
    from workbench.databases.mongodb import mongodb_url

    serving = [n for n in cluster.nodes if not cluster.clients or n.name in cluster.clients]
    serving = serving or list(cluster.nodes)
    if not serving:
        return []
    url = mongodb_url(cluster)
    if cluster.provider != "external":
        url += "&directConnection=true"
    return [ServerStatus(node_keys(cluster.nodes)[serving[0].name], url)]
