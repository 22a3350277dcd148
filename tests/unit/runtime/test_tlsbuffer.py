"""asyncio's TLS read buffer per connection is lowered, never raised."""

from __future__ import annotations

import asyncio.sslproto
from collections.abc import Iterator

import pytest

from mpi_controller.runtime.tlsbuffer import TLS_READ_BUFFER, limit_tls_read_buffer


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    before = asyncio.sslproto.SSLProtocol.max_size
    yield
    asyncio.sslproto.SSLProtocol.max_size = before


def test_the_buffer_of_new_connections_is_lowered_to_16_kib() -> None:
    asyncio.sslproto.SSLProtocol.max_size = 256 * 1024
    assert limit_tls_read_buffer() == TLS_READ_BUFFER == 16384
    assert asyncio.sslproto.SSLProtocol.max_size == 16384


def test_a_smaller_buffer_is_left_as_it_is() -> None:
    asyncio.sslproto.SSLProtocol.max_size = 8 * 1024
    assert limit_tls_read_buffer() == 8 * 1024
    assert asyncio.sslproto.SSLProtocol.max_size == 8 * 1024
