"""The Workload screen: compose a run from a YCSB workload file and a few changed values.

Every field is a property the command line knows; every change is checked with the command
line's own parser (`Composition.check`) and a refused value shows the command line's message
under its field. The side panel previews where the keys land (from the same draws as `workbench
keys`) and shows the equivalent command line. Nothing of this runs on the UI thread: a burst of
changes is checked once it settles, in a thread worker (the newest check wins), which also looks
up a cluster's overrides and draws the preview; the base file is parsed again only when it changed.
ctrl+r loads and runs it, ctrl+e runs it on data already loaded, ctrl+s saves a workload file.
"""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Label, Select, Static
from textual.worker import get_current_worker

from workbench import databases
from workbench.config.compose import (
    DISTRIBUTION_PARAMS,
    LOAD,
    MIX,
    PARAMS,
    SIZES,
    Composition,
    field_of,
    shipped_workloads,
    workload_path,
)
from workbench.config.spec import DISTRIBUTIONS, WorkloadSpec
from workbench.drive.session import RunRequest
from workbench.errors import WorkbenchError
from workbench.ui.widgets.field_row import FieldRow, field_id
from workbench.ui.widgets.key_preview import KeyPreview, curve

PREVIEW_KEYS = {"requestdistribution", "recordcount", "insertcount", "zipfian.constant",
                "hotspotdatafraction", "hotspotopnfraction", "exponential.percentile",
                "exponential.frac", "insertproportion"}
DEFAULT_DB = WorkloadSpec.db  # the spec's own default (memory): -db not given
CHECK_DELAY_S = 0.1  # a burst of changes (keys typed) is checked once, this long after the last


def checked(composition: Composition, phase: str = "run") \
        -> tuple[WorkloadSpec | None, str | None, str | None, list[str]]:
    """`Composition.check` with the overrides of its cluster looked up, and the -p overrides the
    run gets: (spec, message, field, overrides). For a thread worker: the lookup reads the
    cluster's state (and asks Docker about a docker cluster)."""
    cluster: list[str] = []
    if composition.cluster:
        from workbench.drive.targets import cluster_overrides

        try:
            cluster = cluster_overrides(composition.cluster)
        except WorkbenchError as exc:
            return None, str(exc), field_of(str(exc)), []
    spec, message, key = composition.check(phase, cluster)
    return spec, message, key, composition.overrides(cluster)


class SavePrompt(ModalScreen[str | None]):
    """Ask for the path of the workload file to write."""

    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="save-dialog"):
            yield Label("save as a YCSB workload file (enter to save, escape to cancel)")
            yield Input(placeholder="e.g. workloads/my_workload", id="save-path")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())


