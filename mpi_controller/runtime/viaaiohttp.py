"""The aiohttp path of :class:`~mpi_controller.runtime.rest.RestClient`: requests and watches
when the lean pools of :mod:`~mpi_controller.runtime.transport` cannot carry them (a proxy is
configured, or the pools are disabled with ``max_connections=0``).

This module imports aiohttp (~26 MB of RSS and ~0.3 s of CPU with its dependencies), so it is
imported only when that path is taken; nothing on the default path imports it.

Contract:

* :func:`open_response` sends one request through the ``RESTClientObject``'s aiohttp session
  (its proxy and ``tls_server_name`` applied) and returns the open response of a < 400 answer,
  or, for a >= 400 one (read and released), what
  :func:`~mpi_controller.runtime.transport.wait_or_raise` says: the seconds to wait before a
  retry, else an :class:`~mpi_controller.runtime.errors.ApiError`.
* :func:`read_all` reads and releases a response.
* :class:`AiohttpBody` is a response read as it arrives, a
  :class:`~mpi_controller.runtime.watch.Body`.
* A timeout or a connection failure is an ``ApiError`` with ``status == 0`` from
  :func:`open_response` and :func:`read_all`, and an ``OSError`` (``TimeoutError`` for a
  timeout) from :meth:`AiohttpBody.read`, as the lean client's are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp

from mpi_controller.runtime.errors import transport_error
from mpi_controller.runtime.transport import wait_or_raise

__all__ = ["AiohttpBody", "open_response", "read_all", "request_timeout", "stream_timeout"]


def request_timeout(total: float) -> aiohttp.ClientTimeout:
    """The timeout of a plain request: ``total`` seconds for the whole."""
    return aiohttp.ClientTimeout(total=total)


def stream_timeout(connect: float, read: float | None) -> aiohttp.ClientTimeout:
    """The timeout of a watch: to connect, and between two reads (``None``: none)."""
    return aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=read)


async def open_response(rest: Any, method: str, url: str, *, params: Mapping[str, str],
                        data: bytes | None, headers: Mapping[str, str],
                        timeout: aiohttp.ClientTimeout,
                        retry: bool) -> aiohttp.ClientResponse | float:
    """See the module docstring."""
    kwargs: dict[str, Any] = {"params": params, "data": data, "headers": headers,
                              "timeout": timeout}
    if rest.proxy:
        kwargs["proxy"] = rest.proxy
    if rest.server_hostname:
        kwargs["server_hostname"] = rest.server_hostname
    try:
        resp: aiohttp.ClientResponse = await rest.pool_manager.request(method, url, **kwargs)
        if resp.status >= 400:
            async with resp:
                payload = await resp.read()
                return wait_or_raise(resp.status, resp.headers.get("Retry-After", ""), payload,
                                     retry=retry)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise transport_error(exc) from exc
    return resp


async def read_all(resp: aiohttp.ClientResponse) -> bytes:
    """The whole body of ``resp``, which is then released."""
    try:
        async with resp:
            return await resp.read()
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise transport_error(exc) from exc


class AiohttpBody:
    """An aiohttp response as a :class:`~mpi_controller.runtime.watch.Body`."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self._resp = resp

    async def read(self) -> bytes:
        try:
            return await self._resp.content.readany()
        except (TimeoutError, OSError):  # aiohttp's ServerTimeoutError is a TimeoutError
            raise
        except aiohttp.ClientError as exc:
            raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        self._resp.close()
