"""A lean HTTP/1.1 client for the controller's API requests: plain ones pooled, watches streamed.

aiohttp's request machinery costs most of the controller's ~330 µs of CPU per API request
(docs/performance.md, "CPU per job"); the API server's answers to plain requests need little
of it: one request line, a few fixed headers, a body with ``Content-Length`` or ``chunked``.
This module sends such requests over non-blocking sockets kept alive in a pool, with TLS in
the socket (:class:`ssl.SSLSocket`) rather than asyncio's pure-Python TLS layer.

Contract:

* Answers are read by :class:`~mpi_controller.runtime.httpparse.ResponseParser` (pure). No
  content coding is decoded: the client sends no ``Accept-Encoding``.
* :class:`Http1Pool` sends ``request(method, target, headers, body)`` to one origin
  (``http://`` or ``https://`` with the given ``SSLContext`` and SNI/verification name) and
  returns a :class:`Response` with the whole body read. It keeps at most ``max_connections``
  connections open (idle and in use together); a request beyond that waits for one, first come
  first served. An idle connection older than ``idle_timeout`` seconds is closed instead of
  reused (the server may close it sooner: one it closed is never reused). A connection goes
  back to the pool only after a complete answer that allows keep-alive.
* Failures are :class:`OSError`s (connection refused or lost, TLS errors;
  :class:`ConnectionClosed` when the server closed the connection before the answer was
  complete) or :class:`ProtocolError` (also an ``OSError``). The pool sets no deadline: the
  caller wraps the call in one (``asyncio.timeout``); a cancelled or timed-out request closes
  its connection, and ``CancelledError`` propagates unchanged.
* A request on a *reused* connection that the server closed before any byte of the answer
  arrived is sent once more on a fresh connection when sending it twice does no harm: the
  method is idempotent (urllib3's set: GET, HEAD, OPTIONS, PUT, DELETE; Go's net/http, under
  client-go, replays only GET, HEAD and OPTIONS), or the connection was already closing when
  the request was to be written (nothing was sent). Otherwise the failure is raised.
* :meth:`Http1Pool.stream` sends a request whose answer's body is read as it arrives (a
  watch): on a connection of its own, outside the cap, closed when the stream ends; reading
  pauses while more than 4 MiB of its body wait unread.
* :meth:`Http1Pool.close` closes every connection, streams' included; requests after it fail.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
from collections.abc import Mapping

from mpi_controller.runtime.httpparse import (
    ConnectionClosed,
    ProtocolError,
    Response,
    ResponseParser,
)
from mpi_controller.runtime.sockconn import BodyStream, Connection, open_connection

__all__ = ["BodyStream", "ConnectionClosed", "Http1Pool", "ProtocolError", "Response",
           "ResponseParser"]

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})


class _NotSent(Exception):
    """Internal: the request was not written (the pooled connection was already closed)."""


class Http1Pool:
    """Keep-alive connections to one origin (see the module docstring)."""

    def __init__(
        self,
        *,
        scheme: str,
        host: str,
        port: int,
        ssl_context: ssl.SSLContext | None,
        server_hostname: str | None = None,
        max_connections: int = 16,
        idle_timeout: float = 15.0,
    ) -> None:
        if scheme not in ("http", "https"):
            raise ValueError(f"unsupported scheme {scheme!r}")
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self._host, self._port = host, port
        self._ssl = ssl_context if scheme == "https" else None
        self._server_hostname = server_hostname if self._ssl is not None else None
        default_port = 443 if scheme == "https" else 80
        bracketed = f"[{host}]" if ":" in host else host
        self.host_header = bracketed if port == default_port else f"{bracketed}:{port}"
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self._idle: collections.deque[Connection] = collections.deque()
        self._open = 0  # connections idle, in use, or being made
        self._waiters: collections.deque[asyncio.Future[Connection | None]] = (
            collections.deque())
        self._closed = False
        self._in_use: set[Connection] = set()
        self._streams: set[Connection] = set()

    @property
    def open_connections(self) -> int:
        return self._open

    @property
    def idle_connections(self) -> int:
        """Idle connections still open (one the server closed no longer counts)."""
        return sum(not conn.closed for conn in self._idle)

    def encode(self, method: str, target: str, headers: Mapping[str, str],
               body: bytes | None) -> bytes:
        """The request's bytes: request line, ``Host``, the given headers, ``Content-Length``
        (for a body, and for POST/PUT/PATCH without one), then the body."""
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.host_header}"]
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body) if body else 0}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head + body if body else head

    async def request(self, method: str, target: str, headers: Mapping[str, str],
                      body: bytes | None = None) -> Response:
        """Send one request and read its whole answer (see the module docstring)."""
        data = self.encode(method, target, headers, body)
        head = method == "HEAD"
        conn = await self._acquire()
        try:
            return await self._exchange(conn, data, head)
        except (OSError, _NotSent) as exc:
            if not (isinstance(exc, _NotSent) or (
                    conn.reused and not conn.answer_started and method in IDEMPOTENT)):
                raise
        # The server closed a reused connection: once more on a fresh one.
        conn = await self._acquire(fresh=True)
        try:
            return await self._exchange(conn, data, head)
        except _NotSent:
            raise ConnectionClosed("the connection closed before the request was sent") from None

    async def stream(self, method: str, target: str, headers: Mapping[str, str], *,
                     connect_timeout: float | None = None,
                     read_timeout: float | None = None) -> BodyStream:
        """Send one request on a connection of its own (outside the pool's cap, never reused)
        and return its answer once its status and headers arrived, the body to be read as it
        comes (:class:`BodyStream`). Connecting (TLS included) waits at most
        ``connect_timeout`` seconds, the status and headers ``read_timeout``."""
        if self._closed:
            raise ConnectionClosed("the client is closed")
        async with asyncio.timeout(connect_timeout):
            conn = await open_connection(self._host, self._port, self._ssl,
                                         self._server_hostname)
        self._streams.add(conn)
        conn.on_close = self._streams.discard
        try:
            if self._closed:
                raise ConnectionClosed("the client is closed")
            head = conn.send(self.encode(method, target, headers, None), streaming=True)
            parser = conn._parser
            assert parser is not None
            async with asyncio.timeout(read_timeout):
                response = await head
        except BaseException:
            conn.close()
            raise
        return BodyStream(conn, parser, response, read_timeout)

    async def _exchange(self, conn: Connection, data: bytes, head: bool) -> Response:
        ok = False
        try:
            try:
                answer = conn.send(data, head_request=head)
            except ConnectionClosed:
                raise _NotSent() from None
            response = await answer
            ok = response.keep_alive
            return response
        finally:
            self._release(conn, keep=ok)

    async def _acquire(self, *, fresh: bool = False) -> Connection:
        """A connection for one request: an idle one (unless ``fresh``), a new one in a free
        slot, or, at the cap, the first one released after the requests already waiting
        (first come, first served: a released connection or slot is handed to the oldest
        waiter, never taken by a newcomer)."""
        if self._closed:
            raise ConnectionClosed("the client is closed")
        loop = asyncio.get_running_loop()
        if not self._waiters:
            conn = None if fresh else self._idle_connection(loop.time())
            if conn is not None:
                self._in_use.add(conn)
                return conn
            if fresh and self._open >= self.max_connections and self._idle:
                self._close_idle(self._idle.popleft())  # its slot makes room
            if self._open < self.max_connections:
                self._open += 1
                return await self._connect()
        waiter: asyncio.Future[Connection | None] = loop.create_future()
        self._waiters.append(waiter)
        try:
            granted = await waiter
        except BaseException:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
            elif waiter.done() and not waiter.cancelled():
                self._give_back(waiter.result())
            raise
        if granted is not None and not fresh:
            self._in_use.add(granted)
            return granted
        if granted is not None:
            granted.close()  # a fresh connection is wanted: take only the slot
        return await self._connect()

    async def _connect(self) -> Connection:
        """A new connection in a slot already counted in ``_open``."""
        try:
            if self._closed:
                raise ConnectionClosed("the client is closed")
            conn = await open_connection(self._host, self._port, self._ssl,
                                         self._server_hostname)
        except BaseException:
            self._free_slot()
            raise
        if self._closed:
            conn.close()
            self._free_slot()
            raise ConnectionClosed("the client is closed")
        self._in_use.add(conn)
        return conn

    def _idle_connection(self, now: float) -> Connection | None:
        while self._idle:
            conn = self._idle.pop()  # the most recently used one
            if conn.closed or now - conn.idle_since > self.idle_timeout:
                self._close_idle(conn)
                continue
            conn.reused = True
            return conn
        return None

    def _close_idle(self, conn: Connection) -> None:
        conn.close()
        self._free_slot()

    def _hand_over(self, granted: Connection | None) -> bool:
        """Give a connection (or, for None, a counted free slot) to the oldest waiter."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(granted)
                return True
        return False

    def _free_slot(self) -> None:
        """A connection is gone: its slot goes to the oldest waiter, if any."""
        if not self._hand_over(None):
            self._open -= 1

    def _give_back(self, granted: Connection | None) -> None:
        """What a waiter cancelled after its grant was given: pass it on."""
        if granted is None:
            self._free_slot()
        else:
            self._release(granted, keep=True)

    def _release(self, conn: Connection, *, keep: bool) -> None:
        self._in_use.discard(conn)
        if not keep or conn.closed or self._closed:
            conn.close()
            self._free_slot()
            return
        conn.reused = True
        if self._hand_over(conn):
            return
        now = asyncio.get_running_loop().time()
        conn.idle_since = now
        idle = self._idle
        while idle and (idle[0].closed or now - idle[0].idle_since > self.idle_timeout):
            self._close_idle(idle.popleft())  # the least recently used ones first
        idle.append(conn)

    async def close(self) -> None:
        """Close every connection, idle or in use; the waiting requests fail."""
        self._closed = True
        while self._idle:
            self._close_idle(self._idle.popleft())
        for conn in [*self._in_use, *self._streams]:
            conn.close()
        while self._waiters:  # each gets a slot, and fails in _connect
            if self._hand_over(None):
                self._open += 1
        await asyncio.sleep(0)  # let the requests whose connection closed see it
