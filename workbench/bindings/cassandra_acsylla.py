"""acsylla as the load driver: asyncio-native, over ScyllaDB's fork of the C++ driver.

One session per worker process carries every lane; the C++ driver runs the sockets on its own IO
thread and resolves awaitables on our loop, so there is no thread per request. Consistency and
protocol version are always set explicitly (acsylla's default consistency is LOCAL_ONE).
Driver errors become `QueryFailed(kind)` with the kind named as cassandra-driver names it, so the
report reads the same whichever driver ran.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from time import perf_counter_ns
from typing import Any

import acsylla
from acsylla.errors import CassException

from workbench.bindings.cassandra_errors import QueryFailed, kind_of
from workbench.errors import BindingError

_SHARD_WARNING = "SHARD-AWARENESS"


class _QuietShardWarning(logging.Filter):
    """Cassandra has no shards: the fork's "Continuing WITHOUT SHARD-AWARENESS" is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return _SHARD_WARNING not in record.getMessage()


_logger = logging.getLogger("acsylla")
if not any(isinstance(f, _QuietShardWarning) for f in _logger.filters):
    _logger.addFilter(_QuietShardWarning())


def _read_pem(path: str | None) -> str | None:
    if not path:
        return None
    with open(path, encoding="ascii") as f:  # the C++ driver takes PEM text, not a path
        return f.read()


class AcsyllaSession:
    """Prepared statements and execution on one acsylla session (see cassandra.py's contract)."""

    driver = "acsylla"
    errors = (CassException, QueryFailed)

    def __init__(self, session: Any) -> None:
        self.session = session
        self.execute = session.execute  # request -> awaitable Result

    @classmethod
    async def connect(cls, opts: Any) -> AcsyllaSession:
        ssl: dict[str, Any] = {}
        if opts.use_ssl:
            ssl = {
                "ssl_enabled": True,
                "ssl_trusted_cert": _read_pem(opts.ssl_cafile),
                "ssl_cert": _read_pem(opts.ssl_certfile),
                "ssl_private_key": _read_pem(opts.ssl_keyfile),
                "ssl_private_key_password": opts.ssl_keypassword or "",
                "ssl_verify_flags": {"none": acsylla.SSLVerifyFlags.NONE,
                                     "peer": acsylla.SSLVerifyFlags.PEER_CERT,
                                     "identity": acsylla.SSLVerifyFlags.PEER_IDENTITY}[opts.ssl_verify],
            }
        cluster = acsylla.create_cluster(
            list(opts.hosts),
            port=opts.port,
            username=opts.username,
            password=opts.password,
            connect_timeout=opts.connect_timeout_ms / 1000,
            request_timeout=opts.read_timeout_ms / 1000,
            protocol_version=opts.protocol_version,  # 3 or 4 (options.py refuses 5 here)
            consistency=acsylla.Consistency[opts.read_consistency],
            retry_policy="fallthrough",  # no hidden retries: every failure is counted by kind
            token_aware_routing_shuffle_replicas=opts.replicas == "shuffle",
            application_name="workbench",
            **ssl,
        )
        try:
            session = await cluster.create_session()
        except CassException as exc:
            raise BindingError(
                f"cannot connect to Cassandra at {opts.where} with acsylla: {kind_of(exc)}: {exc}",
                "is the server up? check hosts, port, credentials and cassandra.useSSL") from None
        return cls(session)

    async def prepare(self, cql: str, consistency: str) -> Callable[[Sequence[Any]], Any]:
        """A function params -> request, bound at `consistency`."""
        try:
            prepared = await self.session.create_prepared(cql)
        except CassException as exc:
            raise QueryFailed(kind_of(exc)) from exc
        return functools.partial(prepared, consistency=acsylla.Consistency[consistency])

    async def chain(self, pending: Sequence[tuple[Callable, Sequence[Any]]],
                    more: Callable[[], bool]) -> list[tuple]:
        """Bind and run (bind, params) one after another: (ok, result or exception, start ns,
        end ns) each. Before each request after the first, more() says whether to go on."""
        out: list[tuple] = []
        append = out.append
        execute, errors = self.execute, self.errors
        for bind, params in pending:
            if out and not more():
                break
            t0 = perf_counter_ns()
            try:
                result = await execute(bind(params))
            except errors as exc:
                append((False, exc, t0, perf_counter_ns()))
                continue
            append((True, result, t0, perf_counter_ns()))
        return out

    @staticmethod
    def row(result: Any) -> dict[str, Any] | None:
        first = result.first()
        return None if first is None else first.as_dict()

    @staticmethod
    def rows(result: Any) -> list[dict[str, Any]]:
        return [row.as_dict() for row in result]

    async def close(self) -> None:
        await self.session.close()
