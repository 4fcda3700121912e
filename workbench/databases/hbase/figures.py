"""HBase's own figures of each RegionServer, from its info server's `/jmx` JSON (the workbench's
hbase-site.xml turns the info servers on, each on its process's own address at its RPC port + 10:
databases/hbase/cluster.py), one request a RegionServer a second, all at once:

    GET http://ADDRESS:16030/jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=Server

gives compactions_pending (compactionQueueLength), flushes_pending (flushQueueLength),
memstore_bytes (memStoreSize), block_cache_hit_ratio (hits / (hits + misses) over the second,
absent in a second without block cache requests), requests (totalRequestCount over the second);
each flush and compaction the RegionServer timed (FlushTime_num_ops, CompactionTime_num_ops and
MajorCompactionTime_num_ops growing) is an event of the second it was seen in. GC pauses come from
the GC logs of the JVMs (gc_figures.py), not from here.

An answer that is not the bean's JSON (an HTML page, a truncated body, another bean) fails that
node's second with one line saying what came back; the run goes on.
"""

from __future__ import annotations

import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from workbench.metrics.server import NodeSample, ServerEvent, SourceUnavailable

BEAN = "Hadoop:service=HBase,name=RegionServer,sub=Server"
PATH = f"/jmx?qry={BEAN}"


class JmxGarbage(ValueError):
    """An info server answered something that is not the bean's JSON."""


def parse(body: bytes | str, where: str = "") -> dict[str, Any]:
    """The RegionServer bean of a /jmx answer; JmxGarbage saying what came instead."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        doc = json.loads(text)
    except ValueError:
        start = text.lstrip()[:1]
        what = ("nothing" if not start else "HTML" if start == "<" else
                "truncated JSON" if start in "{[" else "not JSON")
        raise JmxGarbage(f"{where or '/jmx'} answered {what} ({len(text)} bytes)") from None
    beans = doc.get("beans") if isinstance(doc, dict) else None
    if not isinstance(beans, list):
        raise JmxGarbage(f"{where or '/jmx'} answered JSON without beans")
    for bean in beans:
        if isinstance(bean, dict) and bean.get("name") == BEAN:
            return bean
    raise JmxGarbage(f"{where or '/jmx'} has no {BEAN} bean (not a RegionServer?)")


def _number(bean: dict[str, Any], key: str) -> float | None:
    value = bean.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


@dataclass
class Counters:
    """A RegionServer's cumulative counters at the last sample."""

    hits: float | None = None
    misses: float | None = None
    requests: float | None = None
    flushes: float | None = None
    flushed_bytes: float | None = None
    compactions: float | None = None
    majors: float | None = None
    compacted_bytes: float | None = None


def _grew(now: float | None, before: float | None) -> float:
    return max(0.0, now - before) if now is not None and before is not None else 0.0


def _mb(count: float) -> str:
    return f"{count / 2**20:.1f} MiB" if count >= 2**20 else f"{count / 1024:.1f} KiB"


