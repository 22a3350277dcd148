"""A lean HTTP/1.1 keep-alive client for the controller's plain (non-watch) API requests.

aiohttp's request machinery costs most of the controller's ~330 µs of CPU per API request
(docs/performance.md, "CPU per job"); the API server's answers to plain requests need little
of it: one request line, a few fixed headers, a body with ``Content-Length`` or ``chunked``.
This module sends such requests over asyncio ``Protocol`` connections kept alive in a pool.

Contract:

* :class:`ResponseParser` is pure: fed bytes, it parses one HTTP/1.1 response (status line,
  headers, then a body framed by ``Content-Length``, ``Transfer-Encoding: chunked``, or the
  end of the connection; interim 1xx answers are skipped; a HEAD answer and 204/304 have no
  body). Malformed input raises :class:`ProtocolError`. No content coding is decoded: the
  client sends no ``Accept-Encoding``.
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
  arrived is sent once more on a fresh connection when it surely was not processed twice by
  doing so, as client-go and urllib3 do: the method is idempotent (GET, HEAD, OPTIONS, PUT,
  DELETE), or the connection was already closing when the request was to be written (nothing
  was sent). Otherwise the failure is raised.
* :meth:`Http1Pool.close` closes every connection; requests after it fail.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ConnectionClosed", "Http1Pool", "ProtocolError", "Response", "ResponseParser"]

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
_MAX_HEAD = 64 * 1024  # status line and headers
_NO_BODY_STATUS = frozenset({204, 304})


class ProtocolError(OSError):
    """The server's answer is not HTTP/1.1 as this client reads it."""


class ConnectionClosed(ConnectionError):
    """The server closed the connection before the answer was complete."""


