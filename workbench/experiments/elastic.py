"""Elastic speedup (YCSB's scaling tier): a node added to a running Cassandra cluster while each
run of an experiment goes on (`add_node_at_s`), and what the join costs and what it gains.

During each run, `NodeAdder` adds one node about `add_node_at_s` seconds after the run starts
(the provider's add_node: the node bootstraps, streaming its share of the data); the run marks
"+ nodeN joining" and "nodeN normal" from the cluster's journal at the moments they happened
(drive/cluster_watch.py). After the run the node is decommissioned again, so that every
repetition starts from the same cluster.

`join_windows` cuts a run's measured intervals at those two events: before the join, during it,
after it. For each window: how long it was, the throughput of its intervals (mean, and the 95%
interval of that mean over the intervals, stats.cell) and the 99th percentile of response time
per interval (response time from the intended start where the run was paced: a join that slows
the servers shows as a queue), with the same interval estimate, and the operations that failed.
The figures of one run and one host: the nodes of a local cluster share the host's cores, so a
node added here brings data movement and a new replica, not processors, unless each node is
capped (cpus; the report says which).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.clusters import journal
from workbench.errors import WorkbenchError
from workbench.experiments.stats import Cell, cell
from workbench.results.model import Event, error_total

WINDOWS = ("before", "during", "after")


class NodeAdder(threading.Thread):
    """Adds a node to `name` at_s seconds after start(), unless the run ended first; `finish()`
    after the run waits for the join to end and decommissions the node again. `run_dir`: the
    cluster's folder, whose journal says what the join streamed (`late_events`)."""

    def __init__(self, provider, name: str, at_s: float, say: Callable[[str], None],
                 run_dir: Path | None = None) -> None:
        super().__init__(name="workbench-add-node", daemon=True)
        self.provider, self.cluster, self.at_s, self.say = provider, name, at_s, say
        self.run_dir = run_dir
        self.node: str | None = None
        self.error: str | None = None
        self.join_s: float | None = None
        self.joining = False  # add_node has been called
        self.moved: str | None = None  # "nodeN received ... bytes ...", as the journal has it
        self._ended = threading.Event()

    def run(self) -> None:
        if self._ended.wait(self.at_s):
            return  # the run ended before the time came
        started = time.monotonic()
        self.joining = True
        offset = journal.end(self.run_dir) if self.run_dir is not None else 0
        try:
            before = {n.name for n in self.provider.status(self.cluster).nodes}
            grown = self.provider.add_node(self.cluster)
        except WorkbenchError as exc:
            self.error = str(exc)
            return
        except Exception as exc:  # noqa: BLE001 - a bug or a driver's error: said, not lost with the thread
            self.error = f"{type(exc).__name__}: {exc}"
            return
        self.join_s = time.monotonic() - started
        self.node = next((n.name for n in grown.nodes if n.name not in before), None)
        if self.run_dir is not None and self.node is not None:
            entries, _ = journal.read(self.run_dir, offset)
            self.moved = next((e.value for e in entries if e.kind == journal.KIND
                               and e.value.startswith(f"{self.node} received ")), None)

    def late_events(self, result) -> list[Event]:
        """What the join wrote to the journal that the run did not see: the provider writes what
        the bootstrap streamed a moment after the node became normal (it asks the node), so a run
        that ended in between has the join but not its figure. The event stands at the run's end,
        where a mark written after it would be clamped (core/controller.py mark)."""
        if self.moved is None or streamed(result, self.node) is not None:
            return []
        end = max((i.elapsed_s for i in result.intervals),
                  default=result.warmup_s + result.runtime_ms / 1000)
        return [Event(end, journal.KIND, self.moved)]

    def finish(self) -> None:
        """The run has ended: wait for a join still going on, then take the node out again."""
        self._ended.set()
        if self.is_alive() and self.joining:
            self.say("    the run ended while the node joined: waiting for the join to finish")
        self.join()
        if self.error:
            self.say(f"    the node did not join: {self.error}")
            return
        if self.node is None:
            self.say(f"    the run ended before {self.at_s:g} s: no node was added")
            return
        self.say(f"    {self.node} joined in {self.join_s:.1f} s; decommissioning it again "
                 "(the next run starts from the same cluster)")
        self.provider.remove_node(self.cluster, self.node)


