"""The in-process memory binding: an ordered key -> fields store with scans.

It is a real target for the engine's own tests and for demos, not a model of any database.
Stores are named (`-p memory.store=NAME`) and live as long as the process, so a load and a
run in one process share data. A run whose store is empty preloads the records a load would
have written (`-p memory.preload=false` turns that off), so `workbench run -db memory` works
on its own. With several worker processes each process has its own store.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from workbench.bindings.base import Binding, Row, Status
from workbench.errors import ConfigError

# More records than this do not fit a laptop's memory as Python dicts (about 1.5 KB each).
PRELOAD_LIMIT = 5_000_000


class MemoryStore:
    """Dict for point operations; a sorted key list rebuilt lazily for scans."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self._sorted: list[str] = []
        self._dirty = False

    def put(self, key: str, values: Row) -> None:
        row = self.rows.get(key)
        if row is None:
            self.rows[key] = dict(values)
            self._dirty = True
        else:
            row.update(values)

    def sorted_keys(self) -> list[str]:
        if self._dirty:
            self._sorted = sorted(self.rows)
            self._dirty = False
        return self._sorted

    def delete(self, key: str) -> bool:
        if self.rows.pop(key, None) is None:
            return False
        self._dirty = True
        return True


_STORES: dict[str, MemoryStore] = {}


def get_store(name: str = "default") -> MemoryStore:
    store = _STORES.get(name)
    if store is None:
        store = _STORES[name] = MemoryStore()
    return store


def drop_store(name: str = "default") -> None:
    _STORES.pop(name, None)


def _project(row: Row, fields: Sequence[str] | None) -> Row:
    if fields is None:
        return dict(row)
    return {f: row[f] for f in fields if f in row}


class MemoryBinding(Binding):
    name = "memory"

    def __init__(self, spec, properties, context) -> None:
        super().__init__(spec, properties, context)
        self.store = get_store(properties.get("memory.store", "default"))
        preload = properties.get("memory.preload", "true").strip().lower()
        if preload not in ("true", "false"):
            raise ConfigError(f"memory.preload={preload!r} is not true or false", "write true or false")
        self.preload = preload == "true"
        records = spec.insert_total if self.preload and context.get("phase") == "run" else 0
        if records > PRELOAD_LIMIT:
            why = " (recordcount=0 means YCSB's largest int)" if spec.recordcount == 0 else ""
            raise ConfigError(
                f"the memory binding would preload {records:,} records before this run{why}",
                f"set recordcount to {PRELOAD_LIMIT:,} or fewer, or -p memory.preload=false to run "
                "on an empty store, where reads are NOT_FOUND")

    async def init(self) -> None:
        source = self.context.get("record_source")
        if self.preload and self.context.get("phase") == "run" and not self.store.rows and source:
            for key, values in source():
                self.store.put(key, values)

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        row = self.store.rows.get(key)
        if row is None:
            return Status.NOT_FOUND, None
        return Status.OK, (dict(row) if fields is None else _project(row, fields))

    async def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None):
        keys = self.store.sorted_keys()
        rows = self.store.rows
        i = bisect.bisect_left(keys, start_key)
        out: list[tuple[str, Row]] = []
        while i < len(keys) and len(out) < count:
            k = keys[i]
            row = rows.get(k)
            if row is not None:
                out.append((k, _project(row, fields)))
            i += 1
        return Status.OK, out

    async def update(self, table: str, key: str, values: Row) -> Status:
        row = self.store.rows.get(key)
        if row is None:
            return Status.NOT_FOUND
        row.update(values)
        return Status.OK

    async def insert(self, table: str, key: str, values: Row) -> Status:
        self.store.put(key, values)
        return Status.OK

    async def delete(self, table: str, key: str) -> Status:
        return Status.OK if self.store.delete(key) else Status.NOT_FOUND
