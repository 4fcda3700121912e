"""The Docker engine: finding it (docker-py only), and a private engine for tests and CI.

    client = engine.connect()          # DOCKER_HOST, else the default socket; one clear line if not

A `PrivateEngine` runs Debian's dockerd on its own socket, exec root and pid file, with its data
root (images) under the workbench cache so a second test run finds its images built. It starts
with `--bridge=none --iptables=false --ip-forward=false`: host networking needs none of them, a
user-defined bridge network still works (containers reach each other on it, and docker-proxy
publishes ports on 127.0.0.1), and the host's firewall is left alone. `stop()` also undoes what
this engine did to the host's network, and only that: the bridges of its networks, the iptables
rules and DOCKER* chains it added, and ip_forward if it changed it at its start (restore_network).
Bridges, rules and settings that other software made meanwhile stay.

    python -m workbench.clusters.engine start DIR   # prints DOCKER_HOST=unix://DIR/docker.sock
    python -m workbench.clusters.engine stop DIR
"""

from __future__ import annotations

import json
import os
import shlex
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
IP_FORWARD = Path("/proc/sys/net/ipv4/ip_forward")


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
        "ip_forward": IP_FORWARD.read_text().strip(),
        "iptables": "",
    }
    if shutil.which("iptables-save"):
        saved = subprocess.run(["iptables-save"], capture_output=True, text=True, check=False)
        if saved.returncode == 0:
            state["iptables"] = saved.stdout
    return state


def parse_iptables(dump: str) -> dict[str, dict[str, list[str]]]:
    """An `iptables-save` dump as table -> {"chains": [name, ...], "rules": ["-A CHAIN ...", ...]}."""
    tables: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for line in dump.splitlines():
        if line.startswith("*"):
            current = tables.setdefault(line[1:].strip(), {"chains": [], "rules": []})
        elif current is None:
            continue
        elif line.startswith(":"):
            current["chains"].append(line[1:].split()[0])
        elif line.startswith("-A "):
            current["rules"].append(line)
    return tables


def _dockers(rule: str, bridges: set[str]) -> bool:
    """Is this rule one a Docker engine adds: in or to one of its DOCKER* chains, or about one
    of its bridges?"""
    words = shlex.split(rule)
    chain = words[1] if len(words) > 1 else ""
    jumps = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-j", "-g", "--jump", "--goto")]
    interfaces = {words[i + 1] for i, w in enumerate(words[:-1])
                  if w in ("-i", "-o", "--in-interface", "--out-interface")}
    return (chain.startswith("DOCKER") or any(j.startswith("DOCKER") for j in jumps)
            or bool(interfaces & bridges))


def engine_changes(before: str, now: str, bridges: set[str]) -> tuple[list[tuple[str, str]],
                                                                        list[tuple[str, str]]]:
    """What a Docker engine added to iptables between two dumps: (table, rule) pairs to delete,
    in reverse order, and (table, chain) pairs to flush and remove. A rule or chain that someone
    else added meanwhile, or that was there before, is not in either list."""
    old, new = parse_iptables(before), parse_iptables(now)
    rules, chains = [], []
    for table, got in new.items():
        had = old.get(table, {"chains": [], "rules": []})
        known = set(had["rules"])
        rules += [(table, r) for r in got["rules"] if r not in known and _dockers(r, bridges)]
        chains += [(table, c) for c in got["chains"] if c not in had["chains"] and c.startswith("DOCKER")]
    return rules[::-1], chains


def restore_network(before: dict[str, Any], bridges: set[str] | frozenset[str] = frozenset(),
                    forward_set: str | None = None) -> list[str]:
    """Undo what a Docker engine did since `before`, and nothing else: remove the bridges of its
    networks (`bridges`) that were not there before, delete the iptables rules it added (in or
    to its DOCKER* chains, or about its bridges) and its new chains, and put `ip_forward` back
    if the engine changed it (it read `forward_set` right after the engine started) and nobody
    changed it since. Returns what was undone."""
    now, undone = network_state(), []
    if before["iptables"] and now["iptables"]:
        rules, chains = engine_changes(before["iptables"], now["iptables"], set(bridges))
        for table, rule in rules:
            words = shlex.split(rule)
            subprocess.run(["iptables", "-t", table, "-D", *words[1:]], capture_output=True, check=False)
            undone.append(f"deleted iptables rule {table} {rule}")
        for table, chain in chains:
            subprocess.run(["iptables", "-t", table, "-F", chain], capture_output=True, check=False)
            subprocess.run(["iptables", "-t", table, "-X", chain], capture_output=True, check=False)
            undone.append(f"removed iptables chain {table} {chain}")
    for bridge in now["bridges"]:
        if bridge in bridges and bridge not in before["bridges"]:
            subprocess.run(["ip", "link", "delete", bridge], capture_output=True, check=False)
            undone.append(f"removed bridge {bridge}")
    engine_set_it = forward_set is not None and forward_set != before["ip_forward"]
    if engine_set_it and now["ip_forward"] == forward_set:
        IP_FORWARD.write_text(before["ip_forward"])
        undone.append(f"ip_forward back to {before['ip_forward']}")
    return undone


def engine_bridges(url: str) -> set[str]:
    """The Linux bridges of the engine's bridge networks (docker0, br-<id>, or a chosen name)."""
    try:
        client = connect(url, timeout=10)
    except ClusterError:
        return set()
    try:
        found = set()
        for net in client.networks.list():
            attrs = net.attrs
            if attrs.get("Driver") != "bridge":
                continue
            name = (attrs.get("Options") or {}).get("com.docker.network.bridge.name")
            found.add(name or ("docker0" if attrs.get("Name") == "bridge" else f"br-{attrs['Id'][:12]}"))
        return found
    except Exception:  # noqa: BLE001 - an engine going away: nothing more to learn from it
        return set()
    finally:
        client.close()


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
                    saved = json.loads(self.saved.read_text())  # what the engine set at its start
                    saved["ip_forward_started"] = network_state()["ip_forward"]
                    self.saved.write_text(json.dumps(saved))
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
        # Asked before it stops: the bridges of its networks (a dead engine leaves them be).
        bridges = engine_bridges(self.url) if found is not None else set()
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
        undone += restore_network(before, bridges, before.get("ip_forward_started"))
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
