"""The real `workbench` command in a real terminal: tmux on a private socket, driven with
send-keys and read with capture-pane, for the end-to-end tests of the app.

    with Terminal(["run", "-db", "memory", "--tui"], env) as term:
        term.wait_for("▶ running")
        term.keys("+")
        screen = term.wait_for("target")
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class Terminal:
    def __init__(self, args: list[str], env: dict[str, str], size: tuple[int, int] = (100, 32),
                 stdout: Path | None = None) -> None:
        self.socket = f"workbench-test-{os.getpid()}-{time.monotonic_ns()}"
        self.args, self.env, self.size, self.stdout = args, env, size, stdout
        self.pid: int | None = None
        self.children: set[int] = set()

    def _tmux(self, *args: str, check: bool = False) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              check=check, timeout=30)

    def __enter__(self) -> Terminal:
        import tempfile

        self._status = Path(tempfile.mkdtemp(prefix="workbench-tmux-")) / "status"
        command = " ".join([shlex.quote(sys.executable), "-m", "workbench", *map(shlex.quote, self.args)])
        if self.stdout is not None:
            command += f" > {shlex.quote(str(self.stdout))}"
        # The exit status goes to a file: tmux forgets a pane (and its status) once it closes.
        command += f"; echo $? > {shlex.quote(str(self._status))}"
        envs = [f"{k}={v}" for k, v in self.env.items()
                if k.startswith(("WORKBENCH", "PYTHON")) or k in ("PATH", "HOME", "NO_COLOR")]
        self._tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", str(self.size[0]),
                   "-y", str(self.size[1]), "-c", str(ROOT), "env", "TERM=xterm-256color", *envs,
                   "sh", "-c", command, check=True)
        self.pid = int(self._tmux("display-message", "-p", "-t", "app", "#{pane_pid}").stdout)
        return self

    def __exit__(self, *exc) -> None:
        self._tmux("kill-server")

    def screen(self) -> str:
        self._note_children()
        return self._tmux("capture-pane", "-p", "-t", "app").stdout

    def keys(self, *keys: str) -> None:
        """Press keys, in one write to the terminal (as a fast typist or a key repeat would)."""
        self._tmux("send-keys", "-t", "app", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "app", "-l", text)

    def wait_for(self, *texts: str, timeout: float = 120.0) -> str:
        """The screen once it shows every one of `texts`; fails with the last screen."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(t in screen for t in texts):
                return screen
            if self.exited():
                break
            time.sleep(0.1)
        raise AssertionError(f"{texts} not on the screen (exited: {self.exited()}):\n{screen}")

    def exited(self) -> bool:
        return self._status.exists() and self._status.read_text().endswith("\n")

    def exit_status(self, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while not self.exited():
            if time.monotonic() > deadline:
                raise AssertionError(f"the app did not exit:\n{self.screen()}")
            time.sleep(0.1)
        return int(self._status.read_text())

    def _note_children(self) -> None:
        """Remember every process under the terminal's shell (the app and the worker processes
        it started), to check that they all end."""
        if self.pid is None:
            return
        parents = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                parents[int(pid)] = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
        family = {self.pid}
        grew = True
        while grew:
            found = {pid for pid, parent in parents.items() if parent in family} - family
            family |= found
            grew = bool(found)
        self.children |= family - {self.pid}

    def worker_processes(self) -> list[int]:
        """The app's spawned processes running now (multiprocessing's spawn_main)."""
        found = []
        for pid in self.children:
            try:
                if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                continue
        return found

    def alive_children(self) -> list[int]:
        alive = []
        for pid in self.children:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                alive.append(pid)
        return alive
