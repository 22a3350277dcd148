"""HttpsServer: serves its routes over TLS once a certificate is set, and new connections get
a renewed certificate."""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mpi_controller.runtime.https import HttpsServer


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


def routes(app: web.Application) -> None:
    async def hello(request: web.Request) -> web.Response:
        return web.json_response({"path": request.path})

    app.router.add_post("/convert", hello)


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
            f"https://localhost:{port}/convert", ssl=ctx) as resp:
        return await resp.json()


async def test_waits_for_a_certificate_then_serves_and_rotates() -> None:
    server = HttpsServer("127.0.0.1", 0, routes, name="test")
    task = asyncio.create_task(server.run())
    await asyncio.sleep(0.05)
    assert not server.ready()
    first = self_signed(1)
    server.set_certificate(*first)
    await until(server.ready)
    assert server.ready()
    assert server.bound_port is not None
    port = server.bound_port
    assert await post_trusting(port, first[0]) == {"path": "/convert"}
    second = self_signed(2)
    server.set_certificate(*second)
    assert await post_trusting(port, second[0]) == {"path": "/convert"}
    with pytest.raises(aiohttp.ClientConnectorCertificateError):
        await post_trusting(port, first[0])  # the old certificate is no longer served
    with pytest.raises(ssl.SSLError):
        server.set_certificate(second[0], self_signed(3)[1])  # key does not match
    assert await post_trusting(port, second[0]) == {"path": "/convert"}
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not server.ready()


async def test_stopping_does_not_wait_on_a_stalled_request() -> None:
    # A client that sent its headers and part of the body, then went quiet: stopping the server
    # waits at most shutdown_timeout for it, not aiohttp's 60 s (make chaos's webhook-restarts
    # run saw a SIGTERMed replica held 30 s that way).
    def reading(app: web.Application) -> None:
        async def read(request: web.Request) -> web.Response:
            return web.json_response({"size": len(await request.read())})

        app.router.add_post("/convert", read)

    server = HttpsServer("127.0.0.1", 0, reading, name="test", shutdown_timeout=0.5)
    cert = self_signed(1)
    server.set_certificate(*cert)
    task = asyncio.create_task(server.run())
    await until(server.ready)
    assert server.bound_port is not None
    ctx = ssl.create_default_context(cadata=cert[0].decode())
    _, writer = await asyncio.open_connection("localhost", server.bound_port, ssl=ctx)
    writer.write(b"POST /convert HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n"
                 b"0123456789")
    await writer.drain()
    await asyncio.sleep(0.2)  # the handler is reading the body
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)  # TimeoutError if it waited for the client
    assert not server.ready()
    writer.close()


async def test_stopping_drains_first_serving_with_connection_close() -> None:
    # Cancelled, the server is not ready but still answers for `drain` seconds, each response
    # closing its connection (a client reusing a kept-alive connection as the listener closed
    # got EOF: make chaos's webhook-restarts-2 run).
    server = HttpsServer("127.0.0.1", 0, routes, name="test", drain=1.0)
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
            assert await resp.json() == {"path": "/convert"}
            assert resp.headers["Connection"].lower() == "close"
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    with pytest.raises(aiohttp.ClientConnectorError):
        await post_trusting(port, cert[0])  # the listener is closed after the drain
