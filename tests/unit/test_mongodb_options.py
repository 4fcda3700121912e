"""The MongoDB binding without a server: its properties (workbench/databases/mongodb/options.py),
the server's honest name, error kinds, and the operations over a fake collection (insert
batching, NOT_FOUND, errors). What FerretDB does with the requests is for the contract suite."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from pymongo.errors import AutoReconnect, BulkWriteError, DuplicateKeyError, OperationFailure
from pymongo.results import DeleteResult, InsertManyResult, InsertOneResult, UpdateResult

from workbench.bindings.base import Status
from workbench.config.bindings import binding_for_property
from workbench.config.spec import spec_from_args
from workbench.core.workers import binding_factory
from workbench.databases.mongodb.binding import LOST, MongoDBBinding, describe_server, kind_of
from workbench.databases.mongodb.options import DEFAULT_URL, parse_options
from workbench.errors import BindingError, ConfigError

# server_info() of FerretDB v1.24.2 on PostgreSQL, as pymongo 4.20 got it (abridged).
FERRETDB_INFO = {"version": "7.0.42", "gitVersion": "unknown", "modules": [], "sysInfo": "deprecated",
                 "versionArray": [7, 0, 42, 0], "bits": 64, "debug": False,
                 "maxBsonObjectSize": 16777216, "ferretdbVersion": "v1.24.2",
                 "ferretdbFeatures": {"aggregationStages": ["$sort", "$match"]}, "ok": 1.0}
# buildInfo of a real mongod 7.0 (abridged from MongoDB's documentation).
MONGODB_INFO = {"version": "7.0.14", "gitVersion": "ce59cfc6a3c5e5c067dca0d30697edd68d4f5188",
                "modules": [], "allocator": "tcmalloc", "javascriptEngine": "mozjs",
                "sysInfo": "deprecated", "versionArray": [7, 0, 14, 0], "bits": 64, "debug": False,
                "maxBsonObjectSize": 16777216, "storageEngines": ["devnull", "wiredTiger"], "ok": 1.0}


def test_defaults_are_ycsbs():
    o = parse_options({})
    assert o.url == DEFAULT_URL and o.database == "ycsb" and o.hosts == "127.0.0.1:27017"
    assert (o.batchsize, o.upsert, o.drop) == (1, False, False)
    # a 10 s socket timeout by default (not YCSB's none): a frozen server's requests become errors
    assert dict(o.client_options) == {"serverSelectionTimeoutMS": 5000, "connectTimeoutMS": 5000,
                                      "socketTimeoutMS": 10000}
    assert "socketTimeoutMS" not in dict(parse_options({"mongodb.timeout": "0"}).client_options)


def test_properties_are_parsed():
    o = parse_options({"mongodb.url": "mongodb://127.0.0.1:27117,127.0.0.2/bench?w=majority",
                       "mongodb.upsert": "TRUE", "batchsize": "100", "mongodb.drop": "true",
                       "mongodb.connecttimeout": "300", "mongodb.timeout": "2000"})
    assert o.database == "bench" and o.where == "127.0.0.1:27117,127.0.0.2:27017/bench"
    assert (o.batchsize, o.upsert, o.drop) == (100, True, True)
    assert dict(o.client_options) == {"serverSelectionTimeoutMS": 300, "connectTimeoutMS": 300,
                                      "socketTimeoutMS": 2000}


@pytest.mark.parametrize("url", ["mongodb://127.0.0.1:27017", "mongodb://127.0.0.1:27017/",
                                 "mongodb://u:p@127.0.0.1:27017/admin?w=1"])
def test_a_url_without_a_database_or_with_admin_uses_ycsb(url):
    assert parse_options({"mongodb.url": url}).database == "ycsb"


def test_the_urls_own_options_win_over_property_defaults():
    o = parse_options({"mongodb.url": "mongodb://127.0.0.1/x?serverSelectionTimeoutMS=100&socketTimeoutMS=7"})
    assert dict(o.client_options) == {"connectTimeoutMS": 5000}
    o = parse_options({"mongodb.url": "mongodb://127.0.0.1/x?serverSelectionTimeoutMS=100",
                       "mongodb.timeout": "7"})
    assert dict(o.client_options) == {"connectTimeoutMS": 5000, "socketTimeoutMS": 7}


def test_legacy_properties_become_client_options():
    o = parse_options({"mongodb.writeConcern": "majority", "mongodb.readPreference": "secondary_preferred",
                       "mongodb.maxconnections": "8"})
    # over the default URL's w=1 the property wins (YCSB ignored it there, silently)
    assert dict(o.client_options)["w"] == "majority"
    assert dict(o.client_options)["readPreference"] == "secondaryPreferred"
    assert dict(o.client_options)["maxPoolSize"] == 8
    assert dict(parse_options({"mongodb.writeConcern": "journaled"}).client_options)["journal"] is True
    assert dict(parse_options({"mongodb.writeConcern": "unacknowledged"}).client_options)["w"] == 0


def test_a_setting_in_both_the_url_and_a_property_is_refused():
    with pytest.raises(ConfigError, match="mongodb.writeConcern and mongodb.url both set w"):
        parse_options({"mongodb.url": "mongodb://127.0.0.1/ycsb?w=1", "mongodb.writeConcern": "majority"})
    with pytest.raises(ConfigError, match="both set socketTimeoutMS"):
        parse_options({"mongodb.url": "mongodb://127.0.0.1/ycsb?socketTimeoutMS=5", "mongodb.timeout": "9"})


@pytest.mark.parametrize(("props", "error", "words"), [
    ({"mongodb.urll": "x"}, ConfigError, "unknown MongoDB property 'mongodb.urll'"),
    ({"mongodb.database": "x"}, ConfigError, "the path of mongodb.url"),
    ({"mongodb.threadsAllowedToBlockForConnectionMultiplier": "5"}, ConfigError, "waitQueueMultiple"),
    ({"batchsize": "0"}, ConfigError, "batchsize='0' is not an integer from 1"),
    ({"batchsize": "ten"}, ConfigError, "batchsize='ten'"),
    ({"mongodb.upsert": "yes"}, ConfigError, "mongodb.upsert='yes' is not true or false"),
    ({"mongodb.timeout": "-1"}, ConfigError, "mongodb.timeout='-1' is not an integer from 0"),
    ({"mongodb.writeConcern": "safe"}, ConfigError, "choose one of: errors_ignored"),
    ({"mongodb.readPreference": "secondaryish"}, ConfigError, "mongodb.readPreference"),
    ({"mongodb.url": "http://127.0.0.1:27017/ycsb"}, BindingError, "must begin with 'mongodb://'"),
    ({"mongodb.url": "127.0.0.1:27017"}, BindingError, "not a valid MongoDB connection string"),
    ({"mongodb.url": "mongodb://127.0.0.1:99999/ycsb"}, BindingError, "Port must be"),
    ({"mongodb.url": "mongodb://127.0.0.1/ycsb?j=true"}, BindingError, "unknown option 'j'"),
    ({"mongodb.url": "mongodb://127.0.0.1/y$b"}, BindingError, "Bad database name"),
])
def test_refusals_name_the_key_in_one_line(props, error, words):
    with pytest.raises(error) as caught:
        parse_options(props)
    assert type(caught.value) is error
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_the_registry_owns_the_properties_and_the_spec_takes_them():
    assert binding_for_property("mongodb.url").name == "mongodb"
    assert binding_for_property("batchsize").name == "mongodb"
    spec, _ = spec_from_args([], ["db=mongodb", "batchsize=5", "mongodb.upsert=true"], "load")
    assert spec.db == "mongodb" and spec.binding_properties == {"batchsize": "5", "mongodb.upsert": "true"}


def test_describe_server_never_calls_ferretdb_mongodb():
    assert describe_server(FERRETDB_INFO) == "FerretDB 1.24.2 (MongoDB protocol, reports 7.0.42)"
    assert describe_server({**FERRETDB_INFO, "ferretdbVersion": "2.1.0"}).startswith("FerretDB 2.1.0 ")
    assert describe_server(MONGODB_INFO) == "MongoDB 7.0.14"
    assert describe_server({**MONGODB_INFO, "modules": ["enterprise"]}) == "MongoDB Enterprise 7.0.14"
    assert "no version" in describe_server({"ok": 1.0})


def test_error_kinds_name_the_class_and_the_servers_reason():
    assert kind_of(AutoReconnect("gone")) == "AutoReconnect"
    assert kind_of(DuplicateKeyError("dup", 11000)) == "DuplicateKeyError"
    unauthorized = OperationFailure("no", 13, {"codeName": "Unauthorized"})
    assert kind_of(unauthorized) == "OperationFailure:Unauthorized"
    assert kind_of(OperationFailure("no", 2)) == "OperationFailure:2"
    assert kind_of(BulkWriteError({"writeErrors": [{"index": 0, "code": 11000}], "nInserted": 0})) == \
        "BulkWriteError:DuplicateKey"


# -- operations over a fake collection --------------------------------------------------------


class FakeCollection:
    """Records the driver calls; `fail` makes the next call raise it."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.docs: dict[str, dict] = {}
        self.fail: Exception | None = None
        self.acknowledged = True

    def _call(self, *call) -> None:
        self.calls.append(call)
        if self.fail is not None:
            fail, self.fail = self.fail, None
            raise fail

    async def find_one(self, query, projection=None):
        self._call("find_one", query, projection)
        doc = self.docs.get(query["_id"])
        return None if doc is None else dict(doc)

    def find(self, *args, **kwargs):
        raise NotImplementedError

    async def update_one(self, query, update):
        self._call("update_one", query, update)
        n = int(query["_id"] in self.docs)
        return UpdateResult({"n": n, "nModified": n}, self.acknowledged)

    async def insert_one(self, doc):
        self._call("insert_one", doc)
        self.docs[doc["_id"]] = doc
        return InsertOneResult(doc["_id"], self.acknowledged)

    async def replace_one(self, query, doc, upsert=False):
        self._call("replace_one", query, doc, upsert)

    async def delete_one(self, query):
        self._call("delete_one", query)
        return DeleteResult({"n": int(self.docs.pop(query["_id"], None) is not None)}, self.acknowledged)

    async def insert_many(self, docs, ordered=True):
        await asyncio.sleep(0)  # other lanes run while a batch is on its way
        self._call("insert_many", [d["_id"] for d in docs], ordered)
        return InsertManyResult([d["_id"] for d in docs], True)

    async def bulk_write(self, requests, ordered=True):
        self._call("bulk_write", [(r._filter, r._doc["_id"], r._upsert) for r in requests], ordered)


