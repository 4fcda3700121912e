"""Cassandra's figures from its virtual tables (databases/cassandra/figures.py), on rows a real
Cassandra 5.0.9 node answered (2026-11-29: a table flushed three times, then compacted)."""

from __future__ import annotations

import uuid
from collections import namedtuple
from datetime import datetime

import pytest

from workbench.databases.cassandra import figures as cf

Pool = namedtuple("Pool", "name active_tasks pending_tasks blocked_tasks completed_tasks")
Task = namedtuple("Task", "keyspace_name table_name task_id kind")
History = namedtuple("History", "id keyspace_name columnfamily_name compacted_at bytes_in bytes_out")


def pools(flushes: int = 27, compactions: int = 51, requests: int = 14, pending: int = 0) -> list[Pool]:
    return [Pool("CacheCleanupExecutor", 0, 0, 0, 0),
            Pool("CompactionExecutor", 1, pending, 0, compactions),
            Pool("MemtableFlushWriter", 0, 2, 0, flushes),
            Pool("MutationStage", 3, 5, 1, 1),
            Pool("Native-Transport-Requests", 1, 0, 0, requests),
            Pool("ReadStage", 0, 0, 0, 14)]


# A compaction of h7b.t the node logged as "Compacting (86232e50-...)" at 09:16:13,623 and
# "Compacted" at 09:16:13,764; compaction_history said compacted_at 09:16:13.763.
ID = uuid.UUID("86232e50-ebd5-11f1-97ff-1df96ed273c7")
STARTED = datetime.fromisoformat("2026-11-29T09:16:13.621+00:00").timestamp()
ENDED = datetime.fromisoformat("2026-11-29T09:16:13.763+00:00").timestamp()
ROW = History(ID, "h7b", "t", datetime(2026, 11, 29, 9, 16, 13, 763000), 1577, 1643)


def test_thread_pools_give_each_stages_queue_and_the_compaction_and_flush_backlog():
    figures = cf.pool_figures(pools(pending=4))
    assert figures["queue.MutationStage.pending"] == 5 and figures["queue.MutationStage.active"] == 3
    assert figures["queue.MutationStage.blocked"] == 1 and figures["queue.ReadStage.pending"] == 0
    assert figures["compactions_pending"] == 5  # 4 waiting, 1 running
    assert figures["flushes_pending"] == 2
    assert len([k for k in figures if k.startswith("queue.")]) == 3 * 6


def test_a_compactions_id_says_when_it_began():
    assert cf.started_at(ID, 0.0) == pytest.approx(STARTED, abs=0.001)
    assert cf.started_at(uuid.UUID(int=5), 42.0) == 42.0  # not time-based: the fallback
    assert cf.started_at("garbage", 42.0) == 42.0
    assert cf.epoch(ROW.compacted_at) == pytest.approx(ENDED)


def test_a_compaction_that_ended_is_one_event_from_its_start_to_its_end():
    event = cf.ended_compaction("127.0.0.1", ROW)
    assert (event.node, event.kind) == ("127.0.0.1", "compaction")
    assert event.at == pytest.approx(STARTED, abs=0.001) and event.seconds == pytest.approx(0.142, abs=0.002)
    assert event.detail == "compaction of h7b.t: 1.5 KiB -> 1.6 KiB"


