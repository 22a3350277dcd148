"""What carries :class:`~mpi_controller.runtime.rest.RestClient`'s requests: :class:`LeanPools`,
the lean HTTP/1.1 keep-alive pools (:mod:`~mpi_controller.runtime.http1`) for plain requests and
watches, and the aiohttp session of its ``api_client`` when those cannot be used (a proxy; the
pools disabled; :mod:`~mpi_controller.runtime.viaaiohttp`). This module imports no aiohttp.

The ``api_client`` is a :class:`~mpi_controller.runtime.kubeauth.ApiSession` (its TLS settings
are its own; its aiohttp session is made only when first used) or a ``kubernetes_asyncio``
``ApiClient`` (its ``rest_client``'s aiohttp session holds them).

Contract:

* :func:`resolve_proxy_once` takes the proxy for the API server from the environment once and
  turns off the aiohttp session's per-request environment and ``~/.netrc`` lookups (each a hop
  to a thread; ~10% of the controller's CPU under load); an ``ApiSession``'s session, made
  later, is made that way.
* :meth:`LeanPools.pool` gives the pool for the client's current host (one per host, made on
  first use) with the path prefix of the host's URL, or ``None`` when requests must go through
  aiohttp: a proxy is configured, the pools are disabled (``max_connections <= 0``), or an
  ``ApiClient``'s session has no ``SSLContext`` of its own for an ``https`` host. The pool uses
  exactly the ``SSLContext`` aiohttp would (the configuration's CA, client certificate and
  verification settings) and ``tls_server_name``.
* :func:`request_target` is the request line's target: prefix and path percent-encoded as a URL
  path, and the query (``str`` values) percent-encoded.
* :meth:`LeanPools.close` closes every pool.
* The wire form both share: :func:`query_params` (``None`` values left out, booleans as
  ``true``/``false``), :func:`encode_body` (JSON unless a content type is given), and
  :func:`wait_or_raise`: a >= 400 answer is an :class:`ApiError`, except a 429 or 5xx (not
  501) with an integer ``Retry-After`` when a retry is left: then the seconds to wait
  (0 to 10, client-go's bounds; :data:`MAX_RETRY_AFTER` retries at most).
"""

from __future__ import annotations

import ssl
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from mpi_controller.runtime.codec import dumps
from mpi_controller.runtime.errors import ApiError, transport_error
from mpi_controller.runtime.http1 import BodyStream, Http1Pool
from mpi_controller.runtime.kubeauth import ApiSession

__all__ = ["MAX_RETRY_AFTER", "LeanPools", "encode_body", "open_stream", "query_params",
           "request_target", "resolve_proxy_once", "wait_or_raise"]

_PATH_SAFE = "/:@!$&'()*+,;="

MAX_RETRY_AFTER = 10  # client-go's maxRetries for Retry-After answers
_MAX_RETRY_AFTER_SECONDS = 10.0


def _retry_after(status: int, header: str) -> float | None:
    """Seconds to wait for a 429 or 5xx answer whose ``Retry-After`` header is ``header``,
    else None."""
    if status != 429 and not (500 <= status < 600 and status != 501):
        return None
    try:
        seconds = float(int(header))
    except ValueError:
        return None
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER_SECONDS)


def wait_or_raise(status: int, retry_after: str, payload: bytes, *, retry: bool) -> float:
    """The seconds to wait before retrying a >= 400 answer, or its :class:`ApiError`."""
    wait = _retry_after(status, retry_after) if retry else None
    if wait is None:
        raise ApiError.from_response(status, payload)
    return wait


def encode_body(body: Any, content_type: str | None) -> tuple[bytes | None, str | None]:
    """The request body's bytes and content type (JSON unless told)."""
    data = None if body is None else dumps(body)
    return data, ("application/json" if data is not None and content_type is None
                  else content_type)


def query_params(params: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


def _environment_proxy(host: str) -> str | None:
    url = urllib.parse.urlsplit(host)
    if url.hostname and not urllib.request.proxy_bypass(url.hostname):
        return urllib.request.getproxies().get(url.scheme) or None
    return None


def resolve_proxy_once(api_client: Any) -> None:
    """Take the proxy for the API server from the environment now, and stop the aiohttp
    session from looking up proxy variables and ~/.netrc (in a thread) on every request."""
    if isinstance(api_client, ApiSession):
        if not api_client.proxy:
            api_client.proxy = _environment_proxy(str(api_client.configuration.host))
        return
    rest = getattr(api_client, "rest_client", None)
    session: Any = getattr(rest, "pool_manager", None)
    if rest is None or not getattr(session, "_trust_env", False):
        return
    if not rest.proxy:
        rest.proxy = _environment_proxy(str(api_client.configuration.host))
    session._trust_env = False


def _tls(api_client: Any, https: bool) -> tuple[str | None, ssl.SSLContext | None, str | None]:
    """The proxy, the ``SSLContext`` (for an ``https`` host) and the ``tls_server_name`` of
    ``api_client``; an ``ApiClient``'s are its aiohttp session's."""
    if isinstance(api_client, ApiSession):
        return (api_client.proxy, api_client.ssl_context if https else None,
                api_client.server_hostname)
    rest = api_client.rest_client
    context = rest.pool_manager.connector._ssl
    return (rest.proxy, context if isinstance(context, ssl.SSLContext) else None,
            rest.server_hostname or None)


def request_target(prefix: str, path: str, query: Mapping[str, str]) -> str:
    target = urllib.parse.quote(prefix + path, safe=_PATH_SAFE)
    if query:
        target += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
    return target


class LeanPools:
    """The lean pools of one client, by host (see the module docstring)."""

    def __init__(self, max_connections: int) -> None:
        self.max_connections = max_connections
        self._pools: dict[str, tuple[Http1Pool, str]] = {}

    def pool(self, api_client: Any) -> tuple[Http1Pool, str] | None:
        host = str(api_client.configuration.host)
        found = self._pools.get(host)
        if found is not None:
            return found
        if self.max_connections <= 0:
            return None
        url = urllib.parse.urlsplit(host)
        https = url.scheme == "https"
        proxy, context, server_hostname = _tls(api_client, https)
        if proxy:
            return None
        if https and context is None:
            return None  # the session was given no context of its own: aiohttp's defaults
        pool = Http1Pool(scheme=url.scheme, host=url.hostname or "",
                         port=url.port or (443 if https else 80),
                         ssl_context=context if https else None,
                         server_hostname=server_hostname,
                         max_connections=self.max_connections)
        self._pools[host] = found = (pool, url.path.rstrip("/"))
        return found

    async def close(self) -> None:
        pools, self._pools = self._pools, {}
        for pool, _ in pools.values():
            await pool.close()


async def open_stream(pool: Http1Pool, target: str, headers: Mapping[str, str], *,
                      connect_timeout: float, read_timeout: float | None,
                      retry: bool) -> BodyStream | float:
    """See the module docstring."""
    try:
        stream = await pool.stream("GET", target, headers, connect_timeout=connect_timeout,
                                   read_timeout=read_timeout)
        if stream.status < 400:
            return stream
        try:
            payload = await stream.read_all()
        finally:
            stream.close()
    except OSError as exc:  # TimeoutError, connection and TLS failures
        raise transport_error(exc) from exc
    return wait_or_raise(stream.status, stream.headers.get("retry-after", ""), payload,
                         retry=retry)
