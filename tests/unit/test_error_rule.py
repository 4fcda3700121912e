"""One rule for what counts as an error (results.model.is_error), and every view that counts
errors agrees with it: the run's total (exit status, lesson figures), Compare, a lesson step's
per-operation figures and the Run screen's errors column and caption."""

from __future__ import annotations

from rich.console import Console

from workbench.metrics.snapshot import IntervalSnapshot, OpStats
from workbench.results.compare import compare
from workbench.results.model import NOT_ERRORS, Measurement, RunResult, error_total, is_error
from workbench.ui import views

# Every status a binding returns (bindings/base.py) and a binding's own error kind.
RETURNS = {"OK": 500, "BATCHED_OK": 40, "NOT_FOUND": 30, "ERROR": 7, "UNEXPECTED_STATE": 2,
           "SERVICE_UNAVAILABLE": 1, "ReadTimeout": 3}
ERRORS = 7 + 2 + 1 + 3


def test_the_rule():
    assert NOT_ERRORS == {"OK", "BATCHED_OK", "NOT_FOUND"}
    assert not is_error("NOT_FOUND") and not is_error("OK") and not is_error("BATCHED_OK")
    assert is_error("ERROR") and is_error("ReadTimeout") and is_error("NOT_IMPLEMENTED")
    assert error_total(RETURNS) == ERRORS
    assert error_total(RETURNS) == sum(n for s, n in RETURNS.items() if is_error(s))


def run_result(returns: dict[str, int]) -> RunResult:
    read = Measurement("READ", sum(returns.values()), 100.0, 10, 900, {50.0: 90, 95.0: 300, 99.0: 600},
                       dict(returns))
    return RunResult("run", "memory", 1000, read.operations, read.operations * 1.0, [read])


def test_every_view_of_a_finished_run_agrees_with_the_rule():
    from workbench.lessons.figures import run_figures

    result = run_result(RETURNS)
    assert result.error_count() == ERRORS
    figures = run_figures(result)
    assert figures["errors"] == ERRORS and figures["read.errors"] == ERRORS
    comparison = compare([result, run_result({"OK": 600, "NOT_FOUND": 9})], ["a", "b"])
    assert [f.errors for f in comparison.ops["READ"]] == [ERRORS, 0]


def live(returns: dict[str, int]) -> views.LiveState:
    stats = {"READ": OpStats(sum(returns.values()), 100.0, 10, 900, {50.0: 90, 95.0: 300, 99.0: 600,
                                                                     99.9: 800})}
    snap = IntervalSnapshot(phase="run", elapsed_s=1.0, interval_s=1.0, operations=1,
                            total_operations=1, todo_operations=0, lanes=1, target=0.0, paused=False,
                            stats=stats, cumulative=stats, returns={}, histograms={})
    return views.LiveState(1, snap, (1.0,), (0.0,), (), {"READ": dict(returns)})


def text(renderable) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_the_run_screen_agrees_with_the_rule():
    state = live(RETURNS)
    assert views.error_kinds(state.returns) == sorted(
        ((s, n) for s, n in RETURNS.items() if is_error(s)), key=lambda kv: (-kv[1], kv[0]))
    table = text(views.op_table(state, state.returns, paced=False))
    assert f"✗ {ERRORS}" in table and "NOT_FOUND" not in table
    # NOT_FOUND alone is no error: the column says 0 and there is no caption.
    quiet = live({"OK": 10, "NOT_FOUND": 5})
    assert views.error_kinds(quiet.returns) == []
    table = text(views.op_table(quiet, quiet.returns, paced=False))
    assert "✗" not in table and "errors by kind" not in table
