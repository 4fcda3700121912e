"""Open-loop pacing: every operation gets an intended start time on a fixed schedule.

The lanes of a worker share one schedule at the worker's share of the target rate. A lane
takes the next slot and sleeps until its time; when the database stalls, slots fall into the
past and lanes run them back to back (the schedule is not reset, as in YCSB), so the response
time measured from the intended start includes the stall: no coordinated omission.
"""

from __future__ import annotations

import asyncio
from time import perf_counter_ns

from workbench.core import loops

UVLOOP_SLACK_S = 0.0005


class Pacer:
    def __init__(self, rate: float) -> None:
        self.slack: float | None = None  # added to every sleep: known once a loop runs
        self.rate = 0.0
        self.slot = 0
        self.before = 0  # slots taken on the schedules before the current one
        self.active = False
        self.late_ns = 0  # the longest an operation started after its intended time, since take_late
        self.set_rate(rate)

    def set_rate(self, rate: float) -> None:
        """Change the rate from now on (slots already taken keep their times; slots that fell
        due on the old schedule and were never taken are not owed on the new one)."""
        self.before = self.before + self.slot if self.active else 0
        self.rate = rate
        self.active = rate > 0  # a plain attribute: lanes read it on every operation
        self.tick_ns = 1e9 / rate if rate > 0 else 0.0
        self.anchor = perf_counter_ns()
        self.slot = 0

    def restart(self) -> None:
        """Start the schedule afresh (after a pause, which must not be caught up)."""
        self.set_rate(self.rate)

    def due(self, now_ns: int) -> int:
        """Operations whose intended start is `now_ns` or earlier, counted since the schedule
        became active: the arrivals of Little's law, whether a lane took them yet or not."""
        if not self.active or now_ns < self.anchor:
            return self.before
        return self.before + int((now_ns - self.anchor) / self.tick_ns) + 1

    def behind(self, now_ns: int) -> int:
        """Operations whose intended start has come that no lane has taken yet: how far the
        lanes are behind the schedule (0 when every lane waits for a slot still to come). A
        window that starts with some is catching up, not measuring capacity."""
        if not self.active:
            return 0
        return max(self.due(now_ns) - (self.before + self.slot), 0)

    async def next_slot(self) -> int:
        """Wait for the next slot; return its intended start time (perf_counter_ns). Never
        returns before that time: uvloop's timers count in milliseconds from the time its loop
        last read the clock, and wake up to about 1.2 ms early (asyncio's, never), which would
        start operations before they are due (a negative response time). So the sleep asks for
        half a millisecond more on uvloop, and the last microseconds of an early wake-up are
        waited out turn by turn (about 1-5 turns; late by 0.2-0.9 ms median either way,
        BENCHMARKS.md "Client CPU per operation")."""
        intended = self.anchor + int(self.slot * self.tick_ns)
        self.slot += 1
        delay = intended - perf_counter_ns()
        if delay > 0:
            if self.slack is None:
                self.slack = UVLOOP_SLACK_S if loops.kind(asyncio.get_running_loop()) == "uvloop" else 0.0
            await asyncio.sleep(delay / 1e9 + self.slack)
            now = perf_counter_ns()
            while now < intended:
                await asyncio.sleep(0)
                now = perf_counter_ns()
            delay = intended - now  # <= 0: how late the wake-up was
        if -delay > self.late_ns:  # a slot already past (the lanes behind), or a late wake-up
            self.late_ns = -delay
        return intended

    def take_late(self) -> float:
        """The longest start gap (ms) since the last call, and start over."""
        late, self.late_ns = self.late_ns, 0
        return late / 1e6
