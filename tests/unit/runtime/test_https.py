"""HttpsServer: serves its routes over TLS once a certificate is set (new connections get a
renewed one), keeps connections alive, answers what it does not serve with the status that
says why, and stops without waiting on idle or stalled clients."""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mpi_controller.runtime.codec import dumps, loads
from mpi_controller.runtime.https import Answer, Handler, HttpsServer, Request


def self_signed(serial: int) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(serial)
            .not_valid_before(now - dt.timedelta(minutes=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


async def echo(request: Request) -> Answer:
    return Answer(200, dumps({"path": request.path, "query": request.query,
                              "body": request.body.decode(),
                              "type": request.headers.get("content-type")}))


ROUTES: dict[str, Handler] = {"/convert": echo}


async def until(condition: Callable[[], bool], timeout: float = 2.0) -> None:
    """Poll ``condition`` every 10 ms until it holds; fail after ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"{condition} still false"
        await asyncio.sleep(0.01)


async def post_trusting(port: int, ca_pem: bytes) -> Any:
    """POST /convert on a new connection that trusts only ``ca_pem``."""
    ctx = ssl.create_default_context(cadata=ca_pem.decode())
    async with aiohttp.ClientSession() as http, http.post(
            f"https://localhost:{port}/convert", ssl=ctx, data=b"{}") as resp:
        return await resp.json()


@asynccontextmanager
async def serving(routes: dict[str, Handler] | None = None, **options: Any
                  ) -> AsyncIterator[tuple[HttpsServer, bytes]]:
    """A server with a certificate, listening; cancelled (and awaited) at the end."""
    options.setdefault("drain", 0)
    server = HttpsServer("127.0.0.1", 0, routes or ROUTES, name="test", **options)
    cert = self_signed(1)
    server.set_certificate(*cert)
    task = asyncio.create_task(server.run())
    await until(server.ready)
    try:
        yield server, cert[0]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@asynccontextmanager
async def session(routes: dict[str, Handler]) -> AsyncIterator[aiohttp.ClientSession]:
    """An aiohttp session whose relative URLs go to ``routes``, served over HTTPS."""
    async with serving(routes) as (server, ca):
        context = ssl.create_default_context(cadata=ca.decode())
        async with aiohttp.ClientSession(f"https://localhost:{server.bound_port}",
                                         connector=aiohttp.TCPConnector(ssl=context)) as http:
            yield http


class Raw:
    """A TLS connection that sends bytes as given and reads answers one by one."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, server: HttpsServer, ca: bytes) -> Raw:
        assert server.bound_port is not None
        ctx = ssl.create_default_context(cadata=ca.decode())
        return cls(*await asyncio.open_connection("localhost", server.bound_port, ssl=ctx))

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def answer(self) -> tuple[int, dict[str, str], bytes]:
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), 5)
        status_line, *lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return int(status_line.split(" ")[1]), headers, body

    async def closed_by_server(self) -> bool:
        return await asyncio.wait_for(self.reader.read(), 5) == b""

    def close(self) -> None:
        self.writer.close()


