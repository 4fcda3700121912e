"""A paced run's figures say what they are (issue 55, 7): achieved against offered, and a window
that started behind its schedule or ran above its offered rate marked as catching up, read from
synthetic intervals; and the pacer's count of operations due and not started."""

from __future__ import annotations

from workbench.core.pacing import Pacer
from workbench.results.model import Interval, RunResult
from workbench.results.paced import CATCHING_UP, DELIVERED_WORD, NOT_DELIVERED, Pacing, pacing, run_pacing


def _run(rates: list[float], behind: list[int | None], target: float = 1000.0, warmup: int = 2,
         duration: float = 1.0) -> list[Interval]:
    out, total = [], 0
    for n, (rate, late) in enumerate(zip(rates, behind, strict=True)):
        ops = int(rate * duration)
        total += ops
        out.append(Interval((n + 1) * duration, duration, ops, total, target=target, warmup=n < warmup,
                            behind=late))
    return out


def test_a_window_that_started_behind_is_catching_up():
    # 1,000 offered; the warm-up fell 3,000 operations (3 s) behind, the window pays it off
    p = pacing(_run([400, 400, 1600, 1600, 1000], [600, 3000, 2400, 1800, 0]))
    assert p is not None
    assert round(p.offered) == 1000 and round(p.achieved) == 1400
    assert p.behind_start_s == 3.0 and p.started_behind and p.above
    assert p.verdict == CATCHING_UP
    assert p.note() == ("behind schedule at the window's start (3.0 s of its offered rate due and not "
                        "started): catching up, not capacity")
    assert p.achieved_text() == "1,400 of 1,000 ops/s offered (140.0%)"


def test_a_window_on_schedule_that_delivered():
    p = pacing(_run([1000, 1000, 998, 999, 997], [0, 3, 0, 0, 1]))
    assert p is not None and not p.started_behind and not p.above and not p.ended_behind
    assert p.verdict == DELIVERED_WORD
    assert p.line() == "998 of 1,000 ops/s offered (99.8%): the offered load was delivered"


def test_a_window_above_its_rate_with_no_schedule_recorded_is_still_catching_up():
    # recorded before intervals held `behind`: the start is unknown, the rate alone says it
    p = pacing(_run([500, 500, 1300, 1300, 1300], [None] * 5))
    assert p is not None and p.behind_start_s is None and p.above
    assert p.verdict == CATCHING_UP
    assert p.note() == "ran above its offered rate (130%): catching up, not capacity"


def test_a_window_that_fell_behind_did_not_deliver():
    p = pacing(_run([1000, 1000, 800, 800, 800], [0, 0, 100, 200, 300]))
    assert p is not None and p.share < 0.9 and not p.ended_behind
    assert p.verdict == NOT_DELIVERED
    # 95% achieved but 2 s behind at the end: the load was not delivered either
    q = pacing(_run([1000, 1000, 950, 950, 950], [0, 0, 0, 900, 2000]))
    assert q is not None and q.share > 0.9 and q.behind_end_s == 2.0
    assert q.verdict == NOT_DELIVERED
    assert q.note() == "the offered load was not delivered: 2.0 s behind schedule at the window's end"


def test_a_window_behind_all_through_is_not_catching_up_but_not_delivered():
    # a saturated database: behind before the window and further behind at its end
    p = pacing(_run([700, 700, 700, 700, 700], [300, 600, 900, 1200, 1500]))
    assert p is not None and p.started_behind and p.behind_throughout
    assert p.verdict == NOT_DELIVERED
    assert p.note() == ("behind schedule all through the window (0.6 s at its start, 1.5 s at its end): "
                        "the offered load was not delivered")


def test_the_window_from_the_start_and_a_cut_last_interval():
    intervals = _run([1000, 1000, 1000], [0, 0, 0], warmup=0)
    intervals.append(Interval(3.01, 0.01, 10, 3010, target=1000.0, behind=0))
    late = _run([900, 900, 900], [100, 200, 900], warmup=0)
    late.append(Interval(3.01, 0.01, 9, 2709, target=1000.0, behind=0))  # cut: recorded as it stops
    assert pacing(intervals).behind_start_s == 0.0  # the schedule starts with the lanes
    assert pacing(late).behind_end_s == 0.9  # the last whole interval, not the cut one


def test_a_window_between_two_times_and_unpaced_runs():
    intervals = _run([1000, 1000, 1700, 1000, 1000], [0, 2000, 1300, 0, 0], warmup=0)
    first, second = pacing(intervals, 0.0, 2.0), pacing(intervals, 2.0, 5.0)
    assert first is not None and first.verdict == NOT_DELIVERED and first.behind_end_s == 2.0
    assert second is not None and second.behind_start_s == 2.0 and second.verdict == CATCHING_UP
    assert pacing(_run([1000] * 3, [None] * 3, target=0.0)) is None
    text = RunResult("run", "memory", 10_000, 30_000, 3000.0, properties={"target": "3000"})
    assert run_pacing(text) == Pacing(3000.0, 3000.0)
    assert run_pacing(RunResult("run", "memory", 10_000, 30_000, 3000.0)) is None


