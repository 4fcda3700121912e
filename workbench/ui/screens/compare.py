"""The Compare screen: runs made since the app opened, and imported YCSB text files, side by side.

Space selects runs; the first selected (the earliest made) is the baseline the others are measured
against, labelled so in every column header and in the chart's legend. The figures, differences,
their 95% intervals and verdicts come from `workbench.results.compare` (the same tables as the
command line), above them "not comparable" for each result-changing manifest field that differs
from the baseline's (results/comparable.py, the lines `runs compare` prints); all computed in a
thread worker (the per-second statistics load numpy and scipy the first time). The chart overlays
the selected runs' latency percentiles for one operation (o for the next). i imports a YCSB text
(or our JSON) file, h adds the run store's recent history (runs of earlier sessions and of the
command line), e writes the selection as YCSB text and CSV plus a comparison CSV. File and store
reads and writes run in thread workers.
"""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Input, Label, SelectionList, Static

from workbench.drive.session import FinishedRun
from workbench.errors import WorkbenchError
from workbench.results.comparable import not_comparable_lines
from workbench.results.compare import Comparison, compare, comparison_view, write_comparison_csv
from workbench.results.model import RunResult
from workbench.ui.widgets.percentile_overlay import PercentileOverlay

EMPTY = ("No runs yet: runs made in the app (2 composes one, `workbench demo` makes four) appear "
         "here; h adds earlier runs from the run store, i imports a YCSB text file.")
HISTORY = 30  # runs h brings in from the store, newest first


class PathPrompt(ModalScreen[str | None]):
    """Ask for a path (a file to import, a folder to export to)."""

    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self, question: str, placeholder: str) -> None:
        super().__init__()
        self.question, self.placeholder = question, placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"{self.question} (enter to confirm, escape to cancel)")
            yield Input(placeholder=self.placeholder)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())


