"""Load from several machines through Ray (`--ray ADDRESS`), on real multi-node Ray clusters.

Every test runs Ray, the database it loads and the workbench inside a network namespace with
only `lo` up (tests/support/raynet.py): Ray picks the machine's own address by itself otherwise. Each
test checks that no socket of the run listens on or connects to anything outside 127.0.0.0/8,
and the namespace's end ends every process in it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.raynet import Netns
from tests.support.servers import skip_without_jars
from workbench.results.store import RunStore

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[test,ray]')")
# alone: Ray starts a dozen processes and judges what its workers did; never beside the other
# process's CPU-bound test (tests/support/alone.py: rehearsal 69 ran them beside the faults test)
pytestmark = [pytest.mark.servers, pytest.mark.alone]

WB = [sys.executable, "-m", "workbench"]
SCRIPTS = Path(__file__).parent / "ray_scripts"
ACTORS = ("ray::LaneWorker", "ray::Counter")


@pytest.fixture
def netns():
    ns = Netns().start()
    try:
        yield ns
    finally:
        ns.close()


@pytest.fixture(scope="module")
def ray2():
    """One namespace with a two-node Ray cluster (two CPUs each), for the tests that leave its
    nodes as they found them (each checks that no actor of its runs is left): a `ray start` of
    two nodes costs 10-40 s. The tests that kill a node or the controller have their own."""
    ns = Netns().start()
    try:
        yield ns, ns.ray_start(nodes=2, cpus=2)
    finally:
        ns.close()


def exported(path: Path) -> dict:
    return json.loads(path.read_text())["run"]


def actors(ns: Netns) -> list[str]:
    return [p for p in ns.processes() if p.startswith(ACTORS)]


def wait_for(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def check_merged(run: dict, ops: tuple[str, ...]) -> dict:
    """The merged histograms' counts are the workers' counts, summed exactly."""
    ray = run["environment"]["ray"]
    measured = {m["name"]: m["operations"] for m in run["measurements"]}
    for op in ops:
        assert measured[op] == sum(w["counts"].get(op, 0) for w in ray["workers"]), op
    assert run["operations"] == sum(w["operations"] for w in ray["workers"])
    return ray


def test_load_and_run_spread_over_two_ray_nodes_started_with_ray_start(ray2, tmp_path):
    netns, address = ray2
    store = tmp_path / "runs.db"
    common = ["-P", "workloada", "-p", "recordcount=4000", "-threads", "8", "--workers", "4",
              "--ray", address, "--store", str(store), "-p", "status.interval=1"]
    load = netns.run([*WB, "load", *common, "--export", f"json={tmp_path / 'load.json'}"])
    assert load.returncode == 0, load.stderr
    run = netns.run([*WB, "run", *common, "-p", "operationcount=30000",
                     "--export", f"json={tmp_path / 'run.json'}"])
    assert run.returncode == 0, run.stderr
    assert "[OVERALL], Throughput(ops/sec)" in run.stdout

    loaded = exported(tmp_path / "load.json")
    assert loaded["operations"] == 4000
    check_merged(loaded, ("INSERT",))
    result = exported(tmp_path / "run.json")
    assert result["operations"] == 30000
    ray = check_merged(result, ("READ", "UPDATE"))
    # spread: four workers over both nodes, each with two of the eight lanes
    assert ray["nodes"] == 2 and ray["address"] == address
    assert len({w["node_id"] for w in ray["workers"]}) == 2
    assert sorted(w["worker"] for w in ray["workers"]) == [0, 1, 2, 3]
    assert all(w["lanes"] == 2 and w["node_ip"] == "127.0.0.1" and not w["lost"] for w in ray["workers"])
    assert netns.outside_loopback() == []
    # the run store keeps where each worker ran
    kept = netns.run([*WB, "runs", "export", "--store", str(store), "2", "--export",
                      f"json={tmp_path / 'kept.json'}"])
    assert kept.returncode == 0, kept.stderr
    assert exported(tmp_path / "kept.json")["environment"]["ray"] == ray
    shown = netns.run([*WB, "runs", "show", "--store", str(store), "2"])
    assert f"Ray cluster {address} (Ray 2." in shown.stdout and "4 workers on 2 nodes" in shown.stdout
    assert actors(netns) == []  # the phases' actors ended with them

    # an experiment whose properties name the Ray cluster: each of its runs is a Ray run
    experiment = tmp_path / "over-ray.toml"
    experiment.write_text(f'''databases = ["memory"]
workloads = ["workloadc"]
repetitions = 1
warmup_s = 0
min_measure_s = 0
[properties]
recordcount = 1000
operationcount = 3000
workers = 2
"ray.address" = "{address}"
[sweep]
lanes = [2, 4]
''')
    done = netns.run([*WB, "experiment", "run", str(experiment), "--store", str(store)])
    assert done.returncode == 0, done.stderr
    with RunStore(store, write=False) as kept:
        made = kept.experiment_runs("over-ray", "full")
    assert len(made) == 3  # its load and two runs
    for run_id, step, _, _ in made:
        out = tmp_path / f"exp-{run_id}.json"
        assert netns.run([*WB, "runs", "export", "--store", str(store), str(run_id), "--export",
                          f"json={out}"]).returncode == 0
        check_merged(exported(out), ("INSERT",) if step.startswith("load") else ("READ",))


@pytest.mark.parametrize("onlost", ["continue", "stop"])
def test_a_node_removed_mid_run_is_an_event_and_its_in_flight_operations_are_errors(netns, tmp_path, onlost):
    export = tmp_path / "run.json"
    done = netns.run([sys.executable, str(SCRIPTS / "node_loss.py"), str(export), onlost], timeout=600)
    assert "removed" in done.stdout, done.stderr[-3000:]
    status = int(re.search(r"exit (-?\d+)", done.stdout).group(1))
    run = exported(export)
    ray = run["environment"]["ray"]
    lost = [w for w in ray["workers"] if w["lost"]]
    assert len(lost) == 1, ray
    events = [e for e in run["events"] if e["kind"] == "worker-lost"]
    assert len(events) == 1 and events[0]["value"]["worker"] == lost[0]["worker"]
    in_flight = events[0]["value"]["in_flight"]
    assert in_flight == 2  # the lost worker's lanes (4 lanes, 2 workers)
    returns = {m["name"]: m["returns"] for m in run["measurements"]}
    assert returns["LOST"] == {"ERROR": in_flight}
    kinds = run["environment"]["error_kinds"]
    assert any(k.startswith(f"worker {lost[0]['worker']} on ") and n == in_flight for k, n in kinds.items())
    assert run["operations"] == sum(w["operations"] for w in ray["workers"])
    if onlost == "continue":
        # the other worker went on to the end of the budget: operations after the loss
        assert status == 1, done.stderr[-3000:]  # failed operations, recorded
        assert run["outcome"] == "completed"
        at = events[0]["elapsed_s"]
        later = [i for i in run["intervals"] if i["elapsed_s"] > at + 1]
        assert sum(i["operations"] for i in later) > 0
        survivor = [w for w in ray["workers"] if not w["lost"]][0]
        assert survivor["operations"] > lost[0]["operations"]
    else:
        assert status == 2, done.stderr[-3000:]
        assert run["outcome"] == "failed"
        assert "ray.onlost=stop ended the run" in done.stderr
    assert netns.outside_loopback() == []


def _running_workbench(ns: Netns, tmp_path: Path):
    proc = ns.popen([*WB, "run", "-P", "workloadc", "-p", "recordcount=1000", "-p", "operationcount=0",
                     "-p", "maxexecutiontime=300", "-threads", "4", "--workers", "2", "--ray", "auto",
                     "-p", "status.interval=1", "--no-store", "--export", f"json={tmp_path / 'run.json'}"],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in proc.stderr:
        m = re.search(r" sec: (\d+) operations", line)
        if m and int(m.group(1)) > 0:
            break
    else:
        raise AssertionError(f"the run ended before it reported operations: {proc.wait()}")
    assert len(actors(ns)) == 2  # the two workers (no operation counter: operationcount=0)
    assert ns.outside_loopback() == []  # while the run goes on, too
    def workbench_pids() -> list[str]:
        lines = ns.run(["ps", "-eo", "pid=,args="]).stdout.splitlines()
        return [line.split()[0] for line in lines if " -m workbench run " in line]

    pid = wait_for(workbench_pids, "the workbench's pid inside the namespace")[0]
    return proc, pid


def test_ctrl_c_and_a_killed_controller_leave_no_actor_behind(netns, tmp_path):
    # before any cluster exists: one line each, at once, exit 2
    for address, words in (("127.0.0.1:6399", "no Ray cluster answers at 127.0.0.1:6399"),
                           ("auto", "cannot connect to the Ray cluster at auto")):
        done = netns.run([*WB, "run", "-p", "recordcount=10", "-p", "operationcount=10", "--ray", address,
                          "--no-store"], timeout=120)
        assert done.returncode == 2 and words in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    netns.ray_start(nodes=2, cpus=2)  # --ray auto finds it through RAY_TMPDIR's current cluster
    proc, pid = _running_workbench(netns, tmp_path)
    netns.run(["kill", "-INT", pid], check=True)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "[OVERALL], Throughput(ops/sec)" in out
    assert exported(tmp_path / "run.json")["outcome"] == "interrupted"
    wait_for(lambda: not actors(netns), "the actors to end after Ctrl-C")

    proc, pid = _running_workbench(netns, tmp_path)
    netns.run(["kill", "-KILL", pid], check=True)
    proc.communicate(timeout=120)
    wait_for(lambda: not actors(netns), "Ray to end the actors of a killed controller")
    assert netns.outside_loopback() == []


def test_a_real_cassandra_loaded_by_ray_workers_on_two_nodes(ray2, tmp_path):
    skip_without_jars("cassandra")
    netns, address = ray2
    up = netns.run([*WB, "cluster", "up", "cassandra-single", "--heap", "512M"], timeout=900)
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        common = ["-P", "workloada", "-p", "recordcount=2000", "-threads", "4", "--workers", "2",
                  "--cluster", "cassandra-single", "--ray", address, "--no-store"]
        load = netns.run([*WB, "load", *common, "--export", f"json={tmp_path / 'load.json'}"])
        assert load.returncode == 0, load.stderr
        run = netns.run([*WB, "run", *common, "-p", "operationcount=6000",
                         "--export", f"json={tmp_path / 'run.json'}"])
        assert run.returncode == 0, run.stderr
        loaded, result = exported(tmp_path / "load.json"), exported(tmp_path / "run.json")
        assert loaded["operations"] == 2000 and result["operations"] == 6000
        check_merged(loaded, ("INSERT",))
        ray = check_merged(result, ("READ", "UPDATE"))
        assert len({w["node_id"] for w in ray["workers"]}) == 2
        returns = {m["name"]: m["returns"] for m in result["measurements"]}
        assert returns["READ"] == {"OK": sum(w["counts"]["READ"] for w in ray["workers"])}
        assert result["environment"]["cluster"]["kind"] == "cassandra"
        assert netns.outside_loopback() == []
    finally:
        down = netns.run([*WB, "cluster", "down", "cassandra-single"], timeout=300)
        assert down.returncode == 0, down.stderr
    assert not [p for p in netns.processes() if "java" in p.split()[0]]
    assert actors(netns) == []



def test_target_pause_and_lanes_reach_every_ray_worker(ray2):
    netns, address = ray2
    done = netns.run([sys.executable, str(SCRIPTS / "live_commands.py"), address], timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    ticks, end = lines[:-1], lines[-1]
    by = {t["tick"]: t for t in ticks}

    def rate(first: int, last: int) -> float:  # over several ticks: a late reply moves to the next
        window = [by[t] for t in range(first, last + 1)]
        return sum(t["ops"] for t in window) / sum(t["interval_s"] for t in window)

    # Unthrottled, the two workers do thousands of ops/s on the memory binding (5,000 and more
    # quiet; 1,951 in a rehearsal beside two busy loops and the other tier's servers).
    free = rate(2, 3)
    assert free > 1000, ticks
    # target 400 set at tick 4, split 200 + 200: a worker that missed it would run unthrottled
    assert 0 < rate(9, 12) < min(2000, free / 2), ticks
    # paused at tick 13: no worker does anything from tick 16 until the resume at tick 20
    assert by[17]["ops"] == 0 and by[18]["ops"] == 0 and by[17]["paused"], ticks
    # resumed, and two lanes (one per worker) from tick 21 on, still paced
    assert by[24]["lanes"] == 2 and 0 < rate(24, 27) < 2000, ticks
    assert end["outcome"] == "stopped"
    assert [k for k, _ in end["events"]][:5] == ["target", "pause", "resume", "lanes", "stop"]
    assert [w["lanes"] for w in end["ray"]["workers"]] == [1, 1]
    assert all(w["operations"] > 0 for w in end["ray"]["workers"])