class ComposerScreen(Screen):
    BINDINGS = [
        Binding("ctrl+r", "run(True)", "Load+run", priority=True),
        Binding("ctrl+e", "run(False)", "Run only", priority=True),
        Binding("ctrl+s", "save", "Save as", priority=True),
        Binding("escape", "leave_field", "Leave field"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.composition = Composition()
        self._filling = False
        self._generation = 0  # counts the changes: only the newest one's check is shown
        self._preview_due = True  # a change since the preview shown moved the keys
        self._pending: Timer | None = None  # the check of the newest burst of changes

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        values = self.composition.base_values()
        yield Header()
        with VerticalScroll(id="form"):
            yield Static("Workload", classes="section")
            yield Select([(name, name) for name in shipped_workloads()], value="workloada",
                         allow_blank=False, compact=True, id="base")
            yield Input(placeholder="or a YCSB workload file: path, then enter", id="file", compact=True)
            yield Static("Database", classes="section")
            yield Select([(db, db) for db in databases.names()], value=DEFAULT_DB, allow_blank=False,
                         compact=True, id="db")
            yield FieldRow("cluster", "or cluster", "", placeholder="its name")
            yield Static("Operation mix (proportions)", classes="section")
            for key, label in MIX:
                yield FieldRow(key, label, values.get(key, ""))
            yield Static("Keys", classes="section")
            yield Select([(d, d) for d in DISTRIBUTIONS], value=values["requestdistribution"],
                         allow_blank=False, compact=True, id="requestdistribution")
            for key, label in PARAMS:
                yield FieldRow(key, label, values.get(key, ""))
            yield Static("Size and duration", classes="section")
            for key, label in SIZES:
                yield FieldRow(key, label, values.get(key, ""))
            yield Static("Load", classes="section")
            for key, label in LOAD:
                yield FieldRow(key, label, values.get(key, ""))
        with Vertical(id="side"):
            yield KeyPreview(id="preview")
            yield Static("", id="cmdline")
            yield Static("", id="verdict")
        yield Footer()

    def on_mount(self) -> None:
        # Tab walks the fields, not the scroll container around them.
        self.query_one("#form").can_focus = False
        self.query_one("#base").focus()
        self._show_params()
        self._refresh()

    # -- edits --------------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        if self._filling or event.input.id in ("file", "save-path"):
            return
        if event.input.id == "cluster":
            self.composition.cluster = event.value.strip()
            self._refresh(preview=False)
            return
        row = event.input.parent.parent if event.input.parent else None
        if isinstance(row, FieldRow):
            self.composition.set(row.key, event.value)
            self._refresh(preview=row.key in PREVIEW_KEYS)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "file" and event.value.strip():
            self._load_file(event.value.strip())

    def on_select_changed(self, event: Select.Changed) -> None:
        if self._filling or event.value is Select.BLANK:
            return
        if event.select.id == "base":
            self._set_base(workload_path(str(event.value)))
        elif event.select.id in ("db", "requestdistribution"):
            self.composition.set(event.select.id, str(event.value))
            self._show_params()
            self._refresh(preview=event.select.id == "requestdistribution")

    @work(thread=True, exclusive=True, group="file")
    def _load_file(self, path: str) -> None:
        """Read a YCSB file off the UI thread; it becomes the base of the composition."""
        file = Path(path).expanduser()
        if not file.is_file():
            self.app.call_from_thread(self.app.show_error, WorkbenchError(
                f"workload file not found: {path}", "give the path of a YCSB workload file"))
            return
        try:
            Composition(str(file)).base_values()
        except WorkbenchError as exc:
            self.app.call_from_thread(self.app.show_error, exc)
            return
        self.app.call_from_thread(self._set_base, str(file))

    def _set_base(self, base: str) -> None:
        """A new base file: every field shows its values, no change is kept."""
        self.composition = Composition(base, {}, self.composition.cluster)
        values = self.composition.base_values()
        self._filling = True
        try:
            for row in self.query(FieldRow):
                if row.key != "cluster":
                    row.query_one(Input).value = values.get(row.key, "")
            self.query_one("#requestdistribution", Select).value = values["requestdistribution"]
            self.query_one("#db", Select).value = values.get("db", DEFAULT_DB) \
                if values.get("db") in databases.names() else DEFAULT_DB
        finally:
            self.call_after_refresh(self._filled)

    def _filled(self) -> None:
        self._filling = False
        self._show_params()
        self._refresh()

    def _show_params(self) -> None:
        """Only the parameters of the chosen distribution are shown."""
        wanted = DISTRIBUTION_PARAMS.get(self.composition.value("requestdistribution"), ())
        for key, _ in PARAMS:
            self.query_one(f"#row-{field_id(key)}").display = key in wanted

    # -- checking and preview -----------------------------------------------------------------

    def _refresh(self, preview: bool = True) -> None:
        """The composition changed: have it checked once the burst of changes settles (and the
        key preview drawn again when `preview`: the change moves the keys)."""
        self._generation += 1
        self._preview_due = self._preview_due or preview
        if self._pending is not None:
            self._pending.stop()
        self._pending = self.set_timer(CHECK_DELAY_S, self._start_check)

    def _start_check(self) -> None:
        self._pending = None
        self._check(self.composition.copy(), self._generation, self._preview_due)

    @work(thread=True, exclusive=True, group="check")
    def _check(self, composition: Composition, generation: int, preview: bool) -> None:
        """Off the UI thread: the check, the command line and, when due, the key preview."""
        worker = get_current_worker()
        spec, message, key, _ = checked(composition)
        line = composition.command_line()
        if worker.is_cancelled:  # a newer check has started
            return
        self.app.call_from_thread(self._show_check, generation, spec, message, key, line)
        if not preview:
            return
        points = curve(spec) if spec is not None else None
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_preview, generation, spec, points)

    def _show_check(self, generation: int, spec: WorkloadSpec | None, message: str | None,
                    key: str | None, line: str) -> None:
        if generation != self._generation or not self.is_attached:  # newer changes will show,
            return  # or the app is closing
        try:
            verdict = self.query_one("#verdict", Static)
            command = self.query_one("#cmdline", Static)
        except NoMatches:  # the screen's widgets are being removed: the app is closing
            return
        for row in self.query(FieldRow):
            row.show_error(message if row.key == key else None)
        if message or spec is None:
            verdict.update(f"✗ workbench: error: {message}")
            verdict.add_class("-error")
        else:
            verdict.update(f"✓ valid: {spec.recordcount:,} records, {spec.operationcount:,} operations "
                           f"on {spec.db}, {spec.threadcount} lane{'s' if spec.threadcount != 1 else ''}")
            verdict.remove_class("-error")
        command.update("command line:\n" + line)

    def _show_preview(self, generation: int, spec: WorkloadSpec | None,
                      points: list[tuple[float, float]] | None) -> None:
        if generation != self._generation or not self.is_attached:
            return
        try:
            widget = self.query_one(KeyPreview)
        except NoMatches:  # the screen's widgets are being removed: the app is closing
            return
        self._preview_due = False
        if spec is None or points is None:
            widget.waiting("no key preview until the workload is valid")
        else:
            widget.show(spec.requestdistribution, spec.insert_total, points)

    # -- actions ------------------------------------------------------------------------------

    def action_leave_field(self) -> None:
        self.set_focus(None)

    def action_run(self, load: bool) -> None:
        self._check_run(self.composition.copy(), load)

    @work(thread=True, exclusive=True, group="run")
    def _check_run(self, composition: Composition, load: bool) -> None:
        """The composition as it was at the key press, checked off the UI thread, then run."""
        spec, message, key, overrides = checked(composition, "load" if load else "run")
        self.app.call_from_thread(self._run_checked, composition, load, spec, message, key, overrides)

    def _run_checked(self, c: Composition, load: bool, spec: WorkloadSpec | None,
                     message: str | None, key: str | None, overrides: list[str]) -> None:
        if not self.is_attached:  # the app is closing
            return
        if message or spec is None:
            self.app.show_error(message or "the workload is not valid")
            if key:
                self.query_one(f"#{field_id(key)}").focus()
            return
        title = f"{c.cluster or spec.db} {Path(c.base).name}"
        self.app.start_run(RunRequest((c.base,), tuple(overrides),
                                      ("load", "run") if load else ("run",), title, c.cluster or None))

    def action_save(self) -> None:
        self.app.push_screen(SavePrompt(), lambda path: path and self._save(path))

    @work(thread=True, group="save")
    def _save(self, path: str) -> None:
        target = Path(path).expanduser()
        try:
            target.write_text(self.composition.workload_text())
        except OSError as exc:
            self.app.call_from_thread(self.app.show_error, WorkbenchError(
                f"cannot write {target}: {exc.strerror}", "choose a writable path"))
            return
        self.app.call_from_thread(self.notify, f"saved {target} (workbench run -P {target})")