@dataclass(frozen=True, slots=True)
class Response:
    """A complete answer: status, headers (names lower-cased; a repeated one keeps its last
    value), body, and whether the connection may carry another request."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    keep_alive: bool


class ResponseParser:
    """Incremental parser of one response (see the module docstring)."""

    __slots__ = ("_buf", "_chunks", "_head_request", "_remaining", "_state", "headers",
                 "keep_alive", "status")

    def __init__(self, *, head_request: bool = False) -> None:
        self._head_request = head_request
        self._buf = bytearray()
        self._chunks: list[bytes] = []
        self._state = "head"  # head, length, chunk-size, chunk-data, chunk-crlf, trailer,
        #                       until-close, done
        self._remaining = 0
        self.status = 0
        self.headers: dict[str, str] = {}
        self.keep_alive = True

    @property
    def started(self) -> bool:
        """Whether any byte of the answer has arrived."""
        return bool(self._buf) or self._state != "head" or self.status != 0

    @property
    def done(self) -> bool:
        return self._state == "done"

    def response(self) -> Response:
        return Response(self.status, self.headers, b"".join(self._chunks), self.keep_alive)

    def feed(self, data: bytes) -> bool:
        """Take more bytes; True once the response is complete. Bytes past its end are an
        error (this client never pipelines)."""
        if self._state == "length" and not self._buf:  # the common case: body bytes
            return self._take_length(data)
        self._buf += data
        while self._state != "done":
            if not self._step():
                return False
        if self._buf:
            raise ProtocolError("bytes after the end of the response")
        return True

    def feed_eof(self) -> bool:
        """The connection ended: True when that completes the response (a body read until
        the end), else :class:`ConnectionClosed`."""
        if self._state == "until-close":
            self._chunks.append(bytes(self._buf))
            self._buf.clear()
            self._state = "done"
            return True
        if self._state == "done":
            return True
        raise ConnectionClosed("the server closed the connection before the answer was "
                               "complete" if self.started else
                               "the server closed the connection without an answer")

    def _take_length(self, data: bytes) -> bool:
        if len(data) < self._remaining:
            self._chunks.append(data)
            self._remaining -= len(data)
            return False
        if len(data) > self._remaining:
            raise ProtocolError("bytes after the end of the response")
        self._chunks.append(data)
        self._remaining = 0
        self._state = "done"
        return True

    def _step(self) -> bool:
        """Advance through the buffer; False when more bytes are needed."""
        state = self._state
        if state == "head":
            return self._parse_head()
        if state == "length":
            data = bytes(self._buf)
            self._buf.clear()
            return self._take_length(data) or bool(self._buf)
        if state == "until-close":
            self._chunks.append(bytes(self._buf))
            self._buf.clear()
            return False
        if state == "chunk-data":
            take = min(self._remaining, len(self._buf))
            if take:
                self._chunks.append(bytes(self._buf[:take]))
                del self._buf[:take]
                self._remaining -= take
            if self._remaining:
                return False
            self._state = "chunk-crlf"
            return True
        line = self._line()
        if line is None:
            return False
        if state == "chunk-crlf":
            if line:
                raise ProtocolError("chunk not followed by CRLF")
            self._state = "chunk-size"
        elif state == "chunk-size":
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise ProtocolError(f"bad chunk size {line[:40]!r}") from None
            if size < 0:
                raise ProtocolError("negative chunk size")
            self._remaining = size
            self._state = "chunk-data" if size else "trailer"
        elif state == "trailer" and not line:
            self._state = "done"
        return True

    def _line(self) -> bytes | None:
        end = self._buf.find(b"\r\n")
        if end < 0:
            if len(self._buf) > _MAX_HEAD:
                raise ProtocolError("line too long")
            return None
        line = bytes(self._buf[:end])
        del self._buf[:end + 2]
        return line

    def _parse_head(self) -> bool:
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buf) > _MAX_HEAD:
                raise ProtocolError("response head too long")
            return False
        lines = bytes(self._buf[:end]).decode("latin-1").split("\r\n")
        del self._buf[:end + 4]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError(f"bad status line {lines[0][:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise ProtocolError(f"bad header line {line[:80]!r}")
            headers[name.lower()] = value.strip()
        if 100 <= status < 200:  # interim answer: the real one follows
            return True
        self.status, self.headers = status, headers
        connection = headers.get("connection", "").lower()
        self.keep_alive = ("close" not in connection if parts[0] == "HTTP/1.1"
                           else "keep-alive" in connection)
        self._state = self._body_state(status, headers)
        if self._state == "length" and self._remaining == 0:
            self._state = "done"
        return True

    def _body_state(self, status: int, headers: Mapping[str, str]) -> str:
        if self._head_request or status in _NO_BODY_STATUS:
            return "done"
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.lower() != "chunked":
                raise ProtocolError(f"unsupported transfer coding {coding!r}")
            return "chunk-size"
        length = headers.get("content-length")
        if length is None:
            self.keep_alive = False
            return "until-close"
        if not length.isdigit():
            raise ProtocolError(f"bad Content-Length {length!r}")
        self._remaining = int(length)
        return "length"


class _Connection(asyncio.Protocol):
    """One keep-alive connection: carries one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reused = False
        self.idle_since = 0.0
        self._parser: ResponseParser | None = None
        self._answer: asyncio.Future[Response] | None = None
        self._error: BaseException | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        parser, answer = self._parser, self._answer
        if parser is None or answer is None or answer.done():
            self._fail(ProtocolError("bytes from the server while no request was open"))
            return
        try:
            complete = parser.feed(data)
        except ProtocolError as exc:
            self._fail(exc)
            return
        if complete:
            self._parser = None
            answer.set_result(parser.response())

    def eof_received(self) -> bool | None:
        parser, answer = self._parser, self._answer
        if parser is not None and answer is not None and not answer.done():
            try:
                if parser.feed_eof():
                    self._parser = None
                    answer.set_result(parser.response())
            except ConnectionClosed as exc:
                self._error = exc
        self._fail(self._error or ConnectionClosed("the server closed the connection"))
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(self._error or (ConnectionClosed(f"connection lost: {exc}") if exc
                                   else ConnectionClosed("the server closed the connection")))

    def _fail(self, exc: BaseException) -> None:
        self.closed = True
        if self._error is None:
            self._error = exc
        answer = self._answer
        if answer is not None and not answer.done():
            answer.set_exception(self._error)
        if self.transport is not None:
            self.transport.close()

    @property
    def answer_started(self) -> bool:
        return self._parser is not None and self._parser.started

    def send(self, data: bytes, *, head_request: bool) -> asyncio.Future[Response]:
        """Write one request; the future of its answer. A connection already closed (or
        closing) raises :class:`ConnectionClosed` before anything is written."""
        if self.closed or self.transport is None or self.transport.is_closing():
            raise ConnectionClosed("the connection was closed before the request was sent")
        self._parser = ResponseParser(head_request=head_request)
        self._answer = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return self._answer

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


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
        self._idle: collections.deque[_Connection] = collections.deque()
        self._open = 0  # connections idle, in use, or being made
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._closed = False
        self._in_use: set[_Connection] = set()

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

    async def _exchange(self, conn: _Connection, data: bytes, head: bool) -> Response:
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

    async def _acquire(self, *, fresh: bool = False) -> _Connection:
        if self._closed:
            raise ConnectionClosed("the client is closed")
        loop = asyncio.get_running_loop()
        while True:
            if not fresh:
                conn = self._idle_connection(loop.time())
                if conn is not None:
                    self._in_use.add(conn)
                    return conn
            if self._open < self.max_connections:
                break
            if fresh and self._idle:  # make room for the fresh one
                self._close_idle(self._idle.popleft())
                continue
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif waiter.done() and not waiter.cancelled():
                    self._wake()  # pass the slot on
                raise
            if self._closed:
                raise ConnectionClosed("the client is closed")
        self._open += 1
        try:
            _, conn = await loop.create_connection(
                _Connection, self._host, self._port, ssl=self._ssl,
                server_hostname=self._server_hostname)
        except BaseException:
            self._open -= 1
            self._wake()
            raise
        if self._closed:
            conn.close()
            self._open -= 1
            raise ConnectionClosed("the client is closed")
        self._in_use.add(conn)
        return conn

    def _idle_connection(self, now: float) -> _Connection | None:
        while self._idle:
            conn = self._idle.pop()  # the most recently used one
            if conn.closed or now - conn.idle_since > self.idle_timeout:
                self._close_idle(conn)
                continue
            conn.reused = True
            return conn
        return None

    def _close_idle(self, conn: _Connection) -> None:
        conn.close()
        self._open -= 1
        self._wake()

    def _release(self, conn: _Connection, *, keep: bool) -> None:
        self._in_use.discard(conn)
        if keep and not conn.closed and not self._closed:
            now = asyncio.get_running_loop().time()
            conn.idle_since = now
            idle = self._idle
            while idle and (idle[0].closed or now - idle[0].idle_since > self.idle_timeout):
                self._close_idle(idle.popleft())  # the least recently used ones first
            idle.append(conn)
            self._wake()
            return
        conn.close()
        self._open -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def close(self) -> None:
        """Close every connection, idle or in use; wake and fail the waiting requests."""
        self._closed = True
        while self._idle:
            self._close_idle(self._idle.popleft())
        for conn in list(self._in_use):
            conn.close()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
        await asyncio.sleep(0)  # let the transports run their connection_lost
