"""The toy's binding: YCSB's five operations on a dict of dicts in the worker's process."""

from __future__ import annotations

from collections.abc import Sequence

from toy_database.options import parse
from workbench.bindings.base import Binding, Status
from workbench.errors import ConfigError

PRELOAD_LIMIT = 1_000_000
_STORES: dict[str, dict[str, dict[str, bytes]]] = {}


class ToyBinding(Binding):
    name = "toy"

    def __init__(self, spec, properties, context) -> None:
        super().__init__(spec, properties, context)
        self.options = parse(properties)  # a refused property ends the run before it starts
        self.rows = _STORES.setdefault(self.options.store, {})
        records = spec.insert_total if self.options.preload and context.get("phase") == "run" else 0
        if records > PRELOAD_LIMIT:  # recordcount=0 is YCSB's largest int: more than memory holds
            raise ConfigError(f"the toy would preload {records:,} records before this run",
                              f"set recordcount to {PRELOAD_LIMIT:,} or fewer, or -p toy.preload=false")

    async def init(self) -> None:
        source = self.context.get("record_source")
        if self.options.preload and self.context.get("phase") == "run" and not self.rows and source:
            for key, values in source():
                self.rows[key] = dict(values)

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        row = self.rows.get(key)
        if row is None:
            return Status.NOT_FOUND, None
        return Status.OK, {f: v for f, v in row.items() if fields is None or f in fields}

    async def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None):
        keys = sorted(k for k in self.rows if k >= start_key)[:count]
        return Status.OK, [(k, {f: v for f, v in self.rows[k].items() if fields is None or f in fields})
                           for k in keys]

    async def update(self, table: str, key: str, values) -> Status:
        row = self.rows.get(key)
        if row is None:
            return Status.NOT_FOUND
        row.update(values)
        return Status.OK

    async def insert(self, table: str, key: str, values) -> Status:
        self.rows[key] = dict(values)
        return Status.OK

    async def delete(self, table: str, key: str) -> Status:
        return Status.OK if self.rows.pop(key, None) is not None else Status.NOT_FOUND
