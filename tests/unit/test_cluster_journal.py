"""A cluster's journal (clusters/journal.py) and the run that watches it (drive/cluster_watch.py):
nodes added or removed while a run goes on are events of that run, at the moment they happened.
The real join and removal on real servers: tests/integration/test_cluster_cassandra.py
test_add_node_and_remove_node_side_by_side_the_native_client_and_cassandra_driver."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.unit.engine_helpers import cleanup_store, make_spec
from workbench.clusters import journal
from workbench.clusters.base import Cluster
from workbench.databases.cassandra.cluster_spec import CassandraSpec
from workbench.drive.phase import Phase
from workbench.lessons.model import LessonError, load
from workbench.results.csvfile import timeseries_rows
from workbench.results.jsonfile import from_json_dict, to_json_dict


def test_a_reader_gets_whole_lines_once_and_waits_for_a_line_still_being_written(tmp_path):
    assert journal.end(tmp_path) == 0 and journal.read(tmp_path, 0) == ([], 0)
    journal.append(tmp_path, "+ node4 joining")
    start = journal.end(tmp_path)
    journal.append(tmp_path, "node4 normal")
    with open(journal.path(tmp_path), "a") as f:
        f.write('{"t": 1, "kind": "cluster", "va')  # half a line: another process is writing it
    entries, offset = journal.read(tmp_path, start)
    assert [(e.kind, e.value) for e in entries] == [("cluster", "node4 normal")]
    assert journal.read(tmp_path, offset) == ([], offset)
    with open(journal.path(tmp_path), "a") as f:
        f.write('lue": "- node4 leaving"}\nnot json\n')
    entries, offset = journal.read(tmp_path, offset)
    assert [e.value for e in entries] == ["- node4 leaving"] and offset == journal.end(tmp_path)
    assert journal.read(tmp_path / "gone", 0) == ([], 0)  # no folder: nothing, and no error
    journal.append(tmp_path / "gone", "node5 normal")


def test_a_node_added_while_a_run_goes_on_is_its_event_when_it_happened_in_the_exports_too(tmp_path):
    cluster = Cluster(name="c3", kind="cassandra", spec=CassandraSpec(name="c3", nodes=3), nodes=(),
                      run_dir=tmp_path)
    journal.append(tmp_path, "+ node9 joining")  # before the run: not one of its events
    spec, props = make_spec("recordcount=1000", "operationcount=0", "maxexecutiontime=60", "target=500")
    phase = Phase(spec, props.as_dict(), "run", store=False, cluster=cluster)
    written: dict[str, float] = {}

    async def until(condition, task) -> None:
        while not condition():
            assert not task.done(), task.result()
            await asyncio.sleep(0.01)

    def marks() -> int:
        return sum(1 for _, kind, _ in phase.controller.events() if kind == "cluster")

    async def go():
        task = asyncio.ensure_future(phase.run())
        await until(lambda: phase.controller.elapsed() > 0.3, task)
        for count, value in enumerate(("+ node4 joining", "node4 normal"), 1):
            before = time.time()
            # another process wrote it (`workbench cluster add-node` in a second terminal)
            await asyncio.to_thread(journal.append, tmp_path, value)
            written[value] = (before, time.time())  # a loaded machine starts the thread late
            await until(lambda n=count: marks() >= n, task)
            start = phase.controller.elapsed()
            await until(lambda t=start: phase.controller.elapsed() > t + 0.3, task)
        phase.controller.stop()
        return await task

    try:
        done = asyncio.run(go())
    finally:
        cleanup_store(spec)
    result = done.result
    marked = [(e.elapsed_s, e.value) for e in result.events if e.kind == "cluster"]
    assert [v for _, v in marked] == ["+ node4 joining", "node4 normal"]
    started = result.started_at
    for elapsed, value in marked:  # when it was written, not when the watch read it
        low, high = written[value]
        assert low - 0.05 < started + elapsed < high + 0.05, (value, started + elapsed, written[value])
    assert from_json_dict(to_json_dict(result)).events == result.events
    cells = [row[-1] for row in timeseries_rows(result)[1:]]
    assert any("cluster=+ node4 joining" in c for c in cells)
    assert any("cluster=node4 normal" in c for c in cells)


def test_what_is_written_just_before_a_run_stops_is_still_its_event(tmp_path):
    """A node gone a moment before the run was stopped (`remove_node`, then Ctrl-C at once): the
    watch reads the journal once more as the run ends, not only every POLL_S."""
    cluster = Cluster(name="c3", kind="cassandra", spec=CassandraSpec(name="c3", nodes=3), nodes=(),
                      run_dir=tmp_path)
    spec, props = make_spec("recordcount=1000", "operationcount=0", "maxexecutiontime=60", "target=500")
    phase = Phase(spec, props.as_dict(), "run", store=False, cluster=cluster)

    async def go():
        task = asyncio.ensure_future(phase.run())
        while phase.controller.elapsed() < 0.3:
            assert not task.done()
            await asyncio.sleep(0.01)
        journal.append(tmp_path, "node4 gone")  # on the loop: no poll can run before the stop
        phase.controller.stop()
        return await task

    try:
        done = asyncio.run(go())
    finally:
        cleanup_store(spec)
    assert [e.value for e in done.result.events if e.kind == "cluster"] == ["node4 gone"]


def test_a_run_on_no_cluster_watches_nothing(tmp_path):
    spec, props = make_spec("recordcount=100", "operationcount=200")
    try:
        done = asyncio.run(Phase(spec, props.as_dict(), "run", store=False).run())
    finally:
        cleanup_store(spec)
    assert done.result.outcome == "completed" and not [e for e in done.result.events if e.kind == "cluster"]


LESSON = """
title = "t"
goal = "g"
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
during = [{ at_s = 5, do = "add_node" }, { at_s = 40, do = "remove_node", node = "node4" }]
"""
TEXT = "# t\n\nIntro.\n\n## Start {#up}\n\nUp.\n\n## Grow {#grow}\n\nA node joins.\n"


def test_a_lesson_adds_and_removes_nodes_during_a_run_and_says_what_it_needs(tmp_path):
    path = tmp_path / "grow.toml"
    (tmp_path / "grow.md").write_text(TEXT)
    path.write_text(LESSON)
    during = load(path).steps[1].during
    assert [(d.do, d.node, d.describe()) for d in during] == [
        ("add_node", None, "at 5 s: add a node"), ("remove_node", "node4", "at 40 s: remove_node node4")]
    for wrong, said in ((LESSON.replace(', node = "node4"', ""), "during remove_node needs a node"),
                        (LESSON.replace('action = "start"', 'action = "none"'),
                         "during add_node before any cluster was started")):
        path.write_text(wrong)
        with pytest.raises(LessonError) as caught:
            load(path)
        assert any(said in line for line in caught.value.lines()), caught.value.lines()