@dataclass(frozen=True)
class Window:
    name: str  # before, during, after
    start_s: float  # the run's clock
    end_s: float
    throughput: Cell | None  # ops/s of its intervals
    p99_us: Cell | None  # the 99th percentile of each interval (response time where paced)
    errors: int = 0  # the operations of its intervals that failed (results/model.py is_error)

    @property
    def length_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class Join:
    node: str
    joining_s: float  # the run's clock when the node started joining
    normal_s: float | None  # ... when every node saw it Up/Normal (None: not within the run)
    windows: tuple[Window, ...]
    failed: bool = False  # it did not join (stopped again): "nodeN did not join (stopped)"

    @property
    def duration_s(self) -> float | None:
        return None if self.normal_s is None else self.normal_s - self.joining_s


def series(result) -> list[tuple[float, float, float, float | None]]:
    """The run over time: for each measured interval, (start, end on the run's clock, ops/s, the
    p99 of its first operation in microseconds: response time where the run was paced; None for
    an interval without one)."""
    measured = [i for i in result.intervals if not i.warmup and i.duration_s > 0]
    op = next((m.name for m in result.measurements if m.operations and not m.name.startswith("Intended-")
               and m.name != "CLEANUP"), "READ")
    name = f"Intended-{op}" if any(i.target for i in measured) else op
    out = []
    for i in measured:
        m = i.measurements.get(name)
        p99 = float(m.percentiles.get(99.0, 0)) if m is not None and m.count else None
        out.append((i.elapsed_s - i.duration_s, i.elapsed_s, i.throughput, p99))
    return out


def join_windows(result) -> Join | None:
    """The run's measured intervals before, during and after the join of the first node that
    joined during it (None: no node joined). An interval belongs to the window its middle is in."""
    marks = [(e.elapsed_s, str(e.value)) for e in result.events if e.kind == journal.KIND]
    joining = next(((t, v.split()[1]) for t, v in marks if v.startswith("+ ")), None)
    if joining is None:
        return None
    node = joining[1]
    normal = next((t for t, v in marks if v == f"{node} normal" and t >= joining[0]), None)
    failed = any(v.startswith(f"{node} did not join") for _, v in marks)
    seconds = series(result)
    if not seconds:
        return Join(node, joining[0], normal, (), failed)
    first, last = seconds[0][0], seconds[-1][1]
    end_of_join = normal if normal is not None else last
    bounds = (("before", first, joining[0]), ("during", joining[0], end_of_join),
              ("after", end_of_join, last))
    failures = [(i.elapsed_s - i.duration_s / 2, sum(error_total(r) for r in i.returns.values()))
                for i in result.intervals if not i.warmup and i.duration_s > 0]
    windows = []
    for label, start, end in bounds:
        inside = [s for s in seconds if start <= (s[0] + s[1]) / 2 < end]
        rates = [rate for _, _, rate, _ in inside]
        p99s = [p99 for _, _, _, p99 in inside if p99 is not None]
        errors = sum(n for middle, n in failures if start <= middle < end)
        windows.append(Window(label, start, max(end, start), cell(rates) if rates else None,
                              cell(p99s) if p99s else None, errors))
    return Join(node, joining[0], normal, tuple(windows), failed)


def streamed(result, node: str) -> str | None:
    """What the join streamed to the node, as the provider wrote it to the journal (None if it
    could not tell)."""
    for event in result.events:
        if event.kind == journal.KIND and str(event.value).startswith(f"{node} received "):
            return str(event.value)[len(node) + 1:]
    return None
