"""The MongoDB binding: YCSB 0.17.0's mongodb semantics on pymongo's native asyncio client.

One document per record in collection `table` of the URL's database: `_id` is the key and each
field is a top-level string. A read is find_one by _id with a projection of the named fields
(the _id is not part of the row), NOT_FOUND when there is no document; a scan is find(_id >=
start) sorted by _id with a limit; an update is $set on the named fields, NOT_FOUND when nothing
matched; an insert is insert_one (replace_one with upsert under mongodb.upsert=true); a delete
is NOT_FOUND when nothing was deleted. With w=0 the server says nothing, so nothing is NOT_FOUND.
One deliberate difference: YCSB reports a scan that finds nothing as ERROR; here it is OK with no
rows, as in the other bindings.

YCSB stores values as BSON binary (its values are Java byte arrays). Ours are printable-ASCII
str, which BSON strings carry as UTF-8 with no conversion either way; binary would cost an
encode per field on every write and a decode per field on every read, and the documents would
not be readable in a MongoDB shell. The sizes on the server are the same within a byte or two.

With batchsize > 1, inserts queue in this worker (BATCHED_OK) and every batchsize-th sends them
as one unordered bulk write (insert_many, or ReplaceOne upserts), as YCSB does; cleanup() sends
the rest. Driver errors never escape an operation: they become Status.ERROR, counted by kind
(AutoReconnect, NetworkTimeout, DuplicateKeyError, OperationFailure:<codeName>, ...).

mongodb.timeout is pymongo's socketTimeoutMS, and a limit of the binding's own besides: pymongo's
asyncio client let a read wait out a 3-second freeze of the server with socketTimeoutMS at 1.5 s
(2 runs in about 8 on a loaded machine; answered, not timed out). Each operation also runs under
asyncio.timeout of a tenth more (BACKSTOP); when that fires first, the operation is an ERROR of
kind NetworkTimeout, as pymongo's own would have made it, counted against the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Sequence
from typing import Any

from pymongo import AsyncMongoClient, ReplaceOne, monitoring
from pymongo.errors import (
    BulkWriteError,
    ConfigurationError,
    OperationFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
    WriteError,
)

from workbench.bindings.base import Binding, Row, Status
from workbench.databases.mongodb.options import URL_FIX, MongoOptions, parse_options
from workbench.databases.mongodb.server_name import mongodb_server_name as describe_server
from workbench.errors import BindingError

_OK, _ERROR, _NOT_FOUND, _BATCHED = Status.OK, Status.ERROR, Status.NOT_FOUND, Status.BATCHED_OK
_BY_ID = [("_id", 1)]
_AUTH_CODES = (13, 18)  # Unauthorized, AuthenticationFailed
_GO_FRAME = re.compile(r"\[[\w./-]+\.go:\d+ [^\]]*\]\s*")  # FerretDB's "[file.go:55 pkg.Func] "
LOST = "queued inserts not written"  # error_kinds(): documents of a failed bulk write
CLOSE_S = 10.0  # cleanup waits this long for the client's close
BACKSTOP = 1.1  # the binding's own limit: mongodb.timeout x this (pymongo's normally fires first)
TIMED_OUT = "NetworkTimeout"

BATCH_NOTE = ("batchsize={n}: inserts are sent in batches of {n}: an INSERT's latency is that of "
              "queueing, except every {n}th, which waits for the bulk write; the rest go at CLEANUP")


def kind_of(exc: BaseException) -> str:
    """The name error_kinds() counts a failure under: the class, and the server's reason where
    the class alone says little (OperationFailure:<codeName>, BulkWriteError:DuplicateKey)."""
    cls = type(exc)
    if cls is OperationFailure or cls is WriteError:
        details = exc.details or {}
        return f"{cls.__name__}:{details.get('codeName') or exc.code}"
    if cls is BulkWriteError:
        details = exc.details or {}
        errors = details.get("writeErrors") or ()
        if errors:
            code = errors[0].get("code")
            return f"BulkWriteError:{'DuplicateKey' if code == 11000 else code}"
        if details.get("writeConcernErrors"):
            return "BulkWriteError:WriteConcern"
    return cls.__name__


def _one_line(exc: BaseException) -> str:
    """pymongo's message on one line, without the topology description or the server's reply
    that it appends, nor FerretDB's Go call frames."""
    text = str(exc)
    for cut in (" (configured timeouts", ", Timeout:", ", full error:"):
        text = text.split(cut)[0]
    return " ".join(_GO_FRAME.sub("", text).split())


