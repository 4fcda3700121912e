"""CPU of a lane's sequence around the wire, compiled against Python, in the same invocation.

What a lane does per operation besides the request on the wire, for workload A's sequences of 64
steps (half reads of every field, half updates of one), on the native CQL client:
- `statements`: each step's prepared statement and values (CassandraBinding._statements, or
  speedups.C.pending);
- `outcomes`: the chain's answers as outcomes (base.chain_outcomes, or speedups.C.outcomes);
- `record`: the outcomes into the READ and UPDATE meters (run_sequence's loop of Meter.record,
  or speedups.C.record).
And what each wake-up of the event loop costs besides the answers it brings: `wake-up`, the
connection's get_buffer, buffer_updated (of 0 bytes) and _flush (of nothing), as the loop calls
them: as Python methods, or as the extension's builtins bound to the connection (hooks).

Times are CPU microseconds per operation (per wake-up for `wake-up`), medians of --repeat
alternating rounds. No server is involved: this is the client's own work, which a run against a
server adds to the system calls and the waits that bench_cpu.py measures with it.

    python bench/bench_sequence.py [--rounds 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

from workbench import speedups
from workbench.bindings.base import READ, UPDATE, Status, chain_outcomes
from workbench.databases.cassandra.binding import CassandraBinding, _without_nulls
from workbench.databases.cassandra.protocol.connection import CqlConnection
from workbench.metrics.recorder import Recorder
from workbench.protocols.wire import FIRST_ROW

STEPS = 64


def workload_a(rng: random.Random) -> tuple[list, list]:
    """64 steps of workload A and their answers as the native client gives them."""
    steps, answers = [], []
    for i in range(STEPS):
        key = f"user{rng.getrandbits(60)}"
        if rng.random() < 0.5:
            steps.append((READ, key, None))
            value = [object()]  # a LazyRow: never looked at
        else:
            steps.append((UPDATE, key, {"field3": "x" * 100}))
            value = None
        t0 = 10**12 + i * 50_000
        answers.append((True, value, t0, t0 + rng.randint(200_000, 3_000_000)))
    return steps, answers


def binding() -> CassandraBinding:
    b = CassandraBinding.__new__(CassandraBinding)
    b.fields = tuple(f"field{i}" for i in range(10))
    b._read_every, b._cache, b._updates = "read every field", {}, {("field3",): "update field3"}
    b.errors = {}
    return b


def python_record(steps, outcomes, m_read, m_update):
    for (op, _, _), (status, t0, t1, _) in zip(steps, outcomes, strict=False):
        (m_read if op == READ else m_update).record(status, t0, t1, 0)


def per_op(fn, rounds: int) -> float:
    t0 = time.process_time()
    for _ in range(rounds):
        fn()
    return (time.process_time() - t0) / (rounds * STEPS) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    C = speedups.C
    if C is None:
        raise SystemExit("workbench._speedups is not built here: nothing to compare")
    rng = random.Random(1)
    steps, answers = workload_a(rng)
    b = binding()
    outcomes = chain_outcomes(steps, answers, READ, Status.OK, Status.NOT_FOUND, b._failed, FIRST_ROW,
                              _without_nulls)
    recorder = Recorder()
    m_read, m_update = recorder.meter("READ"), recorder.meter("UPDATE")
    loop = asyncio.new_event_loop()

    def statements_python():
        coro = b._statements(steps)
        try:
            coro.send(None)
        except StopIteration:
            pass

    cases = {
        "statements": (statements_python,
                       lambda: C.pending(steps, READ, b._read_every, b._updates)),
        "outcomes": (lambda: chain_outcomes(steps, answers, READ, Status.OK, Status.NOT_FOUND, b._failed,
                                            FIRST_ROW, _without_nulls),
                     lambda: C.outcomes(steps, answers, READ, Status.OK, Status.NOT_FOUND, b._failed,
                                        FIRST_ROW, _without_nulls)),
        "record": (lambda: python_record(steps, outcomes, m_read, m_update),
                   lambda: C.record(steps, outcomes, m_read, m_update, READ, Status.OK)),
    }

    class Transport:
        def write(self, data: bytes) -> None:
            pass

    async def connection() -> CqlConnection:
        conn = CqlConnection(4, 30, "bench:9042")
        conn.connection_made(Transport())
        return conn

    conn = loop.run_until_complete(connection())
    get_buffer, updated, flush = conn.get_buffer, conn.buffer_updated, conn._flush  # the hooks
    methods = (CqlConnection.get_buffer, CqlConnection.buffer_updated, CqlConnection._flush)

    def wake_python():
        for _ in range(STEPS):  # per_op divides by STEPS: the figure is per wake-up
            methods[0](conn, -1)
            methods[1](conn, 0)
            methods[2](conn)

    def wake_compiled():
        for _ in range(STEPS):
            get_buffer(-1)
            updated(0)
            flush()

    cases["wake-up"] = (wake_python, wake_compiled)
    print(f"CPU us per operation (wake-up: per wake-up), {args.rounds} rounds of {STEPS} steps, "
          f"medians of {args.repeat}, alternating", flush=True)
    for name, (python, compiled) in cases.items():
        got = {"Python": [], "compiled": []}
        for _ in range(args.repeat):
            got["Python"].append(per_op(python, args.rounds))
            got["compiled"].append(per_op(compiled, args.rounds))
            recorder.drain()
        p, c = statistics.median(got["Python"]), statistics.median(got["compiled"])
        print(f"  {name:<11} Python {p:6.3f}   compiled {c:6.3f}   saved {p - c:6.3f}  ({c / p:.2f}x)",
              flush=True)
    loop.close()


if __name__ == "__main__":
    main()