class FakeClient:
    closed = False

    async def close(self) -> None:
        self.closed = True


def fake_binding(*props: str) -> tuple[MongoDBBinding, FakeCollection]:
    spec, _ = spec_from_args([], ["db=mongodb", *props], "load")
    db = binding_factory(spec)({"phase": "load", "worker": 0, "workers": 1})
    collection = FakeCollection()
    db.client = FakeClient()
    db.db = type("FakeDatabase", (), {"get_collection": lambda self, name: collection})()
    return db, collection


async def test_reads_updates_and_deletes_follow_ycsb():
    db, coll = fake_binding()
    assert await db.insert("usertable", "k", {"field0": "a", "field1": "b"}) is Status.OK
    assert coll.calls[-1] == ("insert_one", {"_id": "k", "field0": "a", "field1": "b"})
    assert await db.read("usertable", "k", None) == (Status.OK, {"field0": "a", "field1": "b"})
    await db.read("usertable", "k", ["field1"])
    assert coll.calls[-1] == ("find_one", {"_id": "k"}, {"field1": 1})
    assert await db.read("usertable", "nope", None) == (Status.NOT_FOUND, None)
    assert await db.update("usertable", "k", {"field1": "c"}) is Status.OK
    assert coll.calls[-1] == ("update_one", {"_id": "k"}, {"$set": {"field1": "c"}})
    assert await db.update("usertable", "nope", {"field1": "c"}) is Status.NOT_FOUND
    assert await db.delete("usertable", "k") is Status.OK
    assert await db.delete("usertable", "k") is Status.NOT_FOUND
    coll.acknowledged = False  # w=0: the server says nothing, so nothing is NOT_FOUND
    assert await db.update("usertable", "nope", {"field1": "c"}) is Status.OK
    assert await db.delete("usertable", "nope") is Status.OK