def post(body: bytes = b"{}", path: str = "/convert", *extra: str) -> bytes:
    head = [f"POST {path} HTTP/1.1", "Host: localhost", "Content-Type: application/json",
            f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def test_waits_for_a_certificate_then_serves_and_rotates() -> None:
    server = HttpsServer("127.0.0.1", 0, ROUTES, name="test")
    task = asyncio.create_task(server.run())
    await asyncio.sleep(0.05)
    assert not server.ready()
    first = self_signed(1)
    server.set_certificate(*first)
    await until(server.ready)
    assert server.bound_port is not None
    port = server.bound_port
    served = {"path": "/convert", "query": "", "body": "{}", "type": "application/octet-stream"}
    assert await post_trusting(port, first[0]) == served
    second = self_signed(2)
    server.set_certificate(*second)
    assert await post_trusting(port, second[0]) == served
    with pytest.raises(aiohttp.ClientConnectorCertificateError):
        await post_trusting(port, first[0])  # the old certificate is no longer served
    with pytest.raises(ssl.SSLError):
        server.set_certificate(second[0], self_signed(3)[1])  # key does not match
    assert await post_trusting(port, second[0]) == served
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not server.ready()


async def test_one_connection_carries_request_after_request() -> None:
    async with serving() as (server, ca):
        raw = await Raw.open(server, ca)
        await raw.send(post(b'{"n":1}', "/convert?timeout=30s"))
        status, headers, body = await raw.answer()
        assert (status, loads(body)) == (200, {"path": "/convert", "query": "timeout=30s",
                                               "body": '{"n":1}', "type": "application/json"})
        assert headers["content-type"] == "application/json"
        assert "connection" not in headers
        # the next one in pieces (head split, body after a pause), then two at once
        whole = post(b'{"n":2}')
        await raw.send(whole[:7])
        await asyncio.sleep(0.05)
        await raw.send(whole[7:-3])
        await asyncio.sleep(0.05)
        await raw.send(whole[-3:])
        assert loads((await raw.answer())[2])["body"] == '{"n":2}'
        await raw.send(post(b'{"n":3}') + post(b'{"n":4}'))
        assert [loads((await raw.answer())[2])["body"] for _ in range(2)] == ['{"n":3}',
                                                                              '{"n":4}']
        raw.close()


async def test_what_is_not_served_gets_the_status_that_says_why() -> None:
    async def broken(request: Request) -> Answer:
        raise RuntimeError("boom")

    async with serving({**ROUTES, "/broken": broken}, max_body=64) as (server, ca):
        raw = await Raw.open(server, ca)
        await raw.send(post(path="/nowhere"))
        assert (await raw.answer())[::2] == (404, b"404: Not Found\n")
        await raw.send(b"GET /convert HTTP/1.1\r\nHost: localhost\r\n\r\n")
        status, headers, body = await raw.answer()
        assert (status, headers["allow"], body) == (405, "POST", b"405: Method Not Allowed\n")
        await raw.send(post(path="/broken"))
        assert (await raw.answer())[::2] == (500, b"500: Internal Server Error\n")
        await raw.send(post())  # the connection still serves
        assert (await raw.answer())[0] == 200
        raw.close()
        for request, status, says in [
                (b"NOT HTTP\r\n\r\n", 400, b"bad request line 'NOT HTTP'\n"),
                (b"POST /convert HTTP/1.1\r\nbad header\r\n\r\n", 400,
                 b"bad header line 'bad header'\n"),
                (post(b"x" * 65), 413, b"the body (65 bytes) is over the 64 this server reads\n"),
                (b"POST /convert HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501,
                 b"a request body with a Transfer-Encoding is not read; send its "
                 b"Content-Length\n")]:
            raw = await Raw.open(server, ca)
            await raw.send(request)
            got, headers, body = await raw.answer()
            assert (got, headers["connection"], body) == (status, "close", says)
            assert await raw.closed_by_server()
            raw.close()


async def test_expect_continue_and_closing_clients() -> None:
    async with serving() as (server, ca):
        raw = await Raw.open(server, ca)
        await raw.send(b"POST /convert HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue"
                       b"\r\n\r\n")
        assert await asyncio.wait_for(raw.reader.readuntil(b"\r\n\r\n"), 5) == \
            b"HTTP/1.1 100 Continue\r\n\r\n"
        await raw.send(b"{}")
        assert (await raw.answer())[0] == 200
        await raw.send(post(b"{}", "/convert", "Connection: close"))
        status, headers, _ = await raw.answer()
        assert (status, headers["connection"]) == (200, "close")
        assert await raw.closed_by_server()
        raw.close()
        raw = await Raw.open(server, ca)  # HTTP/1.0 is kept alive only when it asks
        await raw.send(post().replace(b"HTTP/1.1", b"HTTP/1.0"))
        status, headers, _ = await raw.answer()
        assert (status, headers["connection"]) == (200, "close")
        assert await raw.closed_by_server()
        raw.close()


async def test_idle_and_slow_connections_are_closed() -> None:
    async with serving(keepalive_timeout=0.3, head_timeout=0.3) as (server, ca):
        idle = await Raw.open(server, ca)
        await idle.send(post())
        assert (await idle.answer())[0] == 200
        slow = await Raw.open(server, ca)
        await slow.send(post()[:20])  # a head that never ends
        started = asyncio.get_running_loop().time()
        assert await idle.closed_by_server()
        assert await slow.closed_by_server()
        assert asyncio.get_running_loop().time() - started < 2
        idle.close()
        slow.close()


async def test_stopping_does_not_wait_on_a_stalled_request() -> None:
    # A client that sent its headers and part of the body, then went quiet: stopping the server
    # does not wait for it (make chaos's webhook-restarts run saw a SIGTERMed replica held 30 s
    # by such a client on the server these webhooks had before).
    server = HttpsServer("127.0.0.1", 0, ROUTES, name="test", shutdown_timeout=30, drain=0)
    cert = self_signed(1)
    server.set_certificate(*cert)
    task = asyncio.create_task(server.run())
    await until(server.ready)
    raw = await Raw.open(server, cert[0])
    await raw.send(b"POST /convert HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n"
                   b"0123456789")
    await asyncio.sleep(0.2)  # the server is reading the body
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)  # TimeoutError if it waited for the client
    assert not server.ready()
    assert await raw.closed_by_server()
    raw.close()


