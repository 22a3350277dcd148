"""An HTTPS server for webhooks, as a :class:`~mpi_controller.runtime.manager.Runnable`.

Contract:

* :class:`HttpsServer` serves ``routes`` (a path to an async :data:`Handler` of a
  :class:`Request`, answering an :class:`Answer`) over TLS on ``host:port``, ``POST`` only:
  another method on a known path is ``405`` (``Allow: POST``), an unknown path ``404``, a
  request that is not HTTP/1.x as :mod:`~mpi_controller.runtime.httprequest` reads it ``400``
  (``413`` for a body over ``max_body`` bytes, ``501`` for a ``Transfer-Encoding``), a handler
  that raises ``500`` (logged); those bodies are one ``text/plain`` line. It is an
  every-replica runnable: the API server calls webhooks on whichever replica its Service
  picks, leader or not.
* Connections are kept alive (the API server sends every conversion and admission review of
  a webhook over the few it keeps open) and carry one request at a time; a client that sends
  ``Expect: 100-continue`` gets ``100 Continue`` before its body is read. TLS runs in the
  socket (:class:`ssl.SSLSocket`, as the client's :mod:`~mpi_controller.runtime.sockconn`),
  not in asyncio's pure-Python TLS layer, and the handler is called from the connection's own
  task. A connection is closed when its client closes it, after ``keepalive_timeout`` seconds
  idle (75, aiohttp's default, which served these webhooks before), when a TLS handshake,
  request head or body takes more than ``head_timeout`` seconds without progress, or after an
  answer that says ``Connection: close``.
* The serving certificate is pushed in with :meth:`HttpsServer.set_certificate` (PEM bytes),
  at start and whenever it is renewed; connections made afterwards get the new one (a running
  TLS session keeps the certificate it began with). The PEM files live in a private temporary
  directory (mode 0700) that is removed when the server stops.
* The server starts listening once a certificate is set; :meth:`ready` is true while it
  listens, so readiness (and with it the Service's endpoints) waits for the certificate.
* ``bound_port`` is the port bound while listening (useful with port 0).
* Stopping (the task cancelled) first drains for ``drain`` seconds: :meth:`ready` turns false
  (the Service stops picking this replica) while requests are still served, each answer
  closing its connection so no client reuses one that is about to close; then the listener
  closes, connections between requests (or still sending one) are closed, and handlers at work
  get at most ``shutdown_timeout`` seconds (their answers close their connections). Without
  the drain, a request sent on a kept-alive connection as the replica stopped failed with EOF
  (``make chaos``'s ``webhook-restarts-2`` run).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import ssl
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import structlog

from mpi_controller.runtime.httprequest import (
    REASONS,
    BadRequest,
    RequestHead,
    body_length,
    encode_answer,
    parse_head,
)
from mpi_controller.runtime.httpserve import TEXT_PLAIN
from mpi_controller.runtime.sockconn import handshake

__all__ = ["MAX_HEAD", "Answer", "Handler", "HttpsServer", "Request"]

_log = structlog.get_logger(__name__)

MAX_HEAD = 64 * 1024
"""Bytes of request line and headers read at most."""
_READ_SIZE = 64 * 1024
_READ_AHEAD = 2 * _READ_SIZE  # bytes read while nobody waits for them, before reading pauses


@dataclass(frozen=True, slots=True)
class Request:
    """A request's path and query (the target split at ``?``), headers (names lower-cased)
    and body."""

    path: str
    query: str
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"


Handler = Callable[[Request], Awaitable[Answer]]


def _plain(status: int) -> Answer:
    """The one-line ``text/plain`` answer of a status of the server's own."""
    return Answer(status, f"{status}: {REASONS[status]}\n".encode(), TEXT_PLAIN)


class _Closed(Exception):
    """The client closed the connection (or it failed) before a request was whole."""


