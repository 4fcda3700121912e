"""The servers' side of a run, sampled once a second in the parent process (issue 54, 1).

    sampler = ServerSampler(sources_for(cluster, spec.db))
    controller.attach_server(sampler)   # started with the run's clock; each tick takes its share
    ... controller.run() ...
    notes = sampler.stop()              # what could not be seen, and why

A thread wakes LEAD_S before each second of the run's clock and asks every source for its figures.
Each source that may block (a request over the network) answers on a thread of its own (a daemon:
a source that never answers holds only its own thread, never the tick, a lane or the process's
exit), at most one request at a time: a source still busy with the last second skips this one. A
source that only reads local files that never block (`inline = True`: /proc, a GC log) is read on
the sampler's thread itself, after the others were asked: a thread woken once a second costs about
a millisecond of CPU in cold caches alone, whatever it then does (issue 54, 7). An answer is filed
under the second it was asked for (its due time, even when a busy machine woke the thread late);
the controller's tick at the end of that second takes it (`take`, a lock and a dict, never a
wait). A thread woken more than a second late skips the seconds gone by, and `notes` counts them.
An answer that comes after its second's tick is late: its figures are dropped, but for the GC
pauses it counted (gc_pauses, gc_pause_ms_total and _max, read once from a log and never again),
which join the interval that takes it, and its events (each with its own time) are kept. A source
that raises SourceUnavailable is asked no more and says why once; one that fails or answers
garbage skips that second. Every skip is counted, and `notes` says so at the end.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from workbench.metrics.server import NodeSample, ServerEvent, ServerSource, SourceUnavailable

PERIOD_S = 1.0  # one request per source a second
LEAD_S = 0.2  # asked this long before the second's tick, so an answer has that long to come
FigureMap = dict[str, dict[str, float]]
# Figures that add up over the second when two answers land in one tick; the others: the newest.
_SUMMED = frozenset({"gc_pauses", "gc_pause_ms_total"})
# A GC log's pauses, read once and never again: kept from a late answer (take)
_PAUSES = _SUMMED | {"gc_pause_ms_max"}


class _Asker:
    """One source: on a thread of its own, asked at most once at a time; or, `inline`, read on
    the thread that asks."""

    def __init__(self, source: ServerSource, deliver) -> None:
        self.source, self.deliver = source, deliver
        self.name = str(getattr(source, "name", type(source).__name__))
        self.inline = getattr(source, "inline", False) is True
        self.busy = False
        self.gone: str | None = None  # why it is asked no more (SourceUnavailable)
        self.skips: Counter[str] = Counter()
        self.first_error = ""
        self._due: tuple[float, float] | None = None  # (asked at, filed at)
        self._wake = threading.Condition()
        self._closed = False
        if not self.inline:
            self._thread = threading.Thread(target=self._serve, name=f"workbench-source-{self.name}",
                                            daemon=True)
            self._thread.start()

    def ask(self, now: float, filed: float | None = None) -> None:
        """Ask for the figures at `now`; the answer is filed at `filed` (the second's due time, if
        the ask came later: a sampler's thread woken late), never later than `now`."""
        filed = now if filed is None else min(filed, now)
        if self.inline:
            if self.gone is None and not self._closed:
                self._sample(now, filed)
            return
        with self._wake:
            if self.gone is not None or self._closed:
                return
            if self.busy:
                self.skips["busy"] += 1
                return
            self.busy, self._due = True, (now, filed)
            self._wake.notify()

    def _serve(self) -> None:
        while True:
            with self._wake:
                while self._due is None and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                (now, filed), self._due = self._due, None
            self._sample(now, filed)
            with self._wake:
                self.busy = False
                if self.gone is not None:
                    return

    def _sample(self, now: float, filed: float) -> None:
        try:
            samples = self.source.sample(now)
            checked = _checked(samples)
        except SourceUnavailable as exc:
            self.gone = str(exc) or "unavailable"
        except Exception as exc:  # noqa: BLE001 - one second lost, the run goes on
            self._failed("failed", exc)
        else:
            if checked is None:
                self._failed("garbage", f"answered {type(samples).__name__}, not node samples")
            else:
                self.deliver(self, filed, checked)

    def _failed(self, how: str, why: object) -> None:
        self.skips[how] += 1
        if not self.first_error:
            self.first_error = f"{type(why).__name__}: {why}" if isinstance(why, BaseException) else str(why)

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        try:
            self.source.close()
        except Exception:  # noqa: BLE001, S110 - closing what may already be broken
            pass


def _checked(samples: Any) -> list[NodeSample] | None:
    """The samples with their figures as finite floats, or None for an answer that is not a list
    of NodeSamples (a source that returned garbage)."""
    if not isinstance(samples, list | tuple):
        return None
    out = []
    for s in samples:
        if not isinstance(s, NodeSample) or not isinstance(s.node, str):
            return None
        figures = {}
        for name, value in dict(s.figures).items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                return None
            figures[str(name)] = float(value)
        events = tuple(e for e in s.events if isinstance(e, ServerEvent))
        out.append(NodeSample(s.node, figures, events))
    return out


def merge_figures(into: dict[str, float], figures: dict[str, float]) -> None:
    """Two answers for one interval: counts add up, the longest pause is the longer, the rest
    the newer."""
    for name, value in figures.items():
        if name in _SUMMED and name in into:
            into[name] += value
        elif name == "gc_pause_ms_max" and name in into:
            into[name] = max(into[name], value)
        else:
            into[name] = value


class ServerSampler:
    """The ServerFeed (core/controller.py) of a run: its sources asked once a second."""

    def __init__(self, sources: Sequence[ServerSource], period: float = PERIOD_S,
                 lead: float = LEAD_S) -> None:
        self.sources, self.period, self.lead = list(sources), period, lead
        self.wall0 = 0.0
        self._askers: list[_Asker] = []
        self._lock = threading.Lock()
        self._inbox: list[tuple[float, _Asker, list[NodeSample]]] = []  # (elapsed asked, ...)
        self._taken_to = 0.0  # the end of the last interval a tick took
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.asked = 0  # seconds the sources were asked
        self.stalled = 0  # seconds not asked: the sampler's thread woke more than a second late

    def start(self, wall0: float) -> None:
        """The run's clock started at `wall0` (time.time()): ask from now on."""
        self.wall0 = wall0
        # asked in this order each second: the sources on threads of their own first, so their
        # requests are on their way while the inline ones are read
        self._askers = sorted((_Asker(s, self._deliver) for s in self.sources), key=lambda a: a.inline)
        self._thread = threading.Thread(target=self._tick, name="workbench-server-sampler",
                                        daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        k = 1
        while True:
            due = self.wall0 + k * self.period - self.lead
            if self._stop.wait(max(due - time.time(), 0.0)):
                return
            now = time.time()
            if now - due > self.period:  # the machine stalled: skip the seconds gone by, said
                gone = int((now - due) // self.period)
                self.stalled += gone
                k += gone
                continue
            self.asked += 1
            for asker in self._askers:
                asker.ask(now, due)  # filed at its second even when the thread woke late
            k += 1

    def _deliver(self, asker: _Asker, now: float, samples: list[NodeSample]) -> None:
        with self._lock:
            self._inbox.append((now - self.wall0, asker, samples))

    def take(self, elapsed_s: float) -> tuple[FigureMap, list[tuple[float, ServerEvent]]]:
        """What was sampled for the interval that ends `elapsed_s` into the run (a tick, on the
        controller's loop): figures by node, and the events, each with its time in the run."""
        with self._lock:
            ready = [item for item in self._inbox if item[0] <= elapsed_s]
            self._inbox = [item for item in self._inbox if item[0] > elapsed_s]
            since, self._taken_to = self._taken_to, max(self._taken_to, elapsed_s)
        figures: FigureMap = {}
        events: list[tuple[float, ServerEvent]] = []
        for asked, asker, samples in ready:
            late = asked <= since  # its interval was taken already: its figures are dropped
            if late:
                asker.skips["late"] += 1
            for sample in samples:
                kept = {k: v for k, v in sample.figures.items() if not late or k in _PAUSES}
                if kept:
                    merge_figures(figures.setdefault(sample.node, {}), kept)
                # an event keeps its own time, late or not: a GC pause read from its log once is
                # never read again
                events.extend((round(e.at - self.wall0, 3), e) for e in sample.events)
        return {node: f for node, f in sorted(figures.items()) if f}, events

    def stop(self) -> list[str]:
        """Stop asking (never waits for a source that does not answer); the run's notes."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        for asker in self._askers:
            asker.close()
        if not self._askers:  # never started (a run that failed first): its sources still close
            for source in self.sources:
                try:
                    source.close()
                except Exception:  # noqa: BLE001, S110 - closing what may already be broken
                    pass
        return self.notes()

    def notes(self) -> list[str]:
        """One line for each source that could not be read at all, or skipped seconds, and what
        a source that answers says it cannot see (its `notes`: FerretDB's part of serverStatus)."""
        out = []
        if self.stalled:
            out.append(f"sampler: {self.stalled} of {self.asked + self.stalled} seconds not asked (its "
                       "thread woke more than a second late: the machine was busy)")
        for asker in self._askers:
            if asker.gone is not None:
                out.append(f"{asker.name}: {asker.gone}")
            out.extend(f"{asker.name}: {note}" for note in getattr(asker.source, "notes", ()))
            skipped = sum(asker.skips.values())
            if skipped:
                how = ", ".join(f"{n} {what}" for what, n in sorted(asker.skips.items()))
                why = f": {asker.first_error}" if asker.first_error else ""
                out.append(f"{asker.name}: {skipped} of {self.asked} seconds skipped ({how}){why}")
        return out


class FigureSource:
    """A ServerSource over one of clusters/node_figures.py's readers (plain figures per node)."""

    def __init__(self, name: str, reader: Any) -> None:
        self.name, self.reader = name, reader
        self.inline = getattr(reader, "inline", False) is True  # /proc: read on the sampler's thread

    def sample(self, now: float) -> list[NodeSample]:
        return [NodeSample(node, figures) for node, figures in self.reader.read(now).items()]

    def close(self) -> None:
        self.reader.close()


class Unseen:
    """A source that cannot be read here: says why once."""

    def __init__(self, name: str, why: str) -> None:
        self.name, self.why = name, why

    def sample(self, now: float) -> list[NodeSample]:
        raise SourceUnavailable(self.why)

    def close(self) -> None:
        pass


def sources_for(cluster: Any, db: str) -> list[ServerSource]:
    """The sources of a run: the client's own processes always; a cluster the workbench knows
    (local, Docker, external): its nodes' processes and what its database's descriptor reads."""
    from workbench.clusters import node_figures  # noqa: PLC0415 - /proc and docker-py, when run

    sources: list[ServerSource] = [FigureSource("client", node_figures.ClientProcesses())]
    if cluster is None or getattr(cluster, "run_dir", None) is None:
        return sources
    try:
        reader = node_figures.process_reader(cluster)
    except Exception as exc:  # noqa: BLE001 - a state file that cannot be read: said, not fatal
        reader = f"no process figures: {exc}"
    sources.append(Unseen("process", reader) if isinstance(reader, str) else FigureSource("process", reader))
    try:
        sources.extend(_database_sources(cluster, db))
    except Exception as exc:  # noqa: BLE001 - the run goes on without them, and says so
        sources.append(Unseen("server", f"no server figures: {type(exc).__name__}: {exc}"))
    return sources


def _database_sources(cluster: Any, db: str) -> list[ServerSource]:
    try:
        from workbench.databases import find  # noqa: PLC0415 - the descriptors (issue 53)
    except ImportError:
        return []
    described = find(db)
    return list(described.server_sources(cluster)) if described is not None else []
