"""A Ctrl-C is not lost (workbench/interrupts.py): one that lands in a finalizer, where Python
drops the KeyboardInterrupt ("Exception ignored"), is raised again at the next check(); a run
gives the handler back when it ends."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from workbench import interrupts


@pytest.fixture
def handler(monkeypatch):
    dropped = []
    # (installed under the handler: what would have been printed)
    monkeypatch.setattr(sys, "unraisablehook", lambda what: dropped.append(what.exc_type))
    previous = signal.getsignal(signal.SIGINT)
    interrupts.reset()
    interrupts.install()
    yield dropped
    signal.signal(signal.SIGINT, previous)
    interrupts.reset()


def test_a_ctrl_c_swallowed_by_a_finalizer_is_raised_again_by_check(handler):
    dropped = handler

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(100_000):  # the handler runs here, inside the finalizer
                pass

    interrupts.check()  # nothing pressed yet
    Finalized()  # Python drops the KeyboardInterrupt raised in there
    assert dropped == []  # and it is not reported as an error either: it is not lost
    with pytest.raises(KeyboardInterrupt):
        interrupts.check()

    class Failing:
        def __del__(self):
            raise ValueError("a real error in a finalizer")

    Failing()
    assert dropped == [ValueError]  # anything else is reported as before


def test_a_run_gives_the_handler_back(handler):
    from workbench.config.spec import spec_from_args
    from workbench.drive.phase import execute_phase

    spec, props = spec_from_args([], ["db=memory", "recordcount=50"], "load")
    done = execute_phase(spec, props.as_dict(), "load", store=False, status=False)
    assert done.result.outcome == "completed"
    assert signal.getsignal(signal.SIGINT) is interrupts.on_signal


def _swallow_a_ctrl_c() -> None:
    """What cassandra-driver's clean-up does to a Ctrl-C: it lands in a finalizer and is dropped."""

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(100_000):
                pass

    Finalized()


@pytest.fixture
def restore_sigint(monkeypatch):
    previous = signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(sys, "unraisablehook", lambda what: None)
    interrupts.reset()
    yield
    signal.signal(signal.SIGINT, previous)
    interrupts.reset()


def test_a_lesson_stops_at_its_next_step_after_a_swallowed_ctrl_c(restore_sigint, monkeypatch, tmp_path,
                                                                   capsys):
    from workbench.cli import main
    from workbench.lessons.runner import LessonRunner

    ran = []

    def do_step(self, position, step):
        ran.append(step.id)
        _swallow_a_ctrl_c()

    monkeypatch.setattr(LessonRunner, "do_step", do_step)
    status = main(["lesson", "run", "key-distributions", "--no-tui", "--student", "t",
                   "--store", str(tmp_path / "runs.db")])
    assert (status, len(ran)) == (130, 1), ran
    assert "lesson stopped" in capsys.readouterr().err


def test_an_experiment_stops_before_its_next_run_after_a_swallowed_ctrl_c(restore_sigint, monkeypatch,
                                                                          tmp_path):
    from workbench.cli import main
    from workbench.experiments import runner

    path = tmp_path / "two.toml"
    path.write_text('databases = ["memory"]\nworkloads = ["workloada", "workloadc"]\nrepetitions = 2\n'
                    'warmup_s = 0\nmin_measure_s = 0\n[properties]\noperationcount = 50\n')
    made = []

    def make(*args, **kwargs):
        made.append(args[1])
        _swallow_a_ctrl_c()
        return 0

    monkeypatch.setattr(runner, "_make", make)
    status = main(["experiment", "run", str(path), "--store", str(tmp_path / "runs.db")])
    assert (status, len(made)) == (130, 1), made
