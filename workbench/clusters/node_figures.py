"""The process figures of a cluster's nodes and of the workbench itself (issue 54, 2): CPU in
cores, resident memory, bytes read from and written to storage, one sample a second.

    reader = process_reader(cluster)   # or the reason its processes cannot be seen (a str)
    reader.read(time.time())           # {"127.0.0.2": {"cpu": 1.3, "rss_bytes": ...}, ...}

drive/server_sampler.py makes a ServerSource of each reader (metrics/server.py is a floor above
this one: figure names are its, the figures are plain dicts here).

A local node is a process of this machine: /proc/PID/stat (user + system time, resident pages)
and io (read_bytes, write_bytes), read with os.open and os.read (these run every second beside a
loaded run: bench/bench_sampler.py --under-load measures what they cost). A Docker node is a container:
the engine's statistics (docker-py's stats as the engine pushes them, followed from the reader's
start: CPU time, memory, block I/O). Rates are the difference between two samples over the time
between them, so a node's first sample has its memory only. The cluster's
state file is read again when it changes, so a node that joins, restarts or goes is followed.
An external cluster's processes are not on this machine: `process_reader` says so. The
client's own processes (this one and its worker processes) are the
node "client"; its `cores_busy` is how busy the cores it may run on were, whoever used them
(/proc/stat: each core's time not idle), and its `cpu_wait` how long its threads were ready to
run but waited for a core (each thread's run delay in /proc/PID/task/TID/schedstat, in cores like
`cpu`), so a client that shares its cores is seen doing so and seen wanting more of them.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.clusters import state
from workbench.clusters.base import Cluster, Node
from workbench.errors import ClusterError

CLIENT = "client"  # the node name of the workbench's own processes (metrics/server.py's CLIENT)
Figures = dict[str, dict[str, float]]  # node -> figure -> value

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _read_bytes(path: str) -> bytes:
    """A /proc file whole, by os.open and os.read: half what open()'s buffered text file costs
    (BENCHMARKS.md, 2026-12-01), and each of these runs every second beside a loaded run."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = [os.read(fd, 65536)]
        while chunks[-1]:  # /proc/stat's interrupt line alone can be longer on a big machine
            chunks.append(os.read(fd, 65536))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read(path: str) -> str:
    return _read_bytes(path).decode(errors="replace")


def read_proc(pid: int) -> tuple[int, float, int | None, tuple[int, int] | None] | None:
    """(start time, CPU seconds used, resident bytes, (read_bytes, write_bytes)) of a process, or
    None when it is gone; what /proc does not let us read is None."""
    try:
        stat = _read(f"/proc/{pid}/stat")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # field 3 onwards (the name may hold spaces)
    if fields[0] in ("Z", "X"):
        return None
    cpu = (int(fields[11]) + int(fields[12])) / _TICKS  # utime + stime
    rss = int(fields[21]) * _PAGE  # field 24, rss: the pages status's VmRSS counts, cheaper to read
    io = None
    try:
        counts = dict(line.split(": ") for line in _read(f"/proc/{pid}/io").splitlines())
        io = (int(counts["read_bytes"]), int(counts["write_bytes"]))
    except (OSError, KeyError, ValueError):
        pass  # another user's process: its io is not ours to read
    return int(fields[19]), cpu, rss, io


class _Rates:
    """Counters of one thing sampled again and again: their rates per second since the last."""

    def __init__(self) -> None:
        self._last: dict[Any, tuple[float, tuple[float, ...]]] = {}

    def rates(self, key: Any, now: float, counters: tuple[float, ...]) -> tuple[float, ...] | None:
        before = self._last.get(key)
        self._last[key] = (now, counters)
        if before is None or now <= before[0]:
            return None
        seconds = now - before[0]
        return tuple(max(c - b, 0.0) / seconds for c, b in zip(counters, before[1], strict=True))

    def keep(self, keys: set) -> None:
        for gone in set(self._last) - keys:
            del self._last[gone]


def _figures(info: tuple, rates: tuple[float, ...] | None) -> dict[str, float]:
    _, _, rss, io = info
    figures: dict[str, float] = {}
    if rates is not None:
        figures["cpu"] = round(rates[0], 4)
        if io is not None:
            figures["disk_read_bytes"], figures["disk_write_bytes"] = round(rates[1]), round(rates[2])
    if rss is not None:
        figures["rss_bytes"] = float(rss)
    return figures