async def test_driver_errors_become_error_counted_by_kind():
    db, coll = fake_binding()
    coll.fail = AutoReconnect("connection closed")
    assert await db.read("usertable", "k", None) == (Status.ERROR, None)
    coll.fail = DuplicateKeyError("E11000", 11000)
    assert await db.insert("usertable", "k", {"field0": "a"}) is Status.ERROR
    coll.fail = OperationFailure("x", 50, {"codeName": "MaxTimeMSExpired"})
    assert await db.update("usertable", "k", {"field0": "a"}) is Status.ERROR
    assert db.error_kinds() == {"AutoReconnect": 1, "DuplicateKeyError": 1,
                                "OperationFailure:MaxTimeMSExpired": 1}


async def test_upsert_inserts_replace():
    db, coll = fake_binding("mongodb.upsert=true")
    assert await db.insert("usertable", "k", {"field0": "a"}) is Status.OK
    assert coll.calls == [("replace_one", {"_id": "k"}, {"_id": "k", "field0": "a"}, True)]


async def test_batched_inserts_queue_and_every_nth_sends_them_unordered():
    db, coll = fake_binding("batchsize=3")
    statuses = [await db.insert("usertable", f"k{i}", {"field0": "v"}) for i in range(8)]
    assert statuses == [Status.BATCHED_OK, Status.BATCHED_OK, Status.OK] * 2 + [Status.BATCHED_OK] * 2
    assert coll.calls == [("insert_many", ["k0", "k1", "k2"], False),
                          ("insert_many", ["k3", "k4", "k5"], False)]
    await db.cleanup()  # the rest go at cleanup, then the client closes
    assert coll.calls[-1] == ("insert_many", ["k6", "k7"], False)
    assert db.client is None and db.error_kinds() == {}


