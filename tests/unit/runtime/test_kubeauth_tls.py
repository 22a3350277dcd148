"""The TLS settings the lean transport takes from a configuration are the ones
``kubernetes_asyncio``'s ``RESTClientObject`` gives its aiohttp session (CA file or the system's
CAs, client certificate, ``verify_ssl``, ``disable_strict_ssl_verification``,
``tls_server_name``), and an :class:`ApiSession` makes that aiohttp session only when it is
asked for, with the proxy resolved once."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.kubeauth import ApiSession, kube_auth, ssl_context
from mpi_controller.runtime.rest import RestClient
from mpi_controller.runtime.transport import LeanPools, resolve_proxy_once
from tests.unit.runtime.test_https import self_signed

THINGS = Resource("", "v1", "things", namespaced=False, kind="Thing")


@pytest.fixture
def pems(tmp_path: Path) -> dict[str, str]:
    """A server certificate (``localhost``) and a client certificate, as files."""
    files = {}
    for name, serial in (("server", 11), ("client", 12)):
        cert, key = self_signed(serial)
        (tmp_path / f"{name}.crt").write_bytes(cert)
        (tmp_path / f"{name}.key").write_bytes(key)
        files[name] = str(tmp_path / f"{name}.crt")
        files[f"{name}_key"] = str(tmp_path / f"{name}.key")
    return files


def _configuration(**settings: Any) -> Any:
    cfg = kube_auth().Configuration(host="https://127.0.0.1:6443")
    for name, value in settings.items():
        setattr(cfg, name, value)
    return cfg


def _observable(context: ssl.SSLContext) -> dict[str, Any]:
    """What a context does with a handshake, as far as the ssl module shows it."""
    return {"protocol": context.protocol, "verify_mode": context.verify_mode,
            "check_hostname": context.check_hostname, "verify_flags": context.verify_flags,
            "options": context.options, "minimum_version": context.minimum_version,
            "maximum_version": context.maximum_version, "ca_count": context.cert_store_stats(),
            "cas": context.get_ca_certs()}


SETTINGS: dict[str, dict[str, Any]] = {
    "system CAs": {},
    "CA file": {"ssl_ca_cert": "server"},
    "client certificate": {"ssl_ca_cert": "server", "cert_file": "client",
                           "key_file": "client_key"},
    "no verification": {"verify_ssl": False},
    "not strict": {"ssl_ca_cert": "server", "disable_strict_ssl_verification": True},
    "server name": {"ssl_ca_cert": "server", "tls_server_name": "localhost"},
}


@pytest.mark.parametrize("case", SETTINGS)
async def test_the_context_is_the_one_the_aiohttp_session_gets(
        case: str, pems: dict[str, str]) -> None:
    settings = {k: pems.get(v, v) if isinstance(v, str) else v
                for k, v in SETTINGS[case].items()}
    cfg = _configuration(**settings)
    rest = kube_auth().RESTClientObject(cfg)
    try:
        theirs = rest.pool_manager.connector._ssl
        ours = ssl_context(cfg)
        assert _observable(ours) == _observable(theirs)
        session = ApiSession(cfg)
        assert _observable(session.ssl_context) == _observable(theirs)
        assert session.server_hostname == (rest.server_hostname or None)
    finally:
        await rest.close()


def test_the_settings_change_what_they_should() -> None:
    """The comparison above compares contexts that differ where the settings differ."""
    plain = ssl_context(_configuration())
    loose = ssl_context(_configuration(verify_ssl=False, disable_strict_ssl_verification=True))
    assert (plain.verify_mode, plain.check_hostname) == (ssl.CERT_REQUIRED, True)
    assert (loose.verify_mode, loose.check_hostname) == (ssl.CERT_NONE, False)
    assert loose.verify_flags & ssl.VERIFY_X509_STRICT == 0


@pytest_asyncio.fixture(loop_scope="function")
async def mutual_tls(pems: dict[str, str]) -> AsyncIterator[tuple[int, list[str]]]:
    """A TLS server for ``localhost`` that requires the client certificate; it answers every
    request with ``{}`` and records the request lines."""
    serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    serving.load_cert_chain(pems["server"], pems["server_key"])
    serving.verify_mode = ssl.CERT_REQUIRED
    serving.load_verify_locations(pems["client"])
    seen: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            seen.append(head.split(b"\r\n")[0].decode())
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass  # a client that failed its handshake
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=serving)
    try:
        yield server.sockets[0].getsockname()[1], seen
    finally:
        server.close()
        await server.wait_closed()


async def test_a_client_certificate_and_server_name_reach_the_server(
        mutual_tls: tuple[int, list[str]], pems: dict[str, str]) -> None:
    port, seen = mutual_tls
    cfg = _configuration(ssl_ca_cert=pems["server"], cert_file=pems["client"],
                         key_file=pems["client_key"], tls_server_name="localhost")
    cfg.host = f"https://127.0.0.1:{port}"
    session = ApiSession(cfg)
    async with RestClient(session, qps=0, request_timeout=10.0) as kube:
        assert await kube.get(THINGS, "a") == {}
        assert session._rest is None  # the aiohttp session was never made
    assert seen == ["GET /api/v1/things/a HTTP/1.1"]


async def test_without_the_client_certificate_the_server_refuses(
        mutual_tls: tuple[int, list[str]], pems: dict[str, str]) -> None:
    port, seen = mutual_tls
    cfg = _configuration(ssl_ca_cert=pems["server"], tls_server_name="localhost")
    cfg.host = f"https://127.0.0.1:{port}"
    async with RestClient(ApiSession(cfg), qps=0, request_timeout=10.0) as kube:
        with pytest.raises(ApiError) as refused:
            await kube.get(THINGS, "a")
    assert (refused.value.status, refused.value.reason) == (0, "ConnectionError")
    assert seen == []


@pytest.fixture
def proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")


async def test_the_proxy_is_resolved_once_and_given_to_the_session_made_later(
        proxy_env: None) -> None:
    session = ApiSession(_configuration())
    resolve_proxy_once(session)
    assert session.proxy == "http://proxy.example:3128"
    assert session._rest is None
    assert LeanPools(4).pool(session) is None  # through aiohttp, behind the proxy
    rest = session.rest_client
    try:
        assert session.rest_client is rest
        assert rest.proxy == "http://proxy.example:3128"
        assert rest.pool_manager._trust_env is False
    finally:
        await session.close()
    assert session._rest is None
    await session.close()  # idempotent


async def test_a_configured_proxy_wins_and_no_proxy_means_the_lean_pools(
        proxy_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    session = ApiSession(_configuration(proxy="http://configured:8080"))
    resolve_proxy_once(session)
    assert session.proxy == "http://configured:8080"
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    bypassed = ApiSession(_configuration())
    resolve_proxy_once(bypassed)
    assert bypassed.proxy is None
    pools = LeanPools(4)
    found = pools.pool(bypassed)
    assert found is not None
    assert found[0].open_connections == 0
    await pools.close()
    assert bypassed._rest is None


async def test_with_the_pools_disabled_the_session_is_made_on_first_use_and_carries_all(
) -> None:
    """Through aiohttp (``max_connections=0``): a plain request, then a watch whose connection
    is cut inside a chunk, which ends it with a transport error (``status == 0``)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if b"watch=true" in head:
            event = b'{"type": "ADDED", "object": {}}\n'
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n"
                         b"%x\r\n%s\r\n10\r\n{\"ty" % (len(event), event))
        else:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    cfg = kube_auth().Configuration(host=f"http://127.0.0.1:{port}")
    session = ApiSession(cfg)
    try:
        async with RestClient(session, qps=0, request_timeout=10.0, max_connections=0) as kube:
            assert session._rest is None
            assert await kube.get(THINGS, "a") == {}
            assert session._rest is not None
            events: list[Any] = []

            async def watch_all() -> None:
                async with kube.watch(THINGS) as watch:
                    async for event in watch:
                        events.append(event)

            with pytest.raises(ApiError) as cut:
                await watch_all()
            assert events == [{"type": "ADDED", "object": {}}]
            assert (cut.value.status, cut.value.reason) == (0, "ConnectionError")
        assert session._rest is None  # closed with the client
    finally:
        server.close()
        await server.wait_closed()
