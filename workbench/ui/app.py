"""The Textual application: five screens (modes) over one `Session`.

1 Clusters, 2 Workload, 3 Run, 4 Compare, 5 Lessons; `?` help, `q` quit. The app holds no engine state of
its own: `self.session` has the runs and the provider, screens read it and ask it for work.
Quitting stops the run going on (its worker processes end with it). NO_COLOR is honoured
by Textual itself (a monochrome filter over every screen).
"""

from __future__ import annotations

from collections.abc import Callable
from multiprocessing import resource_tracker
from pathlib import Path

from textual.app import App
from textual.binding import Binding

from workbench.drive.session import RunRequest, Session
from workbench.errors import WorkbenchError
from workbench.ui.screens.clusters import ClustersScreen
from workbench.ui.screens.compare import CompareScreen
from workbench.ui.screens.composer import ComposerScreen
from workbench.ui.screens.dashboard import DashboardScreen
from workbench.ui.screens.help import HelpScreen
from workbench.ui.screens.lessons import LessonsScreen

STYLES = Path(__file__).parent / "styles"


class WorkbenchApp(App):
    TITLE = "workbench"
    SUB_TITLE = "YCSB on Cassandra, HBase, MongoDB-protocol servers"
    CSS_PATH = sorted(STYLES.glob("*.tcss"))
    MODES = {
        "clusters": ClustersScreen,
        "composer": ComposerScreen,
        "dashboard": DashboardScreen,
        "compare": CompareScreen,
        "lessons": LessonsScreen,
    }
    DEFAULT_MODE = "composer"
    BINDINGS = [
        Binding("1", "switch_mode('clusters')", "Clusters"),
        Binding("2", "switch_mode('composer')", "Workload"),
        Binding("3", "switch_mode('dashboard')", "Run"),
        Binding("4", "switch_mode('compare')", "Compare"),
        Binding("5", "switch_mode('lessons')", "Lessons"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, session: Session | None = None, *, mode: str | None = None,
                 request: RunRequest | None = None,
                 task: Callable[[Session], None] | None = None, lesson: tuple | None = None) -> None:
        """lesson: (Lesson, student, overrides) to open on the Lessons screen."""
        super().__init__()
        # Worker processes are spawned while textual holds sys.stderr: start multiprocessing's
        # resource tracker now, while stderr is still a real file it can hand down.
        resource_tracker.ensure_running()
        self.session = session or Session()
        self.first_lesson = lesson  # the Lessons screen opens it when it first mounts
        first = "lessons" if lesson else "dashboard" if request or task else self.DEFAULT_MODE
        self._first_mode = mode or first
        self._first_request, self._first_task = request, task

    def on_mount(self) -> None:
        self.switch_mode(self._first_mode)
        if self._first_request is not None:
            self.start_run(self._first_request)
        if self._first_task is not None:  # the demo: a script of cluster starts and runs
            self.session.start_task(self._first_task, on_done=self._first_task_done)

    def _first_task_done(self) -> None:
        # On the session's thread. A demo that ran to its end lands on the comparison of its
        # runs (the Compare screen selects both databases' runs of the last workload).
        session = self.session
        if session.error or session.stopping or not session.finished:
            return
        try:
            self.call_from_thread(self.switch_mode, "compare")
        except RuntimeError:  # the app has closed meanwhile
            pass

    def start_run(self, request: RunRequest) -> bool:
        """Start a request's phases and show the Run screen; False (and the error shown) when
        the request is bad input."""
        try:
            self.session.start(request, on_finished=self._phase_finished)
        except WorkbenchError as exc:
            self.show_error(exc)
            return False
        self.switch_mode("dashboard")
        return True

    def _phase_finished(self, done, error: str | None) -> None:
        # Called on the session's thread.
        if error:
            self.call_from_thread(self.show_error, error)

    def show_error(self, error: Exception | str) -> None:
        """The command line's one-line message, in the app."""
        self.notify(f"workbench: error: {error}", severity="error", timeout=15)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        self.session.stop()
        self.session.wait(15)
        self.exit()  # launch.py then runs the session's cleanups (a lesson's clusters come down)