def test_the_pacer_counts_the_slots_due_that_no_lane_took():
    pacer = Pacer(1000.0)  # a slot every millisecond
    start = pacer.anchor
    assert pacer.behind(start) == 1  # slot 0 is due at once
    for _ in range(5):
        pacer.slot += 1  # five lanes took a slot each
    assert pacer.behind(start + 2_000_000) == 0  # 3 due, 5 taken: every lane waits
    assert pacer.behind(start + 99_500_000) == 100 - 5
    pacer.set_rate(2000.0)  # a new target: the 5 slots taken before count on both sides
    assert pacer.before == 5 and pacer.behind(pacer.anchor + 9_750_000) == 20
    pacer.set_rate(0)
    assert pacer.behind(start + 200_000_000) == 0  # unpaced: no schedule to be behind


def _paced_result(rates: list[float], behind: list[int], target: float = 1000.0) -> RunResult:
    intervals = _run(rates, behind, target=target)
    measured = [i for i in intervals if not i.warmup]
    total = sum(i.operations for i in measured)
    return RunResult("run", "memory", len(measured) * 1000, total, total / len(measured),
                     intervals=intervals, properties={"target": str(target)})


def test_runs_compare_says_each_runs_offered_load_and_names_one_catching_up(tmp_path):
    from rich.console import Console

    from workbench.results.compare import compare, comparison_table, write_comparison_csv

    on_time = _paced_result([1000] * 5, [0] * 5)
    late = _paced_result([400, 400, 1600, 1600, 1000], [600, 3000, 2400, 1800, 0])
    c = compare([on_time, late], ["#1", "#2"])
    console = Console(width=200, record=True, color_system=None)
    console.print(comparison_table(c))
    shown = console.export_text()
    (row,) = [line for line in shown.splitlines() if line.startswith(" offered ops/s")]
    assert row.split()[-2:] == ["1,000", "1,000"]
    assert "100.0% delivered" in shown and "140.0% catching up" in shown
    said = " ".join(shown.split())  # the caption wraps
    assert ("note: #2: 1,400 of 1,000 ops/s offered (140.0%): behind schedule at the window's start "
            "(3.0 s of its offered rate due and not started): catching up, not capacity") in said
    assert "note: #1" not in shown  # the run that delivered its load needs no note
    write_comparison_csv(c, tmp_path / "c.csv")
    rows = [r for r in (tmp_path / "c.csv").read_text().splitlines() if ",offered_ops_s," in r]
    assert rows[0].startswith("#1,OVERALL,offered_ops_s,1000.0,")
    assert "the offered load was delivered" in rows[0]
    assert rows[1].startswith("#2,OVERALL,offered_ops_s,1000.0,") and "catching up, not capacity" in rows[1]


def test_a_lessons_figures_say_what_a_paced_runs_throughput_was():
    from workbench.lessons.checks import figure_paths, unit
    from workbench.lessons.figures import run_figures

    late = run_figures(_paced_result([400, 400, 1600, 1600, 1000], [600, 3000, 2400, 1800, 0]))
    assert late["offered_share"] == 1.4 and late["catching_up"] == 1.0 and late["load_delivered"] == 0.0
    assert late["behind_start"] == 3.0 and late["behind_end"] == 0.0
    on_time = run_figures(_paced_result([1000] * 5, [0] * 5))
    assert on_time["load_delivered"] == 1.0 and on_time["catching_up"] == 0.0
    unpaced = RunResult("run", "memory", 1000, 10, 10.0)
    assert "offered_share" not in run_figures(unpaced)
    assert {"offered_share", "behind_start", "load_delivered", "catching_up"} <= set(figure_paths())
    assert unit("behind_start") == "s"


def test_a_window_that_started_behind_and_delivered_a_fraction_is_not_catching_up():
    """Rehearsal 67: 59,010 of 10,000,000 ops/s offered, 0.9 s behind at the start and less at the
    end (a worker answered the last tick late: its share of the figure went to the next one). It
    fell further behind by definition; only a window above its offered rate catches up."""
    saturated = Pacing(10_000_000.0, 59_010.0, 0.9, 0.6)
    assert saturated.behind_throughout and saturated.verdict == NOT_DELIVERED
    assert "behind schedule all through the window" in saturated.note()
    assert Pacing(10_000_000.0, 59_010.0, 0.9, None).verdict == NOT_DELIVERED  # its end unknown
    assert Pacing(3000.0, 3200.0, 0.9, 0.2).verdict == CATCHING_UP  # above its offered rate
    assert Pacing(3000.0, 2990.0, 0.9, 0.1).verdict == CATCHING_UP  # at it, less behind at its end