def connection_error(exc: BaseException, options: MongoOptions) -> BindingError:
    """One line that names why the server cannot be used, and what to change."""
    where, why = options.where, _one_line(exc)
    if isinstance(exc, ServerSelectionTimeoutError):
        return BindingError(f"no MongoDB server answered at {where}: {why}",
                            "is it running? check the host and port (and any replicaSet) in "
                            "mongodb.url, or raise mongodb.connecttimeout")
    if isinstance(exc, OperationFailure) and (exc.code in _AUTH_CODES or "authentication" in why.lower()):
        return BindingError(f"the MongoDB server at {where} refused the credentials: {why}",
                            "check the user, password, authSource and authMechanism in mongodb.url")
    if isinstance(exc, OperationFailure):
        return BindingError(f"the MongoDB server at {where} failed a ping: {kind_of(exc)}: {why}",
                            "check the credentials in mongodb.url, and the server's log")
    if isinstance(exc, ConfigurationError):
        return BindingError(f"mongodb.url cannot be used: {why}", URL_FIX)
    return BindingError(f"cannot talk to MongoDB at {where}: {kind_of(exc)}: {why}",
                        "check mongodb.url and that the server there speaks the MongoDB protocol")


class _Ops:
    """One collection's driver calls, bound once: the operations look up nothing else."""

    __slots__ = ("find_one", "find", "update_one", "insert_one", "replace_one", "delete_one",
                 "insert_many", "bulk_write")

    def __init__(self, collection: Any) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(collection, name))


class PerServer(monitoring.CommandListener):
    """Commands sent to each server and the failed ones among them (the run's per-node
    figures): pymongo's command monitoring names the server of every command, so a replica set's
    primary and secondaries are told apart."""

    def __init__(self) -> None:
        self.counts: dict[str, list[int]] = {}

    def _count(self, event: Any) -> list[int]:
        host, port = event.connection_id[:2]
        where = f"{host}:{port}"
        counts = self.counts.get(where)
        if counts is None:
            counts = self.counts[where] = [0, 0]
        return counts

    def started(self, event: Any) -> None:
        self._count(event)[0] += 1

    def succeeded(self, event: Any) -> None:
        pass

    def failed(self, event: Any) -> None:
        self._count(event)[1] += 1


