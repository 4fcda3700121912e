"""Cassandra's figures from its virtual tables (databases/cassandra_figures.py), on rows a real
Cassandra 5.0.9 node answered (2026-11-29: a table flushed three times, then compacted)."""

from __future__ import annotations

import uuid
from collections import namedtuple
from datetime import datetime

import pytest

from workbench.databases import cassandra_figures as cf

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


def test_samples_turn_counters_into_flush_events_and_requests_and_history_into_compactions():
    state = cf.NodeState(since=STARTED - 60)
    first = cf.node_sample("127.0.0.1", state, STARTED - 10, pools(), [], [])
    assert first.events == () and "requests" not in first.figures  # nothing to compare with yet
    running = Task("h7b", "t", ID, "Major compaction")
    validation = Task("h7b", "t", uuid.uuid1(), "Validation")
    second = cf.node_sample("127.0.0.1", state, STARTED + 0.05, pools(flushes=28, requests=120),
                            [running, validation], [])
    assert second.figures["compactions_running"] == 1
    assert second.figures["requests"] == 120 - 14 - cf.QUERIES_PER_SAMPLE
    assert [(e.kind, e.detail) for e in second.events] == [
        ("compaction", "compaction of h7b.t started (Major compaction)"),
        ("flush", "1 memtable flush completed")]
    assert second.events[1].at == STARTED - 10  # the flush happened since the last sample
    third = cf.node_sample("127.0.0.1", state, ENDED + 0.5, pools(flushes=30, requests=120), [], [ROW])
    assert [(e.kind, e.seconds > 0) for e in third.events] == [("compaction", True), ("flush", False)]
    assert third.events[1].detail == "2 memtable flushes completed"
    assert third.figures["compactions_running"] == 0 and third.figures["requests"] == 0
    again = cf.node_sample("127.0.0.1", state, ENDED + 1.5, pools(flushes=30), [], [ROW])
    assert again.events == ()  # a compaction is told once


def test_compactions_that_ended_before_the_source_began_are_not_the_runs():
    state = cf.NodeState(since=ENDED + 1)
    assert cf.node_sample("127.0.0.1", state, ENDED + 2, pools(), [], [ROW]).events == ()
