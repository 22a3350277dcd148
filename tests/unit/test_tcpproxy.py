"""The round-robin TCP proxy of the webhook runs and the conversion benchmark
(``e2e/tcpproxy.py``) pipes connections whatever their file descriptor numbers: beyond
``select()``'s 1024 (``FD_SETSIZE``), where the ``select()`` version failed every connection
with ``ValueError: filedescriptor out of range in select()``, and with more than 1024
connections open through it at once."""

from __future__ import annotations

import os
import resource
import socket
import threading
from collections.abc import Iterator

import pytest

from e2e.tcpproxy import RoundRobinProxy

FD_SETSIZE = 1024


class EchoServer:
    """Answers every byte received with the same byte, one thread per connection."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=2048)
        self.port: int = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    server = EchoServer()
    yield server
    server.listener.close()


def roomy_fd_limit(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.skip(f"RLIMIT_NOFILE hard limit {hard} < {need}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def round_trip(port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(payload)
        got = b""
        while len(got) < len(payload):
            chunk = conn.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


def test_pipes_a_connection_whose_descriptors_are_above_fd_setsize(echo: EchoServer) -> None:
    roomy_fd_limit(4096)
    filler = [os.open(os.devnull, os.O_RDONLY) for _ in range(FD_SETSIZE + 16)]
    try:
        assert max(filler) > FD_SETSIZE
        with RoundRobinProxy([echo.port]) as proxy:
            assert round_trip(proxy.port, b"ping" * 1000) == b"ping" * 1000
            assert proxy.connections == [1]
    finally:
        for fd in filler:
            os.close(fd)


def test_holds_more_than_1024_connections_at_once(echo: EchoServer) -> None:
    count = FD_SETSIZE + 76
    roomy_fd_limit(count * 6 + 256)  # client, proxy's two ends, echo's end, the selector
    with RoundRobinProxy([echo.port, echo.port], max_age=float("inf")) as proxy:
        conns = [socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
                 for _ in range(count)]
        try:
            for i, conn in enumerate(conns):
                conn.sendall(b"%d\n" % i)
            answers = [conn.recv(64) for conn in conns]
        finally:
            for conn in conns:
                conn.close()
        assert answers == [b"%d\n" % i for i in range(count)]
        assert proxy.connections == [count // 2, count // 2]