class _Connection:
    """One accepted TLS connection: a reader callback registered while it lives fills
    ``buf`` (pausing once :data:`_READ_AHEAD` bytes wait that nobody asked for); the serving
    task takes requests from it and writes answers."""

    __slots__ = ("_fd", "_loop", "_paused", "_sock", "_waiter", "buf", "busy", "ended")

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: ssl.SSLSocket) -> None:
        self._loop = loop
        self._sock = sock
        self._fd = sock.fileno()
        self.buf = bytearray()
        self.ended = False
        self.busy = False  # a handler is at work on its request
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None
        loop.add_reader(self._fd, self._readable)

    def _readable(self) -> None:
        sock = self._sock
        try:
            data = sock.recv(_READ_SIZE)
            if data and sock.pending():
                data += sock.recv(sock.pending())
        except (BlockingIOError, ssl.SSLWantReadError):
            return
        except ssl.SSLWantWriteError:  # TLS must write before it reads: rare
            self._loop.remove_reader(self._fd)
            self._loop.add_writer(self._fd, self._writable_to_read)
            return
        except OSError:  # ssl.SSLZeroReturnError, SSLEOFError and a reset among them
            data = b""
        if data:
            self.buf += data
            if len(self.buf) > _READ_AHEAD and self._waiter is None:
                self._pause()
        else:
            self.ended = True
            self._loop.remove_reader(self._fd)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _writable_to_read(self) -> None:
        self._loop.remove_writer(self._fd)
        if not self.ended:
            self._loop.add_reader(self._fd, self._readable)
            self._readable()

    def _pause(self) -> None:
        self._paused = True
        self._loop.remove_reader(self._fd)

    async def _more(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for more bytes (TimeoutError), or :class:`_Closed`."""
        if self.ended:
            raise _Closed
        if self._paused:
            self._paused = False
            self._loop.add_reader(self._fd, self._readable)
        waiter = self._waiter = self._loop.create_future()
        try:
            async with asyncio.timeout(timeout):
                await waiter
        finally:
            self._waiter = None

    async def head(self, idle: float, progress: float) -> bytes | None:
        """The next request head (without its blank line); None when the client closed the
        connection between requests. Waits ``idle`` s for its first byte, then ``progress`` s
        for each of the rest; BadRequest when it runs over :data:`MAX_HEAD` bytes."""
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end >= 0:
                head = bytes(self.buf[:end])
                del self.buf[:end + 4]
                return head
            if len(self.buf) > MAX_HEAD:
                raise BadRequest(400, f"the request head is over {MAX_HEAD} bytes")
            try:
                await self._more(progress if self.buf else idle)
            except _Closed:
                if self.buf:
                    raise
                return None

    async def body(self, size: int, progress: float) -> bytes:
        while len(self.buf) < size:
            await self._more(progress)
        body = bytes(self.buf[:size])
        del self.buf[:size]
        return body

    async def write(self, data: bytes, progress: float) -> None:
        """Send ``data``, waiting up to ``progress`` s each time the socket takes none."""
        while data:
            try:
                sent = self._sock.send(data)
            except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                sent = 0  # TLS: the same bytes are offered again when the socket is writable
            data = data[sent:]
            if data:
                ready: asyncio.Future[None] = self._loop.create_future()
                self._loop.add_writer(self._fd, ready.set_result, None)
                try:
                    async with asyncio.timeout(progress):
                        await ready
                finally:
                    self._loop.remove_writer(self._fd)

    def close(self) -> None:
        self._loop.remove_reader(self._fd)
        self._loop.remove_writer(self._fd)
        self.ended = True
        self._sock.close()


class HttpsServer:
    """Serves ``routes`` over TLS on ``host:port`` (see the module doc)."""

    def __init__(self, host: str, port: int, routes: Mapping[str, Handler], *,
                 name: str = "https", max_body: int = 1 << 20, shutdown_timeout: float = 5.0,
                 drain: float = 2.0, keepalive_timeout: float = 75.0,
                 head_timeout: float = 10.0) -> None:
        self.host = host
        self.port = port
        self.name = name
        self._routes = dict(routes)
        self._max_body = max_body
        self._shutdown_timeout = shutdown_timeout
        self._drain = drain
        self._keepalive = keepalive_timeout
        self._progress = head_timeout
        self._draining = False
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._dir: Path | None = None
        self._has_certificate = asyncio.Event()
        self._served: dict[asyncio.Task[None], _Connection | None] = {}
        self.bound_port: int | None = None

    def set_certificate(self, cert_pem: bytes, key_pem: bytes) -> None:
        """Serve ``cert_pem`` (the chain, leaf first) with ``key_pem`` from now on.

        Raises ``ssl.SSLError`` (and keeps the previous certificate) when they do not match."""
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix=f"mpi-controller-{self.name}-"))
        staged = {}
        for name, data in (("tls.crt", cert_pem), ("tls.key", key_pem)):
            path = self._dir / (name + ".new")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            staged[name] = path
        try:
            self._context.load_cert_chain(staged["tls.crt"], staged["tls.key"])
        except (ssl.SSLError, OSError):
            for path in staged.values():
                path.unlink(missing_ok=True)
            raise
        for name, path in staged.items():
            path.replace(self._dir / name)
        self._has_certificate.set()
        _log.info("serving certificate loaded", server=self.name)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        listener: socket.socket | None = None
        try:
            await self._has_certificate.wait()
            family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            listener = socket.create_server((self.host, self.port), family=family, backlog=128)
            listener.setblocking(False)
            loop.add_reader(listener.fileno(), self._accept, listener)
            self.bound_port = int(listener.getsockname()[1])
            _log.info("https server listening", server=self.name, port=self.bound_port)
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if listener is not None and self._drain > 0:
                self._draining = True
                _log.info("https server draining", server=self.name, seconds=self._drain)
                await asyncio.sleep(self._drain)
            raise
        finally:
            self._draining = True  # a handler still at work answers with Connection: close
            self.bound_port = None
            if listener is not None:
                loop.remove_reader(listener.fileno())
                listener.close()
            try:
                await asyncio.shield(self._stop_serving())
            finally:
                self._draining = False
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None

    def ready(self) -> bool:
        return self.bound_port is not None and not self._draining

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:  # out of file descriptors, say: the next accept retries
                _log.warning("https server cannot accept a connection", server=self.name,
                             error=str(err))
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            task = asyncio.get_running_loop().create_task(self._serve(sock))
            self._served[task] = None
            task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._served.pop(task, None)

    async def _stop_serving(self) -> None:
        """Close what waits between requests at once; give handlers at work the shutdown
        timeout, then cancel them."""
        for task, conn in list(self._served.items()):
            if conn is None or not conn.busy:
                task.cancel()
        tasks = list(self._served)
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=self._shutdown_timeout)
            for task in late:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve(self, raw: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        try:
            sock = self._context.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        conn: _Connection | None = None
        try:
            async with asyncio.timeout(self._progress):
                await handshake(loop, sock)
            conn = _Connection(loop, sock)
            task = asyncio.current_task()
            if task is not None and task in self._served:
                self._served[task] = conn
            await self._requests(conn)
        except (OSError, _Closed) as err:  # TimeoutError and the TLS errors among them
            _log.debug("https connection ended", server=self.name, error=repr(err))
        finally:
            if conn is not None:
                conn.close()
            else:
                sock.close()

    async def _requests(self, conn: _Connection) -> None:
        while True:
            try:
                raw = await conn.head(self._keepalive, self._progress)
                if raw is None:
                    return
                head = parse_head(raw)
                size = body_length(head, self._max_body)
            except BadRequest as err:
                await conn.write(encode_answer(err.status, f"{err}\n".encode(), TEXT_PLAIN,
                                               close=True), self._progress)
                return
            if (size > len(conn.buf)
                    and head.headers.get("expect", "").lower() == "100-continue"):
                await conn.write(b"HTTP/1.1 100 Continue\r\n\r\n", self._progress)
            body = await conn.body(size, self._progress)
            answer, extra = await self._answer(conn, head, body)
            close = not head.keep_alive or self._draining
            await conn.write(encode_answer(answer.status, answer.body, answer.content_type,
                                           close=close, headers=extra), self._progress)
            if close:
                return

    async def _answer(self, conn: _Connection, head: RequestHead, body: bytes
                      ) -> tuple[Answer, tuple[tuple[str, str], ...]]:
        handler = self._routes.get(head.path)
        if handler is None:
            return _plain(404), ()
        if head.method != "POST":
            return _plain(405), (("Allow", "POST"),)
        conn.busy = True
        try:
            return await handler(Request(head.path, head.query, head.headers, body)), ()
        except Exception:
            _log.exception("https handler failed", server=self.name, path=head.path)
            return _plain(500), ()
        finally:
            conn.busy = False
