"""Port checks before a server starts: is it free, and if not, who holds it.

A JVM that cannot bind its port dies with a stack trace deep in its log; checking first lets the
workbench say "127.0.0.1:9042 is in use by PID 1234 (java ...)" instead. The holder is found the
way `ss -p` does it: the socket's inode from /proc/net/tcp{,6}, then the process whose
/proc/PID/fd links to that inode.
"""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

from workbench.errors import ClusterError

LISTEN = "0A"  # TCP state code in /proc/net/tcp


def is_free(address: str, port: int) -> bool:
    """True if a server could bind address:port now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # Same option the JVM servers use, so a socket in TIME_WAIT does not count as busy.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError:
            return False
    return True


def _address(hex_ip: str) -> str:
    if len(hex_ip) == 8:  # IPv4, stored as a little-endian 32-bit number
        return socket.inet_ntoa(struct.pack("<I", int(hex_ip, 16)))
    return "::"  # IPv6: only "any address" listeners matter for a loopback IPv4 bind


def _listening_inodes(address: str, port: int) -> set[str]:
    """Inodes of sockets listening on port at `address` or at a wildcard address."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            hex_ip, hex_port = local.rsplit(":", 1)
            if state == LISTEN and int(hex_port, 16) == port:
                if _address(hex_ip) in (address, "0.0.0.0", "::"):
                    inodes.add(inode)
    return inodes


def holder(address: str, port: int) -> str | None:
    """'PID 123 (cmd line)' of the process listening on address:port, if it can be seen."""
    inodes = _listening_inodes(address, port)
    if not inodes:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if _holds(pid, wanted):
            try:
                raw = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                return f"PID {pid}"  # it exited just now
            cmd = " ".join(raw.replace("\0", " ").split())
            # Head and tail: a JVM's flags are long, its main class comes last.
            short = cmd if len(cmd) <= 140 else f"{cmd[:70]} ... {cmd[-60:]}"
            return f"PID {pid} ({short})"
    return "a process this user cannot inspect"


def _holds(pid: str, wanted: set[str]) -> bool:
    """Does process `pid` have one of the `wanted` sockets open?"""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False  # process gone or not ours to inspect
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                return True
        except OSError:
            # This fd was closed since the listing: a running server (a JVM opening and closing
            # files) does that all the time, and it says nothing about its other fds.
            continue
    return False


def require_free(address: str, port: int, what: str) -> None:
    """Raise ClusterError naming the port and its holder if address:port is taken."""
    if is_free(address, port):
        return
    held = holder(address, port) or "an unknown process"
    raise ClusterError(
        f"port {address}:{port} ({what}) is already in use by {held}",
        hint="stop that process, or `workbench cluster down` the cluster that uses it",
    )
