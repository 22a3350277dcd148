"""The health and metrics HTTP server, on the wire: exact status lines, headers and bodies for
GET and HEAD, unknown paths and methods, malformed and oversized request heads; one request
per connection; a stalled client is dropped; close ends the connections and the listener."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import prometheus_client
import pytest
import pytest_asyncio
from prometheus_client import CollectorRegistry, Counter

from mpi_controller.runtime import httpserve
from mpi_controller.runtime.httpserve import MAX_HEAD, Reply
from mpi_controller.runtime.metrics import HTTPServer, serve_http


async def exchange(port: int, request: bytes) -> bytes:
    """Send ``request`` on a new connection and read until the server closes it."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), timeout=10)
    finally:
        writer.close()


async def served(server: httpserve.Server) -> None:
    """Until the server has taken a connection in."""
    while not server._connections:
        await asyncio.sleep(0.01)


def get(path: str, method: str = "GET") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n".encode()


def plain(status: str, body: bytes, *extra: str) -> bytes:
    head = [f"HTTP/1.1 {status}", "Content-Type: text/plain; charset=utf-8",
            f"Content-Length: {len(body)}", "Connection: close", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@pytest_asyncio.fixture(loop_scope="function")
async def health() -> AsyncIterator[tuple[HTTPServer, dict[str, bool]]]:
    state = {"ok": True}

    def broken() -> bool:
        raise RuntimeError("boom")

    server = await serve_http("127.0.0.1", 0, healthz={"toggle": lambda: state["ok"]},
                              readyz={"first": lambda: False, "second": broken})
    try:
        yield server, state
    finally:
        await server.close()


async def test_checks_answer_ok_or_name_the_failing_ones(
        health: tuple[HTTPServer, dict[str, bool]]) -> None:
    server, state = health
    assert await exchange(server.port, get("/healthz")) == plain("200 OK", b"ok")
    state["ok"] = False
    assert await exchange(server.port, get("/healthz?verbose=1")) == plain(
        "500 Internal Server Error", b"failed: toggle\n")
    assert await exchange(server.port, get("/readyz")) == plain(
        "500 Internal Server Error", b"failed: first, second\n")


async def test_head_gets_the_get_answer_without_its_body(
        health: tuple[HTTPServer, dict[str, bool]]) -> None:
    server, _ = health
    assert await exchange(server.port, get("/healthz", "HEAD")) == plain(
        "200 OK", b"ok")[:-2]
    assert await exchange(server.port, get("/nowhere", "HEAD")) == plain(
        "404 Not Found", b"404: Not Found\n")[:-len(b"404: Not Found\n")]


async def test_unknown_paths_and_methods(health: tuple[HTTPServer, dict[str, bool]]) -> None:
    server, _ = health
    assert await exchange(server.port, get("/metricz")) == plain(
        "404 Not Found", b"404: Not Found\n")
    assert await exchange(server.port, get("/healthz", "POST")) == plain(
        "405 Method Not Allowed", b"405: Method Not Allowed\n", "Allow: GET, HEAD")


@pytest.mark.parametrize("request_head", [
    b"GET /healthz\r\n\r\n",  # no version
    b"GET /healthz HTTP/2.0\r\n\r\n",
    b"GET  /healthz HTTP/1.1\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nno colon here\r\n\r\n",
    b"\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nX: " + b"a" * MAX_HEAD + b"\r\n\r\n",  # over the bound
])
async def test_a_malformed_or_oversized_head_is_a_bad_request(
        health: tuple[HTTPServer, dict[str, bool]], request_head: bytes) -> None:
    server, _ = health
    assert await exchange(server.port, request_head) == plain(
        "400 Bad Request", b"400: Bad Request\n")


async def test_metrics_are_the_registry_in_the_prometheus_text_format() -> None:
    registry = CollectorRegistry()
    Counter("things", "Things seen.", registry=registry).inc(3)
    async with await serve_http("127.0.0.1", 0, registry=registry) as server:
        got = await exchange(server.port, get("/metrics"))
    body = prometheus_client.generate_latest(registry)
    assert body == (b"# HELP things_total Things seen.\n# TYPE things_total counter\n"
                    b"things_total 3.0\n")
    assert got == (f"HTTP/1.1 200 OK\r\nContent-Type: {prometheus_client.CONTENT_TYPE_LATEST}\r\n"
                   f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


async def test_a_route_that_raises_is_a_500() -> None:
    def failing() -> Reply:
        raise RuntimeError("boom")

    server = await httpserve.serve("127.0.0.1", 0, {"/x": failing})
    try:
        assert await exchange(server.port, get("/x")) == plain(
            "500 Internal Server Error", b"500: Internal Server Error\n")
    finally:
        await server.close()


async def test_a_request_cut_short_gets_no_answer_and_the_server_goes_on(
        health: tuple[HTTPServer, dict[str, bool]]) -> None:
    server, _ = health
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET /healthz HTTP/1.1\r\n")
    writer.write_eof()
    assert await asyncio.wait_for(reader.read(), timeout=10) == b""
    writer.close()
    assert await exchange(server.port, get("/healthz")) == plain("200 OK", b"ok")


async def test_a_stalled_client_is_dropped_after_the_head_timeout(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(httpserve, "HEAD_TIMEOUT", 0.05)
    server = await httpserve.serve("127.0.0.1", 0, {"/x": lambda: Reply(200, b"x")})
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /x HTTP/1.1\r\n")  # and nothing more
        assert await asyncio.wait_for(reader.read(), timeout=10) == b""
        writer.close()
    finally:
        await server.close()


async def test_close_ends_open_connections_and_stops_listening() -> None:
    server = await httpserve.serve("127.0.0.1", 0, {"/x": lambda: Reply(200, b"x")})
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET /x HTTP/1.1\r\n")  # a request in progress
    await writer.drain()
    await asyncio.wait_for(served(server), timeout=10)
    await server.close()
    assert await asyncio.wait_for(reader.read(), timeout=10) == b""
    writer.close()
    await server.close()  # idempotent
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", server.port)
