r"""One HTTP/1.1 connection on a non-blocking socket, for :mod:`~mpi_controller.runtime.http1`.

TLS runs in the socket itself (:class:`ssl.SSLSocket`: OpenSSL reads and writes the kernel
socket) rather than in asyncio's pure-Python TLS layer (``asyncio.sslproto``), which cost a
copy through memory BIOs and several Python calls per read and write.

Contract:

* :func:`open_connection` connects to ``host:port`` (each address of :func:`addresses` in
  turn: an IP address as it is, a name resolved; ``TCP_NODELAY``), then, with an
  ``SSLContext``, completes the TLS handshake verifying ``server_hostname`` (else ``host``); a
  TLS failure is raised as it is and leaves no socket open. The caller bounds the time
  (``asyncio.timeout``).
* :func:`handshake` completes the TLS handshake of a non-blocking ``SSLSocket``, client's
  or server's (:mod:`~mpi_controller.runtime.https` serves with it).
* A :class:`Connection` carries one request at a time: :meth:`Connection.send` writes it and
  returns the future of its answer, parsed by
  :class:`~mpi_controller.runtime.httpparse.ResponseParser`.
  A reader callback stays registered while the connection lives, so a close by the server
  while idle is seen at once (``closed``). Failures are ``OSError``\ s
  (:class:`~mpi_controller.runtime.httpparse.ConnectionClosed`,
  :class:`~mpi_controller.runtime.httpparse.ProtocolError`) set on the answer.
* A streamed answer (``send(..., streaming=True)``; a watch): the future holds the status and
  headers, and :class:`BodyStream` reads the body as it arrives; reading from the socket pauses
  while more than 4 MiB of it wait unread.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Callable
from typing import Any

from mpi_controller.runtime.httpparse import (
    ConnectionClosed,
    ProtocolError,
    Response,
    ResponseParser,
)

__all__ = ["BodyStream", "Connection", "addresses", "handshake", "open_connection"]

_READ_SIZE = 64 * 1024
_STREAM_BUFFER = 4 * 1024 * 1024  # a stream's unread body above which reading pauses


class Connection:
    """One keep-alive connection on a non-blocking socket: carries one request at a time.

    TLS runs in the socket itself (:class:`ssl.SSLSocket`, OpenSSL reading and writing the
    kernel socket), not in asyncio's pure-Python TLS layer: a request is one ``send`` and its
    answer one ``recv`` per TLS record, from a reader callback that stays registered while the
    connection lives (so a connection the server closes while idle is seen closed at once)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
        self.loop = loop
        self._sock = sock
        self._fd = sock.fileno()
        self._tls = isinstance(sock, ssl.SSLSocket)
        self.closed = False
        self.reused = False
        self.idle_since = 0.0
        self._parser: ResponseParser | None = None
        self._answer: asyncio.Future[Response] | None = None
        self._error: BaseException | None = None
        self._unsent = b""  # bytes of the request the socket did not take yet
        self._read_wants_write = False  # a read waits for the socket to be writable (TLS)
        self.streaming = False  # the answer's body is taken as it arrives (BodyStream)
        self._progress: asyncio.Future[None] | None = None  # a stream's reader waits on it
        self.paused = False  # reading stopped: a stream's reader is behind
        self.last_progress = 0.0  # loop time of a stream's last bytes
        self.on_close: Callable[[Connection], None] | None = None
        loop.add_reader(self._fd, self._readable)

    def _readable(self) -> None:
        try:
            data = self._sock.recv(_READ_SIZE)
            if self._tls and data and self._sock.pending():  # type: ignore[attr-defined]
                data += self._sock.recv(self._sock.pending())  # type: ignore[attr-defined]
        except (BlockingIOError, ssl.SSLWantReadError):
            return
        except ssl.SSLWantWriteError:  # TLS wants to write first (renegotiation): rare
            self._read_wants_write = True
            self.loop.add_writer(self._fd, self._writable)
            return
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            data = b""
        except OSError as exc:
            self.fail(ConnectionClosed(f"connection lost: {exc}"))
            return
        if data:
            self._data_received(data)
        else:
            self._eof_received()

    def _writable(self) -> None:
        self.loop.remove_writer(self._fd)
        if self._unsent:
            self._write(self._unsent)
        if self._read_wants_write and not self.closed:
            self._read_wants_write = False
            self._readable()

    def _write(self, data: bytes) -> None:
        try:
            sent = self._sock.send(data)
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            sent = 0  # TLS: the same bytes are offered again when the socket is writable
        except OSError as exc:
            self.fail(ConnectionClosed(f"connection lost: {exc}"))
            return
        self._unsent = data[sent:]
        if self._unsent:
            self.loop.add_writer(self._fd, self._writable)

    def _data_received(self, data: bytes) -> None:
        parser, answer = self._parser, self._answer
        if parser is None or answer is None or (answer.done() and not self.streaming):
            self.fail(ProtocolError("bytes from the server while no request was open"))
            return
        try:
            complete = parser.feed(data)
        except ProtocolError as exc:
            self.fail(exc)
            return
        if self.streaming:
            self.last_progress = self.loop.time()
            if complete:
                self._parser = None
            if not answer.done() and parser.head_done:
                answer.set_result(Response(parser.status, parser.headers, b"", False))
            self._wake()
            if parser.body_buffered > _STREAM_BUFFER and not self.closed:
                self.paused = True
                self.loop.remove_reader(self._fd)
        elif complete:
            self._parser = None
            answer.set_result(parser.response())

    def _wake(self) -> None:
        """Tell a stream's reader that bytes, the end or a failure arrived."""
        progress = self._progress
        if progress is not None and not progress.done():
            progress.set_result(None)

    def wait_progress(self) -> asyncio.Future[None]:
        """A future done when more of a streamed answer arrives (or the connection ends);
        reading resumes if it was paused for a reader behind."""
        if self.paused and not self.closed:
            self.paused = False
            self.loop.add_reader(self._fd, self._readable)
        progress = self._progress = self.loop.create_future()
        return progress

    @property
    def error(self) -> BaseException | None:
        return self._error

    def _eof_received(self) -> None:
        parser, answer = self._parser, self._answer
        if parser is not None and answer is not None and (self.streaming or not answer.done()):
            try:
                if parser.feed_eof():  # a body read until the end is complete (a stream's too)
                    self._parser = None
                    if not answer.done():
                        answer.set_result(parser.response())
            except ConnectionClosed as exc:
                self._error = exc
        self.fail(self._error or ConnectionClosed("the server closed the connection"))

    def fail(self, exc: BaseException) -> None:
        """End the connection with ``exc`` (the answer waiting, if any, gets it)."""
        if self._error is None:
            self._error = exc
        answer = self._answer
        if answer is not None and not answer.done():
            answer.set_exception(self._error)
        self.close()

    @property
    def answer_started(self) -> bool:
        return self._parser is not None and self._parser.started

    def send(self, data: bytes, *, head_request: bool = False,
             streaming: bool = False) -> asyncio.Future[Response]:
        """Write one request; the future of its answer (for a streaming connection: of its
        status and headers, the body left to :class:`BodyStream`). A connection already closed
        raises :class:`ConnectionClosed` before anything is written."""
        if self.closed:
            raise ConnectionClosed("the connection was closed before the request was sent")
        self._parser = ResponseParser(head_request=head_request)
        self.streaming = streaming
        answer = self._answer = self.loop.create_future()
        self._write(data)
        return answer

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.loop.remove_reader(self._fd)
        self.loop.remove_writer(self._fd)
        self._sock.close()
        if self.on_close is not None:
            self.on_close(self)
        answer = self._answer
        if answer is not None and not answer.done():
            answer.set_exception(self._error or ConnectionClosed("the connection was closed"))
        self._wake()