async def test_lanes_keep_queueing_while_a_batch_is_sent():
    db, coll = fake_binding("batchsize=2")
    statuses = await asyncio.gather(*(db.insert("usertable", f"k{i}", {"field0": "v"}) for i in range(6)))
    assert sorted(s.value for s in statuses) == ["BATCHED_OK"] * 3 + ["OK"] * 3
    assert sorted(k for _, keys, _ in coll.calls for k in keys) == [f"k{i}" for i in range(6)]


async def test_batched_upserts_are_one_bulk_write_of_replacements():
    db, coll = fake_binding("batchsize=2", "mongodb.upsert=true")
    for i in range(2):
        await db.insert("usertable", f"k{i}", {"field0": "v"})
    assert coll.calls == [("bulk_write", [({"_id": "k0"}, "k0", True), ({"_id": "k1"}, "k1", True)], False)]


async def test_a_failed_batch_is_one_error_and_counts_what_it_lost():
    db, coll = fake_binding("batchsize=3")
    coll.fail = BulkWriteError({"writeErrors": [{"index": 1, "code": 11000, "errmsg": "dup"}],
                                "nInserted": 2, "nUpserted": 0, "nMatched": 0})
    statuses = [await db.insert("usertable", f"k{i}", {"field0": "v"}) for i in range(3)]
    assert statuses == [Status.BATCHED_OK, Status.BATCHED_OK, Status.ERROR]
    assert db.error_kinds() == {"BulkWriteError:DuplicateKey": 1, LOST: 1}
    await db.insert("usertable", "k9", {"field0": "v"})
    coll.fail = AutoReconnect("gone")
    with pytest.raises(BindingError, match="last bulk write of queued inserts failed"):
        await db.cleanup()
    assert db.error_kinds()[LOST] == 2


def test_notes_say_what_batching_and_upserts_measure():
    db, _ = fake_binding("batchsize=50", "mongodb.upsert=true")
    batching, upserts = db.notes()
    assert "batches of 50: an INSERT's latency is that of queueing, except every 50th" in batching
    assert "replaces it" in upserts
    assert fake_binding()[0].notes() == []


async def test_no_server_is_a_binding_error_in_init_and_quick():
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec, _ = spec_from_args([], ["db=mongodb", f"mongodb.url=mongodb://127.0.0.1:{port}/ycsb",
                                  "mongodb.connecttimeout=300"], "run")
    db = binding_factory(spec)({"phase": "run", "worker": 0, "workers": 1})
    t0 = time.perf_counter()
    with pytest.raises(BindingError) as caught:
        await db.init()
    assert time.perf_counter() - t0 < 3
    message = str(caught.value)
    assert message.startswith(f"no MongoDB server answered at 127.0.0.1:{port}/ycsb") and "\n" not in message
    assert "mongodb.url" in message


async def test_a_close_that_never_returns_ends_the_cleanup_in_one_line(monkeypatch):
    """pymongo's close once hung after FerretDB was killed and restarted, ignoring its
    cancellation: the cleanup waits CLOSE_S for it, then says so (the run's results are kept)."""
    from workbench.databases.mongodb import binding as module

    monkeypatch.setattr(module, "CLOSE_S", 0.2)
    db, _ = fake_binding()
    stuck = asyncio.Event()

    async def never() -> None:  # (until the test lets it end, so that its loop can close)
        while not stuck.is_set():
            try:
                await stuck.wait()
            except asyncio.CancelledError:
                continue

    db.client.close = never
    cleanup = asyncio.ensure_future(db.cleanup())
    done, _ = await asyncio.wait({cleanup}, timeout=10)
    stuck.set()
    assert done, "the cleanup waited for the client's close"
    with pytest.raises(BindingError, match="pymongo's client did not close within 0 s"):
        cleanup.result()
    assert db.client is None
