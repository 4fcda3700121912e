"""Recording a phase into the run store while it runs, off the engine's hot path.

    recording = Recording.open(store_path, spec, props, source="run", workload="workloada")
    recording.attach(controller)      # every tick: the interval and the new events, queued
    ... controller.run() ...
    recording.finish(result)          # the final result; waits for the writer

`open` writes the run's row at once, so a store that cannot be written (read-only, a full disk,
not a store) is one clear line before the run starts. The controller's loop only puts each tick's
StoredInterval on a queue; a writer thread converts and commits it (one transaction per interval,
so a SIGKILL loses at most the interval being written). Should the store fail during the run,
recording stops, the run goes on, and `finish` reports the error once (the results on stdout and
in the exports are kept).
"""

from __future__ import annotations

import queue
import threading
from typing import Any

from workbench.config.spec import WorkloadSpec
from workbench.core.controller import Controller, StoredInterval
from workbench.errors import WorkbenchError
from workbench.results.from_run import environment, interval_from_stored, server_event_record
from workbench.results.model import Event, RunResult
from workbench.results.store import ExperimentTag, RunStore, store_error

_DONE = object()
# The writer's SQLite page cache. It only appends, and SQLite keeps every page it writes until
# its cache is full (2 MB by default): a long run's resident set grew by each interval's row
# for its first minutes, 0.3-0.5 MB a minute at one tick a second (issue 52;
# docs/history/BENCHMARKS-LOG.md, "Memory over an hour"). The pages an append reads (the tables'
# and index's paths to their last leaves) fit in far less.
WRITER_CACHE_KIB = 256


class _Failed:
    def __init__(self, error: str) -> None:
        self.error = error


class Recording:
    def __init__(self, store: RunStore, run_id: int) -> None:
        self.store, self.run_id = store, run_id
        store.conn.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")  # (this connection only)
        self.error: str | None = None  # why recording stopped early, once the writer knows
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._seq = 0
        self._events = 0
        self._server_events = 0
        self._thread = threading.Thread(target=self._write, name=f"workbench-store-{run_id}", daemon=True)
        self._thread.start()

    @classmethod
    def open(cls, path: Any, spec: WorkloadSpec, props: dict[str, str], *, phase: str, source: str,
             workload: str = "", cluster: Any = None, experiment: ExperimentTag | None = None,
             manifest: dict[str, Any] | None = None) -> Recording:
        """The run's row, written now; raises a WorkbenchError when the store cannot take it."""
        try:
            store = RunStore(path)
        except WorkbenchError as exc:
            if "--no-store" not in (exc.hint or ""):
                exc.hint = f"{exc.hint}, or --no-store to run without recording" if exc.hint \
                    else "--no-store runs without recording"
            raise
        try:
            run_id = store.begin(phase=phase, db=spec.db, workload=workload, label=spec.label,
                                 source=source, properties=props,
                                 environment=environment(spec, cluster), experiment=experiment,
                                 manifest=manifest)
        except Exception as exc:
            store.close()
            raise store_error(store.path, exc, "record a run") from None
        return cls(store, run_id)

    def attach(self, controller: Controller) -> None:
        controller.subscribe_record(self._on_tick)

    def _on_tick(self, stored: StoredInterval, events: list[tuple[float, str, object]]) -> None:
        self._queue.put((stored, events))  # the controller's loop does nothing more

    def _write(self) -> None:
        while True:
            item = self._queue.get()
            if item is _DONE:
                return
            if self.error is not None:
                continue  # the store failed: keep draining, the run goes on
            try:
                if isinstance(item, RunResult):
                    self.store.finish(self.run_id, item, recorded=self._seq)
                    continue
                if isinstance(item, _Failed):
                    self.store.fail(self.run_id, item.error)
                    continue
                stored, events = item
                numbered = []
                for t, kind, value in events:
                    numbered.append((self._events, Event(t, kind, value)))
                    self._events += 1
                servers = [(self._server_events + n, server_event_record(t, e))
                           for n, (t, e) in enumerate(stored.server_events)]
                self._server_events += len(servers)
                self.store.add_interval(self.run_id, self._seq, interval_from_stored(stored), numbered,
                                        servers)
                self._seq += 1
            except Exception as exc:  # noqa: BLE001 - reported by finish(), never fatal to the run
                what = f"record interval {self._seq + 1}" if isinstance(item, tuple) else \
                    "record the end of the run"
                self.error = str(store_error(self.store.path, exc, what))

    def finish(self, result: RunResult | None, error: str | None = None) -> None:
        """Write the final result, or mark the run failed with `error` when the phase never
        produced one (no server, bad binding); wait for the writer. Raises a WorkbenchError when
        anything of the run could not be recorded."""
        self._queue.put(result if result is not None else _Failed(error or "the run did not start"))
        self._queue.put(_DONE)
        self._thread.join()
        self.store.close()
        if self.error is not None:
            raise WorkbenchError(f"run {self.run_id} was not fully recorded: {self.error}")
