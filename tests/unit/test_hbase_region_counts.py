"""The native HBase binding counts its requests per region (Binding.region_counts): the run's
regions.* figures, where in a table's key order the reads and puts went. No server: the RPC
client is replaced by one that answers every request it is handed."""

from __future__ import annotations

import asyncio

from workbench.config.spec import spec_from_args
from workbench.databases.hbase.native import NativeBinding
from workbench.databases.hbase.protocol.rpc import Regions


def binding() -> NativeBinding:
    spec, _ = spec_from_args([], ["hbase.client=native", "hbase.port=9"], "run")
    return NativeBinding(spec, dict(spec.binding_properties), {"phase": "run", "workers": 1})


def regions(*starts: bytes) -> Regions:
    return Regions([{"start_key": s, "name": b"t,%s,1.%d." % (s, i), "server_name": b"h", "port": 1}
                    for i, s in enumerate(starts)])


class AnsweringRpc:
    """RpcClient.run's shape: makes each request (as a chain does), answers it; the request
    whose row is `fail` fails and ends its chain."""

    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail

    async def run(self, server, items, make, more=None):
        answers = []
        for op, key, arg in items:
            make((op, key, arg))
            ok = key != self.fail
            answers.append((ok, None if ok else RuntimeError("RegionTooBusyException"), 0, 1))
            if not ok:
                break
        return answers


def steps(*keys: str) -> list:
    return [("READ", key, None) if i % 2 else ("UPDATE", key, {"field0": "v"}) for i, key in enumerate(keys)]


def test_requests_are_counted_per_region_of_a_split_table_with_the_failed_one():
    db = binding()
    db._regions["t"] = regions(b"", b"user3", b"user5")
    db.rpc = AnsweringRpc(fail="user6")
    asyncio.run(db._steps("t", steps("user1", "user2", "user4", "user7"), None))
    asyncio.run(db._steps("t", steps("user9", "user6", "user8"), None))  # stops at its failure
    assert db.region_counts() == {"t,,1.0.": (2, 0), "t,user3,1.1.": (1, 0), "t,user5,1.2.": (3, 1)}


def test_a_table_of_one_region_is_counted_from_its_answers():
    """Its requests may be made by the compiled make, which counts nothing: the answers say."""
    db = binding()
    db._regions["t"] = regions(b"")
    db.rpc = AnsweringRpc(fail="user3")
    asyncio.run(db._steps("t", steps("user1", "user2", "user3", "user4"), None))
    asyncio.run(db.read("t", "user5", None))
    assert db.region_counts() == {"t,,1.0.": (4, 1)}


def test_regions_no_request_reached_are_not_among_the_figures_until_one_does():
    db = binding()
    db._regions["t"] = regions(b"", b"user5")
    db.rpc = AnsweringRpc()
    assert db.region_counts() == {}
    asyncio.run(db._steps("t", steps("user1"), None))
    assert db.region_counts() == {"t,,1.0.": (1, 0)}


def test_an_ordered_load_sends_each_seconds_inserts_to_one_region_a_hashed_one_to_all():
    """The engine's side of the lesson: inserts in key order walk through a pre-split table's
    regions one after the other, hashed ones land on every region all the time (regions.*
    figures from the intervals' per-region counts, as the hot-partitions lesson reads them)."""
    from engine_helpers import cleanup_store, make_spec, register_regions_binding, run_phase

    from workbench.lessons.figures import place_figures
    from workbench.results.from_run import to_run_result

    register_regions_binding()
    figures = {}
    for order in ("ordered", "hashed"):  # 1,200 rows at 400 a second: 1.5 s on each of 2 regions
        spec, props = make_spec("db=regions", "regions.count=2", "recordcount=1200", "target=400",
                                f"insertorder={order}", "zeropadding=10", "threadcount=4", phase="load")
        outcome, _ = run_phase(spec, "load")
        cleanup_store(spec)
        figures[order] = place_figures(to_run_result(outcome, props.as_dict()), "regions")
    for found in figures.values():  # each region a half of the rows (the split point is the median)
        assert found["regions.count"] == 2 and found["regions.spread"] < 1.05, figures
    # each second's inserts on one region, but for the one that crosses the split (at least half)
    assert figures["ordered"]["regions.interval_max_share"] > 0.75, figures
    assert figures["hashed"]["regions.interval_max_share"] < 0.6, figures
