"""The MongoDB binding against bare loops on pymongo's asyncio client, on a server you name.

1. Loads `--records` documents (YCSB's 10 x 100 B) into a fresh `usertable` of the URL's
   database with the workbench (`mongodb.drop=true`).
2. For each of `--lanes` (16 and 64 in flight) and workloads C (reads of every field) and A
   (50% reads, 50% updates of one field), scrambled zipfian keys, `--operations` per trial:
   - *replay*: `lanes` coroutines awaiting find_one / update_one on requests made up front
     (pymongo's ceiling on this machine);
   - *workload*: the same coroutines doing the workload's work inline (a zipfian key, a
     read-or-update choice, a fresh 100-byte value, a latency per operation), see common.py;
   - *workbench*: the engine with `-db mongodb`, the same lanes, operations and collection.
   Each opens its own client and pings the server inside its clock (the workbench's
   'anything loaded?' check before the run is outside it). Workload A trials start on a
   freshly loaded collection (see fresh_collection: FerretDB's tables slow down as updates
   leave dead rows behind), loaded outside the clock. One untimed trial of each comes
   first, and the order rotates per repetition (bench/common.py). Client CPU per operation is
   this process's user+system time; the server's is not in it.

    python bench/bench_mongodb.py --url mongodb://127.0.0.1:27117/bench?w=1
        [--records 1000] [--operations 4000] [--lanes 16,64] [--repeat 3] [--workloads c,a]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
from pathlib import Path
from time import perf_counter_ns

from common import FIELDS, compare_loops, make_plan, timed

from workbench.config.keys import build_key_name
from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller
from workbench.core.generators.scrambled import ScrambledZipfian
from workbench.core.values import random_value
from workbench.databases.mongodb.binding import describe_server
from workbench.databases.mongodb.options import parse_options

WORKLOADS = Path(__file__).resolve().parents[1] / "workbench" / "workloads"
TABLE = "usertable"


class Choices:
    """One lane's workload, chosen per operation: (is_read, key, field index, value)."""

    def __init__(self, seed: int, records: int, read_share: float) -> None:
        self.rng = rng = random.Random(seed)
        self.zipf = ScrambledZipfian(rng, 0, records - 1)
        self.read_share = read_share

    def next(self) -> tuple[bool, str, int, str | None]:
        rng = self.rng
        key = build_key_name(self.zipf.next())
        if self.read_share >= 1 or rng.random() < self.read_share:
            return True, key, 0, None
        return False, key, rng.randrange(10), random_value(rng, 100)


async def bare(url: str, lanes: int, ops: int, read_share: float, plan=None,
               records: int = 0) -> tuple[float, float]:
    """`lanes` coroutines on one AsyncMongoClient: replay `plan`, or choose per operation."""
    from pymongo import AsyncMongoClient

    clock = timed()
    client = AsyncMongoClient(url, serverSelectionTimeoutMS=5000)
    await client.admin.command("ping")
    coll = client.get_database(parse_options({"mongodb.url": url}).database).get_collection(TABLE)
    find_one, update_one = coll.find_one, coll.update_one
    value, counter = "x" * 100, itertools.count()
    latencies: list[int] = []

    async def replay() -> None:
        for n in counter:
            if n >= ops:
                return
            is_read, key, field = plan[n]
            if is_read:
                doc = await find_one({"_id": key})
                del doc["_id"]
            else:
                await update_one({"_id": key}, {"$set": {FIELDS[field]: value}})

    async def workload(seed: int) -> None:
        choices, record = Choices(seed, records, read_share), latencies.append
        for n in counter:
            if n >= ops:
                return
            is_read, key, field, fresh = choices.next()
            t0 = perf_counter_ns()
            if is_read:
                doc = await find_one({"_id": key})
                del doc["_id"]
            else:
                await update_one({"_id": key}, {"$set": {FIELDS[field]: fresh}})
            record(perf_counter_ns() - t0)

    await asyncio.gather(*(replay() if plan is not None else workload(i) for i in range(lanes)))
    await client.close()
    wall, cpu = clock()
    return ops / wall, cpu / ops * 1e6


def fresh_collection(args) -> None:
    """Load the documents again into a new collection (outside every clock).

    FerretDB keeps a collection in a PostgreSQL table and finds a document by a sequential
    scan of it: every update leaves a dead row version behind until autovacuum comes, so a
    trial that follows thousands of updates runs on a slower table than the one before it."""
    workbench_run(args, "workloada", 16, args.records, "load", ("mongodb.drop=true",))


def bare_run(args, lanes: int, read_share: float, replay: bool) -> tuple[float, float]:
    if read_share < 1:
        fresh_collection(args)
    plan = None
    if replay:
        plan = [(read_share >= 1 or is_read, key, field)
                for is_read, key, field in make_plan(args.records, args.operations)]
    return asyncio.run(bare(args.url, lanes, args.operations, read_share, plan, args.records))


class _Timed(Controller):
    """Starts the clock after the 'anything loaded?' check, where the bare loops start theirs."""

    async def prepare(self) -> None:
        await super().prepare()
        self.clock = timed()


def workbench_run(args, workload: str, lanes: int, ops: int, phase: str = "run",
                  extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """(ops/s, client CPU us/op) of one workbench phase, in this process."""
    if phase == "run" and workload != "workloadc":
        fresh_collection(args)
    spec, _ = spec_from_args(
        [str(WORKLOADS / workload)],
        ["db=mongodb", f"mongodb.url={args.url}", f"table={TABLE}", f"recordcount={args.records}",
         f"operationcount={ops}", f"threadcount={lanes}", *extra],
        phase,
    )
    controller = _Timed(spec, phase)
    outcome = asyncio.run(controller.run())
    wall, cpu = controller.clock()
    failed = {op: c for op, c in outcome.returns.items() if set(c) - {"OK"}}
    assert outcome.outcome == "completed" and not failed, (outcome.error, failed, outcome.error_kinds)
    return outcome.operations / wall, cpu / outcome.operations * 1e6


def server_name(url: str) -> str:
    from pymongo import MongoClient

    with MongoClient(url, serverSelectionTimeoutMS=5000) as client:
        return describe_server(client.server_info())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True, help="mongodb://HOST:PORT/DATABASE?w=1 (127.0.0.0/8 only)")
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--operations", type=int, default=4000)
    ap.add_argument("--lanes", default="16,64")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workloads", default="c,a")
    args = ap.parse_args()
    options = parse_options({"mongodb.url": args.url})
    if not all(h.startswith("127.") or h.startswith("localhost:") for h in options.hosts.split(",")):
        raise SystemExit("benchmarks only target 127.0.0.0/8")
    load = workbench_run(args, "workloada", 16, args.records, "load", ("mongodb.drop=true",))
    print(f"server: {server_name(args.url)}")
    print(f"load: {args.records} documents into {options.database}.{TABLE}, 16 lanes: {load[0]:.0f} ops/s, "
          f"{load[1]:.0f} us CPU/op")
    for lanes in (int(x) for x in args.lanes.split(",")):
        for letter in args.workloads.split(","):
            share = {"c": 1.0, "a": 0.5}[letter]
            print(f"\nworkload {letter.upper()}, {lanes} in flight, {args.operations} ops per trial")
            compare_loops(
                lambda lanes=lanes, share=share: bare_run(args, lanes, share, True),
                lambda lanes=lanes, share=share: bare_run(args, lanes, share, False),
                lambda lanes=lanes, letter=letter: workbench_run(args, f"workload{letter}", lanes,
                                                                 args.operations),
                args.repeat,
            )


if __name__ == "__main__":
    main()
