"""A lesson's timed changes during a run: end_after_s ends the run a window after a change that
takes a while (a join), however long it took, and the run still counts as completed."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.drive.session import RunRequest, Session
from workbench.lessons.during import During
from workbench.lessons.model import LessonError, load
from workbench.lessons.runner import _During

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD_A = str(ROOT / "workbench" / "workloads" / "workloada")


def _slow_join(session: Session, joined_at_s: float, calls: list[float]):
    """A stand-in for the provider's add_node that returns once the run's own clock has passed
    joined_at_s: the join's length is the run's, not the wall clock's."""
    def resize(cluster: str, what: str, node: str = "") -> str:
        run = session.current
        while run.state is None or run.state.snapshot.elapsed_s < joined_at_s:
            if run.finished.wait(0.02):
                break
        calls.append(run.state.snapshot.elapsed_s)
        return "node4"
    return resize


def _run(joined_at_s: float, maxexecutiontime: int, said: list[str]):
    """A paced memory run (200 ops/s) with an add_node 1 s in whose join ends when the run's clock
    passes joined_at_s, and end_after_s = 2: (the run, the run's clock when the join returned)."""
    session = Session(store=False)
    calls: list[float] = []
    session.resize = _slow_join(session, joined_at_s, calls)
    watcher = _During(session, (During(1.0, "add_node", end_after_s=2.0),), "c", said.append)
    watcher.start()
    request = RunRequest((WORKLOAD_A,), ("db=memory", "recordcount=1000", "operationcount=0", "target=200",
                                         f"maxexecutiontime={maxexecutiontime}"), ("run",))
    try:
        done = session.run_phase(request, "run", source="test")
    finally:
        watcher.finish()
    assert watcher.error is None, said
    return done, calls


def test_end_after_s_ends_the_run_that_long_after_a_slow_join_and_the_run_is_completed():
    said: list[str] = []
    done, calls = _run(3.0, 120, said)
    assert calls and done.result.outcome == "completed", done.result.outcome
    # ended about 2 s after the join returned (ticks are 1 s), far from its maxexecutiontime
    assert calls[0] + 2.0 <= done.result.runtime_ms / 1000 < 60, (calls, done.result.runtime_ms)
    assert said == ["  at 1 s: add a node (the run ends 2 s after it)",
                    "    node4 joined (Up/Normal) in " + said[1].split(" in ")[1],
                    "    the run ends 2 s from now"], said


def test_a_run_that_ends_before_the_change_does_is_not_stopped_by_it():
    done, _ = _run(99.0, 3, [])  # never joins within the run
    assert done.result.outcome == "completed" and done.result.runtime_ms >= 3000


LESSON = '''title = "T"
goal = "G"
minutes = 3
[[clusters]]
preset = "cassandra-3"
memory = "3G"
[[steps]]
id = "up"
action = "start"
cluster = "cassandra-3"
[[steps]]
id = "grow"
action = "run"
workload = "workloada"
during = [{ at_s = 5, do = "DO", node = "node1", end_after_s = AFTER }]
'''
TEXT = "# T\n\nIntro.\n\n## Up {#up}\n\nUp.\n\n## Grow {#grow}\n\nGrow.\n"


def _lesson(tmp_path, do: str, after: str):
    path = tmp_path / "mine.toml"
    path.write_text(LESSON.replace("DO", do).replace("AFTER", after))
    (tmp_path / "mine.md").write_text(TEXT)
    return path


@pytest.mark.parametrize("do", ["add_node", "remove_node", "restart"])
def test_end_after_s_goes_with_a_change_that_takes_a_while(tmp_path, do):
    step = load(_lesson(tmp_path, do, "30")).steps[1]
    assert step.during[0].end_after_s == 30.0 and step.during[0].do == do


@pytest.mark.parametrize("do, after", [("pause", "30"), ("add_node", "-1"), ("add_node", '"soon"')])
def test_end_after_s_elsewhere_or_not_seconds_is_one_line_with_its_fix(tmp_path, do, after):
    with pytest.raises(LessonError) as caught:
        load(_lesson(tmp_path, do, after))
    found = caught.value.lines()
    assert len(found) == 1 and "end_after_s is seconds (0 or more) after add_node or remove_node or restart" \
        in found[0] and "write end_after_s = 30" in found[0], found



def test_a_lessons_cluster_may_cap_each_node_and_says_so(tmp_path):
    path = _lesson(tmp_path, "add_node", "30")
    good = path.read_text().replace('memory = "3G"', 'memory = "3G"\ncpus = 0.5')
    path.write_text(good)
    need = load(path).clusters[0]
    assert need.cpus == 0.5
    assert need.describe() == "cassandra-3 (needs 3G of memory, each node capped at 0.5 of a core)"
    for wrong in ("cpus = -1", 'cpus = "half"', "cores = 1"):
        path.write_text(good.replace("cpus = 0.5", wrong))
        with pytest.raises(LessonError) as caught:
            load(path)
        found = caught.value.lines()
        assert len(found) == 1 and ":7: cluster cassandra-3: " in found[0], found
