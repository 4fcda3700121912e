"""Two lines on top of the Run screen: what runs where, its state, progress and ETA; a third with
the last interval's requests per node where the client counts them, every node seen so far
(views.node_line: "down" where the client knows it is disconnected)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from workbench.databases import serving
from workbench.drive.background import BackgroundRun
from workbench.errors import WorkbenchError
from workbench.ui.views import fmt_duration, fmt_rate, node_line, progress


class RunStatus(Static):
    DEFAULT_CSS = "RunStatus { height: 2; }"

    def show(self, run: BackgroundRun, node: str | None, activity: str = "") -> None:
        """`activity`: what the session does after this run ended (shown on the second line)."""
        spec, state = run.spec, run.state
        text = Text()
        if run.finished.is_set():
            outcome = run.result.outcome if run.result else "failed"
            text.append(f"■ {outcome} ", style="bold")
        elif state is not None and state.snapshot.paused:
            text.append("‖ paused ", style="bold yellow")
        elif state is None:
            text.append("… starting ", style="bold")
        else:
            text.append("▶ running ", style="bold green")
        cluster = getattr(run, "cluster", None)  # a BackgroundRun has one; a replayed run may not
        text.append(f"{run.title} · {spec.db}{_served_by(cluster)}")
        if node:
            text.append(f" · node {node}")
        if state is not None:
            snap = state.snapshot
            text.append(f" · {fmt_duration(snap.elapsed_s)} · lanes {snap.lanes}"
                        f" · target {fmt_rate(snap.target)}")
        text.append("\n")
        if activity:
            text.append(activity, style="bold")
        elif state is not None:
            p = progress(state, spec.phase_operation_count(run.phase), spec.maxexecutiontime)
            if p.fraction is not None:
                bar = max(self.size.width - len(p.text) - 2, 10)
                filled = round(p.fraction * bar)
                text.append("━" * filled, style="green")
                text.append("─" * (bar - filled), style="dim")
                text.append(" ")
            text.append(p.text)
        elif run.error:
            text.append(f"workbench: error: {run.error}", style="bold red")
        else:
            text.append("preparing the binding (schema, connections)")
        snap = state.snapshot if state is not None else None
        nodes = node_line(dict(snap.nodes), snap.interval_s, snap.down) if snap is not None else ""
        if nodes:
            text.append("\n" + nodes, style="dim")
        self.styles.height = 3 if nodes else 2
        self.update(text)

    def idle(self, message: str) -> None:
        self.styles.height = 2
        self.update(message)


def _served_by(cluster) -> str:
    """" (FerretDB)" where the cluster's server is not its database's namesake (databases/)."""
    if cluster is None:
        return ""
    try:
        db, server = serving(cluster.kind)
    except WorkbenchError:
        return ""
    return f" ({server.label})" if server is not None and server.label and server.label != db.title else ""
