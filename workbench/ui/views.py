"""What the Run screen draws, computed from a `LiveState` without any widget: progress and ETA,
the per-operation rows, the percentile bars and the throughput chart as rich renderables.

Kept free of textual so it can be tested (and reused) headless; widgets only hold the result.
Colours are never the only signal: every mark also has its own character.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

from workbench.drive.background import LiveState
from workbench.metrics.snapshot import OpStats
from workbench.results.model import error_total, is_error
from workbench.ui.server_view import server_event_words, server_mark

CURVE = ((50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9"), (99.99, "p99.99"))
BLOCKS = " ▁▂▃▄▅▆▇█"
EVENT_MARKS = {"target": "T", "lanes": "L", "pause": "P", "resume": "R", "stop": "S",
               "fault": "!", "cluster": "N"}  # cluster: a node joining or leaving (clusters/journal.py)
NO_EVENTS = "no events yet (T target, L lanes, P pause, ! fault, C F G K: see ?)"


def fmt_us(us: float) -> str:
    """A latency in at most 6 characters: 312µs, 1.24ms, 12.3ms, 1.20s."""
    if us < 1000:
        return f"{us:.0f}µs"
    if us < 10_000:
        return f"{us / 1000:.2f}ms"
    if us < 1_000_000:
        return f"{us / 1000:.1f}ms" if us < 100_000 else f"{us / 1000:.0f}ms"
    return f"{us / 1_000_000:.2f}s"


def fmt_rate(rate: float) -> str:
    return "none" if rate <= 0 else f"{rate:,.0f}"


def node_line(nodes: dict[str, tuple[int, int]], interval_s: float,
              down: frozenset[str] = frozenset()) -> str:
    """The last interval's requests per node in one line: "nodes 127.0.0.1 5,210/s · 127.0.0.2
    down 3 err · 127.0.0.3 0/s"; a node the client knows is disconnected reads "down"; the port
    is left out where every node has the same one."""
    if not nodes:
        return ""
    ports = {node.rpartition(":")[2] for node in nodes}
    parts = []
    for node, (requests, errors) in nodes.items():
        name = node.rpartition(":")[0] or node if len(ports) == 1 else node
        rate = requests / interval_s if interval_s > 0 else 0.0
        shown = "down" if node in down else f"{rate:,.0f}/s"
        parts.append(f"{name} {shown}" + (f" {errors:,} err" if errors else ""))
    return "nodes " + " · ".join(parts)


def fmt_duration(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    if seconds < 60:
        return f"{seconds}s"
    m, s = divmod(seconds, 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


@dataclass(frozen=True)
class Progress:
    fraction: float | None  # None: no limit known
    eta_s: float | None
    text: str


def progress(state: LiveState, operationcount: int, maxexecutiontime: int) -> Progress:
    """How far the phase is, by operations or by time, whichever ends it first."""
    snap = state.snapshot
    done, elapsed = snap.total_operations, snap.elapsed_s
    fractions: list[tuple[float, float | None]] = []
    if operationcount:
        f = min(done / operationcount, 1.0)
        rate = done / elapsed if elapsed > 0 else 0.0
        fractions.append((f, (operationcount - done) / rate if rate > 0 else None))
    if maxexecutiontime:
        fractions.append((min(elapsed / maxexecutiontime, 1.0), max(maxexecutiontime - elapsed, 0.0)))
    ops = f"{done:,}" + (f" / {operationcount:,} ops" if operationcount else " ops")
    if not fractions:
        return Progress(None, None, f"{ops}, no limit (s stops)")
    fraction, eta = max(fractions, key=lambda x: x[0])
    eta_text = "ETA " + (fmt_duration(eta) if eta is not None else "?")
    if snap.final:
        eta_text = "done"
    return Progress(fraction, eta, f"{ops}  {fraction:.0%}  {eta_text}")


def measurement_names(state: LiveState) -> list[str]:
    """Operations measured so far (service-time names), in a stable order."""
    stats = state.snapshot.cumulative or state.snapshot.stats
    order = ("INSERT", "READ", "UPDATE", "SCAN", "READ-MODIFY-WRITE", "DELETE")
    names = [n for n in stats if not n.startswith("Intended-") and not n.endswith("-FAILED")
             and n not in ("CLEANUP", "VERIFY", "SCAN-LATENCY-PER-RECORD")]
    return sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))


def _failed_count(returns: dict[str, dict[str, int]], op: str) -> int:
    return error_total(returns.get(op, {}))


WIDE = ("operation", "count", "ops/s", "p50", "p95", "p99", "p99.9", "max", "errors")
COMPACT = ("operation", "p50", "p99", "errors")  # beside a lesson's text (ops/s: in the chart)


def op_table(state: LiveState, returns: dict[str, dict[str, int]], paced: bool,
             columns: tuple[str, ...] = WIDE) -> Table:
    """One row per operation (since start; ops/s over the last interval); with a target rate
    a second row per operation shows the response time, corrected for coordinated omission."""
    snap = state.snapshot
    table = Table(box=None, padding=(0, 1), expand=True, header_style="bold")
    for name in columns:
        table.add_column(name, justify="left" if name == "operation" else "right", no_wrap=True)
    cumulative = snap.cumulative or snap.stats
    rate = 1 / snap.interval_s if snap.interval_s > 0 else 0.0
    for op in measurement_names(state):
        kinds = [("service", op)]
        if paced and f"Intended-{op}" in cumulative:
            kinds.append(("response", f"Intended-{op}"))
        for kind, name in kinds:
            s = cumulative.get(name)
            if s is None:
                continue
            now = snap.stats.get(name)
            failed = _failed_count(returns, op)
            label = op if kind == "service" else "  response"
            if paced and kind == "service":
                label = f"{op} service"
            cells = {"operation": label, "count": f"{s.count:,}",
                     "ops/s": f"{(now.count if now else 0) * rate:,.0f}",
                     **{f"p{p:g}": fmt_us(s.percentiles.get(p, 0)) for p in (50.0, 95.0, 99.0, 99.9)},
                     "max": fmt_us(s.max),
                     "errors": (f"✗ {failed:,}" if failed else "0") if kind == "service" else ""}
            if columns is COMPACT and kind == "response":
                cells["operation"] = "  resp."
            table.add_row(*(cells[c] for c in columns))
    kinds = error_kinds(returns, snap.error_kinds)
    if kinds:
        table.caption = "✗ errors by kind: " + ", ".join(f"{k} {n:,}" for k, n in kinds)
        table.caption_justify = "left"
    return table


def error_kinds(returns: dict[str, dict[str, int]], driver: Mapping[str, int] | None = None
                ) -> list[tuple[str, int]]:
    """Failed operations by status over every operation, most frequent first; where the driver
    named its errors (`driver`: IntervalSnapshot.error_kinds, "ReadTimeout" ...) its kinds stand
    for the bare ERROR, as in the stored run."""
    totals: dict[str, int] = {}
    for counts in returns.values():
        for status, n in counts.items():
            if is_error(status) and n and not (driver and status == "ERROR"):
                totals[status] = totals.get(status, 0) + n
    for kind, n in (driver or {}).items():
        if n:
            totals[kind] = totals.get(kind, 0) + n
    return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))


def percentile_bars(interval: OpStats | None, since: OpStats | None, width: int) -> Text:
    """The latency distribution of one operation as horizontal bars on a log axis: █ for the
    last interval, ┃ marks the value since the start."""
    text = Text()
    values = [v for s in (interval, since) if s and s.count
              for v in [*(s.percentiles.get(p, 0) for p, _ in CURVE), s.max]]
    if not values:
        return Text("no operations yet")
    smallest = min((v for v in values if v > 0), default=1)
    low = 10 ** math.floor(math.log10(max(smallest, 1)))  # a decade below: every bar shows
    high = max(max(values), low * 10)
    bar_width = max(width - 30, 10)

    def position(v: float) -> int:
        if v <= 0:
            return 0
        return round((math.log10(max(v, low)) - math.log10(low)) / (math.log10(high) - math.log10(low))
                     * (bar_width - 1)) + 1

    rows = [(label, p) for p, label in CURVE] + [("max", None)]
    for label, p in rows:
        live = interval is not None and interval.count > 0
        now = (interval.max if p is None else interval.percentiles.get(p, 0)) if live else 0
        all_ = (since.max if p is None else since.percentiles.get(p, 0)) if since and since.count else 0
        cells = ["█"] * position(now) + [" "] * (bar_width - position(now))
        mark = position(all_)
        if mark:
            cells[min(mark, bar_width) - 1] = "┃"
        text.append(f"{label:>6} ")
        text.append("".join(cells[:bar_width]), style="green")
        text.append(f" {fmt_us(now):>6} {fmt_us(all_):>6}\n")
    text.append(f"{'':>6} {fmt_us(low):<{bar_width // 2}}{fmt_us(high):>{bar_width - bar_width // 2}}"
                "    now  start", style="dim")
    return text


def chart_top(value: float) -> float:
    """The chart's scale: the smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^n at or above value."""
    if value <= 1:
        return 1.0
    unit = 10.0 ** math.floor(math.log10(value))
    return next(f * unit for f in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if f * unit >= value * (1 - 1e-12))