class MongoDBBinding(Binding):
    name = "mongodb"

    def __init__(self, spec: Any, properties: dict[str, str], context: dict[str, Any]) -> None:
        super().__init__(spec, properties, context)
        self.options = parse_options(properties)
        self.client: Any = None
        self.db: Any = None
        self.server = ""  # describe_server() of the server reached
        self.errors: dict[str, int] = {}
        self.per_server = PerServer()
        self._notes: list[str] = []
        self._ops: dict[str, _Ops] = {}
        self._queues: dict[str, list[dict]] = {}
        self._batch = self.options.batchsize
        self._upsert = self.options.upsert
        timeout_ms = dict(self.options.client_options).get("socketTimeoutMS") or 0
        self._limit = (contextlib.nullcontext if not timeout_ms else
                       lambda: asyncio.timeout(timeout_ms / 1000 * BACKSTOP))
        if self._batch > 1:
            self._notes.append(BATCH_NOTE.format(n=self._batch))
        if self._upsert:
            self._notes.append("mongodb.upsert=true: an INSERT over an existing record replaces it "
                               "instead of failing with DuplicateKeyError")

    # -- set-up and tear-down ------------------------------------------------------------------

    async def _connect(self) -> None:
        """A client that has answered a ping, or a BindingError saying why there is none."""
        if self.client is not None:
            return
        opts = self.options
        try:
            client = AsyncMongoClient(opts.url, event_listeners=[self.per_server],
                                      **dict(opts.client_options))
        except (PyMongoError, ValueError, TypeError) as exc:
            raise BindingError(f"mongodb.url cannot be used: {_one_line(exc)}", URL_FIX) from None
        try:
            await client.admin.command("ping")
        except PyMongoError as exc:
            await client.close()
            raise connection_error(exc, opts) from None
        self.client, self.db = client, client.get_database(opts.database)

    async def init(self) -> None:
        """This worker's client; a dead server or bad credentials fail here, not per operation."""
        await self._connect()

    async def prepare(self) -> None:
        """Nothing to create (MongoDB makes a collection on its first insert, with its _id
        index); drop the collection first on a load with mongodb.drop=true."""
        await self._connect()
        try:
            self.server = describe_server(await self.client.server_info())
        except PyMongoError:
            self.server = "a MongoDB-protocol server that did not answer buildInfo"
        self._notes.insert(0, f"server: {self.server}")
        opts = self.options
        if opts.drop and self.context.get("phase") == "load":
            try:
                await self.db.drop_collection(self.spec.table)
            except PyMongoError as exc:
                raise BindingError(
                    f"cannot drop {opts.database}.{self.spec.table}: {kind_of(exc)}: {_one_line(exc)}",
                    "drop it by hand, or leave out mongodb.drop") from None
        elif opts.drop:
            self._notes.append("mongodb.drop=true applies to the load phase: the run kept the collection")
        if self.client.write_concern.document.get("w") == 0:
            self._notes.append("w=0: writes are not acknowledged, so their latency is that of sending "
                               "them, failures go unseen and no UPDATE or DELETE is NOT_FOUND")

    async def nothing_loaded(self, table: str) -> str | None:
        await self._connect()
        name = f"{self.options.database}.{table}"
        try:
            if table not in await self.db.list_collection_names(filter={"name": table}):
                return f"collection {name} does not exist"
            if await self.db[table].find_one({}, {"_id": 1}) is None:
                return f"collection {name} is empty"
        except PyMongoError:
            return None  # cannot tell: the run goes on and its operations count the failures
        return None

    async def cleanup(self) -> None:
        """Send what is still queued, then close the client."""
        if self.client is None:
            return
        failed = False
        for table, docs in list(self._queues.items()):
            if docs:
                self._queues[table] = []
                failed |= await self._flush(table, docs) is _ERROR
        client, self.client, self.db = self.client, None, None
        self._ops.clear()
        # bounded: pymongo's close awaits its monitors' tasks, and once hung in it after its
        # server was killed and restarted, ignoring its cancellation (the run is over; it is let go)
        closing = asyncio.ensure_future(client.close())
        done, _ = await asyncio.wait({closing}, timeout=CLOSE_S)
        if not done:
            raise BindingError(f"pymongo's client did not close within {CLOSE_S:.0f} s",
                               "the run's results are kept; the client was left behind")
        closing.result()
        if failed:
            raise BindingError("the last bulk write of queued inserts failed",
                               f"failed operations by kind: {self.errors}")

    def notes(self) -> list[str]:
        return list(self._notes)

    def error_kinds(self) -> dict[str, int]:
        return dict(self.errors)

    def node_counts(self) -> dict[str, tuple[int, int]]:
        return {where: (c[0], c[1]) for where, c in self.per_server.counts.items()}

    def _failed(self, exc: BaseException) -> Status:
        kind = kind_of(exc)
        self.errors[kind] = self.errors.get(kind, 0) + 1
        return _ERROR

    def _timed_out(self) -> Status:
        """The binding's own limit fired (pymongo's did not): NetworkTimeout, counted against the
        server when there is one (the commands it was sent do not say which otherwise)."""
        self.errors[TIMED_OUT] = self.errors.get(TIMED_OUT, 0) + 1
        if len(self.per_server.counts) == 1:
            next(iter(self.per_server.counts.values()))[1] += 1
        return _ERROR

    def _bind(self, table: str) -> _Ops:
        ops = self._ops[table] = _Ops(self.db.get_collection(table))
        return ops

    # -- operations (hot path: one dict lookup for the collection's bound calls) ---------------

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        ops = self._ops.get(table) or self._bind(table)
        try:
            async with self._limit():
                doc = await ops.find_one({"_id": key}, None if fields is None else dict.fromkeys(fields, 1))
        except PyMongoError as exc:
            return self._failed(exc), None
        except TimeoutError:
            return self._timed_out(), None
        if doc is None:
            return _NOT_FOUND, None
        del doc["_id"]
        return _OK, doc

    async def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None):
        if count <= 0:  # limit 0 would mean no limit to the server
            return _OK, []
        ops = self._ops.get(table) or self._bind(table)
        try:
            cursor = ops.find({"_id": {"$gte": start_key}},
                              None if fields is None else dict.fromkeys(fields, 1),
                              sort=_BY_ID, limit=count)
            async with self._limit():
                docs = await cursor.to_list(None)
        except PyMongoError as exc:
            return self._failed(exc), []
        except TimeoutError:
            return self._timed_out(), []
        return _OK, [(doc.pop("_id"), doc) for doc in docs]

    async def update(self, table: str, key: str, values: Row) -> Status:
        ops = self._ops.get(table) or self._bind(table)
        try:
            async with self._limit():
                result = await ops.update_one({"_id": key}, {"$set": values})
        except PyMongoError as exc:
            return self._failed(exc)
        except TimeoutError:
            return self._timed_out()
        if result.acknowledged and not result.matched_count:
            return _NOT_FOUND
        return _OK

    async def insert(self, table: str, key: str, values: Row) -> Status:
        doc = {"_id": key, **values}
        if self._batch > 1:
            queue = self._queues.get(table)
            if queue is None:
                queue = self._queues[table] = []
            queue.append(doc)
            if len(queue) < self._batch:
                return _BATCHED
            self._queues[table] = []  # lanes queue into a fresh list while this one is sent
            return await self._flush(table, queue)
        ops = self._ops.get(table) or self._bind(table)
        try:
            async with self._limit():
                if self._upsert:
                    await ops.replace_one({"_id": key}, doc, upsert=True)
                else:
                    await ops.insert_one(doc)
        except PyMongoError as exc:
            return self._failed(exc)
        except TimeoutError:
            return self._timed_out()
        return _OK

    async def _flush(self, table: str, docs: list[dict]) -> Status:
        """One unordered bulk write of queued documents (YCSB's insertMany / upserts)."""
        ops = self._ops.get(table) or self._bind(table)
        try:
            if self._upsert:
                await ops.bulk_write([ReplaceOne({"_id": d["_id"]}, d, upsert=True) for d in docs],
                                     ordered=False)
            else:
                await ops.insert_many(docs, ordered=False)
        except BulkWriteError as exc:
            details = exc.details or {}
            written = details.get("nInserted", 0) + details.get("nUpserted", 0) + details.get("nMatched", 0)
            self.errors[LOST] = self.errors.get(LOST, 0) + max(len(docs) - written, 0)
            return self._failed(exc)
        except PyMongoError as exc:
            self.errors[LOST] = self.errors.get(LOST, 0) + len(docs)
            return self._failed(exc)
        return _OK

    async def delete(self, table: str, key: str) -> Status:
        ops = self._ops.get(table) or self._bind(table)
        try:
            async with self._limit():
                result = await ops.delete_one({"_id": key})
        except PyMongoError as exc:
            return self._failed(exc)
        except TimeoutError:
            return self._timed_out()
        if result.acknowledged and not result.deleted_count:
            return _NOT_FOUND
        return _OK
