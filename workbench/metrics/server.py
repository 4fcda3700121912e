"""The servers' side of a run (issue 54): figures of each node, sampled once a second in the parent
process beside the client's intervals, and the events (GC pauses, compactions, flushes, faults)
that a reader of a latency spike looks for. The client's own processes are sampled the same way,
under the node name "client".

These are the shared types only: the sources live with their database's code (a database
descriptor's `server_sources`) or their provider's (a node's process), the sampler in drive/.

Figure names are stable (they reach the run store, the exports and Prometheus); a figure a source
cannot see is absent from its sample, never zero. Names and units:

  cpu                 cores the node's process used over the second (1.0 = one core busy)
  rss_bytes           resident memory of the node's process
  disk_read_bytes     bytes the process read from storage over the second
  disk_write_bytes    bytes the process wrote to storage over the second
  gc_pauses           GC pauses of 1 ms or more that ended in the second
  gc_pause_ms_total   their total length
  gc_pause_ms_max     the longest of them
  compactions_pending compactions waiting or running (Cassandra's CompactionExecutor, HBase's queue)
  compactions_running compactions running now
  flushes_pending     memtable/memstore flushes waiting or running
  queue.<name>.pending  a server stage's waiting tasks (Cassandra's thread pools by name)
  queue.<name>.active   its running tasks
  memstore_bytes      HBase: memstore size of a RegionServer
  block_cache_hit_ratio  HBase: block cache hits / requests (0..1)
  requests            requests the node served over the second, by its own count
  cpu_wait            client only: cores' worth of time its threads were ready to run but waited for a core
  cores_busy          client only: how busy the cores it may run on were, whoever used them, in cores
  loop_lag_ms         client only: the lanes' event loops' longest lag in the second
  start_gap_ms        client only: the largest gap between an operation's intended and actual start
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

CLIENT = "client"  # the node name under which the workbench's own processes are sampled


@dataclass(frozen=True)
class ServerEvent:
    """Something a server did that can explain a latency spike, placed on the run's timeline."""

    node: str             # the node's address ("127.0.0.2"), or CLIENT
    at: float             # epoch seconds when it began
    kind: str             # "gc", "compaction", "flush", "kill", "pause", "resume", "restart", ...
    seconds: float = 0.0  # how long it lasted (0 for an instant, or one not over yet)
    detail: str = ""      # one short line: "G1 Young 412 ms", "compaction of ycsb.usertable"


@dataclass(frozen=True)
class NodeSample:
    """One source's figures for one node for one second, and the events it saw begin or end."""

    node: str
    figures: Mapping[str, float] = field(default_factory=dict)
    events: tuple[ServerEvent, ...] = ()


class SourceUnavailable(Exception):
    """A source that cannot be read at all on this cluster (say once, then stop asking): the text
    names what is missing and why, for the run's note ("no process figures: an external
    cluster's processes are not on this machine")."""


class ServerSource(Protocol):
    """One way of reading figures from one or more nodes. `sample` runs on the sampler's own
    thread, at most once a second; it may block (an HTTP or CQL request), the sampler never waits
    for it past the second: a late answer is dropped and counted. It raises SourceUnavailable when
    it can never answer here, any other exception for one second's failure. A source that answers
    but cannot see all it should may hold `notes`, lines the run says once ("FerretDB answers
    serverStatus without globalLock ...")."""

    name: str  # "process", "gc-log", "cql", "jmx", "serverStatus", "client"

    def sample(self, now: float) -> list[NodeSample]: ...

    def close(self) -> None: ...
