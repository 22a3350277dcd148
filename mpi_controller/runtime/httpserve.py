"""A small HTTP/1.1 server for a few read-only endpoints (``/metrics``, ``/healthz``,
``/readyz``; :func:`~mpi_controller.runtime.metrics.serve_http`), on ``asyncio.start_server``.

Contract:

* :func:`serve` listens on ``host:port`` and answers every request from ``routes``: a path
  (the request target without its query) maps to a function returning a :class:`Reply`,
  called on the event loop for each request (it must not block).
* ``GET`` and ``HEAD`` only: ``HEAD`` gets the ``GET`` answer's status and headers, no body.
  Another method on a known path is ``405 Method Not Allowed`` with ``Allow: GET, HEAD``; an
  unknown path is ``404 Not Found``; a request line or header that is not HTTP/1.x, or a
  request head over :data:`MAX_HEAD` bytes, is ``400 Bad Request``; a route that raises is
  ``500 Internal Server Error`` (logged). Those bodies are one ``text/plain`` line.
* One request per connection: every answer carries ``Content-Length`` and
  ``Connection: close``, and the connection is closed after it (probes and scrapes are a
  request every few seconds; a connection each costs less than an idle one kept open). After
  the answer the server shuts its side down and discards what the client still sends (a
  request body, the rest of an oversized head) until the client closes, for at most
  :data:`LINGER` seconds. A client that sends no complete request head within
  :data:`HEAD_TIMEOUT` seconds is disconnected without an answer.
* :meth:`Server.close` stops listening, ends the connections being served, and returns once
  the socket is released (idempotent).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import structlog

from mpi_controller.runtime.httprequest import REASONS

__all__ = ["HEAD_TIMEOUT", "LINGER", "MAX_HEAD", "TEXT_PLAIN", "Reply", "Route", "Server", "answer",
           "encode", "serve"]

_log = structlog.get_logger(__name__)

MAX_HEAD = 8 * 1024
"""Bytes of request line and headers read at most."""
HEAD_TIMEOUT = 10.0
LINGER = 1.0
TEXT_PLAIN = "text/plain; charset=utf-8"


@dataclass(frozen=True)
class Reply:
    """An answer: status, body, content type, and headers beyond the framing ones."""

    status: int
    body: bytes
    content_type: str = TEXT_PLAIN
    headers: tuple[tuple[str, str], ...] = ()


Route = Callable[[], Reply]


def _error(status: int, *headers: tuple[str, str]) -> Reply:
    return Reply(status, f"{status}: {REASONS[status]}\n".encode(), headers=headers)


def _parse_head(head: bytes) -> tuple[str, str] | None:
    """The method and path of a request head (``None`` when it is not HTTP/1.x)."""
    request_line, *fields = head.split(b"\r\n")
    parts = request_line.split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1.") or not parts[0].isalpha():
        return None
    if any(f and b":" not in f for f in fields):
        return None
    try:
        method, target = parts[0].decode("ascii"), parts[1].decode("ascii")
    except UnicodeDecodeError:
        return None
    return method, target.split("?", 1)[0]


def answer(routes: Mapping[str, Route], head: bytes | None) -> tuple[Reply, bool]:
    """The reply to a request head (without its final blank line; ``None``: too long), and
    whether its body is sent (not for ``HEAD``)."""
    parsed = _parse_head(head) if head is not None else None
    if parsed is None:
        return _error(400), True
    method, path = parsed
    route = routes.get(path)
    if route is None:
        reply = _error(404)
    elif method not in ("GET", "HEAD"):
        reply = _error(405, ("Allow", "GET, HEAD"))
    else:
        try:
            reply = route()
        except Exception:
            _log.exception("HTTP endpoint failed", path=path)
            reply = _error(500)
    return reply, method != "HEAD"


def encode(reply: Reply, *, body: bool) -> bytes:
    """The bytes of ``reply`` on the wire (``body=False``: status line and headers only)."""
    lines = [f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Unknown')}",
             f"Content-Type: {reply.content_type}", f"Content-Length: {len(reply.body)}",
             "Connection: close", *(f"{name}: {value}" for name, value in reply.headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (reply.body if body else b"")


async def _read_head(reader: asyncio.StreamReader) -> bytes | None:
    """The request head, or ``None`` when it is over :data:`MAX_HEAD` bytes."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        return None
    return head[:-4]


class Server:
    """A listening server (see the module docstring); ``port`` is the bound port."""

    def __init__(self, routes: Mapping[str, Route]) -> None:
        self._routes = routes
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self._server: asyncio.Server | None = None
        self.port = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            async with asyncio.timeout(HEAD_TIMEOUT):
                head = await _read_head(reader)
            reply, body = answer(self._routes, head)
            writer.write(encode(reply, body=body))
            await writer.drain()
            writer.write_eof()
            async with asyncio.timeout(LINGER):  # what the client still sends, unread, would
                while await reader.read(4096):   # turn the close into a reset that can lose
                    pass                         # the answer on its way
        except (OSError, asyncio.IncompleteReadError):  # TimeoutError included
            pass
        finally:
            self._connections.pop(task, None)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        connections = list(self._connections.items())
        for _, writer in connections:  # its reads end; its writes fail
            writer.transport.abort()
        await asyncio.gather(*(task for task, _ in connections), return_exceptions=True)
        await server.wait_closed()


async def serve(host: str, port: int, routes: Mapping[str, Route]) -> Server:
    """Listen on ``host:port`` (``port`` 0: any free port) and serve ``routes``."""
    server = Server(routes)
    listening = await asyncio.start_server(server._serve, host, port, limit=MAX_HEAD,
                                           reuse_address=True)
    server._server = listening
    sockets = listening.sockets
    server.port = int(sockets[0].getsockname()[1]) if sockets else port
    return server
