"""One blocking CQL connection to one node, for a few small queries a second with no thread or
event loop of its own (the servers' figures, databases/cassandra/figures.py, ask each node three
virtual tables once a second: cassandra-driver's session cost 5-8 ms of CPU a second for it,
half of it its event loop's thread, issue 54 item 7).

    conn = BlockingCql("127.0.0.1", 9042, username=None, password=None, ssl_context=None)
    conn.send(["SELECT ...", "SELECT ..."])   # one write, stream ids 1..n
    rows = conn.receive(2, deadline)         # [rows of the first, rows of the second]

Protocol v4: STARTUP, PasswordAuthenticator's SASL PLAIN login, TLS through Python's ssl
module, QUERY at ONE without values; rows as cql.py decodes them (timestamp and timeuuid cells
as bytes: `timestamp` and `timeuuid` decode them). An error answer raises QueryFailed; a broken
or late connection raises OSError, and the connection is closed."""

from __future__ import annotations

import socket
import ssl
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from workbench.databases.cassandra.protocol.cql import (
    _I32,
    _U16,
    AUTH_RESPONSE,
    AUTH_SUCCESS,
    AUTHENTICATE,
    CONSISTENCY,
    ERROR,
    ERROR_KINDS,
    HEADER,
    MAX_FRAME,
    QUERY,
    READY,
    RESULT,
    STARTUP,
    QueryFailed,
    decode_result,
    long_string,
    read_string,
    string_map,
)

VERSION = 0x04


def timestamp(cell: Any) -> datetime:
    """A timestamp cell (cql.py leaves it as its 8 bytes: ms since the epoch) in UTC."""
    return datetime.fromtimestamp(int.from_bytes(cell, "big", signed=True) / 1000, tz=UTC)


def timeuuid(cell: Any) -> uuid.UUID:
    """A uuid or timeuuid cell (its 16 bytes)."""
    return uuid.UUID(bytes=bytes(cell))


class BlockingCql:
    def __init__(self, address: str, port: int, username: str | None = None,
                 password: str | None = None, ssl_context: ssl.SSLContext | None = None,
                 timeout: float = 2.0) -> None:
        self.where = f"{address}:{port}"
        sock = socket.create_connection((address, port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = ssl_context.wrap_socket(sock) if ssl_context is not None else sock
        self._buf = b""
        try:
            self._startup(username, password, time.monotonic() + timeout)
        except BaseException:
            self.close()
            raise

    def _startup(self, username: str | None, password: str | None, deadline: float) -> None:
        self._write([(STARTUP, string_map({"CQL_VERSION": "3.0.0", "DRIVER_NAME": "workbench"}))])
        opcode, body = self._frame(deadline)[1:]
        if opcode == AUTHENTICATE:
            if not username:
                raise QueryFailed("AuthenticationFailed", f"{self.where} asks for a login")
            token = b"\x00" + username.encode() + b"\x00" + (password or "").encode()
            self._write([(AUTH_RESPONSE, _I32.pack(len(token)) + token)])
            opcode, body = self._frame(deadline)[1:]
            if opcode == ERROR:
                raise _error(body)
            if opcode != AUTH_SUCCESS:
                raise OSError(f"{self.where} answered the login with opcode {opcode}")
        elif opcode == ERROR:
            raise _error(body)
        elif opcode != READY:
            raise OSError(f"{self.where} answered STARTUP with opcode {opcode}")

    def send(self, statements: list[str]) -> None:
        """Each statement as a QUERY at ONE, stream ids 1, 2, ... in one write."""
        one = _U16.pack(CONSISTENCY["ONE"]) + b"\x00"
        self._write([(QUERY, long_string(cql) + one) for cql in statements])

    def receive(self, count: int, deadline: float) -> list[list[dict[str, Any]]]:
        """The rows of the `count` statements sent last, in their order."""
        answers: dict[int, list[dict[str, Any]] | QueryFailed] = {}
        while len(answers) < count:
            stream, opcode, body = self._frame(deadline)
            if opcode == RESULT:
                answers[stream] = decode_result(body, 0, None) or []
            elif opcode == ERROR:
                answers[stream] = _error(body)
        out = []
        for stream in range(1, count + 1):
            answer = answers.get(stream)
            if isinstance(answer, QueryFailed):
                raise answer
            out.append(answer or [])
        return out

    def _write(self, messages: list[tuple[int, bytes]]) -> None:
        self._sock.sendall(b"".join(HEADER.pack(VERSION, 0, stream, opcode, len(body)) + body
                                    for stream, (opcode, body) in enumerate(messages, 1)))

    def _frame(self, deadline: float) -> tuple[int, int, bytes]:
        while True:
            if len(self._buf) >= HEADER.size:
                version, _, stream, opcode, length = HEADER.unpack_from(self._buf)
                if version & 0x7F != VERSION or not 0 <= length <= MAX_FRAME:
                    self.close()
                    raise OSError(f"{self.where} sent a frame that is not CQL v4")
                end = HEADER.size + length
                if len(self._buf) >= end:
                    body, self._buf = self._buf[HEADER.size:end], self._buf[end:]
                    return stream, opcode, body
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise TimeoutError(f"{self.where} did not answer in time")
            self._sock.settimeout(left)
            try:
                data = self._sock.recv(65536)
            except OSError:
                self.close()
                raise
            if not data:
                self.close()
                raise ConnectionError(f"{self.where} closed the connection")
            self._buf += data

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass


def _error(body: bytes) -> QueryFailed:
    code = _I32.unpack_from(body, 0)[0]
    try:
        message = read_string(body, 4)[0]
    except (ValueError, UnicodeDecodeError):
        message = ""
    return QueryFailed(ERROR_KINDS.get(code, f"error 0x{code:04x}"), message)