async def _ready(loop: asyncio.AbstractEventLoop, sock: socket.socket, *, write: bool) -> None:
    """Wait until ``sock`` is readable (or writable)."""
    ready: asyncio.Future[None] = loop.create_future()
    fd = sock.fileno()
    if write:
        loop.add_writer(fd, ready.set_result, None)
    else:
        loop.add_reader(fd, ready.set_result, None)
    try:
        await ready
    finally:
        (loop.remove_writer if write else loop.remove_reader)(fd)


async def open_connection(host: str, port: int, context: ssl.SSLContext | None,
                          server_hostname: str | None) -> Connection:
    """A connected socket to ``host:port`` (each resolved address in turn; TCP_NODELAY), with
    TLS from ``context`` once its handshake verified ``server_hostname`` (else ``host``), as
    a :class:`Connection`. A TLS failure is raised as it is."""
    loop = asyncio.get_running_loop()
    sock = await _connect_tcp(loop, host, port)
    if context is None:
        return Connection(loop, sock)
    try:
        tls = context.wrap_socket(sock, server_hostname=server_hostname or host,
                                  do_handshake_on_connect=False)  # takes over the socket
    except BaseException:
        sock.close()
        raise
    try:
        await handshake(loop, tls)
    except BaseException:
        tls.close()
        raise
    return Connection(loop, tls)


