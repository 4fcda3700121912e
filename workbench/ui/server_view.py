"""The servers' side of a run in words and marks, for the Run screen (issue 54, 3 and 8): a line
per node of the newest second (CPU, the longest GC pause, compactions and flushes pending; a dead
or frozen node said so), the client's own line (its CPU, its loops' lag, how late operations
started, how far a paced run is behind its schedule, and the verdict when the client was the
bottleneck), and the server events' marks on the throughput chart's timeline.

Pure functions of a LiveState: the widget (widgets/node_strip.py) and the chart draw them."""

from __future__ import annotations

import os
from collections.abc import Mapping

from workbench.drive.background import LiveState
from workbench.metrics.server import CLIENT, ServerEvent
from workbench.results.client_limits import verdict
from workbench.results.spikes import server_mark

_GONE = {"kill": "dead", "pause": "frozen"}  # a node's state after its newest such event
_BACK = ("restart", "resume", "start")


def _host(node: str) -> str:
    return node.rpartition(":")[0] or node if node.count(":") == 1 else node


def node_states(state: LiveState) -> dict[str, str]:
    """Nodes dead or frozen now, by their newest kill/pause or restart/resume event."""
    states: dict[str, str] = {}
    for _elapsed, event in state.server_events:
        if event.kind in _GONE:
            states[_host(event.node)] = _GONE[event.kind]
        elif event.kind in _BACK:
            states.pop(_host(event.node), None)
    return states


def _ms(value: float) -> str:
    return f"{value:,.0f}ms" if value >= 10 else f"{value:.1f}ms"


def node_words(node: str, figures: Mapping[str, float], gone: str = "") -> str:
    """'127.0.0.2 cpu 1.3 gc 412ms C2 F1' (what the second's sources saw; absent: not shown)."""
    if gone:
        return f"{node} {gone.upper()}"
    if not figures:
        return f"{node} no figures"
    words = [node]
    if "cpu" in figures:
        words.append(f"cpu {figures['cpu']:.1f}")
    if figures.get("gc_pause_ms_max"):
        words.append(f"gc {_ms(figures['gc_pause_ms_max'])}")
    if figures.get("compactions_pending"):
        words.append(f"C{figures['compactions_pending']:.0f}")
    if figures.get("flushes_pending"):
        words.append(f"F{figures['flushes_pending']:.0f}")
    return " ".join(words)


def node_lines(state: LiveState, width: int) -> list[str]:
    """The servers' nodes of the newest second, packed into lines of at most `width`; every node
    seen so far keeps its place (one without figures this second says so, a killed one DEAD)."""
    newest = state.snapshot.server
    seen = sorted({n for second in state.server for n in second if n != CLIENT} |
                  {_host(e.node) for _t, e in state.server_events if e.node != CLIENT})
    gone = node_states(state)
    down = {_host(n) for n in state.snapshot.down}
    parts = [node_words(n, newest.get(n, {}), gone.get(n, "down" if n in down else "")) for n in seen]
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part[:width])
    return lines


def machine_cores() -> int:
    """The cores this process may run on (its workers inherit them)."""
    return len(os.sched_getaffinity(0))


WAIT_SHOWN = 0.05  # a client's threads waiting for a core 50 ms a second: worth a word on its line


def client_verdict(state: LiveState, cores: float | None = None) -> str:
    """The client-limited line over the seconds so far ('' when the client kept up); the local
    nodes are those whose process CPU this machine measured (their CPU shares its cores)."""
    seconds = [s for s in state.server if s]
    if not seconds:
        return ""
    cores = cores if cores is not None else machine_cores()
    local = frozenset(n for s in seconds for n, f in s.items() if n != CLIENT and "cpu" in f)
    return verdict(seconds, cores, local).line


def client_line(state: LiveState) -> str:
    """'client cpu 1.9 · waited 0.3 · loop lag 12ms · start gap 3.1ms · BEHIND by 1,204 ops' (waited:
    cores' worth of time its threads were ready to run but waited for a core, shown from WAIT_SHOWN)."""
    snap = state.snapshot
    own = snap.server.get(CLIENT, {})
    words = []
    if "cpu" in own:
        words.append(f"cpu {own['cpu']:.1f}")
    if own.get("cpu_wait", 0.0) >= WAIT_SHOWN:
        words.append(f"waited {own['cpu_wait']:.1f}")
    if "loop_lag_ms" in own:
        words.append(f"loop lag {_ms(own['loop_lag_ms'])}")
    if "start_gap_ms" in own:
        words.append(f"start gap {_ms(own['start_gap_ms'])}")
    if snap.behind > 0:
        words.append(f"BEHIND by {snap.behind:,} ops")
    return "client " + " · ".join(words) if words else ""


def server_event_words(elapsed: float, event: ServerEvent) -> str:
    """'41.0s G 127.0.0.2 gc 412ms' for the event line under the chart."""
    mark = server_mark(event) or "·"
    what = f"{event.kind} {_ms(event.seconds * 1000)}" if event.kind == "gc" else event.kind
    return f"{elapsed:.1f}s {mark} {event.node} {what}"