class CompareScreen(Screen):
    BINDINGS = [
        Binding("space", "toggle", "Select", show=True),
        Binding("o", "next_op", "Next op"),
        Binding("h", "history", "History"),
        Binding("i", "import_file", "Import"),
        Binding("e", "export", "Export"),
        Binding("c", "clear", "Clear"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._shown = 0  # runs listed so far (the session's list only grows)
        self._op = 0
        self._auto_selected = False
        self._drawn = 0  # redraws asked for: only the newest one's comparison is shown

    def compose(self) -> ComposeResult:
        yield Header()
        yield SelectionList[int](id="runs")
        with VerticalScroll(id="figures"):
            yield Static(EMPTY, id="table")
            yield PercentileOverlay(id="overlay")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(1.0, self.refresh_runs)
        self.refresh_runs()

    def on_screen_resume(self) -> None:
        self.refresh_runs()

    @property
    def runs(self) -> list[FinishedRun]:
        return self.app.session.finished

    def refresh_runs(self) -> None:
        """List runs that finished since the last look (the session's list only grows)."""
        listing = self.query_one("#runs", SelectionList)
        new = self.runs[self._shown:]
        for i, run in enumerate(new, start=self._shown):
            r = run.result
            where = "" if run.source in ("app", "demo", "command line", "store") \
                else f" · {Path(run.source).name}"
            listing.add_option((f"{i + 1}. {run.title} · {r.throughput:,.0f} ops/s · {r.outcome}{where}", i))
        self._shown = len(self.runs)
        if new and not self._auto_selected:
            self._auto_select()
        elif new:
            self.redraw()

    def _auto_select(self) -> None:
        """First look with two runs or more: select the newest runs of the same workload and
        phase (the demo's Cassandra and HBase runs of workload C, say), else the last two."""
        if len(self.runs) < 2:
            self.redraw()
            return
        self._auto_selected = True
        newest = self.runs[-1].title.split()[1:]
        same = [i for i, run in enumerate(self.runs) if run.title.split()[1:] == newest and newest]
        chosen = same if len(same) >= 2 else [len(self.runs) - 2, len(self.runs) - 1]
        listing = self.query_one("#runs", SelectionList)
        for i in chosen:
            listing.select(i)
        self.redraw()

    def on_selection_list_selected_changed(self) -> None:
        self.redraw()

    def selected(self) -> list[int]:
        # In the order the runs were made: the first selected is the baseline.
        return sorted(self.query_one("#runs", SelectionList).selected)

    def redraw(self) -> None:
        chosen = self.selected()
        self._drawn += 1
        if len(chosen) < 2:
            self.query_one("#table", Static).update(
                EMPTY if not self.runs else "Select two runs or more (space) to compare them.")
            self.query_one(PercentileOverlay).clear()
            return
        self._compare(self._drawn, [self.runs[i].result for i in chosen],
                      [_label(i, self.runs[i]) for i in chosen])

    @work(thread=True, group="compare")
    def _compare(self, drawn: int, results: list[RunResult], labels: list[str]) -> None:
        comparison = compare(results, labels)
        differ = not_comparable_lines(results, labels)
        self.app.call_from_thread(self._show, drawn, comparison, results, differ)

    def _show(self, drawn: int, comparison: Comparison, results: list[RunResult], differ: list[str]) -> None:
        if drawn != self._drawn:
            return  # the selection changed meanwhile: a newer comparison is on its way
        # "not comparable" first, a line per differing field, as runs compare says it
        said = [Text(line, style="bold red") for line in differ]
        view = comparison_view(comparison)
        self.query_one("#table", Static).update(Group(*said, "", view) if said else view)
        ops = list(comparison.ops)
        labels = [f"{label} (baseline)" if i == 0 else label for i, label in enumerate(comparison.labels)]
        self.query_one(PercentileOverlay).show(results, labels, ops[self._op % len(ops)] if ops else None)

    # -- keys ---------------------------------------------------------------------------------

    def action_toggle(self) -> None:
        listing = self.query_one("#runs", SelectionList)
        if listing.highlighted is not None:
            listing.toggle(listing.get_option_at_index(listing.highlighted).value)

    def action_clear(self) -> None:
        self.query_one("#runs", SelectionList).deselect_all()

    def action_next_op(self) -> None:
        self._op += 1
        self.redraw()

    def action_import_file(self) -> None:
        self.app.push_screen(PathPrompt("import a YCSB text file (0.17.0 or master) or a workbench JSON",
                                        "e.g. results/ycsb-cassandra-a.txt"),
                             lambda path: path and self._import(path))

    @work(thread=True, group="import")
    def _import(self, path: str) -> None:
        from workbench.results.importers import import_file

        try:
            result = import_file(path)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.app.show_error, exc)
            return
        except OSError as exc:
            self.app.call_from_thread(self.app.show_error, WorkbenchError(
                f"cannot read {path}: {exc.strerror}", "give the path of a YCSB text file"))
            return
        stem = Path(path).stem  # YCSB's text does not say which database it measured
        title = f"{result.db} {stem}" if result.db and result.db not in stem else stem
        self.app.call_from_thread(self._add_imported, FinishedRun(title, result, source=str(path)))

    def _add_imported(self, run: FinishedRun) -> None:
        self.app.session.finished.append(run)
        self.refresh_runs()
        self.notify(f"imported {run.source}")

    def action_history(self) -> None:
        self._history(self.app.session.store)

    @work(thread=True, group="history", exclusive=True)
    def _history(self, where: object) -> None:
        from workbench.results.store import RunStore

        if where is False:
            self.app.call_from_thread(self.app.show_error, WorkbenchError(
                "this session records nothing (--no-store)", "leave out --no-store to keep a history"))
            return
        known = {run.run_id for run in self.runs if run.run_id is not None}
        found: list[FinishedRun] = []
        try:
            with RunStore(where, create=False, write=False) as store:
                for row in store.list(limit=HISTORY):
                    if row.id in known or row.status in ("running", "failed"):
                        continue
                    result = store.result(row.id)
                    title = f"#{row.id} {result.database or '?'} {row.workload or '-'} {row.phase}"
                    found.append(FinishedRun(title, result, "store", row.id))
        except WorkbenchError as exc:
            self.app.call_from_thread(self.app.show_error, exc)
            return
        self.app.call_from_thread(self._add_history, found[::-1])  # oldest first, as made

    def _add_history(self, runs: list[FinishedRun]) -> None:
        self.app.session.finished.extend(runs)
        self.refresh_runs()
        self.notify(f"{len(runs)} runs from the store" if runs else "no other runs in the store")

    def action_export(self) -> None:
        if len(self.selected()) < 1:
            self.app.show_error("select the runs to export first (space)")
            return
        self.app.push_screen(PathPrompt("export the selected runs to the folder", "e.g. results/compare"),
                             lambda folder: folder and self._export(folder, self.selected()))

    @work(thread=True, group="export")
    def _export(self, folder: str, chosen: list[int]) -> None:
        from workbench.results.exporters import export

        out = Path(folder).expanduser()
        written: list[str] = []
        try:
            out.mkdir(parents=True, exist_ok=True)
            for i in chosen:
                stem = out / f"{i + 1}-{_slug(self.runs[i].title)}"
                for kind, suffix in (("ycsb", "txt"), ("csv", "csv")):
                    written.append(str(export(self.runs[i].result, f"{kind}={stem}.{suffix}")))
            if len(chosen) >= 2:
                results = [self.runs[i].result for i in chosen]
                write_comparison_csv(compare(results, [_label(i, self.runs[i]) for i in chosen]),
                                     out / "comparison.csv")
                written.append(str(out / "comparison.csv"))
        except WorkbenchError as exc:
            self.app.call_from_thread(self.app.show_error, exc)
            return
        except OSError as exc:
            self.app.call_from_thread(self.app.show_error, WorkbenchError(
                f"cannot write to {out}: {exc.strerror}", "choose a writable folder"))
            return
        self.app.call_from_thread(self.notify, f"wrote {len(written)} files to {out}/")


def _label(i: int, run: FinishedRun) -> str:
    return f"{i + 1}. {run.title}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"
