"""The Clusters screen: presets listed, refusals in one line, the confirmation before anything
destructive, and a real Cassandra node started, killed, restarted and taken down from it."""

from __future__ import annotations

import time

import pytest
from textual.widgets import DataTable

from workbench.drive.session import Session
from workbench.ui.app import WorkbenchApp
from workbench.ui.screens.clusters import ClustersScreen, Confirm


async def until(pilot, condition, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def rows(app, table: str) -> dict[str, list[str]]:
    t = app.screen.query_one(f"#{table}", DataTable)
    return {str(key.value): [str(c) for c in t.get_row(key)] for key in t.rows}


def select(app, table: str, key: str) -> None:
    t = app.screen.query_one(f"#{table}", DataTable)
    t.move_cursor(row=t.get_row_index(key))


def messages(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_presets_are_listed_and_bad_requests_refused(session):
    app = WorkbenchApp(session, mode="clusters")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "cassandra-single" in rows(app, "clusters"), what="the presets")
        assert rows(app, "clusters")["hbase-standalone"][:5] == ["hbase-standalone", "hbase preset", "2",
                                                                 "· not started", "127.0.0.1:9090"]
        # ZooKeeper, the master, three RegionServers and the gateway
        assert rows(app, "clusters")["hbase-3"][:5] == ["hbase-3", "hbase preset", "6", "· not started",
                                                        "127.0.0.1:9090"]
        # FerretDB with its PostgreSQL: two processes, clients on the MongoDB protocol's port
        assert rows(app, "clusters")["ferretdb-postgres"][:5] == ["ferretdb-postgres", "ferretdb preset", "2",
                                                                  "· not started", "127.0.0.1:27017"]
        select(app, "clusters", "cassandra-3")
        await until(pilot, lambda: "three nodes" in str(app.screen.query_one("#about").content),
                    what="the selected preset's description")
        await pilot.press("d", "k")
        await pilot.pause()
        assert any("cassandra-3 is not started" in m for m in messages(app))
        assert any("select a node of a started cluster first" in m for m in messages(app))
        # adding a node needs a running cluster, removing one a node of it
        await pilot.press("plus", "minus")
        await pilot.pause()
        assert any("select a running cluster first (+ adds a node to it)" in m for m in messages(app))
        said = messages(app)
        assert any("select a node of a started cluster first (- decommissions it)" in m for m in said)
        assert not isinstance(app.screen, Confirm)


async def test_the_screen_reads_the_clusters_every_poll_interval_not_in_a_loop(session, monkeypatch):
    from workbench.ui.screens import clusters

    monkeypatch.setattr(clusters, "POLL_S", 0.5)
    polls = []
    original = ClustersScreen.poll
    monkeypatch.setattr(ClustersScreen, "poll", lambda self: (polls.append(time.monotonic()), original(self)))
    app = WorkbenchApp(session, mode="clusters")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "cassandra-single" in rows(app, "clusters"), what="the presets")
        # with the first row selected, and with another: a redraw highlights the first row before
        # the cursor goes back to the selected one, which must not read again
        for chosen in (None, "cassandra-3"):
            if chosen is not None:
                select(app, "clusters", chosen)
                await until(pilot, lambda c=chosen: c in str(app.screen.query_one("#about").content),
                            what="the selected preset's description")
            start, count = time.monotonic(), len(polls)
            await until(pilot, lambda t=start: time.monotonic() - t > 2.5 * clusters.POLL_S, what="a while")
            # One read per interval (give or take one); redrawing the table once fed the next read.
            assert len(polls) - count <= 4, f"{len(polls) - count} reads in {2.5 * clusters.POLL_S} s"


