"""What a paced run's figures are: achieved against offered, and whether its window measured the
offered load or a backlog being caught up.

A paced run (one with a target) gives every operation an intended start on a fixed schedule
(core/pacing.py); lanes that fall behind run the slots that fell due back to back until they
are on time again. A window that starts behind its schedule therefore runs above the offered
rate while it catches up: its throughput is the backlog being paid off, not the database's
capacity, and its response times carry the queue from before the window. Each interval records
how far behind the lanes were at its end (`Interval.behind`: operations due and not yet
started); `pacing` reads a window's start and end from it. YCSB's scaling tier (Cooper et al.,
"Benchmarking Cloud Serving Systems with YCSB", SoCC 2010, 3.2) holds the offered load in
proportion to the servers and reads latency: throughput there only checks that the load was
delivered, which is what `Pacing.verdict` says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.results.model import Interval, RunResult

BEHIND_S = 0.5  # a schedule further behind than this (seconds of its offered rate) is behind
ABOVE = 1.05  # a window achieving more than 5% over its offered rate was catching up
DELIVERED = 0.9  # and one under 90% of it did not get its load delivered (experiments' SATURATED)
CATCHING_UP, NOT_DELIVERED, DELIVERED_WORD = "catching up", "not delivered", "delivered"


@dataclass(frozen=True)
class Pacing:
    """A paced window: its offered and achieved rates (ops/s) and how far behind its schedule it
    was at its start and at its end (seconds; None where the run did not record it)."""

    offered: float
    achieved: float
    behind_start_s: float | None = None
    behind_end_s: float | None = None

    @property
    def share(self) -> float:
        return self.achieved / self.offered if self.offered > 0 else 0.0

    @property
    def started_behind(self) -> bool:
        return self.behind_start_s is not None and self.behind_start_s > BEHIND_S

    @property
    def above(self) -> bool:
        return self.achieved > ABOVE * self.offered

    @property
    def ended_behind(self) -> bool:
        return self.behind_end_s is not None and self.behind_end_s > BEHIND_S

    @property
    def verdict(self) -> str:
        """"catching up" (its throughput is no capacity), "not delivered" (the database did not
        keep up with the offered load) or "delivered"."""
        # a window that started behind catches up only by running above its offered rate: one
        # that delivered less than DELIVERED of it fell further behind, whatever its last tick said
        if self.above or (self.started_behind and not self.behind_throughout and self.share >= DELIVERED):
            return CATCHING_UP
        if self.share < DELIVERED or self.ended_behind:
            return NOT_DELIVERED
        return DELIVERED_WORD

    @property
    def behind_throughout(self) -> bool:
        """Behind at its start and no less at its end: it never caught up (a saturated database:
        its lanes ran back to back, its response times are the queue's). A window that achieved
        less than it was offered fell further behind by definition, whatever its last tick said (a
        worker that answered that tick late left its share of the figure to the next one)."""
        return self.started_behind and self.ended_behind and \
            (self.behind_end_s >= self.behind_start_s or self.share < 1.0)  # type: ignore[operator]

    def achieved_text(self) -> str:
        """'2,998 of 3,000 ops/s offered (99.9%)'."""
        return f"{self.achieved:,.0f} of {self.offered:,.0f} ops/s offered ({self.share:.1%})"

    def note(self) -> str:
        """What the window's throughput is, in words."""
        verdict = self.verdict
        if verdict == CATCHING_UP:
            if self.started_behind:
                return (f"behind schedule at the window's start ({self.behind_start_s:,.1f} s of its "
                        f"offered rate due and not started): catching up, not capacity")
            return f"ran above its offered rate ({self.share:.0%}): catching up, not capacity"
        if verdict == NOT_DELIVERED:
            if self.behind_throughout:
                return (f"behind schedule all through the window ({self.behind_start_s:,.1f} s at its "
                        f"start, {self.behind_end_s:,.1f} s at its end): the offered load was not delivered")
            if self.ended_behind:
                return (f"the offered load was not delivered: {self.behind_end_s:,.1f} s behind "
                        f"schedule at the window's end")
            return f"the offered load was not delivered ({self.share:.0%} of it)"
        return "the offered load was delivered"

    def line(self) -> str:
        """'2,998 of 3,000 ops/s offered (99.9%): the offered load was delivered'."""
        return f"{self.achieved_text()}: {self.note()}"


def lag_s(interval: Interval) -> float | None:
    """How far behind its schedule the interval ended (seconds of its offered rate), None when
    it was not paced or its run did not record it."""
    if interval.behind is None or not interval.target:
        return None
    return interval.behind / interval.target


def pacing(intervals: Sequence[Interval], start_s: float | None = None,
           end_s: float | None = None) -> Pacing | None:
    """The window of `intervals` ending after `start_s` and by `end_s` (by default the measured
    window: the intervals that are not warm-up), None when none of it was paced. Paused intervals
    count neither way (a pause restarts the schedule: nothing is owed after it)."""
    if start_s is None:
        window = [i for i in intervals if not i.warmup]
        before = [i for i in intervals if i.warmup]
    else:
        end = float("inf") if end_s is None else end_s
        window = [i for i in intervals if start_s < i.elapsed_s <= end]
        before = [i for i in intervals if i.elapsed_s <= start_s]
    paced = [i for i in window if i.target and not i.paused and i.duration_s > 0]
    if not paced:
        return None
    seconds = sum(i.duration_s for i in paced)
    offered = sum(i.target * i.duration_s for i in paced) / seconds  # type: ignore[operator]
    achieved = sum(i.operations for i in paced) / seconds
    # the schedule starts with the lanes: a window from the run's start starts on time
    start = lag_s(before[-1]) if before else (0.0 if paced[0].behind is not None else None)
    # a run's last, cut interval is recorded as it stops (nothing owed): the last whole one says
    whole = [i for i in paced if i.duration_s >= 0.5] or paced
    return Pacing(offered, achieved, start, lag_s(whole[-1]))


def run_pacing(result: RunResult) -> Pacing | None:
    """A run's measured window; a run without intervals (imported text) by its target property
    and throughput, with no schedule to read."""
    if result.intervals:
        return pacing(result.intervals)
    try:
        target = float((result.properties or {}).get("target") or 0)
    except ValueError:
        return None
    return Pacing(target, result.throughput) if target > 0 else None
