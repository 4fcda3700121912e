"""What this machine lets the tests do, found by trying it where trying changes nothing.

Tests skip with the reason when a capability is missing. Being root is not the question: root
in an unprivileged container may not mount or add network links, and a non-root user may hold
the capabilities."""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile

CAP_NET_ADMIN = 12


def _effective_capabilities() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


@functools.cache
def private_mounts() -> bool:
    """Can we mount a tmpfs inside a mount namespace of our own (unshare(1))? The namespace
    and its mount vanish with the probe."""
    if shutil.which("unshare") is None:
        return False
    with tempfile.TemporaryDirectory(prefix="workbench-probe-") as where:
        done = subprocess.run(["unshare", "--mount", "--propagation", "private", "mount", "-t", "tmpfs",
                               "-o", "size=64k", "tmpfs", where], capture_output=True, timeout=30)
    return done.returncode == 0


@functools.cache
def network_admin() -> bool:
    """May we add and delete bridges and iptables rules in this machine's network namespace?
    CAP_NET_ADMIN held, and a bridge can be made in a network namespace of the probe's own."""
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        return False
    if not _effective_capabilities() >> CAP_NET_ADMIN & 1:
        return False
    done = subprocess.run(["unshare", "--net", "ip", "link", "add", "wbprobe0", "type", "bridge"],
                          capture_output=True, timeout=30)
    return done.returncode == 0
