"""The Docker engine: finding it (docker-py only), and a private engine for tests and CI.

    client = engine.connect()          # DOCKER_HOST, else the default socket; one clear line if not

A `PrivateEngine` runs Debian's dockerd on its own socket, exec root and pid file, with its data
root (images) under the workbench cache so a second test run finds its images built. It starts
with `--bridge=none --iptables=false --ip-forward=false`: host networking needs none of them, a
user-defined bridge network still works (containers reach each other on it, and docker-proxy
publishes ports on 127.0.0.1), and the host's firewall is left alone. `stop()` also restores
what it recorded before the start (bridges, iptables rules, ip_forward), in case an engine
started some other way changed them.

    python -m workbench.clusters.engine start DIR   # prints DOCKER_HOST=unix://DIR/docker.sock
    python -m workbench.clusters.engine stop DIR
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from workbench.clusters import paths
from workbench.clusters import processes as procs
from workbench.errors import ClusterError

LABEL = "org.workbench.cluster"  # every container, network and volume the workbench creates


def connect(base_url: str | None = None, timeout: float = 60.0) -> Any:
    """A docker-py client for the engine at base_url, DOCKER_HOST or the default socket."""
    import docker
    from docker.errors import DockerException

    where = base_url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        client = (docker.DockerClient(base_url=base_url, timeout=int(timeout)) if base_url
                  else docker.from_env(timeout=int(timeout)))
        client.ping()
        return client
    except (DockerException, OSError) as exc:
        raise ClusterError(f"no Docker engine answers at {where}: {_reason(exc)}",
                           hint=_hint(exc)) from None


def _reason(exc: BaseException) -> str:
    text = str(exc)
    for needle, says in (("Permission denied", "permission denied"),
                         ("No such file", "no such socket"),
                         ("Connection refused", "connection refused"),
                         ("timed out", "timed out")):
        if needle in text:
            return says
    return text.splitlines()[0][:160] if text else type(exc).__name__


def _hint(exc: BaseException) -> str:
    if "Permission denied" in str(exc):
        return ("add your user to the docker group (or run as root), or set DOCKER_HOST to an engine "
                "you may use")
    return ("start dockerd (Debian: apt-get install docker.io), or set DOCKER_HOST=unix:///path/docker.sock; "
            "`python -m workbench.clusters.engine start DIR` runs a private one")


# -- the host's network state ----------------------------------------------------------------
def network_state() -> dict[str, Any]:
    """Bridges, iptables rules (per table) and ip_forward: what a dockerd may change."""
    bridges = subprocess.run(["ip", "-o", "link", "show", "type", "bridge"], capture_output=True,
                             text=True, check=False).stdout
    state: dict[str, Any] = {
        "bridges": sorted(line.split(":")[1].strip().split("@")[0] for line in bridges.splitlines()
                          if line.count(":") >= 2),
        "ip_forward": Path("/proc/sys/net/ipv4/ip_forward").read_text().strip(),
        "iptables": "",
    }
    if shutil.which("iptables-save"):
        saved = subprocess.run(["iptables-save"], capture_output=True, text=True, check=False)
        if saved.returncode == 0:
            state["iptables"] = saved.stdout
    return state


def _rules(dump: str) -> list[str]:
    return [line for line in dump.splitlines() if line and not line.startswith("#")]


def restore_network(before: dict[str, Any]) -> list[str]:
    """Undo changes made since `before`; returns what was undone."""
    now, undone = network_state(), []
    for bridge in now["bridges"]:
        if bridge not in before["bridges"]:
            subprocess.run(["ip", "link", "delete", bridge], capture_output=True, check=False)
            undone.append(f"removed bridge {bridge}")
    if before["iptables"] and _rules(now["iptables"]) != _rules(before["iptables"]):
        subprocess.run(["iptables-restore"], input=before["iptables"], text=True, capture_output=True,
                       check=False)
        undone.append("restored iptables rules")
    if now["ip_forward"] != before["ip_forward"]:
        Path("/proc/sys/net/ipv4/ip_forward").write_text(before["ip_forward"])
        undone.append(f"ip_forward back to {before['ip_forward']}")
    return undone


def unmount_under(folder: Path) -> list[str]:
    """Unmount what a stopped dockerd left mounted under folder (its exec root keeps the host's
    network namespace bind-mounted at netns/default); deepest first."""
    prefix = str(Path(folder).resolve()) + "/"
    try:
        points = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    except OSError:
        return []
    done = []
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        if subprocess.run(["umount", point], capture_output=True, check=False).returncode == 0:
            done.append(point)
    return done


def data_root_user(root: Path) -> int | None:
    """The pid of a running dockerd started with --data-root ROOT, if any (two cannot share one)."""
    wanted = str(Path(root)).encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"dockerd") and b"--data-root" in argv:
            index = argv.index(b"--data-root")
            if index + 1 < len(argv) and argv[index + 1] == wanted:
                return int(pid)
    return None


class PrivateEngine:
    """dockerd on DIR/docker.sock; see the module docstring."""

    def __init__(self, run_dir: Path, data_root: Path | None = None) -> None:
        self.dir = Path(run_dir)
        self.data_root = Path(data_root) if data_root else paths.cache_dir() / "docker"
        self.socket = self.dir / "docker.sock"
        self.pidfile = self.dir / "dockerd.pid"
        self.log = self.dir / "dockerd.log"
        self.saved = self.dir / "network-before.json"

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def start(self, timeout: float = 60.0) -> str:
        binary = shutil.which("dockerd")
        holder = data_root_user(self.data_root)
        if holder is not None:
            raise ClusterError(f"dockerd pid {holder} already uses the data root {self.data_root}",
                               hint="use that engine (DOCKER_HOST), or give this one another data root")
        if binary is None:
            raise ClusterError("dockerd is not installed",
                               hint="apt-get install --no-install-recommends docker.io")
        if os.geteuid() != 0:
            raise ClusterError("a private dockerd needs root", hint="run as root, or use an engine "
                               "you may use through DOCKER_HOST")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.data_root.mkdir(parents=True, exist_ok=True)
        self.saved.write_text(json.dumps(network_state()))
        argv = [binary, "--host", self.url, "--data-root", str(self.data_root),
                "--exec-root", str(self.dir / "exec"), "--pidfile", str(self.pidfile),
                "--storage-driver", "overlay2", "--bridge", "none", "--iptables=false",
                "--ip-forward=false", "--ip-masq=false", "--userland-proxy=true"]
        with self.log.open("ab") as log:
            child = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        (self.dir / "dockerd.start").write_text(f"{child.pid} {procs.start_time(child.pid) or 0}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if child.poll() is not None:
                self.stop()
                raise ClusterError(f"dockerd exited at start (status {child.returncode}); see {self.log}")
            if self.socket.exists():
                try:
                    connect(self.url, timeout=5).close()
                    return self.url
                except ClusterError:
                    pass
            time.sleep(0.1)
        self.stop()
        raise ClusterError(f"dockerd did not answer within {timeout:.0f} s; see {self.log}")

    def pid(self) -> tuple[int, int] | None:
        try:
            pid, started = map(int, (self.dir / "dockerd.start").read_text().split())
        except (OSError, ValueError):
            return None
        return (pid, started) if procs.is_ours(pid, started) else None

    def stop(self, timeout: float = 30.0) -> list[str]:
        """Stop dockerd (SIGTERM, SIGKILL after timeout) and restore the host's network state."""
        found = self.pid()
        if found is not None:
            procs.stop(found[0], found[1], timeout)  # SIGTERM: dockerd stops its containers
            try:
                os.waitpid(found[0], os.WNOHANG)
            except ChildProcessError:
                pass
        undone = [f"unmounted {point}" for point in unmount_under(self.dir)]
        try:
            before = json.loads(self.saved.read_text())
        except (OSError, ValueError):
            return undone
        undone += restore_network(before)
        self.saved.unlink(missing_ok=True)
        return undone


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m workbench.clusters.engine start|stop DIR", file=sys.stderr)
        return 2
    engine = PrivateEngine(Path(argv[1]))
    try:
        if argv[0] == "start":
            print(f"DOCKER_HOST={engine.start()}")
        else:
            for line in engine.stop():
                print(line)
    except ClusterError as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