async def test_stopping_lets_a_handler_at_work_finish_within_the_shutdown_timeout() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(request: Request) -> Answer:
        started.set()
        await release.wait()
        return Answer(200, b'"done"')

    server = HttpsServer("127.0.0.1", 0, {"/slow": slow}, name="test", shutdown_timeout=0.5,
                         drain=0)
    cert = self_signed(1)
    server.set_certificate(*cert)
    task = asyncio.create_task(server.run())
    await until(server.ready)
    first, second = await Raw.open(server, cert[0]), await Raw.open(server, cert[0])
    await first.send(post(path="/slow"))
    await started.wait()
    task.cancel()
    await until(lambda: not server.ready())  # stopping: the handler is still at work
    release.set()
    status, headers, body = await first.answer()
    assert (status, headers["connection"], body) == (200, "close", b'"done"')
    assert await second.closed_by_server()  # idle: closed at once
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    first.close()
    second.close()
    # A handler that does not finish is cancelled after the shutdown timeout.
    started.clear()
    release.clear()
    task = asyncio.create_task(server.run())
    await until(server.ready)
    raw = await Raw.open(server, cert[0])
    await raw.send(post(path="/slow"))
    await started.wait()
    begun = asyncio.get_running_loop().time()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert 0.4 < asyncio.get_running_loop().time() - begun < 2
    assert await raw.closed_by_server()
    raw.close()


async def test_stopping_drains_first_serving_with_connection_close() -> None:
    # Cancelled, the server is not ready but still answers for `drain` seconds, each response
    # closing its connection (a client reusing a kept-alive connection as the listener closed
    # got EOF: make chaos's webhook-restarts-2 run).
    server = HttpsServer("127.0.0.1", 0, ROUTES, name="test", drain=1.0)
    cert = self_signed(1)
    server.set_certificate(*cert)
    task = asyncio.create_task(server.run())
    await until(server.ready)
    port = server.bound_port
    assert port is not None
    ctx = ssl.create_default_context(cadata=cert[0].decode())
    async with aiohttp.ClientSession() as http:
        async with http.post(f"https://localhost:{port}/convert", ssl=ctx) as resp:
            assert resp.headers.get("Connection", "").lower() != "close"
        task.cancel()
        await until(lambda: not server.ready())
        async with http.post(f"https://localhost:{port}/convert", ssl=ctx) as resp:
            assert (await resp.json())["path"] == "/convert"
            assert resp.headers["Connection"].lower() == "close"
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    with pytest.raises(aiohttp.ClientConnectorError):
        await post_trusting(port, cert[0])  # the listener is closed after the drain