def _counters(info: tuple) -> tuple[float, ...]:
    _, cpu, _, io = info
    return (cpu, *(io or (0, 0)))


def node_keys(nodes: tuple[Node, ...]) -> dict[str, str]:
    """Node name -> the name its figures go under: its address, or "name@address" where more
    than one process of the cluster listens on that address (HBase's master and RegionServer)."""
    shared = {n.address for n in nodes if sum(m.address == n.address for m in nodes) > 1}
    return {n.name: f"{n.name}@{n.address}" if n.address in shared else n.address for n in nodes}


class _StateFollower:
    """The cluster's nodes as its state file has them now (read again when it changes)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster, self._stamp = cluster, None

    def nodes(self) -> tuple[Node, ...]:
        path = self.cluster.run_dir / state.STATE_FILE
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            return self.cluster.nodes
        if stamp != self._stamp:
            found = state.load(self.cluster.run_dir)
            if found is not None:
                self.cluster, self._stamp = found[0], stamp
        return self.cluster.nodes


class LocalProcesses:
    """The process figures of a local cluster's nodes, from /proc."""

    inline = True  # reads of /proc and of the cluster's state file, which never block

    def __init__(self, cluster: Cluster) -> None:
        self._follow = _StateFollower(cluster)
        self._rates = _Rates()
        self.read(time.time())  # the first rates then cover the run's first second

    def read(self, now: float) -> Figures:
        nodes = self._follow.nodes()
        keys = node_keys(nodes)
        out: Figures = {}
        seen: set = set()
        for node in nodes:
            info = read_proc(node.pid) if node.pid else None
            if info is None or info[0] != node.start_time:  # gone, or the PID is another's now
                continue
            key = (node.pid, node.start_time)
            seen.add(key)
            rates = self._rates.rates(key, now, _counters(info))
            out[keys[node.name]] = _figures(info, rates)
        self._rates.keep(seen)
        return out

    def close(self) -> None:
        pass


def _blkio(stats: dict[str, Any]) -> tuple[int, int]:
    read = write = 0
    for entry in (stats.get("blkio_stats") or {}).get("io_service_bytes_recursive") or ():
        op = str(entry.get("op", "")).lower()
        if op == "read":
            read += int(entry.get("value", 0))
        elif op == "write":
            write += int(entry.get("value", 0))
    return read, write