@pytest.mark.servers
async def test_a_real_node_up_killed_restarted_and_down_from_the_screen(suite_servers, tmp_path, monkeypatch):
    address = suite_servers.addresses(1)
    presets = tmp_path / "presets" / "clusters"
    presets.mkdir(parents=True)
    (presets / "t-ui-cassandra.toml").write_text(
        f'kind = "cassandra"\ndescription = "test node"\nnodes = 1\nheap = "512M"\n'
        f'first_address = "{address}"\n')
    monkeypatch.setenv("WORKBENCH_PRESETS_DIR", str(tmp_path / "presets"))
    session = Session(state_dir=suite_servers.state_dir)
    app = WorkbenchApp(session, mode="clusters")
    events = []
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.screen
            assert isinstance(screen, ClustersScreen)
            original = screen._on_progress
            screen._on_progress = lambda e: (events.append(e), original(e))
            await until(pilot, lambda: "t-ui-cassandra" in rows(app, "clusters"), what="the preset")
            select(app, "clusters", "t-ui-cassandra")
            await pilot.press("u")
            await until(pilot, lambda: screen.query_one("#progress-row").display, what="the progress line")
            await until(pilot, lambda: rows(app, "clusters")["t-ui-cassandra"][3] == "running 1/1",
                        timeout=240, what="the node up")
            assert [e.stage for e in events][-3:] == ["start", "wait", "ready"]
            assert events[0].stage == "fetch"
            # Started, it is listed among the clusters above the presets: the selection went with it.
            await until(pilot, lambda: screen._selected_cluster() == "t-ui-cassandra"
                        and "t-ui-cassandra: running" in str(screen.query_one("#about").content),
                        what="the selection on the started cluster")
            select(app, "clusters", "t-ui-cassandra")
            await until(pilot, lambda: "node1" in rows(app, "nodes"), what="its node")
            await until(pilot, lambda: screen.query_one("#log").line_count > 0, what="its log")

            await pilot.press("k")
            await until(pilot, lambda: isinstance(app.screen, Confirm), what="the confirmation")
            await pilot.press("y")
            await until(pilot, lambda: "down" in rows(app, "nodes").get("node1", ["", "", ""])[2],
                        timeout=60, what="node1 killed")
            await until(pilot, lambda: not screen._busy, what="the kill to finish")
            await pilot.press("x")
            await until(pilot, lambda: "running" in rows(app, "nodes").get("node1", ["", "", ""])[2]
                        and not screen._busy, timeout=240, what="node1 restarted")

            await pilot.press("d")
            await until(pilot, lambda: isinstance(app.screen, Confirm), what="the confirmation")
            await pilot.press("y")
            await until(pilot, lambda: rows(app, "clusters").get("t-ui-cassandra", ["", "", "", ""])[3]
                        == "· not started", timeout=120, what="the cluster down")
    finally:
        if "t-ui-cassandra" in suite_servers.provider.clusters():
            suite_servers.provider.down("t-ui-cassandra")


async def _listed(pilot) -> None:
    await until(pilot, lambda: "hbase-standalone" in rows(pilot.app, "clusters"), what="the presets")


def test_clusters_snapshot_80x24(session, snap_compare):
    assert snap_compare(WorkbenchApp(session, mode="clusters"), terminal_size=(80, 24), run_before=_listed)


def test_clusters_snapshot_160x48(session, snap_compare):
    assert snap_compare(WorkbenchApp(session, mode="clusters"), terminal_size=(160, 48), run_before=_listed)


@pytest.mark.servers
@pytest.mark.docker
async def test_docker_and_external_clusters_are_listed_and_acted_on_through_their_provider(
        docker_cassandra, docker_suite, cassandra_node, suite_servers):
    from workbench.clusters.external import ExternalProvider, ExternalSpec

    host, port = cassandra_node.contact_points[0]
    remembered = ExternalProvider(state_dir=suite_servers.state_dir)
    remembered.up(ExternalSpec(name="t-ui-lab", kind="cassandra", hosts=(host,), port=port))
    app = WorkbenchApp(Session(state_dir=suite_servers.state_dir), mode="clusters")
    docker_key, lab_key = f"docker:{docker_cassandra.name}", "external:t-ui-lab"
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await until(pilot, lambda: {docker_key, lab_key} <= set(rows(app, "clusters")), what="both rows")
            assert rows(app, "clusters")[docker_key][:4] == [docker_cassandra.name, "cassandra docker", "1",
                                                             "running 1/1"]
            assert rows(app, "clusters")[lab_key][1] == "cassandra external"

            select(app, "clusters", lab_key)
            await until(pilot, lambda: "not ours to disturb" in str(app.screen.query_one("#about").content),
                        what="the external cluster's line")
            await until(pilot, lambda: rows(app, "nodes"), what="its contact point")
            await pilot.press("p")
            await until(pilot, lambda: any("the workbench does not own its servers" in m
                                           for m in messages(app)), what="the refusal")

            select(app, "clusters", docker_key)
            await until(pilot, lambda: "node1" in rows(app, "nodes"), what="the container's node")
            await pilot.press("p")
            await until(pilot, lambda: "paused" in rows(app, "nodes")["node1"][2], what="node1 paused")
            assert docker_suite.provider.status(docker_cassandra.name).node("node1").status == "paused"
            await until(pilot, lambda: not app.screen._busy, what="the pause to finish")
            await pilot.press("r")
            await until(pilot, lambda: "running" in rows(app, "nodes")["node1"][2], what="node1 resumed")
            await until(pilot, lambda: not app.screen._busy, what="the resume to finish")
    finally:
        docker_suite.provider.resume(docker_cassandra.name, "node1")
        remembered.down("t-ui-lab")
