"""The lean HTTP/1.1 client: the response parser (framing as RFC 9112 sets it: Content-Length,
chunked with extensions and trailers, read-until-close, interim 1xx, bodiless answers) and the
keep-alive pool against a local asyncio server, plain and behind TLS (reuse, certificate
verification, the cap, server-closed connections retried as client-go and urllib3 do,
deadlines, cancellation, close)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import ssl
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

import pytest
import pytest_asyncio

from mpi_controller.runtime.http1 import (
    ConnectionClosed,
    Http1Pool,
    ProtocolError,
    Response,
    ResponseParser,
)
from tests.unit.runtime.test_https import self_signed

# -- parser ------------------------------------------------------------------------------------


def parse_in_pieces(raw: bytes, size: int, *, head: bool = False) -> Response:
    parser = ResponseParser(head_request=head)
    done = False
    for start in range(0, len(raw), size):
        assert not done
        done = parser.feed(raw[start:start + size])
    assert done
    return parser.response()


LENGTH = (b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
          b"Content-Length: 11\r\nRetry-After: 3\r\n\r\n{\"a\": \"bc\"}")
CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"4\r\n{\"a\"\r\n7;ext=1\r\n: \"bc\"}\r\n0\r\nX-Trailer: t\r\n\r\n")


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize("raw", [LENGTH, CHUNKED], ids=["content-length", "chunked"])
def test_a_response_split_anywhere_parses_the_same(raw: bytes, size: int) -> None:
    resp = parse_in_pieces(raw, size)
    assert resp.body == b'{"a": "bc"}'
    assert resp.keep_alive


@pytest.mark.parametrize("pieces", [
    [b"4\r\n{\"a\"\r\n7\r\n: \"bc\"}\r\n", b"0\r\n\r\n"],  # whole chunks at once
    [b"4\r\n{\"a\"\r\n", b"7\r\n: \"bc\"}\r\n0\r\n\r\n"],
    [b"4;x=y\r\n{\"a\"\r\n7\r\n: \"bc\"}\r\n", b"0\r\n\r\n"],  # an extension
    [b"4\r\n{\"a\"\r\n7\r\n: \"b", b"c\"}\r\n0\r\n\r\n"],  # a chunk cut short
], ids=["whole", "one-each", "extension", "cut"])
def test_chunks_after_the_head_are_taken_as_they_come(pieces: list[bytes]) -> None:
    """A watch's events arrive as whole chunks after the head: each feed's body bytes can
    be taken at once (take_body), and the answer ends at the last chunk."""
    parser = ResponseParser()
    assert not parser.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert parser.head_done
    assert parser.take_body() == b""
    taken = b""
    for piece in pieces[:-1]:
        assert not parser.feed(piece)
        taken += parser.take_body()
    assert parser.feed(pieces[-1])
    assert taken + parser.take_body() == b'{"a": "bc"}'


def test_status_and_headers_are_read_with_lower_cased_names() -> None:
    resp = parse_in_pieces(LENGTH, 1000)
    assert (resp.status, resp.headers["retry-after"]) == (201, "3")
    assert resp.headers["content-type"] == "application/json"


def test_interim_answers_are_skipped() -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    resp = parse_in_pieces(raw, 5)
    assert (resp.status, resp.body) == (200, b"ok")


@pytest.mark.parametrize(("raw", "head"), [
    (b"HTTP/1.1 204 No Content\r\n\r\n", False),
    (b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", False),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", True),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", False),
])
def test_answers_without_a_body(raw: bytes, head: bool) -> None:
    resp = parse_in_pieces(raw, 1000, head=head)
    assert resp.body == b""
    assert resp.keep_alive


def test_a_body_without_length_is_read_until_the_connection_ends() -> None:
    parser = ResponseParser()
    assert not parser.feed(b"HTTP/1.1 200 OK\r\n\r\nab")
    assert not parser.feed(b"cd")
    assert parser.feed_eof()
    resp = parser.response()
    assert (resp.body, resp.keep_alive) == (b"abcd", False)


@pytest.mark.parametrize(("raw", "keep_alive"), [
    (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", False),
    (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", False),
    (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", True),
])
def test_keep_alive_follows_the_version_and_connection_header(raw: bytes, keep_alive: bool) -> None:
    assert parse_in_pieces(raw, 1000).keep_alive is keep_alive


@pytest.mark.parametrize("raw", [
    b"SPDY/3 200 OK\r\n\r\n",
    b"HTTP/1.1 abc OK\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab",
])
def test_malformed_answers_are_protocol_errors(raw: bytes) -> None:
    with pytest.raises(ProtocolError):
        ResponseParser().feed(raw)


@pytest.mark.parametrize(("raw", "started"), [
    (b"", False),
    (b"HTTP/1.1 200", True),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", True),
])
def test_an_answer_cut_short_is_a_closed_connection(raw: bytes, started: bool) -> None:
    parser = ResponseParser()
    assert not parser.feed(raw) if raw else True
    assert parser.started is started
    with pytest.raises(ConnectionClosed):
        parser.feed_eof()


# -- pool against a local server ---------------------------------------------------------------

Answer = Callable[["Request"], Awaitable[bytes | None]]


@dataclass
class Request:
    connection: int
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


def reply(status: int = 200, body: bytes = b"{}", *extra: str) -> bytes:
    head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@dataclass
class Server:
    """Reads requests (Content-Length bodies) and answers each with ``answer(request)``: the
    bytes to send, or None to close the connection without an answer."""

    answer: Answer
    requests: list[Request] = field(default_factory=list)
    connections: int = 0
    open_now: int = 0
    most_open: int = 0
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    close_after_answer: bool = False
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                method, target, _ = lines[0].split(" ")
                headers = dict(line.split(": ", 1) for line in lines[1:] if line)
                body = await reader.readexactly(int(headers.get("Content-Length", "0")))
                request = Request(number, method, target, headers, body)
                self.requests.append(request)
                data = await self.answer(request)
                if data is None:
                    break
                writer.write(data)
                await writer.drain()
                if self.close_after_answer:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.open_now -= 1
            writer.close()
            self.closed.set()


async def ok(request: Request) -> bytes | None:
    return reply(200, b'{"path": "%s"}' % request.target.encode())


class Listening(Protocol):
    port: int

    async def handle(self, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None: ...


L = TypeVar("L", bound=Listening)


@contextlib.asynccontextmanager
async def listening(srv: L, context: ssl.SSLContext | None = None) -> AsyncIterator[L]:
    """``srv`` served on a free local port (its ``port`` set) while in the block."""
    listener = await asyncio.start_server(srv.handle, "127.0.0.1", 0, ssl=context)
    srv.port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield srv


@pytest_asyncio.fixture(loop_scope="function")
async def server() -> AsyncIterator[Server]:
    async with listening(Server(ok)) as srv:
        yield srv


def pool_for(server: Listening, **options: float) -> Http1Pool:
    return Http1Pool(scheme="http", host="127.0.0.1", port=server.port, ssl_context=None,
                     **options)  # type: ignore[arg-type]


def held_answers(server: Server) -> asyncio.Event:
    """Make ``server`` answer every request only once the returned event is set."""
    gate = asyncio.Event()

    async def held(request: Request) -> bytes | None:
        await gate.wait()
        return reply()

    server.answer = held
    return gate


async def test_requests_reuse_one_keep_alive_connection(server: Server) -> None:
    pool = pool_for(server)
    for i in range(3):
        resp = await pool.request("GET", f"/r{i}", {"Accept": "application/json"})
        assert (resp.status, resp.body) == (200, b'{"path": "/r%d"}' % i)
    assert [r.connection for r in server.requests] == [1, 1, 1]
    assert server.requests[0].headers == {"Host": f"127.0.0.1:{server.port}",
                                          "Accept": "application/json"}
    await pool.close()


async def test_a_body_is_sent_with_its_length_and_post_without_one_says_zero(
    server: Server,
) -> None:
    pool = pool_for(server)
    await pool.request("PUT", "/a", {"Content-Type": "application/json"}, b'{"x": 1}')
    await pool.request("POST", "/b", {})
    assert [(r.method, r.headers.get("Content-Length"), r.body) for r in server.requests] == [
        ("PUT", "8", b'{"x": 1}'), ("POST", "0", b"")]
    await pool.close()


async def test_the_pool_never_opens_more_than_its_cap(server: Server) -> None:
    gate = held_answers(server)
    pool = pool_for(server, max_connections=2)
    tasks = [asyncio.create_task(pool.request("GET", f"/{i}", {})) for i in range(6)]
    while len(server.requests) < 2:
        await asyncio.sleep(0.01)
    assert pool.open_connections == 2
    gate.set()
    assert [r.status for r in await asyncio.gather(*tasks)] == [200] * 6
    assert (server.connections, server.most_open, pool.idle_connections) == (2, 2, 2)
    await pool.close()


async def test_a_connection_the_server_closes_after_answering_is_replaced(
    server: Server,
) -> None:
    server.close_after_answer = True
    pool = pool_for(server)
    await pool.request("POST", "/a", {})
    await asyncio.wait_for(server.closed.wait(), 5)
    await asyncio.sleep(0.05)  # the client sees the end of the idle connection
    await pool.request("POST", "/b", {})
    assert [r.connection for r in server.requests] == [1, 2]
    await pool.close()


async def test_connection_close_in_the_answer_is_honoured(server: Server) -> None:
    async def closing(request: Request) -> bytes | None:
        return reply(200, b"{}", "Connection: close")

    server.answer = closing
    pool = pool_for(server)
    await pool.request("GET", "/a", {})
    await pool.request("GET", "/b", {})
    assert [r.connection for r in server.requests] == [1, 2]
    assert pool.open_connections == 0
    await pool.close()


def dropping_the_second_request() -> Answer:
    """Answers the first request; closes the connection on the second without answering
    (a keep-alive connection the server dropped as the request arrived)."""
    count = itertools.count()

    async def answer(request: Request) -> bytes | None:
        return reply() if next(count) != 1 else None
    return answer


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_an_idempotent_request_dropped_on_a_reused_connection_is_sent_again(
    server: Server, method: str,
) -> None:
    server.answer = dropping_the_second_request()
    pool = pool_for(server)
    await pool.request("GET", "/first", {})
    resp = await pool.request(method, "/second", {}, b"{}")
    assert resp.status == 200
    assert [(r.connection, r.target) for r in server.requests] == [
        (1, "/first"), (1, "/second"), (2, "/second")]
    await pool.close()


@pytest.mark.parametrize("method", ["POST", "PATCH"])
async def test_a_non_idempotent_request_dropped_after_it_was_sent_is_not_repeated(
    server: Server, method: str,
) -> None:
    server.answer = dropping_the_second_request()
    pool = pool_for(server)
    await pool.request("GET", "/first", {})
    with pytest.raises(ConnectionClosed):
        await pool.request(method, "/second", {}, b"{}")
    assert [r.target for r in server.requests] == ["/first", "/second"]
    assert pool.open_connections == 0
    await pool.close()


async def test_a_dropped_first_request_on_a_fresh_connection_is_not_repeated(
    server: Server,
) -> None:
    async def drop(request: Request) -> bytes | None:
        return None

    server.answer = drop
    pool = pool_for(server)
    with pytest.raises(ConnectionClosed):
        await pool.request("GET", "/a", {})
    assert len(server.requests) == 1
    await pool.close()


async def test_a_deadline_closes_the_connection_and_frees_its_slot(server: Server) -> None:
    gate = held_answers(server)
    pool = pool_for(server, max_connections=1)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.1):
            await pool.request("GET", "/a", {})
    assert pool.open_connections == 0
    gate.set()
    assert (await pool.request("GET", "/b", {})).status == 200
    assert [(r.connection, r.target) for r in server.requests] == [(1, "/a"), (2, "/b")]
    await pool.close()


async def test_a_cancelled_waiter_does_not_take_a_slot(server: Server) -> None:
    gate = held_answers(server)
    pool = pool_for(server, max_connections=1)
    first = asyncio.create_task(pool.request("GET", "/1", {}))
    waiting = asyncio.create_task(pool.request("GET", "/2", {}))
    third = asyncio.create_task(pool.request("GET", "/3", {}))
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    gate.set()
    assert [(await first).status, (await third).status] == [200, 200]
    assert [r.target for r in server.requests] == ["/1", "/3"]
    assert pool.open_connections == 1
    await pool.close()


async def test_close_ends_every_connection_and_later_requests_fail(server: Server) -> None:
    pool = pool_for(server)
    await pool.request("GET", "/a", {})
    await pool.close()
    await asyncio.wait_for(server.closed.wait(), 5)
    assert pool.open_connections == 0
    with pytest.raises(ConnectionClosed):
        await pool.request("GET", "/b", {})


async def test_an_expired_idle_connection_is_not_reused(server: Server) -> None:
    pool = pool_for(server, idle_timeout=0.0)
    await pool.request("GET", "/a", {})
    await asyncio.sleep(0.01)
    await pool.request("GET", "/b", {})
    assert [r.connection for r in server.requests] == [1, 2]
    await pool.close()


async def test_a_large_chunked_answer_is_read_whole(server: Server) -> None:
    body = b"x" * 1_000_003

    async def chunked(request: Request) -> bytes | None:
        pieces = [body[i:i + 65536] for i in range(0, len(body), 65536)]
        data = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces)
        return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + data + b"0\r\n\r\n"

    server.answer = chunked
    pool = pool_for(server)
    assert (await pool.request("GET", "/big", {})).body == body
    assert (await pool.request("GET", "/big", {})).body == body
    assert server.connections == 1
    await pool.close()


async def test_connection_refused_is_an_os_error() -> None:
    pool = Http1Pool(scheme="http", host="127.0.0.1", port=9, ssl_context=None)
    with pytest.raises(ConnectionRefusedError):
        await pool.request("GET", "/", {})
    assert pool.open_connections == 0
    await pool.close()


async def test_a_released_connection_goes_to_the_oldest_waiter_not_a_newcomer(
    server: Server,
) -> None:
    pool = pool_for(server, max_connections=1)
    held = await pool._acquire()
    waiting = asyncio.create_task(pool.request("GET", "/waited", {}))
    await asyncio.sleep(0.01)  # queued at the cap
    newcomer = asyncio.create_task(pool.request("GET", "/newcomer", {}))  # not run yet
    pool._release(held, keep=True)
    await asyncio.gather(waiting, newcomer)
    assert [(r.connection, r.target) for r in server.requests] == [
        (1, "/waited"), (1, "/newcomer")]
    await pool.close()


# -- TLS in the socket --------------------------------------------------------------------------


@pytest_asyncio.fixture(loop_scope="function")
async def tls_server(tmp_path: Path) -> AsyncIterator[tuple[Server, ssl.SSLContext]]:
    """The same server behind TLS (a self-signed ``localhost`` certificate), and a client
    context that trusts it."""
    cert, key = self_signed(7)
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    serving.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    client = ssl.create_default_context(cadata=cert.decode())
    async with listening(Server(ok), serving) as srv:
        yield srv, client


def tls_pool(server: Server, context: ssl.SSLContext, name: str = "localhost") -> Http1Pool:
    return Http1Pool(scheme="https", host="127.0.0.1", port=server.port, ssl_context=context,
                     server_hostname=name)


async def test_tls_requests_reuse_one_verified_connection(
        tls_server: tuple[Server, ssl.SSLContext]) -> None:
    server, context = tls_server
    pool = tls_pool(server, context)
    big = b"x" * 200_000  # many TLS records each way

    async def echo(request: Request) -> bytes | None:
        return reply(200, request.body)

    server.answer = echo
    for i in range(3):
        resp = await pool.request("POST", f"/r{i}", {}, big)
        assert (resp.status, resp.body) == (200, big)
    assert [r.connection for r in server.requests] == [1, 1, 1]
    assert pool.open_connections == 1
    await pool.close()


async def test_tls_name_is_verified(tls_server: tuple[Server, ssl.SSLContext]) -> None:
    server, context = tls_server
    pool = tls_pool(server, context, name="not-the-server")
    with pytest.raises(ssl.SSLCertVerificationError):
        await pool.request("GET", "/", {})
    assert pool.open_connections == 0
    await pool.close()


async def test_a_tls_connection_the_server_closes_while_idle_is_seen_closed(
        tls_server: tuple[Server, ssl.SSLContext]) -> None:
    server, context = tls_server
    server.close_after_answer = True
    pool = tls_pool(server, context)
    assert (await pool.request("GET", "/a", {})).status == 200
    await server.closed.wait()
    for _ in range(100):  # the close reaches the client's reader
        if pool.idle_connections == 0:
            break
        await asyncio.sleep(0.01)
    assert pool.idle_connections == 0
    assert (await pool.request("POST", "/b", {}, b"{}")).status == 200
    assert [r.connection for r in server.requests] == [1, 2]
    await pool.close()


async def test_a_failed_tls_handshake_closes_its_socket(
        tls_server: tuple[Server, ssl.SSLContext]) -> None:
    server, context = tls_server
    pool = tls_pool(server, context, name="not-the-server")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for _ in range(3):
            with pytest.raises(ssl.SSLCertVerificationError):
                await pool.request("GET", "/", {})
        gc.collect()  # a socket left open warns when it is collected
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []
    await pool.close()


# -- streamed answers (watches) -----------------------------------------------------------------


@dataclass
class Streamer:
    """Answers every request with a chunked body whose chunks the test sends one at a time
    (``send``; ``None`` ends the body), or with ``status`` and a fixed body when not 200."""

    status: int = 200
    chunks: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    connections: int = 0
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await reader.readuntil(b"\r\n\r\n")
            if self.status != 200:
                writer.write(reply(self.status, b'{"kind": "Status"}'))
                await writer.drain()
                return
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            while (chunk := await self.chunks.get()) is not None:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest_asyncio.fixture(loop_scope="function")
async def streamer() -> AsyncIterator[Streamer]:
    async with listening(Streamer()) as srv:
        yield srv


stream_pool = pool_for


async def test_a_streamed_body_is_read_as_it_arrives(streamer: Streamer) -> None:
    pool = stream_pool(streamer)
    stream = await pool.stream("GET", "/watch", {})
    assert stream.status == 200
    for event in (b'{"type": "ADDED"}\n', b'{"type": "MODIFIED"}\n'):
        await streamer.chunks.put(event)
        assert await asyncio.wait_for(stream.read(), 5) == event  # before the body ends
    await streamer.chunks.put(None)
    assert await stream.read() == b""
    await pool.close()


async def test_streams_are_outside_the_pools_cap_and_close_with_it(
        streamer: Streamer) -> None:
    pool = stream_pool(streamer, max_connections=1)
    streams = [await pool.stream("GET", f"/watch{i}", {}) for i in range(3)]
    assert (streamer.connections, pool.open_connections) == (3, 0)
    await pool.close()
    for stream in streams:
        with pytest.raises(ConnectionClosed):
            await stream.read()


async def test_closing_a_stream_ends_a_read_waiting_on_it(streamer: Streamer) -> None:
    pool = stream_pool(streamer)
    stream = await pool.stream("GET", "/watch", {})
    waiting = asyncio.create_task(stream.read())
    await asyncio.sleep(0.05)
    stream.close()
    assert await asyncio.wait_for(waiting, 5) == b""
    await pool.close()


async def test_a_stream_read_times_out(streamer: Streamer) -> None:
    pool = stream_pool(streamer)
    stream = await pool.stream("GET", "/watch", {}, read_timeout=0.1)
    with pytest.raises(TimeoutError):
        await stream.read()
    stream.close()
    await pool.close()


async def test_an_error_answer_to_a_stream_is_read_whole(streamer: Streamer) -> None:
    streamer.status = 410
    pool = stream_pool(streamer)
    stream = await pool.stream("GET", "/watch", {})
    assert (stream.status, await stream.read_all()) == (410, b'{"kind": "Status"}')
    await pool.close()


async def test_a_reader_behind_pauses_the_socket_and_loses_nothing(streamer: Streamer) -> None:
    """While paused for the reader, no read timeout runs out."""
    pool = stream_pool(streamer)
    stream = await pool.stream("GET", "/watch", {}, read_timeout=0.2)
    sent = [bytes([65 + i % 26]) * 512 * 1024 for i in range(20)]  # 10 MiB, unread meanwhile
    for chunk in sent:
        await streamer.chunks.put(chunk)
    await streamer.chunks.put(None)
    await asyncio.sleep(0.5)
    assert 4 * 1024 * 1024 <= stream.buffered < 5 * 1024 * 1024  # paused at 4 MiB
    body = await asyncio.wait_for(stream.read_all(), 10)
    assert body == b"".join(sent)
    await pool.close()


class UntilClose:
    """Answers with a body framed by the end of the connection (no length, not chunked), sent
    in two parts, then closes; or, with ``cut``, a chunked body it never finishes."""

    def __init__(self, *, cut: bool = False) -> None:
        self.cut = cut
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            if self.cut:
                writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")
            else:
                writer.write(b"HTTP/1.0 422 X\r\nContent-Type: application/json\r\n\r\n{\"a\"")
                await writer.drain()
                await asyncio.sleep(0.05)
                writer.write(b": 1}")
            await writer.drain()
        finally:
            writer.close()


async def test_a_streamed_body_read_until_the_connection_closes_ends_there() -> None:
    """A body without length is complete when the server closes (RFC 9112 6.3): a stream
    reads it whole and ends cleanly, as a plain request does."""
    async with listening(UntilClose()) as srv:
        pool = stream_pool(srv)
        stream = await pool.stream("GET", "/watch", {})
        assert (stream.status, await stream.read_all()) == (422, b'{"a": 1}')
        assert await stream.read() == b""
        await pool.close()


async def test_a_streamed_chunked_body_cut_short_is_a_closed_connection() -> None:
    async with listening(UntilClose(cut=True)) as srv:
        pool = stream_pool(srv)
        stream = await pool.stream("GET", "/watch", {})
        with pytest.raises(ConnectionClosed):
            await stream.read_all()
        await pool.close()