def fmt_short(value: float) -> str:
    """A rate in four characters or so: 800, 1.5k, 25k, 1.2M."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


def mean_throughput(state: LiveState) -> float:
    """The phase's mean throughput so far: operations over the seconds measured (from the end of
    the warm-up, when there was one), as the finished run's result will say."""
    snap = state.snapshot
    start = max((float(t) for t, kind, _ in state.events if kind == "measuring"), default=0.0)
    seconds = snap.elapsed_s - start
    return snap.total_operations / seconds if seconds > 0 else 0.0


def throughput_chart(state: LiveState, width: int, height: int = 3) -> Text:
    """The last ticks of throughput as block columns `height` rows tall, on a scale from 0 to a
    round top labelled at the left (its value beside the top row, 0 beside the bottom one), the
    target rate drawn as ╌ where no bar covers it, and a row of event marks under the ticks."""
    width = max(width, 10)
    values = list(state.throughput)
    targets = list(state.targets)
    top = chart_top(max([*values, *targets, 1.0]))
    label = fmt_short(top)
    margin = len(label) + 1  # "800k┤"
    columns = max(width - margin, 1)
    values, targets = values[-columns:], targets[-columns:]
    first_tick = len(state.throughput) - len(values)
    levels = height * 8
    text = Text()
    for row in range(height - 1, -1, -1):
        axis = label if row == height - 1 else "0" if row == 0 else ""
        text.append(f"{axis:>{margin - 1}}{'┤' if axis else '│'}", style="dim")
        for v, t in zip(values, targets, strict=True):
            filled = v / top * levels - row * 8
            t_level = t / top * levels - row * 8 if t > 0 else -1
            if filled >= 8:
                text.append("█", style="cyan")
            elif filled > 0:
                text.append(BLOCKS[max(int(filled), 1)], style="cyan")
            elif 0 <= t_level < 8:
                text.append("╌", style="yellow")
            else:
                text.append(" ")
        text.append("\n")
    marks = [" "] * len(values)
    tick_s = state.snapshot.elapsed_s / max(len(state.throughput), 1)
    # the servers' events first: the run's own (a target, a fault sent from here) draw over them
    placed = [(elapsed, server_mark(event)) for elapsed, event in state.server_events]
    placed += [(elapsed, EVENT_MARKS.get(kind, "*")) for elapsed, kind, _value in state.events]
    for elapsed, mark in placed:
        i = int(elapsed / tick_s) - first_tick if tick_s > 0 else -1
        if mark and 0 <= i < len(marks):
            marks[i] = mark
    text.append(" " * margin + "".join(marks), style="bold magenta")
    return text


def event_line(state: LiveState, last: int = 4) -> str:
    """The newest events in words, the run's and the servers' (those marked on the chart):
    '12.0s T target 2,000 · 15.3s ! node1 killed · 41.0s G 127.0.0.2 gc 412ms'."""
    timed: list[tuple[float, str]] = [(elapsed, server_event_words(elapsed, event))
                                      for elapsed, event in state.server_events if server_mark(event)]
    for elapsed, kind, value in state.events[-last:]:
        mark = EVENT_MARKS.get(kind, "*")
        if kind == "target":
            what = f"target {fmt_rate(float(value))}"
        elif kind == "lanes":
            what = f"lanes {value}"
        elif kind in ("fault", "cluster"):
            what = str(value)
        elif kind == "stop":
            what = f"stop ({value})"
        else:
            what = kind
        timed.append((elapsed, f"{elapsed:.1f}s {mark} {what}"))
    words = [w for _t, w in sorted(timed, key=lambda tw: tw[0])[-last:]]
    return " · ".join(words) if words else NO_EVENTS