def test_samples_turn_counters_into_flush_events_and_requests_and_one_compaction_into_one_event():
    state = cf.NodeState(since=STARTED - 60)
    first = cf.node_sample("127.0.0.1", state, STARTED - 10, pools(), [], [])
    assert first.events == () and "requests" not in first.figures  # nothing to compare with yet
    running = Task("h7b", "t", ID, "Major compaction")
    validation = Task("h7b", "t", uuid.uuid1(), "Validation")
    second = cf.node_sample("127.0.0.1", state, STARTED + 0.05, pools(flushes=28, requests=120),
                            [running, validation], None)
    assert second.figures["compactions_running"] == 1
    assert second.figures["requests"] == 120 - 14 - 3  # the first sample asked three tables
    # a compaction seen running is not told yet: its one event comes with its end
    assert [(e.kind, e.detail) for e in second.events] == [("flush", "1 memtable flush completed")]
    assert second.events[0].at == STARTED - 10  # the flush happened since the last sample
    third = cf.node_sample("127.0.0.1", state, ENDED + 0.5, pools(flushes=30, requests=125), [], [ROW])
    assert [(e.kind, e.seconds > 0) for e in third.events] == [("compaction", True), ("flush", False)]
    assert third.events[0].at == pytest.approx(STARTED, abs=0.001)
    assert third.events[1].detail == "2 memtable flushes completed"
    assert third.figures["compactions_running"] == 0
    assert third.figures["requests"] == 125 - 120 - 2  # the second asked thread_pools and sstable_tasks
    again = cf.node_sample("127.0.0.1", state, ENDED + 1.5, pools(flushes=30), [running], [ROW])
    assert again.events == ()  # a compaction is told once, even if still listed a moment


def test_a_compaction_seen_running_whose_row_never_comes_is_one_event_to_its_last_second():
    state = cf.NodeState(since=STARTED - 60)
    running = Task("h7b", "t", ID, "Compaction")
    seen = [cf.node_sample("127.0.0.1", state, STARTED + k, pools(), [running], []) for k in (1, 2)]
    assert all(s.events == () for s in seen)
    gone = [cf.node_sample("127.0.0.1", state, STARTED + 3 + k, pools(), [], []).events
            for k in range(int(cf.GIVE_UP_S) + 2)]
    told = [e for events in gone for e in events]
    assert len(told) == 1 and told[0].kind == "compaction"
    assert told[0].at == pytest.approx(STARTED, abs=0.001) and told[0].seconds == pytest.approx(2.0, abs=0.01)
    assert told[0].detail == "compaction of h7b.t (Compaction), not in compaction_history"


def test_only_thread_pools_are_asked_while_compaction_is_idle():
    state = cf.NodeState(since=STARTED)
    assert cf.wanted(state, pools()) == (True, True)  # the first second: a running task, the history
    cf.node_sample("127.0.0.1", state, STARTED + 1, pools(), [], [])
    idle = pools()
    idle[1] = Pool("CompactionExecutor", 0, 0, 0, 51)
    assert cf.wanted(state, idle) == (False, False)  # nothing ran, nothing ended
    assert cf.wanted(state, [*idle[:1], Pool("CompactionExecutor", 0, 0, 0, 52), *idle[2:]]) == (False, True)
    assert cf.wanted(state, pools()) == (True, False)  # one running
    assert "WHERE compacted_at > " in cf.history_query(state)
    assert cf.history_query(state).endswith(f"{int((STARTED - 5) * 1000)} ALLOW FILTERING")


def test_compactions_that_ended_before_the_source_began_are_not_the_runs():
    state = cf.NodeState(since=ENDED + 1)
    assert cf.node_sample("127.0.0.1", state, ENDED + 2, pools(), [], [ROW]).events == ()


def test_rows_of_the_blocking_connection_read_as_the_drivers_did():
    # what cql.py leaves as bytes: a timeuuid's 16 bytes, a timestamp's 8 (ms since the epoch)
    ms = round(ENDED * 1000)
    row = {"id": ID.bytes, "keyspace_name": "h7b", "columnfamily_name": "t",
           "compacted_at": ms.to_bytes(8, "big", signed=True), "bytes_in": 1577, "bytes_out": 1643}
    [got] = cf._rows([row])
    assert got.id == ID and cf.epoch(got.compacted_at) == pytest.approx(ENDED, abs=0.001)
    event = cf.ended_compaction("127.0.0.1", got)
    assert event.detail == "compaction of h7b.t: 1.5 KiB -> 1.6 KiB"
    assert event.seconds == pytest.approx(0.142, abs=0.002)
    [task] = cf._rows([{"keyspace_name": "h7b", "table_name": "t", "task_id": ID.bytes,
                        "kind": "Compaction"}])
    assert task.task_id == ID
