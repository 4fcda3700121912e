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
    from workbench.commands.bench import execute_phase
    from workbench.config.spec import spec_from_args

    spec, props = spec_from_args([], ["db=memory", "recordcount=50"], "load")
    done = execute_phase(spec, props.as_dict(), "load", store=False, status=False)
    assert done.result.outcome == "completed"
    assert signal.getsignal(signal.SIGINT) is interrupts.on_signal
