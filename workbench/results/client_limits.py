"""Was the client the bottleneck? (issue 54, 8). YCSB's users keep finding out too late that their
benchmark measured the machine that drove the load (YCSB #881, #584); a run here says so in one line
at its end and on the Run screen:

  client-limited: the workers used 1.9 of 2 cores; the servers' CPU was 0.6

The client's figures are those sampled under the node name "client" (metrics/server.py): `cpu`
(cores used by the workbench's processes: the parent and every worker), `loop_lag_ms` (the lanes'
event loops' longest lag in the second). A run is client-limited when, over its measured seconds,
the client used at least CPU_SHARE of the cores it could run on, or its loops lagged more than
LAG_MS in at least LAG_SHARE of the seconds: either way operations waited for the client, not for
the database. When the servers run on the same machine and client and servers together used the
machine's cores, the line says that instead: neither side's figures are its own capacity. And a
client that shares its cores with other processes (`cores_busy`: how busy the cores it may run on
were, whoever used them) is limited by what they left it: when its threads were ready to run
(`cpu` plus `cpu_wait`, the time they waited for a core) for at least CPU_SHARE of its cores, it
wanted them all and got only `cpu`; and where `cpu_wait` was not recorded (runs before it), when
those cores were busy and the client used at least SHARED_SHARE of them. Either way the line says
how much the others took.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.metrics.server import CLIENT
from workbench.results.model import RunResult

CPU_SHARE = 0.85
MACHINE_SHARE = 0.90
LAG_MS = 50.0
LAG_SHARE = 0.10
SHARED_SHARE = 0.30


@dataclass(frozen=True)
class ClientVerdict:
    limited: bool
    line: str   # "" when there is nothing to say


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def verdict(seconds: Sequence[Mapping[str, Mapping[str, float]]], cores: float,
            local_nodes: frozenset[str] = frozenset()) -> ClientVerdict:
    """`seconds`: each measured second's figures by node (CLIENT among them); `cores`: the cores
    the client's processes could use (os.sched_getaffinity); `local_nodes`: the nodes that run on
    this machine (their CPU shares its cores)."""
    client = [s[CLIENT] for s in seconds if CLIENT in s]
    if not client or cores <= 0:
        return ClientVerdict(False, "")
    cpu = _mean([c.get("cpu", 0.0) for c in client])
    lagged = sum(1 for c in client if c.get("loop_lag_ms", 0.0) > LAG_MS) / len(client)
    nodes = sorted({n for s in seconds for n in s if n != CLIENT and "cpu" in s[n]})
    servers = _mean([sum(s[n].get("cpu", 0.0) for n in nodes if n in s) for s in seconds]) if nodes else None
    server_words = f"; the servers' CPU was {servers:.1f}" if servers is not None else ""
    if cpu >= CPU_SHARE * cores:
        return ClientVerdict(True, f"client-limited: the workers used {cpu:.1f} of {cores:g} cores"
                                   f"{server_words}")
    if lagged >= LAG_SHARE:
        return ClientVerdict(True, f"client-limited: the lanes' event loops lagged over {LAG_MS:.0f} ms "
                                   f"in {lagged:.0%} of the seconds (the workers used {cpu:.1f} of "
                                   f"{cores:g} cores{server_words})")
    local = [n for n in nodes if n in local_nodes]
    if local:
        on_machine = cpu + _mean([sum(s[n].get("cpu", 0.0) for n in local if n in s) for s in seconds])
        if on_machine >= MACHINE_SHARE * cores:
            return ClientVerdict(True, f"machine-limited: the client ({cpu:.1f}) and the servers on this "
                                       f"machine ({on_machine - cpu:.1f}) used {on_machine:.1f} of "
                                       f"{cores:g} cores")
    busy = [c["cores_busy"] for c in client if "cores_busy" in c]
    others = max(_mean(busy) - cpu, 0.0) if busy else None
    waited = [c for c in client if "cpu_wait" in c]  # the seconds that say how long it waited
    ran, wait = _mean([c.get("cpu", 0.0) for c in waited]), _mean([c["cpu_wait"] for c in waited])
    if waited and ran + wait >= CPU_SHARE * cores:
        other_words = f"; other processes used {others:.1f} of them" if others is not None else ""
        return ClientVerdict(True, f"client-limited: the workers used {ran:.1f} of {cores:g} cores and "
                                   f"waited {wait:.1f} more for one{other_words}{server_words}")
    if others is not None and _mean(busy) >= MACHINE_SHARE * cores and cpu >= SHARED_SHARE * cores:
        return ClientVerdict(True, f"client-limited: the workers used {cpu:.1f} of {cores:g} cores and "
                                   f"other processes {others:.1f} of them{server_words}")
    return ClientVerdict(False, "")


def of_run(result: RunResult, cores: float | None = None) -> ClientVerdict:
    """A finished or stored run's verdict over its measured seconds: `cores` those the client
    could run on (default: the run's manifest, host.cpus_usable); the local nodes those whose
    process CPU was measured (only this machine's /proc and Docker engine give a node's cpu)."""
    # whole seconds only: the run's short last tick has no process figures yet (its cpu is not 0)
    seconds = [i.server for i in result.intervals if i.server and not i.warmup and i.duration_s >= 0.5]
    if cores is None:
        host = (result.manifest or {}).get("host") or {}
        cores = float(host.get("cpus_usable") or host.get("cpus") or 0)
    local = frozenset(n for s in seconds for n, f in s.items() if n != CLIENT and "cpu" in f)
    return verdict(seconds, cores, local)
