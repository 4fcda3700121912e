"""One run over time in inline SVG (timeline.py's RunTimeline): the client's throughput and p99
each second, and under it, on the same time axis, each server node's CPU, its longest GC pause
of the second and its pending compactions; then the run's spike lines ("READ p99 38 ms at 41 s:
GC pause 412 ms on 127.0.0.2") or "no spike". The experiment report draws it for each run that
has server figures, the lab report for each step's run that has them.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.experiments.analysis import RunRecord
from workbench.experiments.charts import COLOURS, FRAME, chart_open, esc, legend_entry, num
from workbench.experiments.timeline import SERIES, RunTimeline
from workbench.results.spikes import SPIKE_FACTOR

# a line of a time chart: (label, one value per second (None: a gap), colour, dash, scaled): a
# scaled line is drawn to its own top (named in its label), the others share the left axis
Line = tuple[str, Sequence[float | None], str, str, bool]
_DASHES = {"cpu": "", "gc_ms_max": ' stroke-dasharray="6 4"',
           "compactions_pending": ' stroke-dasharray="2 3"'}


def time_chart(kind: str, caption: str, seconds: Sequence[float], lines: Sequence[Line], axis: str,
               marks: Sequence[Sequence] = ()) -> str:
    """A chart of values per second against seconds since the run began, `marks` ((when, words)
    or (when, letter, words)) as dotted vertical lines, a mark's letter at its top."""
    width, height, left, right, top, bottom = FRAME
    t0, t1 = seconds[0] - 1, seconds[-1]
    shared = [v for _, values, _, _, scaled in lines if not scaled for v in values if v is not None]
    high = max(shared, default=0.0) * 1.1 or 1.0

    def fx(t: float) -> float:
        return left + (width - left - right) * (t - t0) / max(t1 - t0, 1e-9)

    def fy(v: float, top_of: float) -> float:
        return top + (1 - v / top_of) * (height - top - bottom)

    out = chart_open(kind, caption)
    for k in range(6):
        y = fy(high * k / 5, high)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{num(high * k / 5)}</text>')
        t = t0 + (t1 - t0) * k / 5
        out.append(f'<text x="{fx(t):.1f}" y="{height - bottom + 18}" text-anchor="middle">'
                   f'{t:.{0 if t1 - t0 >= 10 else 1}f} s</text>')
    out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle" '
               f'class=axis>{esc(axis)}</text>')
    for i, (label, values, colour, dash, scaled) in enumerate(lines):
        own = (max((v for v in values if v is not None), default=0.0) * 1.1 or 1.0) if scaled else high
        for run in _runs(seconds, values):
            points = " ".join(f"{fx(t):.1f},{fy(v, own):.1f}" for t, v in run)
            out.append(f'<polyline class=series data-series="{esc(label)}" points="{points}" fill="none" '
                       f'stroke="{colour}" stroke-width="2"{dash}/>')
        out += legend_entry(i, label, colour, dash)
    for t, *said in marks:
        x, text, letter = fx(t), said[-1], said[0] if len(said) > 1 else ""
        out.append(f'<line class=event x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{height - bottom}" '
                   f'stroke="#555" stroke-dasharray="2 3"><title>{esc(text)}</title></line>')
        if letter:
            out.append(f'<text class=event x="{x:.1f}" y="{top - 4}" text-anchor="middle">{esc(letter)}'
                       f'<title>{esc(text)}</title></text>')
    out.append("</svg></figure>")
    return "\n".join(out)


def _runs(seconds: Sequence[float], values: Sequence[float | None]) -> list[list[tuple[float, float]]]:
    """The stretches of a series between its gaps (a single point drawn as a tiny segment)."""
    runs: list[list[tuple[float, float]]] = [[]]
    for t, v in zip(seconds, values, strict=True):
        if v is None:
            runs.append([])
        else:
            runs[-1].append((t, v))
    return [r if len(r) > 1 else [(r[0][0] - 0.05, r[0][1]), r[0]] for r in runs if r]


def _top(values: Sequence[float | None]) -> float:
    return max((v for v in values if v is not None), default=0.0)


def timeline_html(t: RunTimeline, title: str) -> list[str]:
    """The client's chart, the servers' under it, and the spike lines, for one run."""
    if not t.seconds:
        return [f"<p>{esc(title)}: no measured seconds</p>"]
    axis = "seconds since the run started"
    client = time_chart("run-client",
                        f"{title}: the client, throughput and p99 (its slowest operation's) each second",
                        t.seconds, [("ops/s", t.throughput, COLOURS[0], "", False),
                                    (f"p99 (top {_ms(_top(t.p99_us))})", t.p99_us, COLOURS[1],
                                     _DASHES["gc_ms_max"], True)],
                        f"{axis} (ops/s on the left; p99 scaled to the plot)",
                        [(at, line) for at, line in zip(t.spike_at, t.spikes, strict=True)])
    lines: list[Line] = []
    for n, (node, figures) in enumerate(t.nodes.items()):
        colour = COLOURS[n % len(COLOURS)]
        for name, words in SERIES:
            if name not in figures:
                continue
            values = figures[name]
            label = f"{node} {words}"
            if name != "cpu":  # each to its own top, so that a 2-ms pause and 4 cores both show
                label += f", top {num(_top(values))}"
            lines.append((label, values, colour, _DASHES[name], name != "cpu"))
    parts = [client]
    if lines or t.marks:
        parts.append(time_chart("run-servers", f"{title}: the servers, each node's CPU (solid), longest GC "
                                "pause of the second (dashed) and compactions pending (dotted); above: "
                                "G a GC pause of 100 ms or more, C a compaction, F a flush, K a kill",
                                t.seconds, lines, f"{axis} (cores on the left; the rest to their top)",
                                t.marks))
    parts.append(spikes_html(t))
    return parts


def spikes_html(t: RunTimeline) -> str:
    """The spike lines under the charts, or that there was none."""
    rule = f"a second whose p99 is at least {SPIKE_FACTOR:g} times the run's median p99"
    if not t.spikes:
        return f"<p class=spikes>no spike ({esc(rule)})</p>"
    items = "".join(f"<li>{esc(line)}</li>" for line in t.spikes)
    return (f"<p class=spikes>Spikes ({esc(rule)}) and the server events that overlapped each:</p>"
            f"<ul class=spikes>{items}</ul>")


def _ms(us: float) -> str:
    return f"{us / 1000:,.3g} ms"


def servers_section(records: Sequence[RunRecord]) -> list[str]:
    """The experiment report's section of each run with server figures over time ([] when no run
    has any: a memory experiment's report says nothing about servers)."""
    timed = [r for r in records if r.timeline is not None]
    if not timed:
        return []
    parts = ["<h2>Each run over time: the client and its servers</h2>",
             "<p>Under each run's throughput and p99, the same seconds on the servers' side, as the "
             "run recorded them; then every second whose p99 stood out and the server events that "
             "overlapped it.</p>"]
    for r in timed:
        title = f"{r.step.key} #{r.repetition} (run {r.run_id})"
        parts.append(f"<h3>{esc(title)}</h3>")
        parts += timeline_html(r.timeline, title)
    return parts
