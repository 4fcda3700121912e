"""Lanes hand unpaced reads and updates to the binding as sequences (Binding.sequence).

The `seq` test binding (engine_helpers.py) is the memory binding with a log of what each
sequence was asked to run and what it ran.
"""

from __future__ import annotations

import asyncio
import time

from engine_helpers import SequenceLog, make_spec, register_sequence_binding, run_phase

from workbench.core.workload import CHOOSE_AHEAD


def ops(outcome, *names: str) -> int:
    return sum(sum(outcome.returns.get(name, {}).values()) for name in names)


async def mid_sequence(count: int = 1) -> None:
    """Wait until `count` sequences have ended, then a little more, so lanes are inside their next.

    A fixed sleep is not enough: on a loaded machine the workers may not have started yet when
    it ends, and a pause before the first sequence cuts nothing short.
    """
    while len(SequenceLog.ran) < count:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.03)  # a sequence of 64 steps of >= 1 ms lasts >= 64 ms


def test_unpaced_reads_and_updates_run_as_sequences_and_every_operation_counts():
    register_sequence_binding()
    spec, _ = make_spec("db=seq", "recordcount=200", "operationcount=1001", "threadcount=4")
    outcome, _ = run_phase(spec)
    assert outcome.outcome == "completed"
    assert outcome.operations == 1001 == ops(outcome, "READ", "UPDATE")
    assert outcome.returns["READ"] == {"OK": outcome.histograms["READ"].get_total_count()}
    assert sum(SequenceLog.ran) == 1001  # every operation went through a sequence
    assert SequenceLog.ran == SequenceLog.asked  # nothing stopped them early
    assert max(SequenceLog.asked) == CHOOSE_AHEAD


def test_paced_operations_and_inserts_do_not_go_as_sequences():
    register_sequence_binding()
    spec, _ = make_spec("db=seq", "recordcount=200", "operationcount=300", "target=3000")
    outcome, _ = run_phase(spec)
    assert outcome.operations == 300 and SequenceLog.asked == []  # paced: each has its own slot
    spec, _ = make_spec("db=seq", "recordcount=200", "operationcount=300", "readproportion=0.5",
                        "updateproportion=0", "insertproportion=0.5")
    outcome, _ = run_phase(spec)
    assert outcome.operations == 300 and SequenceLog.asked == []  # inserts: chosen one at a time


def test_reads_between_read_modify_writes_still_run_as_sequences():
    register_sequence_binding()
    spec, _ = make_spec("db=seq", "recordcount=200", "operationcount=2000", "threadcount=2",
                        "readproportion=0.5", "updateproportion=0", "readmodifywriteproportion=0.5")
    outcome, _ = run_phase(spec)
    assert outcome.operations == 2000
    rmw = outcome.histograms["READ-MODIFY-WRITE"].get_total_count()  # no statuses of its own
    assert sum(SequenceLog.ran) == 2000 - rmw  # the plain reads, in runs between the RMWs
    assert ops(outcome, "UPDATE") == rmw
    assert ops(outcome, "READ") == 2000  # plain reads plus each RMW's read


def test_a_pause_ends_sequences_early_and_the_lanes_finish_the_count_after_resume():
    register_sequence_binding()
    spec, _ = make_spec("db=seq", "seq.step_ms=2", "recordcount=100", "operationcount=600",
                        "threadcount=2", "snapshot.interval=0.1")

    async def drive(c):
        await mid_sequence(2)
        c.pause()
        await asyncio.sleep(0.5)
        c.resume()

    outcome, snaps = run_phase(spec, setup=drive)
    assert outcome.outcome == "completed"
    assert outcome.operations == 600 == ops(outcome, "READ", "UPDATE")
    assert sum(SequenceLog.ran) == 600
    stopped_early = [(a, r) for a, r in zip(SequenceLog.asked, SequenceLog.ran, strict=True) if r < a]
    assert stopped_early  # the pause cut sequences short; their claimed operations ran later
    paused = [s for s in snaps if s.paused]
    assert paused and all(s.operations == 0 for s in paused[2:])


def test_a_sequence_hands_back_to_its_lane_within_a_quarter_of_a_second():
    register_sequence_binding()
    spec, _ = make_spec("db=seq", "seq.step_ms=10", "recordcount=100", "operationcount=150",
                        "threadcount=1")
    outcome, _ = run_phase(spec)
    assert outcome.operations == 150
    # 64 steps of 10 ms would hold the lane for 0.64 s; the deadline ends each after ~0.25 s.
    assert max(SequenceLog.asked) == CHOOSE_AHEAD
    assert max(SequenceLog.ran) <= 26 and sum(SequenceLog.ran) == 150


def test_fewer_lanes_while_sequences_are_cut_short_still_runs_exactly_the_operation_count():
    register_sequence_binding()
    spec, _ = make_spec("db=seq", "seq.step_ms=1", "recordcount=100", "operationcount=1500",
                        "threadcount=6")

    async def drive(c):  # the pause leaves lanes holding claimed operations; then lanes go
        await mid_sequence(6)
        c.pause()
        await asyncio.sleep(0.2)
        c.set_lanes(1)
        c.resume()

    outcome, _ = run_phase(spec, setup=drive)
    assert outcome.outcome == "completed"
    assert outcome.operations == 1500 == ops(outcome, "READ", "UPDATE")
    assert any(r < a for a, r in zip(SequenceLog.asked, SequenceLog.ran, strict=True))


def test_stop_ends_a_run_of_sequences_promptly():
    register_sequence_binding()
    spec, _ = make_spec("db=seq", "seq.step_ms=5", "recordcount=100", "operationcount=0",
                        "threadcount=4")

    stopped_at = []

    async def drive(c):
        await mid_sequence(1)
        c.stop()
        stopped_at.append(time.perf_counter())

    outcome, _ = run_phase(spec, setup=drive)
    assert outcome.outcome == "stopped"
    # The sequences under way at the stop ended after their current step, not their 64th (a
    # sequence of 5 ms steps lasts 320 ms), and well before the lanes' grace (STOP_GRACE_S, 5 s)
    # ran out: timed from the stop, not the start (a loaded machine starts slowly).
    last = list(zip(SequenceLog.asked, SequenceLog.ran, strict=True))[-4:]  # one per lane
    assert any(ran < asked for asked, ran in last), last
    assert time.perf_counter() - stopped_at[0] < 2.5
    assert outcome.operations == ops(outcome, "READ", "UPDATE") > 0
