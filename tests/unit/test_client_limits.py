"""A run whose client was the bottleneck says so (results/client_limits.py, issue 54 item 8)."""

from workbench.results.client_limits import verdict


def _seconds(client_cpu, server_cpu=None, lag=0.0, n=10):
    out = []
    for _ in range(n):
        s = {"client": {"cpu": client_cpu, "loop_lag_ms": lag}}
        if server_cpu is not None:
            s["127.0.0.1"] = {"cpu": server_cpu}
        out.append(s)
    return out


def test_workers_using_nearly_every_core_are_the_bottleneck_and_the_line_says_so():
    v = verdict(_seconds(1.9, 0.6), cores=2)
    assert v.limited and v.line == "client-limited: the workers used 1.9 of 2 cores; the servers' CPU was 0.6"


def test_an_idle_client_and_a_busy_server_say_nothing():
    v = verdict(_seconds(0.4, 1.5), cores=8, local_nodes=frozenset({"127.0.0.1"}))
    assert not v.limited and v.line == ""


def test_lagging_loops_in_a_tenth_of_the_seconds_are_client_limited_even_with_cores_to_spare():
    seconds = _seconds(0.5, n=9) + _seconds(0.5, lag=80.0, n=1)
    v = verdict(seconds, cores=4)
    assert v.limited and "lagged over 50 ms in 10% of the seconds" in v.line
    assert not verdict(_seconds(0.5, n=11) + _seconds(0.5, lag=80.0, n=1), cores=4).limited


def test_client_and_local_servers_together_filling_the_machine_are_machine_limited():
    v = verdict(_seconds(1.0, 0.9), cores=2, local_nodes=frozenset({"127.0.0.1"}))
    assert v.limited
    assert v.line.startswith("machine-limited: the client (1.0) and the servers on this machine (0.9)")
    # the same figures from a server elsewhere: its CPU is not this machine's
    assert not verdict(_seconds(1.0, 0.9), cores=2).limited


def test_without_client_figures_nothing_is_said():
    assert verdict([{"127.0.0.1": {"cpu": 2.0}}], cores=2).line == ""


def test_a_client_sharing_busy_cores_with_other_processes_is_limited_by_what_they_left_it():
    shared = [{"client": {"cpu": 0.5, "loop_lag_ms": 15.0, "cores_busy": 0.99}} for _ in range(4)]
    v = verdict(shared, cores=1)
    assert v.limited
    assert v.line == "client-limited: the workers used 0.5 of 1 cores and other processes 0.5 of them"
    # cores busy, but the client hardly used them (a paced run on a loaded machine): nothing to say
    idle = [{"client": {"cpu": 0.2, "cores_busy": 2.0}} for _ in range(4)]
    assert not verdict(idle, cores=2).limited
    # the client used half its cores and the rest were free: not limited
    free = [{"client": {"cpu": 0.5, "cores_busy": 0.6}} for _ in range(4)]
    assert not verdict(free, cores=1).limited


def test_a_client_ready_to_run_on_its_cores_but_waiting_for_them_is_limited_however_little_it_got():
    """Other processes left the client a fifth of its one core: its threads were ready to run the
    whole second (cpu + cpu_wait), so it wanted the core and got a fifth of it (CI saw this: 0.2
    of a core, below SHARED_SHARE, and no line at all before cpu_wait)."""
    starved = [{"client": {"cpu": 0.2, "cpu_wait": 0.8, "loop_lag_ms": 30.0, "cores_busy": 1.0}}
               for _ in range(4)]
    v = verdict(starved, cores=1)
    assert v.limited
    assert v.line == ("client-limited: the workers used 0.2 of 1 cores and waited 0.8 more for one; "
                      "other processes used 0.8 of them")
    # a paced client on the same busy core: it ran a little and waited a little, never wanted it all
    paced = [{"client": {"cpu": 0.07, "cpu_wait": 0.15, "cores_busy": 1.0}} for _ in range(4)]
    assert not verdict(paced, cores=1).limited
    # waiting on two cores for what one core's worth of threads wanted: not all it could run on
    assert not verdict([{"client": {"cpu": 0.5, "cpu_wait": 0.5}} for _ in range(4)], cores=2).limited
    assert verdict([{"client": {"cpu": 0.9, "cpu_wait": 0.9}} for _ in range(4)], cores=2).limited
    # a second without the figure (a skipped sample) does not hide the seconds that have it
    assert verdict(starved + [{"client": {"loop_lag_ms": 5.0}}], cores=1).line == v.line
