"""The Clusters screen: every preset and every cluster the providers know (local JVMs, Docker
containers, external clusters named by a cluster file), their nodes and the selected node's log;
keys start and stop clusters and disturb nodes (fault injection). `u` starts a preset with the
provider `t` chooses (local or docker); every other key acts through the cluster's own provider.

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
from workbench.databases import resolve, serving
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
        Binding("plus,equals_sign", "add_node", "Add node", key_display="+"),
        Binding("minus", "remove_node", "Remove node", key_display="-"),
        Binding("l", "toggle_log", "Log"),
        Binding("t", "toggle_target", "Local/Docker"),
    ]
    TARGETS = ("local", "docker")  # what `u` starts a preset as

    def __init__(self) -> None:
        super().__init__()
        self._clusters: dict[str, tuple[Cluster, str]] = {}  # row key -> (cluster, phase)
        self._target = "local"  # the provider `u` starts a preset with
        self._follow: str | None = None  # the row key of the cluster `u` is starting
        self._highlighted: dict[str | None, str | None] = {}  # table id -> row key last shown
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
        self.call_after_refresh(self.poll)  # once the screen is shown (poll reads only then)

    def on_screen_resume(self) -> None:
        self.poll()

    def provider(self, progress: object = False, key: str | None = None):
        """The provider of the cluster in row `key`, or the one `u` starts presets with."""
        kind = self._clusters[key][0].provider if key in self._clusters else self._target
        return self.app.session.provider(progress=progress, kind=kind)

    @staticmethod
    def row_key(cluster: Cluster) -> str:
        """A local cluster's row is its name; others say their provider (docker:NAME)."""
        return cluster.name if cluster.provider == "local" else f"{cluster.provider}:{cluster.name}"

    def _cluster_name(self, key: str) -> str:
        return self._clusters[key][0].name if key in self._clusters else key

    # -- reading ------------------------------------------------------------------------------

    def poll(self) -> None:
        if self.is_current:
            # Widgets are read here, on the app's thread; the worker only reads files.
            self._read(self._selected_node(), bool(self.query_one("#log").display))

    @work(thread=True, exclusive=True, group="read")
    def _read(self, key: tuple[str, str] | None, want_log: bool) -> None:
        found: dict[str, tuple[Cluster, str]] = {}
        owners = {}
        for provider in self.app.session.providers():
            for name in provider.clusters():
                try:
                    cluster = provider.status(name)
                    found[self.row_key(cluster)] = (cluster, provider.phase(name))
                    owners[self.row_key(cluster)] = provider
                except WorkbenchError:
                    continue  # removed between the listing and the look
        descriptions = {}
        for name, path in presets.available().items():
            try:
                descriptions[name] = (presets.describe(path), presets.load(name))
            except WorkbenchError as exc:  # a broken preset file is listed with its error
                descriptions[name] = (str(exc), None)
        log = ""
        if key and want_log and key[0] in owners:
            try:
                log = owners[key[0]].logs(found[key[0]][0].name, key[1], LOG_LINES).get(key[1], "")
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
        keep, selected = table.cursor_row, self._selected_cluster()
        table.clear()
        keys: list[str] = []
        for key_, (cluster, phase) in sorted(found.items()):
            keys.append(key_)
            running = [n for n in cluster.nodes if n.status == "running"]
            status = phase if phase != "running" else f"running {len(running)}/{len(cluster.nodes)}"
            if any(n.status == "no engine" for n in cluster.nodes):
                status = "no engine"  # a Docker cluster whose engine does not answer
            kind = cluster.kind if cluster.provider == "local" else f"{cluster.kind} {cluster.provider}"
            live = [n.start_time for n in cluster.nodes if n.status in ("running", "paused") and n.start_time]
            table.add_row(cluster.name, kind, str(len(cluster.nodes)), status,
                          " ".join(f"{h}:{p}" for h, p in cluster.contact_points),
                          getattr(cluster.spec, "heap", "-"), uptime(min(live)) if live else "-", key=key_)
        for name, (_, spec) in descriptions.items():
            if name not in found:
                keys.append(name)
                nodes, where = _preset_shape(spec)
                table.add_row(name, f"{spec.kind} preset" if spec else "preset", nodes, "· not started",
                              where, spec.heap if spec else "", "-", key=name)
        # The selection stays on its cluster, not its row number: a preset that starts moves up
        # among the clusters, and the cursor goes with it (the one `u` started, once it is listed).
        chosen = next((k for k in (self._follow, selected) if k in keys), None)
        if self._follow in found:
            self._follow = None
        if chosen is not None:
            table.move_cursor(row=keys.index(chosen))
        elif table.row_count:
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
            if cluster.provider == "external":
                about.update(f"{cluster.name}: external {cluster.kind} {cluster.server_version}, not ours "
                             "to disturb · d forgets it")
            else:
                about.update(f"{cluster.name}: {phase} ({cluster.provider}), files in {cluster.run_dir} · "
                             "d down, R restart; node keys: p pause, r resume, k kill, x restart")
        elif name in self._presets:
            other = self.TARGETS[1 - self.TARGETS.index(self._target)]
            how = "as local JVMs" if self._target == "local" else "as Docker containers"
            about.update(f"{name}: {self._presets[name][0]} · u starts it {how} (t: {other})")
        else:
            about.update("")

    @staticmethod
    def _cursor_key(table: DataTable) -> str | None:
        """The key of the row under the table's cursor (None: no rows)."""
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value)

    def _selected_cluster(self) -> str | None:
        return self._cursor_key(self.query_one("#clusters", DataTable))

    def _selected_node(self) -> tuple[str, str] | None:
        name, node = self._selected_cluster(), self._cursor_key(self.query_one("#nodes", DataTable))
        if name not in self._clusters or node is None:
            return None
        return name, node

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
                              uptime(node.start_time) if node.status in ("running", "paused") else "-",
                              key=node.name)
            nodes.move_cursor(row=min(keep, max(nodes.row_count - 1, 0)))
        self._log_key = self._selected_node()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # Redrawing a table (every poll) highlights its row again: only a move to another
        # cluster or node is news. Reacting to every highlight polled again at once, a loop
        # that kept a core busy while this screen was shown.
        key = str(event.row_key.value) if event.row_key is not None else None
        if key is None or key != self._cursor_key(event.data_table):
            # A redraw passes the first row on its way back to the selected one: that highlight
            # arrives once the cursor has moved on, and read as a move it polled again, a loop
            # of about 80 reads a second while any other row was selected.
            return
        if self._highlighted.get(event.data_table.id) == key:
            return
        self._highlighted[event.data_table.id] = key
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
            self.app.show_error(f"{self._cluster_name(name)} is already running (d takes it down)")
            return
        if name not in self._presets:
            external = name in self._clusters and self._clusters[name][0].provider == "external"
            said = self._cluster_name(name)
            self.app.show_error(f"{said} is an external cluster: nothing to start" if external
                                else f"{said} is not a preset; its files are kept (d removes them)")
            return
        target = self._target
        self._follow = name if target == "local" else f"{target}:{name}"

        def up() -> None:
            self.app.session.provider(progress=self._on_progress, kind=target).up(presets.load(name))

        self._start(f"up {name}" + (" (docker)" if target == "docker" else ""), up)

    def action_toggle_target(self) -> None:
        self._target = self.TARGETS[1 - self.TARGETS.index(self._target)]
        how = "as local JVMs" if self._target == "local" else "as Docker containers"
        self.notify(f"u now starts presets {how}")
        self._show_about()

    def action_down(self) -> None:
        name = self._selected_cluster()
        if name not in self._clusters:
            self.app.show_error(f"{name} is not started" if name else "no cluster selected")
            return
        provider, cluster = self.provider(key=name), self._cluster_name(name)

        def down() -> None:
            provider.down(cluster)

        question = (f"Forget the external cluster {cluster}?" if provider.name == "external"
                    else f"Take {cluster} down and remove its files?")
        self.app.push_screen(Confirm(question), lambda yes: yes and self._start(f"down {cluster}", down))

    def action_restart_cluster(self) -> None:
        key = self._selected_cluster()
        name = self._cluster_name(key) if key else None
        if key not in self._clusters or name not in self._presets:
            self.app.show_error(f"{name} is not a running preset" if name else "no cluster selected")
            return
        provider = self.provider(progress=self._on_progress, key=key)

        def restart() -> None:
            provider.down(name)
            provider.up(presets.load(name))

        self.app.push_screen(Confirm(f"Restart {name} (down, files removed, then up)?"),
                             lambda yes: yes and self._start(f"restart {name}", restart))

    def action_node(self, what: str) -> None:
        key = self._selected_node()
        if key is None:
            self.app.show_error("select a node of a started cluster first")
            return
        provider = self.provider(progress=self._on_progress, key=key[0])
        name, node = self._cluster_name(key[0]), key[1]

        def act() -> None:
            getattr(provider, what)(name, node)

        if what == "kill":
            self.app.push_screen(Confirm(f"Kill {node} of {name} (SIGKILL)?"),
                                 lambda yes: yes and self._start(f"kill {name} {node}", act))
        else:
            self._start(f"{what} {name} {node}", act)

    def action_add_node(self) -> None:
        """Bootstrap one more node into the selected running cluster (Cassandra); a run going
        on against it marks the join on its timeline (drive/cluster_watch.py)."""
        key = self._selected_cluster()
        if key not in self._clusters or self._clusters[key][1] != "running":
            self.app.show_error("select a running cluster first (+ adds a node to it)")
            return
        provider = self.provider(progress=self._on_progress, key=key)
        name = self._cluster_name(key)
        if not hasattr(provider, "add_node"):
            self.app.show_error(f"{name}: nodes are added to clusters the workbench started only "
                                "(Cassandra, HBase with RegionServers)")
            return
        self._start(f"add a node to {name}", lambda: provider.add_node(name))

    def action_remove_node(self) -> None:
        """Remove the selected node (its data moves to the others first: Cassandra decommissions
        it, HBase moves its regions), then stop it."""
        key = self._selected_node()
        if key is None:
            self.app.show_error("select a node of a started cluster first (- decommissions it)")
            return
        provider = self.provider(progress=self._on_progress, key=key[0])
        name, node = self._cluster_name(key[0]), key[1]
        if not hasattr(provider, "remove_node"):
            self.app.show_error(f"{name}: nodes are removed from clusters the workbench started only "
                                "(Cassandra, HBase with RegionServers)")
            return
        self.app.push_screen(Confirm(f"Remove {node} of {name} (its data moves to the others first)?"),
                             lambda yes: yes and self._start(f"remove {node} from {name}",
                                                             lambda: provider.remove_node(name, node)))

    def action_toggle_log(self) -> None:
        log = self.query_one("#log", Log)
        log.display = not log.display
        self.poll()


def _preset_shape(spec) -> tuple[str, str]:
    """(processes, where clients connect) of a preset that is not started (its server's shape)."""
    if spec is None:
        return "?", ""
    found = serving(spec.kind)[1]
    return resolve(found.shape)(spec) if found is not None and found.shape else ("?", "")