async def addresses(loop: asyncio.AbstractEventLoop, host: str, port: int
                    ) -> list[tuple[Any, ...]]:
    """Where to connect for ``host:port``, as ``getaddrinfo`` gives them: an IP address
    (an in-cluster API server's, a kubeconfig's ``127.0.0.1``) as it is, without a hop to the
    resolver's thread; a name through ``loop.getaddrinfo``."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is None or getattr(ip, "scope_id", None):  # a name, or an IPv6 address with a zone
        return list(await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM))
    if ip.version == 4:
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port))]
    return [(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port, 0, 0))]


async def _connect_tcp(loop: asyncio.AbstractEventLoop, host: str, port: int) -> socket.socket:
    infos = await addresses(loop, host, port)
    errors: list[OSError] = []
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await loop.sock_connect(sock, address)
        except OSError as exc:
            sock.close()
            errors.append(exc)
            continue
        except BaseException:
            sock.close()
            raise
        return sock
    if len(errors) == 1:
        raise errors[0]
    raise OSError(f"could not connect to {host}:{port}: " + "; ".join(map(str, errors)))


async def handshake(loop: asyncio.AbstractEventLoop, sock: ssl.SSLSocket) -> None:
    """Complete the TLS handshake of the non-blocking ``sock`` (either side); its errors are
    raised as they are."""
    while True:
        try:
            sock.do_handshake()
            return
        except ssl.SSLWantReadError:
            await _ready(loop, sock, write=False)
        except ssl.SSLWantWriteError:
            await _ready(loop, sock, write=True)


class BodyStream:
    """An answer whose body is read as it arrives (a watch), on a connection of its own:
    ``status`` and ``headers``, then :meth:`read` until it returns ``b""`` (the end of the
    body). When no byte arrives for ``read_timeout`` seconds while reading is not paused for
    a reader behind (aiohttp's ``sock_read``), the connection fails and a read raises
    ``TimeoutError`` (one timer per stream, re-armed only when it fires: no timer per read).
    A connection that ends before the body does raises :class:`ConnectionClosed`.
    :meth:`close` (idempotent) ends it at any time; a read waiting then returns ``b""``."""

    def __init__(self, conn: Connection, parser: ResponseParser, head: Response,
                 read_timeout: float | None) -> None:
        self._conn = conn
        self._parser = parser
        self.status = head.status
        self.headers = head.headers
        self._read_timeout = read_timeout
        self._closed = False
        if read_timeout is not None:
            conn.last_progress = conn.loop.time()
            conn.loop.call_later(read_timeout, self._watch)

    def _watch(self) -> None:
        conn, timeout = self._conn, self._read_timeout
        if conn.closed or timeout is None:
            return
        now = conn.loop.time()
        if conn.paused:
            conn.last_progress = now
        quiet = now - conn.last_progress
        if quiet >= timeout:
            conn.fail(TimeoutError(f"no data for {quiet:.1f}s"))
            return
        conn.loop.call_at(conn.last_progress + timeout, self._watch)

    async def read(self) -> bytes:
        while True:
            data = self._parser.take_body()
            if data:
                return data
            if self._closed or self._parser.done:
                return b""
            if self._conn.closed:
                raise self._conn.error or ConnectionClosed("the connection was closed")
            await self._conn.wait_progress()

    @property
    def buffered(self) -> int:
        """Bytes of the body read from the socket and not yet taken by :meth:`read`."""
        return self._parser.body_buffered

    async def read_all(self) -> bytes:
        """The rest of the body (an error answer's ``Status``)."""
        parts = []
        while data := await self.read():
            parts.append(data)
        return b"".join(parts)

    def close(self) -> None:
        self._closed = True
        self._conn.close()
