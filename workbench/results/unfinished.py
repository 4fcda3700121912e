"""What a run that never finished adds up to, from the intervals it recorded.

A run whose process was killed (or that is still running) has no final result in the run store,
only the intervals committed one by one as they were published: `result_from_intervals` merges
their histograms into the result model's measurements, as the final result would have had them.
"""

from __future__ import annotations

from typing import Any

from workbench.metrics.histograms import decode, merge_into, new_histogram
from workbench.results.model import Event, Interval, RunResult
from workbench.results.summarize import measurement_from_histogram


def result_from_intervals(intervals: list[Interval], events: list[Event], properties: dict[str, str],
                          environment: dict[str, Any], *, phase: str, db: str, label: str,
                          started_at: float, outcome: str) -> RunResult:
    """What a run that never finished adds up to: interval histograms merged (never percentiles
    averaged), status counts summed, the runtime up to the last interval recorded; the rest
    (phase, database, label, start, outcome) as the run store's row has it."""
    from workbench.results.from_run import view  # noqa: PLC0415 - from_run pulls in the engine

    cumulative: dict = {}
    returns: dict[str, dict[str, int]] = {}
    warmup = [i for i in intervals if i.warmup]
    measured = [i for i in intervals if not i.warmup] if warmup else intervals
    for interval in measured:
        for name, m in interval.measurements.items():
            if m.histogram:
                target = cumulative.get(name)
                if target is None:
                    target = cumulative[name] = new_histogram()
                merge_into(target, decode(m.histogram))
        for op, counts in interval.returns.items():
            into = returns.setdefault(op, {})
            for status, n in counts.items():
                into[status] = into.get(status, 0) + n
    shown = view(cumulative, properties.get("measurement.interval", "op"))
    measurements = []
    for name, h in shown.items():
        own = name.removeprefix("Intended-") == name
        measurements.append(measurement_from_histogram(name, h, returns.get(name, {}) if own else {}))
    for op, counts in returns.items():
        if op not in shown:
            measurements.append(measurement_from_histogram(op, new_histogram(), counts))
    warmup_s = warmup[-1].elapsed_s if warmup else 0.0
    runtime_ms = int((measured[-1].elapsed_s - warmup_s) * 1000) if measured else 0
    operations = measured[-1].total_operations if measured else 0
    return RunResult(
        phase=phase, db=db, runtime_ms=runtime_ms, operations=operations,
        throughput=operations * 1000.0 / runtime_ms if runtime_ms > 0 else 0.0,
        measurements=measurements, intervals=intervals, events=events, properties=properties,
        environment=environment, label=label, started_at=started_at, outcome=outcome,
        warmup_s=warmup_s,
    )
