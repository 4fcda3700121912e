"""serverStatus as figures (databases/mongodb/figures.py): FerretDB 1.24.2's answer (2026-11-29, a
local ferretdb-sqlite cluster) and one shaped as MongoDB 7's documentation shows it."""

from __future__ import annotations

import re
import time

from workbench.databases.mongodb import figures as mf
from workbench.metrics.server import NodeSample

FERRETDB = {"host": "vm", "version": "7.0.42", "process": "ferretdb", "pid": 14486, "uptime": 0.99,
            "metrics": {"commands": {"endSessions": {"total": 1, "failed": 1},
                                     "ismaster": {"total": 4, "failed": 0},
                                     "update": {"total": 1, "failed": 0}, "find": {"total": 1, "failed": 0},
                                     "dropDatabase": {"total": 1, "failed": 0}}},
            "ferretdbVersion": "v1.24.2", "ok": 1.0,
            "catalogStats": {"collections": 0, "capped": 0}}
MONGODB = {"host": "db1", "version": "7.0.14", "process": "mongod",
           "opcounters": {"insert": 10, "query": 20, "update": 5, "delete": 0, "getmore": 1, "command": 64},
           "globalLock": {"totalTime": 1, "currentQueue": {"total": 3, "readers": 2, "writers": 1},
                          "activeClients": {"total": 5, "readers": 4, "writers": 1}},
           "connections": {"current": 7}, "mem": {"resident": 120}, "wiredTiger": {}, "ok": 1.0}


def test_mongodb_counts_its_operations_and_queues():
    assert mf.counted(MONGODB) == 100
    assert mf.queue_figures(MONGODB) == {"queue.readers.pending": 2, "queue.writers.pending": 1,
                                         "queue.readers.active": 4, "queue.writers.active": 1}
    assert mf.lacks(MONGODB) == []


def test_ferretdb_counts_its_commands_and_lacks_the_rest():
    assert mf.counted(FERRETDB) == 8
    assert mf.queue_figures(FERRETDB) == {}
    assert mf.lacks(FERRETDB) == ["opcounters", "globalLock", "connections", "mem", "wiredTiger"]
    assert mf.counted({"ok": 1}) is None


class _Admin:
    def __init__(self, answers):
        self.answers = answers

    def command(self, name):
        assert name == "serverStatus"
        return self.answers.pop(0)


class _Client:
    def __init__(self, answers):
        self.admin = _Admin(answers)

    def close(self):
        pass


def test_requests_are_the_count_over_the_second_less_its_own_command():
    source = mf.ServerStatus("127.0.0.1", "mongodb://127.0.0.1:27017/")
    grown = dict(FERRETDB, metrics={"commands": {"insert": {"total": 50}, "ismaster": {"total": 4},
                                                 "serverStatus": {"total": 1}}})
    source._client = _Client([FERRETDB, grown])
    assert source.sample(1.0) == [NodeSample("127.0.0.1", {})]
    assert source.sample(2.0) == [NodeSample("127.0.0.1", {"requests": 55 - 8 - 1})]
    assert source.notes == ["FerretDB answers serverStatus without opcounters, globalLock, connections, "
                            "mem, wiredTiger: only its command counts (requests) are seen"]


def test_the_run_says_a_sources_notes_once():
    from workbench.drive.server_sampler import ServerSampler

    source = mf.ServerStatus("127.0.0.1", "mongodb://127.0.0.1:27017/")
    answers = [FERRETDB] * 20
    source._client = _Client(answers)
    sampler = ServerSampler([source], period=0.1, lead=0.02)
    sampler.start(time.time())
    deadline = time.monotonic() + 60
    while len(answers) > 17 and time.monotonic() < deadline:  # asked three times at least
        time.sleep(0.02)
    notes = sampler.stop()
    assert len(answers) <= 17
    # a second the loaded machine left the source busy or late, or the sampler's thread woke too
    # late to ask, is noted apart: the machine's, not the source's
    notes = [n for n in notes if not re.search(r"seconds skipped \((\d+ (busy|late)(, )?)+\)$", n)
             and not re.match(r"sampler: \d+ of \d+ seconds not asked \(", n)]
    assert notes == ["serverStatus: FerretDB answers serverStatus without opcounters, globalLock, "
                     "connections, mem, wiredTiger: only its command counts (requests) are seen"]
