"""A network namespace with only `lo` up, for the tests that start Ray.

Ray picks the machine's own non-loopback address for its processes even when it is told
`--node-ip-address=127.0.0.1`, and our network rule allows 127.0.0.0/8 only. Inside a network
namespace whose one interface is `lo`, Ray, the database it loads and the workbench can only
reach each other over loopback. The namespace is also a PID namespace (`unshare --pid --fork
--kill-child --mount-proc`): when it ends, the kernel ends every process in it, so no Ray
process, actor or JVM of a test outlives it, and `unshare` itself dies with the test process
(`setpriv --pdeathsig`). Commands run inside with `nsenter`.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

RAY = str(Path(sys.executable).with_name("ray"))
# PID 1 of the namespace: brings lo up, says so, then reaps every process that ends in it (the
# servers that `ray start` and `workbench cluster up` leave running are reparented to it).
INIT = """
import os, signal, subprocess
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
signal.signal(signal.SIGCHLD, lambda *_: None)
print("up", flush=True)
while True:
    try:
        os.wait()
    except ChildProcessError:
        signal.pause()
"""


def _child_of(pid: int) -> int | None:
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
            if children:
                return int(children[0])
    except OSError:
        return None
    return None


class Netns:
    """One namespace; `run`/`popen` execute argv inside it with `env` added to ours."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.pid = 0  # the namespace's first process (PID 1 inside), as seen from outside
        self.tmp = Path(tempfile.mkdtemp(prefix="wbray", dir="/tmp"))  # short: Ray's sockets live here
        self.env = {"RAY_TMPDIR": str(self.tmp), "RAY_USAGE_STATS_ENABLED": "0",
                    "WORKBENCH_STATE_DIR": str(self.tmp / "state")}

    def start(self) -> Netns:
        for tool in ("unshare", "nsenter", "setpriv", "ip", "ss"):
            if shutil.which(tool) is None:
                pytest.skip(f"a network namespace needs {tool} (util-linux, iproute2)")
        argv = ["setpriv", "--pdeathsig", "KILL", "unshare", "--net", "--pid", "--fork", "--kill-child",
                "--mount-proc", sys.executable, "-c", INIT]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if line != "up":
            err = self.proc.stderr.read().strip() if self.proc.poll() is not None else ""
            self.close()
            pytest.skip(f"cannot make a network namespace with only lo up here (needs root): "
                        f"{err or 'no answer'}")
        deadline = time.monotonic() + 30
        while not self.pid and time.monotonic() < deadline:
            self.pid = _child_of(self.proc.pid) or 0
            if not self.pid:
                time.sleep(0.01)
        assert self.pid, "the namespace's first process was not found"
        return self

    def argv(self, argv: list[str]) -> list[str]:
        return ["nsenter", "-t", str(self.pid), "--net", "--pid", "--mount", "--", *argv]

    def environ(self, env: dict[str, str] | None = None) -> dict[str, str]:
        return {**os.environ, **self.env, **(env or {})}

    def run(self, argv: list[str], env: dict[str, str] | None = None, timeout: float = 300,
            check: bool = False) -> subprocess.CompletedProcess:
        done = subprocess.run(self.argv(argv), capture_output=True, text=True, timeout=timeout,
                              env=self.environ(env))
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done

    def popen(self, argv: list[str], env: dict[str, str] | None = None, **kw) -> subprocess.Popen:
        return subprocess.Popen(self.argv(argv), env=self.environ(env), text=True, **kw)

    def ray_start(self, head_port: int = 6379, nodes: int = 2, cpus: int = 2) -> str:
        """`ray start --head` plus nodes-1 `ray start --address` on 127.0.0.1: the head's address."""
        common = ["--node-ip-address=127.0.0.1", f"--num-cpus={cpus}", "--object-store-memory=80000000",
                  "--disable-usage-stats"]
        self.run([RAY, "start", "--head", f"--port={head_port}", "--include-dashboard=false",
                  *common], check=True)
        address = f"127.0.0.1:{head_port}"
        for _ in range(nodes - 1):
            self.run([RAY, "start", f"--address={address}", *common], check=True)
        return address

    def sockets(self) -> list[tuple[str, str]]:
        """(local, peer) address of every TCP and UDP socket in the namespace."""
        out = self.run(["ss", "-tanuH"], check=True).stdout
        pairs = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 6:
                pairs.append((parts[4], parts[5]))
        return pairs

    def outside_loopback(self) -> list[tuple[str, str]]:
        """Sockets that listen on, or connect to, anything but 127.0.0.0/8."""
        return [(local, peer) for local, peer in self.sockets()
                if not (_loopback(local) and (peer.endswith(":*") or _loopback(peer)))]

    def processes(self) -> list[str]:
        """Command lines of the namespace's processes (but its PID 1 and this ps)."""
        out = self.run(["ps", "-eo", "pid=,args="], check=True).stdout
        lines = []
        for line in out.splitlines():
            pid, _, args = line.strip().partition(" ")
            if pid != "1" and not args.startswith("ps -eo"):
                lines.append(args)
        return lines

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)  # --kill-child: PID 1 inside, then all, go too
            self.proc.wait(30)
        if self.pid:
            deadline = time.monotonic() + 30
            while Path(f"/proc/{self.pid}").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        shutil.rmtree(self.tmp, ignore_errors=True)


def _loopback(address: str) -> bool:
    host = address.rpartition(":")[0].strip("[]")
    if host.startswith("::ffff:"):
        host = host.removeprefix("::ffff:")
    host = host.split("%")[0]
    try:
        return ipaddress.ip_address(host) in ipaddress.ip_network("127.0.0.0/8")
    except ValueError:
        return False