def node_sample(node: str, bean: dict[str, Any], last: Counters, previous: float, now: float) -> NodeSample:
    """One RegionServer's figures and events from its bean; `last` moves on to this second
    (`previous`: when it was last read, for the events' time)."""
    figures: dict[str, float] = {}
    for key, figure in (("compactionQueueLength", "compactions_pending"),
                        ("flushQueueLength", "flushes_pending"), ("memStoreSize", "memstore_bytes")):
        value = _number(bean, key)
        if value is not None:
            figures[figure] = value
    seen = Counters(_number(bean, "blockCacheHitCount"), _number(bean, "blockCacheMissCount"),
                    _number(bean, "totalRequestCount"), _number(bean, "FlushTime_num_ops"),
                    _number(bean, "flushedMemstoreBytes"), _number(bean, "CompactionTime_num_ops"),
                    _number(bean, "MajorCompactionTime_num_ops"), _number(bean, "compactedInputBytes"))
    hits, misses = _grew(seen.hits, last.hits), _grew(seen.misses, last.misses)
    if hits + misses > 0:
        figures["block_cache_hit_ratio"] = round(hits / (hits + misses), 4)
    if seen.requests is not None and last.requests is not None:
        figures["requests"] = _grew(seen.requests, last.requests)
    events = []
    at = previous or now
    flushes = int(_grew(seen.flushes, last.flushes))
    if flushes:
        events.append(ServerEvent(node=node, at=at, kind="flush",
                                  detail=f"{flushes} memstore flush{'es' if flushes > 1 else ''} "
                                         f"({_mb(_grew(seen.flushed_bytes, last.flushed_bytes))})"))
    compactions = int(_grew(seen.compactions, last.compactions))
    if compactions:
        majors = int(_grew(seen.majors, last.majors))
        what = f"{compactions} compaction{'s' if compactions > 1 else ''}"
        events.append(ServerEvent(node=node, at=at, kind="compaction",
                                  detail=f"{what}{f' ({majors} major)' if majors else ''} of "
                                         f"{_mb(_grew(seen.compacted_bytes, last.compacted_bytes))}"))
    last.__dict__.update(seen.__dict__)
    return NodeSample(node, figures, tuple(events))


class JmxFigures:
    """The source: `servers` holds (node name for the figures, info server's base URL)."""

    name = "jmx"

    def __init__(self, servers: list[tuple[str, str]], timeout: float = 0.8,
                 unavailable: str = "") -> None:
        self._servers, self._timeout, self._unavailable = servers, timeout, unavailable
        self._last = {node: Counters() for node, _ in servers}
        self._when = {node: 0.0 for node, _ in servers}
        self._pending: dict[str, Any] = {}  # node -> its request still out (a node that hangs)
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(servers)), thread_name_prefix="workbench-jmx")

    def _read(self, url: str) -> dict[str, Any]:
        with urllib.request.urlopen(url + PATH, timeout=self._timeout) as answer:  # noqa: S310 - our own http URL
            return parse(answer.read(), url)

    def sample(self, now: float) -> list[NodeSample]:
        if self._unavailable:
            raise SourceUnavailable(self._unavailable)
        asked, failures = [], []
        for node, url in self._servers:
            if node in self._pending and not self._pending[node].done():
                failures.append(TimeoutError(f"{url} has not answered the last request yet"))
                continue
            self._pending[node] = self._pool.submit(self._read, url)
            asked.append((node, self._pending[node]))
        out = []
        for node, future in asked:
            try:
                bean = future.result(timeout=self._timeout + 0.2)
            except Exception as exc:  # refused, timed out, garbage: this node's second is lost
                failures.append(exc)
                continue
            out.append(node_sample(node, bean, self._last[node], self._when[node], now))
            self._when[node] = now
        if failures and not out:
            raise failures[0]
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def server_sources(cluster: Any) -> list[Any]:
    """The HBase figures of a cluster: /jmx of every RegionServer, the GC logs of the JVMs the
    workbench started (the descriptor's `server_sources`)."""
    from workbench.databases.gc_figures import gc_sources, node_keys
    from workbench.databases.hbase.cluster import regionserver_info_port

    if cluster.provider == "external":
        return [JmxFigures([], unavailable="no HBase figures: the RegionServers' info servers of an "
                           "external cluster are not known (only its Thrift gateways are)")]
    spec = cluster.spec
    port = regionserver_info_port(spec)
    keys = node_keys(cluster.nodes)
    servers = [n for n in cluster.nodes if n.name.startswith("rs")] or [
        n for n in cluster.nodes if n.name == "master"]  # standalone: the RegionServer in its JVM
    unavailable = ""
    if getattr(spec, "docker_network", "host") == "bridge":
        unavailable = ("no HBase figures: on a Docker bridge network the info servers listen inside "
                       "the containers, unpublished")
    jmx = JmxFigures([(keys[n.name], f"http://{n.address}:{port}") for n in servers], unavailable=unavailable)
    return [jmx, *gc_sources(cluster)]
