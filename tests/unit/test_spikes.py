"""The seconds whose p99 stood out and the server events that overlapped them (results/spikes.py)."""

from workbench.metrics.server import ServerEvent
from workbench.results.spikes import Second, describe_events, spikes


def _run(p99s_ms, warmup=0):
    return [Second(end_s=i + 1.0, length_s=1.0, p99_us={"READ": p * 1000, "READ-FAILED": 900_000},
                   warmup=i < warmup)
            for i, p in enumerate(p99s_ms)]


def test_a_second_at_twice_the_median_is_a_spike_and_names_the_events_that_overlap_it():
    seconds = _run([10, 11, 9, 10, 38, 10, 10, 19.9, 20])
    gc = ServerEvent("127.0.0.2", 0.0, "gc", 0.412, "G1 Young")
    compaction = ServerEvent("127.0.0.1", 0.0, "compaction", 6.0)
    flush_elsewhere = ServerEvent("127.0.0.3", 0.0, "flush")
    events = [(4.7, gc), (1.5, compaction), (2.0, flush_elsewhere)]
    found = spikes(seconds, events)
    # 38 ms at 5 s and 20 ms at 9 s (the median is 10 ms: 19.9 is under twice it)
    assert [(s.at_s, s.p99_us) for s in found] == [(5.0, 38_000), (9.0, 20_000)]
    assert found[0].line() == ("READ p99 38 ms at 5 s: GC pause 412 ms on 127.0.0.2; "
                               "compaction on 127.0.0.1")
    # the compaction ran from 1.5 s to 7.5 s: not at 8-9 s; the flush at 2 s is a point
    assert found[1].line() == "READ p99 20 ms at 9 s: no server event overlaps it"


def test_warm_up_seconds_are_neither_spikes_nor_part_of_the_median():
    seconds = _run([100, 100, 100, 10, 10, 10, 25], warmup=3)
    assert [s.at_s for s in spikes(seconds, [])] == [7.0]


def test_an_event_that_ended_before_the_second_began_does_not_overlap_it():
    seconds = _run([10, 10, 10, 40])
    before = ServerEvent("127.0.0.1", 0.0, "gc", 0.5)
    assert spikes(seconds, [(2.49, before)])[0].events == ()
    assert len(spikes(seconds, [(2.6, before)])[0].events) == 1


def test_events_are_counted_by_kind_and_node_and_each_nodes_longest_pause_named():
    words = describe_events([ServerEvent("127.0.0.1", 0, "flush"), ServerEvent("127.0.0.1", 0, "flush"),
                             ServerEvent("127.0.0.2", 0, "gc", 0.12), ServerEvent("127.0.0.2", 0, "gc", 0.3),
                             ServerEvent("127.0.0.2", 0, "kill")])
    assert words == ["GC pause 300 ms on 127.0.0.2", "2 flushes on 127.0.0.1", "kill of 127.0.0.2"]
