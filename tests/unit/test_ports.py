"""Who holds a port: found even while the holder opens and closes other files."""

import os
import socket

from workbench.clusters import ports


def test_holder_is_found_when_one_of_its_fds_closes_during_the_scan(monkeypatch):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    me = str(os.getpid())
    real_readlink = os.readlink
    vanished = []

    def readlink(path):
        # The first fd of this process read during the scan is gone, as when a busy JVM closes a
        # file between the listing of /proc/PID/fd and the readlink.
        if path.startswith(f"/proc/{me}/fd/") and not vanished:
            vanished.append(path)
            raise FileNotFoundError(path)
        return real_readlink(path)

    monkeypatch.setattr(ports.os, "readlink", readlink)
    try:
        assert not ports.is_free("127.0.0.1", port)
        found = ports.holder("127.0.0.1", port)
    finally:
        server.close()
    assert vanished, "the scan never reached this process"
    assert found is not None and found.startswith(f"PID {me} ")


def test_a_free_port_has_no_holder():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert ports.holder("127.0.0.1", port) is None
