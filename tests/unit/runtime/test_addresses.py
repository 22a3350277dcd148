"""Where the lean client connects: an IP address is used as it is (no resolver thread), a name
goes through the loop's ``getaddrinfo``."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from mpi_controller.runtime.sockconn import addresses


async def test_an_ip_address_is_used_without_the_resolver(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    loop = asyncio.get_running_loop()

    async def no_resolver(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("getaddrinfo called for an IP address")
    monkeypatch.setattr(loop, "getaddrinfo", no_resolver)
    assert await addresses(loop, "127.0.0.1", 6443) == [
        (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", 6443))]
    assert await addresses(loop, "10.96.0.1", 443) == [
        (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("10.96.0.1", 443))]
    assert await addresses(loop, "::1", 6443) == [
        (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("::1", 6443, 0, 0))]


async def test_a_name_is_resolved_by_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = asyncio.get_running_loop()
    asked: list[tuple[Any, ...]] = []
    answer = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.7", 443))]

    async def resolver(host: str, port: int, **kwargs: Any) -> Any:
        asked.append((host, port, kwargs))
        return answer
    monkeypatch.setattr(loop, "getaddrinfo", resolver)
    assert await addresses(loop, "api.example.test", 443) == answer
    assert await addresses(loop, "fe80::1%eth0", 443) == answer  # a scoped address: resolved
    assert asked == [("api.example.test", 443, {"type": socket.SOCK_STREAM}),
                     ("fe80::1%eth0", 443, {"type": socket.SOCK_STREAM})]


async def test_localhost_resolves_to_a_loopback_address() -> None:
    found = await addresses(asyncio.get_running_loop(), "localhost", 80)
    assert found
    assert {info[4][0] for info in found} <= {"127.0.0.1", "::1"}
