"""The HBase binding with hbase.client=native: YCSB's hbase2 semantics (HBaseBinding) with reads
and puts sent over HBase's own RPC straight to the RegionServers (databases/hbase/protocol/rpc.py), and
everything else through the Thrift gateway as HBaseBinding does.

A region that moved (split, balanced to another RegionServer, reopened) answers
NotServingRegionException or one of its kin (MOVED), and a RegionServer that stops after its
regions were moved away answers RegionServerStoppedException, then refuses connections
(SERVER_GONE): the binding looks the table's regions up again and sends the request anew, as
HBase's Java client does, after a short pause that grows with each attempt (the region may
still be opening where it went), up to MOVE_ATTEMPTS times; the operation's time runs from its
first attempt. Both are counted (client_counts): a run goes on through a move instead of failing
operations. A RegionServer killed with its regions fails its operations once those attempts are
spent (about 5.5 s each), until the master has given its regions to another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial
from time import perf_counter_ns
from typing import Any

from workbench import speedups
from workbench.bindings.base import READ, Outcome, Row, Status, Step, chain_outcomes
from workbench.databases.hbase.binding import HBaseBinding, error_kind
from workbench.databases.hbase.protocol.messages import (
    _BYTE,
    COLUMN_FAMILY,
    COLUMN_VALUE_FAMILY,
    COLUMN_VALUE_QUALIFIER_VALUE,
    DURABILITY,
    GET_COLUMN,
    GET_REQUEST_GET,
    GET_ROW,
    MOVED,
    MUTATE_REQUEST_MUTATION,
    MUTATION_PROTO_COLUMN_VALUE,
    MUTATION_PROTO_DURABILITY,
    MUTATION_PROTO_MUTATE_TYPE,
    MUTATION_PROTO_ROW,
    PUT,
    QUALIFIER_VALUE_QUALIFIER,
    QUALIFIER_VALUE_VALUE,
    SERVER_GONE,
    decode_get,
    decode_mutate,
    field,
    found_cells,
    get_request,
    mutation,
    number,
    region_specifier,
    tag,
    varint,
)
from workbench.databases.hbase.protocol.rpc import (
    NoSuchTable,
    Regions,
    RpcClient,
)
from workbench.errors import BindingError

_fast = speedups.C  # (the compiled request maker, hbase_make, and the outcomes of a chain)
MOVE_ATTEMPTS = 10  # a request sent anew after a region moved, with pauses of 0.1, 0.2, ... s
MOVE_PAUSE_S = 0.1
LOOKUPS, RETRIED = "region lookups after a move", "requests retried after a move"
_chain_outcomes = _fast.outcomes if _fast is not None else chain_outcomes
RELOCATE = MOVED + SERVER_GONE  # answers after which the regions are looked up again


# -- the binding -----------------------------------------------------------------------------------



class NativeBinding(HBaseBinding):
    """HBaseBinding whose reads and puts go to the RegionServers over HBase's own RPC."""

    def __init__(self, spec: Any, properties: dict[str, str], context: dict[str, Any]) -> None:
        super().__init__(spec, properties, context)
        self.rpc: RpcClient | None = None
        self._closed_counts: dict[str, tuple[int, int]] = {}
        self._regions: dict[str, Regions] = {}
        # requests and failed answers per region (by its name): the run's per-region figures
        self._region_counts: dict[bytes, list[int]] = {}
        self._durability = DURABILITY[self.options.durability]
        self._family_name = self.options.family.encode()
        self._moves = {LOOKUPS: 0, RETRIED: 0}
        self._fetching: dict[str, asyncio.Future] = {}  # one lookup of a table's regions at a time

    def client_counts(self) -> dict[str, int]:
        return {k: v for k, v in self._moves.items() if v}

    def node_counts(self) -> dict[str, tuple[int, int]]:
        """Reads and puts sent to each RegionServer (scans and deletes, which go through the
        Thrift gateway, are not among them)."""
        return self.rpc.counts() if self.rpc is not None else self._closed_counts

    def region_counts(self) -> dict[str, tuple[int, int]]:
        """Reads and puts sent to each region, by the region's name ("table,start key,id."), and
        the failed ones among them: where in a table's key order the requests went."""
        return {name.decode(errors="replace"): (sent, failed)
                for name, (sent, failed) in sorted(self._region_counts.items()) if sent or failed}

    async def init(self) -> None:
        await super().init()  # checks the gateway; its pool serves scans, deletes and buffering
        self.rpc = RpcClient(self.options.timeout_ms)
        await self._check_regionserver()

    async def _check_regionserver(self) -> None:
        """One Get on the table's first region: the RegionServer answers HBase RPC from here, or
        a BindingError says so. Only a table that does not exist yet is let through (an insert
        workload's run may create it; reads then fail per operation); any other failure to
        learn its regions is an error here."""
        table = self.spec.table
        try:
            regions = await self._regions_of(table)
        except NoSuchTable:
            self._regions.pop(table, None)
            return
        except BindingError:
            raise
        except Exception as exc:
            raise BindingError(
                f"cannot learn the regions of HBase table {table!r} from the {self.options.describe()} "
                f"({error_kind(exc)}: {exc})",
                "is the HBase master up and the table online? `workbench cluster status` shows "
                "the servers") from None
        region, server = regions.names[0], regions.servers[0]
        ok, error, _, _ = (await self.rpc.run(server, [None], lambda _: (
            b"Get", get_request(region, regions.starts[0] or b"\0", self._family_name, None),
            decode_get)))[0]
        if not ok:
            raise BindingError(
                f"cannot reach the RegionServer at {server[0]}:{server[1]} over HBase RPC "
                f"({type(error).__name__}: {error})",
                "hbase.client=native talks to the RegionServers the gateway names; where they are "
                "not reachable from here (a Docker bridge, a firewall, Kerberos), use "
                "hbase.client=async, which goes through the Thrift gateway only")

    async def cleanup(self) -> None:
        try:
            await super().cleanup()
        finally:
            if self.rpc is not None:
                self.rpc.close()
                self._closed_counts = self.rpc.counts()  # (the run's last tick reads them after this)
                self.rpc = None

    async def _regions_of(self, table: str, moved: bool = False) -> Regions:
        """The table's regions, as last looked up (moved: looked up because one moved)."""
        regions = self._regions.get(table)
        if regions is not None:
            return regions
        pending = self._fetching.get(table)
        if pending is not None:  # another lane is asking already: its answer serves this one too
            return await asyncio.shield(pending)

        def fetch() -> list[dict]:
            conn = self._checked_connection()
            try:
                return conn.table(table).regions()
            finally:
                conn.close()

        pending = self._fetching[table] = asyncio.get_running_loop().create_future()
        self._moves[LOOKUPS] += moved
        try:
            regions = self._regions[table] = Regions(await asyncio.to_thread(fetch))
        except BaseException as exc:
            pending.set_exception(exc)
            pending.exception()  # (retrieved: no "never retrieved" warning when no lane waited)
            raise
        finally:
            del self._fetching[table]
        pending.set_result(regions)
        return regions

    def _maker(self, regions: Regions) -> Callable[[Step], tuple[bytes, bytes, Callable]]:
        family, durability, locate = self._family_name, self._durability, regions.locate
        # get_request's and put_request's bytes with their constant parts made once: the region
        # specifier per region; for a Get of every field of a short row (nearly every read) also
        # the family's Column and the Get's own key and one-byte length.
        specifiers: dict[bytes, bytes] = {}
        every = field(GET_COLUMN, field(COLUMN_FAMILY, family))
        # the keys of GetRequest.get and Get.row, of MutateRequest.mutation and MutationProto.row
        get_key, get_row_key = _BYTE[tag(GET_REQUEST_GET)], _BYTE[tag(GET_ROW)]
        mutation_key, mutation_row_key = _BYTE[tag(MUTATE_REQUEST_MUTATION)], _BYTE[tag(MUTATION_PROTO_ROW)]
        only = regions.names[0] if len(regions.names) == 1 else None  # no search for one region
        counted = self._region_counts  # of several regions: counted here as each request is made
        for name in regions.names:
            counted.setdefault(name, [0, 0])
        tail = len(every)
        short = 0x80 - 2 - tail  # rows shorter than this make a Get whose length is one byte
        # A Put of one cell (every update of YCSB's default workloads): its bytes from the row's
        # key to the cell's value depend only on the qualifier and the value's length, made once
        # per pair; what follows the value is the durability, if any.
        heads: dict[tuple[bytes, int], bytes] = {}
        after = number(MUTATION_PROTO_DURABILITY, durability) if durability else b""

        def head_of(qualifier: bytes, size: int) -> bytes:
            whole = field(MUTATION_PROTO_COLUMN_VALUE, field(COLUMN_VALUE_FAMILY, family) + field(
                COLUMN_VALUE_QUALIFIER_VALUE,
                field(QUALIFIER_VALUE_QUALIFIER, qualifier) + field(QUALIFIER_VALUE_VALUE, bytes(size))))
            head = number(MUTATION_PROTO_MUTATE_TYPE, PUT) + whole[:len(whole) - size]
            heads[qualifier, size] = head
            return head

        def make(step: Step) -> tuple[bytes, bytes, Callable]:
            op, key, arg = step
            row = key.encode()
            region = only or locate(row)[0]
            spec = specifiers.get(region)
            if spec is None:
                spec = specifiers[region] = region_specifier(region)
            if only is None:
                counted[region][0] += 1
            if op == READ:
                if arg is None and len(row) < short:
                    size = len(row)
                    get = get_row_key + _BYTE[size] + row + every  # (the row's key and length: 2 bytes)
                    return b"Get", spec + get_key + _BYTE[2 + size + tail] + get, found_cells
                return (b"Get", get_request(region, row, family,
                                            None if arg is None else [f.encode() for f in arg]), found_cells)
            if len(arg) == 1:
                ((qualifier, value),) = arg.items()
                qualifier, value = qualifier.encode(), value.encode()
                head = heads.get((qualifier, len(value))) or head_of(qualifier, len(value))
                put = mutation_row_key + varint(len(row)) + row + head + value + after
                return b"Mutate", spec + mutation_key + varint(len(put)) + put, decode_mutate
            cells = [(f.encode(), v.encode()) for f, v in arg.items()]
            return b"Mutate", spec + mutation(row, family, cells, durability), decode_mutate

        if _fast is not None and only is not None:  # the usual steps' bytes made in C, the same
            return partial(_fast.hbase_make, (region_specifier(only), every, family, after, make,
                                              found_cells, decode_mutate, b"Get", b"Mutate", READ))
        return make

    async def _steps(self, table: str, steps: Sequence[Step], more: Callable[[], bool] | None) -> list:
        """The answers of a run of steps (a prefix of them when cut short): one chain per run of
        consecutive steps on the same RegionServer."""
        try:
            regions = await self._regions_of(table)
        except Exception as exc:
            now = perf_counter_ns()
            return [(False, exc, now, now)]
        make = regions.make
        if make is None:  # made once per table (its regions as last asked), not per sequence
            make = regions.make = self._maker(regions)
        answers, at, attempts, first_t0 = [], 0, 0, None
        single = len(set(regions.servers)) == 1
        while at < len(steps):
            server = regions.locate(steps[at][1].encode())[1]
            end = len(steps) if single else at + 1
            while end < len(steps) and regions.locate(steps[end][1].encode())[1] == server:
                end += 1
            got = await self.rpc.run(server, steps[at:end], make, more)
            self._count(regions, steps, at, got)
            if first_t0 is not None and got:  # the request sent anew: timed from its first attempt
                ok, value, _, t1 = got[0]
                got[0], first_t0 = (ok, value, first_t0, t1), None
            if got and not got[-1][0] and type(got[-1][1]).__name__ in RELOCATE:
                self._regions.pop(table, None)  # ask where the regions are before the next request
                if attempts < MOVE_ATTEMPTS:
                    failed = got.pop()
                    answers += got
                    at += len(got)
                    attempts += 1
                    first_t0 = failed[2]
                    self._moves[RETRIED] += 1
                    while True:  # (a split's daughters are not in hbase:meta at once: ask again)
                        await asyncio.sleep(MOVE_PAUSE_S * attempts)  # it may still be opening
                        try:
                            regions = await self._regions_of(table, moved=True)
                            break
                        except Exception as exc:
                            if attempts >= MOVE_ATTEMPTS:
                                return [*answers, (False, exc, first_t0, perf_counter_ns())]
                            attempts += 1
                    make = regions.make
                    if make is None:
                        make = regions.make = self._maker(regions)
                    single = len(set(regions.servers)) == 1
                    continue
            answers += got
            if len(got) < end - at or not got[-1][0] or (end < len(steps) and more is not None
                                                          and not more()):
                break
            at = end
        return answers

    def _count(self, regions: Regions, steps: Sequence[Step], at: int, got: list) -> None:
        """The region counts of a chain's answers: its requests, for a table of one region (whose
        make does not count them: it may be the compiled one), and its failed answer (a chain
        stops at its first failure, so only its last answer can be one)."""
        if not got:
            return
        one = len(regions.names) == 1
        if one:
            self._region_counts.setdefault(regions.names[0], [0, 0])[0] += len(got)
        if not got[-1][0]:
            row = steps[at + len(got) - 1][1].encode()
            region = regions.names[0] if one else regions.locate(row)[0]
            self._region_counts.setdefault(region, [0, 0])[1] += 1

    def _outcomes(self, steps: Sequence[Step], answers: list) -> list[Outcome]:
        """A read's answer is its LazyCells, or None: not found."""
        return _chain_outcomes(steps, answers, READ, Status.OK, Status.NOT_FOUND, self._failed, None, None)

    async def sequence(self, table: str, steps: Sequence[Step], more: Callable[[], bool]) -> list[Outcome]:
        if self._buffering:
            return await super().sequence(table, steps, more)
        return self._outcomes(steps, await self._steps(table, steps, more))

    async def read(self, table: str, key: str, fields: Sequence[str] | None):
        status, _, _, row = self._outcomes([(READ, key, fields)],
                                           await self._steps(table, [(READ, key, fields)], None))[0]
        return status, row

    async def _put(self, table: str, key: str, values: Row) -> Status:
        if self._buffering:
            return await super()._put(table, key, values)
        step = ("UPDATE", key, values)
        return self._outcomes([step], await self._steps(table, [step], None))[0][0]

