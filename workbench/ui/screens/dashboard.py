"""The Run screen: the phase going on, live. Progress and ETA, throughput with its target and the
run's events (the servers' too), a line per node and the client's own (widgets/node_strip.py),
per-operation figures (service and, when paced, response time), the latency
distribution; keys change the load and disturb a node of the cluster under test.

The screen pulls the newest `LiveState` from the session a few times a second and redraws only
when a new one arrived; it reads only that immutable state (the controls too: paced, paused,
target, lanes), never the run's Controller, whose attributes change on the run's own thread.
Every command it sends is recorded as an event of the run.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Input, Label

from workbench.clusters.journal import FAULTS
from workbench.drive.background import BackgroundRun
from workbench.errors import WorkbenchError
from workbench.ui.views import measurement_names
from workbench.ui.widgets.node_strip import NodeStrip
from workbench.ui.widgets.op_table import OpTable
from workbench.ui.widgets.percentiles import PercentileBars
from workbench.ui.widgets.run_status import RunStatus
from workbench.ui.widgets.throughput import ThroughputChart

REFRESH_S = 0.25  # how often the screen looks for a new tick (ticks come every second)
IDLE = ("No run yet. Compose one on the Workload screen (2) and press r, "
        "or start `workbench run ... --tui` / `workbench demo`.")


class TargetPrompt(ModalScreen[float | None]):
    """Type a target rate (ops/s); 0 removes the limit."""

    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def compose(self) -> ComposeResult:
        yield Label("target rate in ops/s (0: no limit), enter to apply, escape to cancel")
        yield Input(placeholder="e.g. 2000", id="target-input")
        yield Label("", id="target-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            rate = float(event.value.replace(",", "").replace("_", ""))
            if rate < 0 or rate != rate:
                raise ValueError
        except ValueError:
            self.query_one("#target-error", Label).update(
                f"✗ {event.value!r} is not a rate: give a number of operations per second, 0 or more")
            return
        self.dismiss(rate)


class DashboardScreen(Screen):
    BINDINGS = [
        Binding("p", "pause", "Pause/resume"),
        Binding("s", "stop", "Stop"),
        Binding("plus,equals_sign", "target(1.1)", "Target +10%", key_display="+"),
        Binding("minus", "target(0.9)", "Target -10%", key_display="-"),
        Binding("t", "type_target", "Set target"),
        Binding("0", "no_limit", "No limit", show=False),
        Binding("right_square_bracket", "lanes(1)", "Lane +1", key_display="]"),
        Binding("left_square_bracket", "lanes(-1)", "Lane -1", key_display="["),
        Binding("o", "next_op", "Next op", show=False),
        Binding("n", "next_node", "Node", show=False),
        Binding("k", "fault('kill')", "Kill node"),
        Binding("z", "fault('pause')", "Freeze node", show=False),
        Binding("r", "fault('resume')", "Resume node", show=False),
        Binding("A", "resize('add_node')", "Add node", key_display="A", show=False),
        Binding("D", "resize('remove_node')", "Decommission node", key_display="D", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._seq = 0
        self._final: float | None = None  # the finished run's own throughput, once drawn
        self._run: BackgroundRun | None = None
        self._op_index = 0
        self._node_index = 0
        self._node_names: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield RunStatus(IDLE, id="run-status")
        yield ThroughputChart(id="throughput")
        yield NodeStrip(id="nodes")
        yield OpTable(id="ops")
        yield PercentileBars(id="percentiles")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(REFRESH_S, self.refresh_run)
        self.refresh_run()

    # -- drawing ------------------------------------------------------------------------------

    @property
    def run(self) -> BackgroundRun | None:
        return self.app.session.current

    def refresh_run(self, force: bool = False) -> None:
        run, session = self.run, self.app.session
        status = self.query_one(RunStatus)
        if run is None:
            status.idle(session.activity or session.error and f"workbench: error: {session.error}" or IDLE)
            return
        if run is not self._run:  # a new phase: start over
            self._run, self._seq, self._final = run, 0, None
            self._load_nodes()
        state = run.state
        # Between phases (a cluster starting, the demo's next step) say what is going on.
        status.show(run, self.node, session.activity if run.finished.is_set() else "")
        # Once the phase is over, the headline is its own throughput (operations over its
        # runtime), not the last tick's.
        final = run.result.throughput if run.finished.is_set() and run.result is not None else None
        if state is None or (state.seq == self._seq and final == self._final and not force):
            return
        self._seq, self._final = state.seq, final
        paced = state.paced
        self.query_one(ThroughputChart).show(state, overall=final)
        self.query_one(NodeStrip).show(state)
        self.query_one(OpTable).show(state, paced)
        ops = measurement_names(state)
        op = ops[self._op_index % len(ops)] if ops else None
        self.query_one(PercentileBars).show(state, op, response=paced)

    # -- live commands ------------------------------------------------------------------------

    def _live(self) -> BackgroundRun | None:
        run = self.run
        if run is None or run.finished.is_set():
            self.app.show_error("no run is going on (compose one on the Workload screen, 2)")
            return None
        return run

    def action_pause(self) -> None:
        if run := self._live():
            paused = run.state is not None and run.state.paused
            run.command("resume" if paused else "pause")
            self.notify("resumed" if paused else "paused")

    def action_stop(self) -> None:
        if self._live():
            self.app.session.stop()
            self.notify("stopping: operations in flight finish, results are kept")

    def action_target(self, factor: float) -> None:
        if run := self._live():
            current = run.state.target if run.state else run.spec.target
            if current <= 0:  # no limit yet: start from what the run does now
                current = run.state.snapshot.throughput if run.state else 0
            if current <= 0:
                self.app.show_error("no throughput measured yet to scale (t types a rate)")
                return
            self._set_target(run, round(current * factor))

    def action_type_target(self) -> None:
        if run := self._live():
            self.app.push_screen(TargetPrompt(), lambda rate: rate is not None
                                 and self._set_target(run, rate))

    def action_no_limit(self) -> None:
        if run := self._live():
            self._set_target(run, 0)

    def _set_target(self, run: BackgroundRun, rate: float) -> None:
        run.command("set_target", float(rate))
        self.notify(f"target {rate:,.0f} ops/s" if rate else "no target: as fast as possible")

    def action_lanes(self, delta: int) -> None:
        if run := self._live():
            lanes = (run.state.lanes if run.state else run.spec.threadcount) + delta
            if lanes < 1:
                self.app.show_error("a run needs at least one lane")
                return
            run.command("set_lanes", lanes)
            self.notify(f"lanes {lanes}")

    def action_next_op(self) -> None:
        self._op_index += 1
        self.refresh_run(force=True)

    # -- the cluster under test ---------------------------------------------------------------

    @property
    def cluster(self) -> str | None:
        request = self.app.session.request
        return request.cluster if request else None

    @property
    def node(self) -> str | None:
        if not self._node_names:
            return None
        return self._node_names[self._node_index % len(self._node_names)]

    def _load_nodes(self) -> None:
        if self.cluster:
            self.run_worker(self._fetch_nodes, thread=True, exclusive=True, group="nodes")

    def _fetch_nodes(self) -> None:
        try:
            cluster = self.app.session.provider_of(self.cluster).status(self.cluster)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.app.show_error, exc)
            return
        names = [n.name for n in cluster.nodes]
        self.app.call_from_thread(setattr, self, "_node_names", names)

    def action_next_node(self) -> None:
        if not self._node_names:
            self.app.show_error("this run has no cluster under test (run with --cluster NAME)")
            return
        self._node_index += 1
        self.notify(f"node {self.node} selected (k kill, z freeze, r resume, D decommission)")

    def action_fault(self, what: str) -> None:
        run, node, cluster = self.run, self.node, self.cluster
        if cluster is None or node is None:
            self.app.show_error("this run has no cluster under test (run with --cluster NAME)")
            return
        self.notify(f"{what} {node} of {cluster}...")
        self.run_worker(lambda: self._fault(run, cluster, node, what), thread=True, group="fault")

    def action_resize(self, what: str) -> None:
        """A: add a node to the cluster under test; D: decommission the selected node (n picks
        it). The run marks the change from the cluster's journal: "+ node4 joining" ..."""
        cluster, node = self.cluster, self.node
        if cluster is None or node is None:
            self.app.show_error("this run has no cluster under test (run with --cluster NAME)")
            return
        self.notify(f"adding a node to {cluster}..." if what == "add_node" else f"decommissioning {node}...")
        self.run_worker(lambda: self._resize(cluster, node, what), thread=True, group="resize")

    def _resize(self, cluster: str, node: str, what: str) -> None:
        try:
            changed = self.app.session.resize(cluster, what, node)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.app.show_error, exc)
            return
        said = f"{changed} normal" if what == "add_node" else f"{changed} gone"
        self.app.call_from_thread(self.notify, said)
        self._fetch_nodes()

    def _fault(self, run: BackgroundRun | None, cluster: str, node: str, what: str) -> None:
        try:
            self.app.session.fault(cluster, node, what)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.app.show_error, exc)
            return
        self.app.call_from_thread(self.notify, f"{node} {FAULTS[what]}")