def container_figures(stats: dict[str, Any]) -> tuple[tuple[float, ...], float | None]:
    """(CPU seconds, bytes read, bytes written) and resident bytes from one answer of the engine's
    statistics; resident: anonymous memory (cgroup v2), else usage less the page cache."""
    cpu_ns = int(((stats.get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage", 0))
    memory = stats.get("memory_stats") or {}
    inner = memory.get("stats") or {}
    if "anon" in inner:
        rss: float | None = float(inner["anon"])
    elif "usage" in memory:
        rss = float(memory["usage"] - inner.get("inactive_file", inner.get("total_inactive_file", 0)))
    else:
        rss = None  # a stopped container's answer has none of it
    return (cpu_ns / 1e9, *_blkio(stats)), rss


def engine_time(stamp: Any) -> float | None:
    """The Unix time of an engine statistics answer's "read" (RFC 3339 with nanoseconds), or
    None when it has none (a stopped container's "0001-01-01T00:00:00Z")."""
    if not isinstance(stamp, str) or stamp.startswith("0001-"):
        return None
    head, _, rest = stamp.rstrip("Z").partition(".")
    fraction = "".join(c for c in rest if c.isdigit())
    zone = rest[len(fraction):] or "+00:00"
    try:
        when = datetime.fromisoformat(f"{head}{zone}").timestamp()
    except ValueError:
        return None
    return when + (float(f"0.{fraction}") if fraction else 0.0)


class _Stream:
    """One container's statistics as the engine pushes them, about once a second, followed on a
    daemon thread of its own: the newest answer kept (nothing waits for the engine)."""

    def __init__(self, api: Any, container: str) -> None:
        self.latest: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self._pushed = threading.Condition()
        self._thread = threading.Thread(target=self._follow, args=(api, container), daemon=True,
                                        name=f"workbench-docker-stats-{container[:12]}")
        self._thread.start()

    def _follow(self, api: Any, container: str) -> None:
        try:
            for stats in api.stats(container, stream=True, decode=True):
                with self._pushed:
                    self.latest = stats
                    self._pushed.notify_all()
        except Exception as exc:  # noqa: BLE001 - a container gone, an engine closed: said by read
            self.error = exc

    def newer(self, than: dict[str, Any] | None, deadline: float) -> dict[str, Any] | None:
        """The newest answer, waited for until `deadline` (time.monotonic) while it is still
        `than`, the answer the last read took: the engine's push of this second may be a little
        late on a busy machine, and without it the second has no rate."""
        with self._pushed:
            self._pushed.wait_for(lambda: self.latest is not than or self.error is not None,
                                  timeout=max(deadline - time.monotonic(), 0.0))
            return self.latest


class DockerContainers:
    """The process figures of a Docker cluster's nodes, from the engine's statistics. The engine
    collects them once a second and a one-shot request waits for its next collection (about
    0.75 s against a real engine here: the sampler's answers came after their ticks, 9 seconds of
    10), so each container's statistics are followed as the engine pushes them (a stream per
    container, on a thread of its own) and a read takes the newest. Rates are over the engine's
    own times between the answers two reads took. A read that finds the answer the last one took
    waits a little (WAIT_S in all, inside the sampler's LEAD_S) for the engine's next push, late
    on a busy machine; if none comes, that second has no rate."""

    WAIT_S = 0.12  # how long a read waits in all for answers not yet pushed (under LEAD_S)

    def __init__(self, cluster: Cluster, client: Any = None) -> None:
        self._follow = _StateFollower(cluster)
        self._rates = _Rates()
        self._client = client
        self._streams: dict[str, _Stream] = {}
        self._taken: dict[str, dict[str, Any]] = {}  # container -> the answer its last read took
        self._lock = threading.Lock()  # the streams and the client (_stream, close)
        # followed from now on (the engine's first answers take a second or two on a busy
        # machine: in before the run's first seconds are read), connected on a thread of its own
        # (an engine that does not answer does not hold up the run's start)
        self._closed = False
        threading.Thread(target=self._prime, args=(cluster.nodes,), name="workbench-docker-stats-start",
                         daemon=True).start()

    def _prime(self, nodes: tuple[Node, ...]) -> None:
        try:
            for node in nodes:
                if node.container:
                    self._stream(node.container)
        except Exception:  # noqa: BLE001, S110 - an engine not answering: each read says so
            pass

    def _stream(self, container: str) -> _Stream:
        with self._lock:  # made by the first reads and by _prime, on their threads
            if self._closed:
                raise ClusterError("the Docker statistics reader is closed")
            found = self._streams.get(container)
            if found is not None and found.error is not None:
                del self._streams[container]  # followed again from the next read
                if type(found.error).__name__ != "NotFound":
                    raise found.error  # an engine that stopped answering: this second's skip says why
                found = None
            if found is None:
                if self._client is None:
                    from workbench.clusters import engine  # noqa: PLC0415 - docker-py only when asked

                    self._client = engine.connect(timeout=5.0)
                found = self._streams[container] = _Stream(self._client.api, container)
            return found

    def read(self, now: float) -> Figures:
        nodes = self._follow.nodes()
        keys = node_keys(nodes)
        out: Figures = {}
        seen: set = set()
        deadline = time.monotonic() + self.WAIT_S
        for node in nodes:
            if not node.container:
                continue
            stats = self._stream(node.container).newer(self._taken.get(node.container), deadline)
            if stats is None:
                continue  # gone, or no answer yet
            self._taken[node.container] = stats
            counters, rss = container_figures(stats)
            if not counters[0] and rss is None:
                continue  # not running
            seen.add(node.container)
            when = engine_time(stats.get("read"))
            rates = None if when is None else self._rates.rates(node.container, when, counters)
            figures = {} if rates is None else {"cpu": round(rates[0], 4),
                                                "disk_read_bytes": round(rates[1]),
                                                "disk_write_bytes": round(rates[2])}
            if rss is not None:
                figures["rss_bytes"] = rss
            out[keys[node.name]] = figures
        self._rates.keep(seen)
        # the streams of the nodes still in the cluster (a stopped container's stays: it answers
        # again when the container runs again); one that failed is started again at its next read
        here = {node.container for node in nodes if node.container}
        with self._lock:
            self._streams = {c: f for c, f in self._streams.items() if c in here}
        self._taken = {c: t for c, t in self._taken.items() if c in here}
        return out

    def close(self) -> None:
        with self._lock:  # not while _prime connects: the client it makes is closed here too
            client, self._closed = self._client, True
        if client is not None:
            try:
                client.close()  # ends the streams' connections: their threads end
            except Exception:  # noqa: BLE001, S110 - closing what may already be broken
                pass


def process_reader(cluster: Cluster) -> LocalProcesses | DockerContainers | str:
    """The reader of a cluster's process figures, or why there is none."""
    if cluster.provider == "local":
        return LocalProcesses(cluster)
    if cluster.provider == "docker":
        return DockerContainers(cluster)
    whose = "an external cluster's" if cluster.provider == "external" else f"a {cluster.provider} cluster's"
    return f"no process figures: {whose} processes are not on this machine"


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            found.extend(int(c) for c in _read(f"/proc/{pid}/task/{task}/children").split())
    except OSError:
        pass
    return found


def cores_busy_counters(cores: set[int]) -> float | None:
    """Seconds the given cores spent not idle (user, system, interrupts, steal: all but idle and
    iowait) since boot, from /proc/stat, or None where it cannot be read."""
    try:
        lines = _read("/proc/stat").splitlines()
    except OSError:
        return None
    busy, seen = 0, 0
    for line in lines:
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu" or int(name[3:]) not in cores:
            continue
        ticks = [int(v) for v in rest.split()[:8]]
        busy += sum(ticks) - ticks[3] - ticks[4]
        seen += 1
    return busy / _TICKS if seen else None


def run_delay(pid: int) -> float | None:
    """Seconds the threads of a process spent ready to run but waiting for a core (the scheduler's
    run delay, /proc/PID/task/TID/schedstat's second field), summed over the threads it has now:
    a thread that ended takes its own with it. None where it cannot be read."""
    total, seen = 0, False
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for task in tasks:
        try:
            total += int(_read_bytes(f"/proc/{pid}/task/{task}/schedstat").split()[1])
            seen = True
        except (OSError, IndexError, ValueError):
            continue  # ended since the listing
    return total / 1e9 if seen else None


class ClientProcesses:
    """The workbench's own side: this process and its worker processes (children started by
    multiprocessing; a cluster this process started is not the client), as the node "client"."""

    inline = True  # reads of /proc, which never block

    def __init__(self, pid: int | None = None) -> None:
        self.pid = pid or os.getpid()
        self._workers: dict[int, bool] = {}  # child PID -> is it a worker process
        self._rates = _Rates()
        try:
            self._cores = os.sched_getaffinity(self.pid)
        except OSError:
            self._cores = set(range(os.cpu_count() or 1))
        self.read(time.time())

    def _is_worker(self, pid: int) -> bool:
        known = self._workers.get(pid)
        if known is None:
            try:
                known = b"multiprocessing" in Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                known = False
            self._workers[pid] = known
        return known

    def read(self, now: float) -> Figures:
        pids = [self.pid] + [c for c in _children(self.pid) if self._is_worker(c)]
        totals = [0.0, 0.0, 0.0]
        rss, rated, seen = 0, False, set()
        wait: float | None = None
        for pid in pids:
            info = read_proc(pid)
            if info is None:
                continue
            key = (pid, info[0])
            seen.add(key)
            rss += info[2] or 0
            rates = self._rates.rates(key, now, _counters(info))  # each process's own: one that
            if rates is not None:  # ended takes its CPU time with it, a new one starts at 0
                rated = True
                totals = [t + r for t, r in zip(totals, rates, strict=True)]
            delay = run_delay(pid)
            if delay is not None:
                waited = self._rates.rates((*key, "wait"), now, (delay,))
                seen.add((*key, "wait"))
                if waited is not None:
                    wait = (wait or 0.0) + waited[0]
        self._rates.keep(seen | {"cores"})
        self._workers = {pid: w for pid, w in self._workers.items() if any(k[0] == pid for k in seen)}
        figures = _figures((0, 0.0, rss, (0, 0)), tuple(totals) if rated else None)
        if wait is not None:
            figures["cpu_wait"] = round(wait, 4)
        busy = cores_busy_counters(self._cores)
        if busy is not None:
            rate = self._rates.rates("cores", now, (busy,))
            if rate is not None:
                figures["cores_busy"] = round(min(rate[0], len(self._cores)), 4)
        return {CLIENT: figures}

    def close(self) -> None:
        pass
