"""The Clusters screen: every preset and every cluster the provider knows, their nodes and the
selected node's log; keys start and stop clusters and disturb nodes (fault injection).

Every provider call runs in a thread worker, so a first `up` (jar fetch, JVM start, readiness
checks) shows its progress instead of freezing the screen; the provider's progress callback only
stores the newest event, which a timer draws. Errors are the command line's one-line messages.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Label, Log, ProgressBar, Static

from workbench.clusters import presets
from workbench.clusters.base import Cluster
from workbench.clusters.progress import ProgressEvent
from workbench.errors import WorkbenchError

POLL_S = 2.0  # how often the list, the nodes and the log are read again while visible
LOG_LINES = 40
_TICKS = os.sysconf("SC_CLK_TCK")


class Confirm(ModalScreen[bool]):
    """y / n before something destructive."""

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question)
            yield Label("y: yes   n: no", classes="keys")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def uptime(started_ticks: int) -> str:
    """How long a process has run, from its /proc start time (clock ticks after boot)."""
    try:
        since_boot = float(Path("/proc/uptime").read_text().split()[0])
    except OSError:
        return "?"
    seconds = max(since_boot - started_ticks / _TICKS, 0)
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"
    return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"


class ClustersScreen(Screen):
    BINDINGS = [
        Binding("u", "up", "Up"),
        Binding("d", "down", "Down"),
        Binding("R", "restart_cluster", "Restart", key_display="R"),
        Binding("p", "node('pause')", "Pause node"),
        Binding("r", "node('resume')", "Resume node"),
        Binding("k", "node('kill')", "Kill node"),
        Binding("x", "node('restart')", "Restart node"),
        Binding("l", "toggle_log", "Log"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._clusters: dict[str, tuple[Cluster, str]] = {}  # name -> (cluster, phase)
        self._presets: dict[str, tuple] = {}  # name -> (description, spec or None)
        self._event: ProgressEvent | None = None  # the newest progress event of a start
        self._busy = ""  # what a provider call going on does ("up cassandra-single")
        self._log_key: tuple[str, str] | None = None
        self._log_text = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="top"):
            yield DataTable(id="clusters", cursor_type="row", zebra_stripes=True)
            yield Static("", id="about")
            with Horizontal(id="progress-row"):
                yield ProgressBar(id="progress", show_eta=False)
                yield Static("", id="progress-line")
        with Horizontal(id="bottom"):
            yield DataTable(id="nodes", cursor_type="row")
            yield Log(id="log", max_lines=500)
        yield Footer()

    def on_mount(self) -> None:
        clusters = self.query_one("#clusters", DataTable)
        clusters.add_columns("cluster", "kind", "nodes", "status", "addresses", "heap", "up for")
        self.query_one("#nodes", DataTable).add_columns("node", "address", "status", "up for")
        self.query_one("#progress-row").display = False
        self.set_interval(POLL_S, self.poll)
        self.set_interval(0.2, self._draw_progress)
        self.poll()

    def on_screen_resume(self) -> None:
        self.poll()

    def provider(self, progress: object = False):
        return self.app.session.provider(progress=progress)

    # -- reading ------------------------------------------------------------------------------

    def poll(self) -> None:
        if self.is_current:
            # Widgets are read here, on the app's thread; the worker only reads files.
            self._read(self._selected_node(), bool(self.query_one("#log").display))

    @work(thread=True, exclusive=True, group="read")
    def _read(self, key: tuple[str, str] | None, want_log: bool) -> None:
        provider = self.provider()
        found: dict[str, tuple[Cluster, str]] = {}
        for name in provider.clusters():
            try:
                found[name] = (provider.status(name), provider.phase(name))
            except WorkbenchError:
                continue  # removed between the listing and the look
        descriptions = {}
        for name, path in presets.available().items():
            try:
                descriptions[name] = (presets.describe(path), presets.load(name))
            except WorkbenchError as exc:  # a broken preset file is listed with its error
                descriptions[name] = (str(exc), None)
        log = ""
        if key and want_log:
            try:
                log = provider.logs(key[0], key[1], LOG_LINES).get(key[1], "")
            except WorkbenchError as exc:
                log = str(exc)
        self.app.call_from_thread(self._show, found, descriptions, key, log)

    def _show(self, found, descriptions, key, log: str) -> None:
        if not self.is_mounted:  # the app closed while the worker read
            return
        try:
            self._draw(found, descriptions, key, log)
        except NoMatches:  # the screen is being torn down (the app is closing): nothing to draw on
            return

    def _draw(self, found, descriptions, key, log: str) -> None:
        self._clusters, self._presets = found, descriptions
        table = self.query_one("#clusters", DataTable)
        keep = table.cursor_row
        table.clear()
        for name, (cluster, phase) in sorted(found.items()):
            running = [n for n in cluster.nodes if n.status == "running"]
            status = phase if phase != "running" else f"running {len(running)}/{len(cluster.nodes)}"
            table.add_row(name, cluster.kind, str(len(cluster.nodes)), status,
                          " ".join(f"{h}:{p}" for h, p in cluster.contact_points),
                          cluster.spec.heap, uptime(min(n.start_time for n in cluster.nodes))
                          if cluster.nodes else "-", key=name)
        for name, (_, spec) in descriptions.items():
            if name not in found:
                nodes = str(getattr(spec, "nodes", 1)) if spec else "?"
                table.add_row(name, f"{spec.kind} preset" if spec else "preset", nodes, "· not started",
                              getattr(spec, "first_address", "") if spec else "",
                              spec.heap if spec else "", "-", key=name)
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))
        self._show_nodes()
        self._show_about()
        if key == self._log_key and log != self._log_text:
            widget = self.query_one("#log", Log)
            widget.clear()
            widget.write(log)
            self._log_text = log

    def _show_about(self) -> None:
        name = self._selected_cluster()
        about = self.query_one("#about", Static)
        if name in self._clusters:
            cluster, phase = self._clusters[name]
            about.update(f"{name}: {phase}, files in {cluster.run_dir} · d down, R restart; "
                         "node keys: p pause, r resume, k kill, x restart")
        elif name in self._presets:
            about.update(f"{name}: {self._presets[name][0]} · u starts it")
        else:
            about.update("")

    def _selected_cluster(self) -> str | None:
        table = self.query_one("#clusters", DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value)

    def _selected_node(self) -> tuple[str, str] | None:
        name = self._selected_cluster()
        nodes = self.query_one("#nodes", DataTable)
        if name not in self._clusters or not nodes.row_count:
            return None
        return name, str(nodes.coordinate_to_cell_key((nodes.cursor_row, 0)).row_key.value)

    def _show_nodes(self) -> None:
        nodes = self.query_one("#nodes", DataTable)
        keep = nodes.cursor_row
        nodes.clear()
        name = self._selected_cluster()
        if name in self._clusters:
            cluster = self._clusters[name][0]
            for node in cluster.nodes:
                mark = {"running": "▶", "paused": "‖", "down": "■"}.get(node.status, "?")
                nodes.add_row(node.name, f"{node.address}:{node.port}", f"{mark} {node.status}",
                              uptime(node.start_time) if node.status != "down" else "-", key=node.name)
            nodes.move_cursor(row=min(keep, max(nodes.row_count - 1, 0)))
        self._log_key = self._selected_node()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "clusters":
            self._show_nodes()
            self._show_about()
        self._log_key = self._selected_node()
        self._log_text = ""
        self.query_one("#log", Log).clear()
        self.poll()

    # -- acting -------------------------------------------------------------------------------

    def _start(self, what: str, call) -> None:
        if self._busy:
            self.app.show_error(f"wait: {self._busy} is still going on")
            return
        self._busy, self._event = what, None
        self.query_one("#progress-row").display = True
        self._act(what, call)

    @work(thread=True, group="act")
    def _act(self, what: str, call) -> None:
        started = time.monotonic()
        try:
            call()
        except WorkbenchError as exc:
            self.app.call_from_thread(self.app.show_error, exc)
        else:
            self.app.call_from_thread(self.notify, f"{what}: done in {time.monotonic() - started:.1f} s")
        finally:
            self.app.call_from_thread(self._done)

    def _done(self) -> None:
        self._busy = ""
        if not self.is_mounted:
            return
        try:
            self.query_one("#progress-row").display = False
        except NoMatches:  # being torn down
            return
        self.poll()

    def _on_progress(self, event: ProgressEvent) -> None:
        self._event = event  # from the provider's threads: the timer draws it

    def _draw_progress(self) -> None:
        if not self._busy:
            return
        event = self._event
        bar = self.query_one("#progress", ProgressBar)
        if event and event.stage == "fetch" and event.total:
            bar.update(total=event.total, progress=event.done or 0)
        else:
            bar.update(total=None)  # indeterminate: starting, waiting for readiness
        self.query_one("#progress-line", Static).update(
            f"{self._busy}: {event.message if event else 'starting'}")

    def action_up(self) -> None:
        name = self._selected_cluster()
        if name is None:
            return
        if name in self._clusters and self._clusters[name][1] == "running":
            self.app.show_error(f"{name} is already running (d takes it down)")
            return
        if name not in self._presets:
            self.app.show_error(f"{name} is not a preset; its files are kept (d removes them)")
            return

        def up() -> None:
            self.provider(progress=self._on_progress).up(presets.load(name))

        self._start(f"up {name}", up)

    def action_down(self) -> None:
        name = self._selected_cluster()
        if name not in self._clusters:
            self.app.show_error(f"{name} is not started" if name else "no cluster selected")
            return
        def down() -> None:
            self.provider().down(name)

        self.app.push_screen(Confirm(f"Take {name} down and remove its files?"),
                             lambda yes: yes and self._start(f"down {name}", down))

    def action_restart_cluster(self) -> None:
        name = self._selected_cluster()
        if name not in self._clusters or name not in self._presets:
            self.app.show_error(f"{name} is not a running preset" if name else "no cluster selected")
            return

        def restart() -> None:
            provider = self.provider(progress=self._on_progress)
            provider.down(name)
            provider.up(presets.load(name))

        self.app.push_screen(Confirm(f"Restart {name} (down, files removed, then up)?"),
                             lambda yes: yes and self._start(f"restart {name}", restart))

    def action_node(self, what: str) -> None:
        key = self._selected_node()
        if key is None:
            self.app.show_error("select a node of a started cluster first")
            return
        name, node = key

        def act() -> None:
            getattr(self.provider(progress=self._on_progress), what)(name, node)

        if what == "kill":
            self.app.push_screen(Confirm(f"Kill {node} of {name} (SIGKILL)?"),
                                 lambda yes: yes and self._start(f"kill {name} {node}", act))
        else:
            self._start(f"{what} {name} {node}", act)

    def action_toggle_log(self) -> None:
        log = self.query_one("#log", Log)
        log.display = not log.display
        self.poll()
