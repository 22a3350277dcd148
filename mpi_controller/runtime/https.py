"""An HTTPS server for webhooks, as a :class:`~mpi_controller.runtime.manager.Runnable`.

Contract:

* :class:`HttpsServer` serves the aiohttp routes it is given on ``host:port`` with TLS. It is
  an every-replica runnable: the API server calls webhooks on whichever replica its Service
  picks, leader or not.
* The serving certificate is pushed in with :meth:`HttpsServer.set_certificate` (PEM bytes),
  at start and whenever it is renewed; connections made afterwards get the new one (a running
  TLS session keeps the certificate it began with). The PEM files live in a private temporary
  directory (mode 0700) that is removed when the server stops.
* The site starts listening once a certificate is set; :meth:`ready` is true while it
  listens, so readiness (and with it the Service's endpoints) waits for the certificate.
* ``bound_port`` is the port bound while listening (useful with port 0).
* Request bodies up to ``client_max_size`` bytes are read (aiohttp's default is 1 MiB).
* Stopping (the task cancelled) first drains for ``drain`` seconds: :meth:`ready` turns false
  (the Service stops picking this replica) while requests are still served, each response
  closing its connection so no client reuses one that is about to close; then the listener
  closes and requests in flight get at most ``shutdown_timeout`` seconds (aiohttp's default,
  60 s, let one stalled client hold a terminating replica until the kubelet killed it). Without
  the drain, a request sent on a kept-alive connection as the replica stopped failed with EOF
  (``make chaos``'s ``webhook-restarts-2`` run).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import structlog
from aiohttp import web

__all__ = ["HttpsServer"]

_log = structlog.get_logger(__name__)


class HttpsServer:
    """Serves ``routes`` (added to a fresh aiohttp application) over TLS on ``host:port``."""

    def __init__(self, host: str, port: int, routes: Callable[[web.Application], None],
                 *, name: str = "https", client_max_size: int = 1 << 20,
                 shutdown_timeout: float = 5.0, drain: float = 2.0) -> None:
        self.host = host
        self.port = port
        self.name = name
        self._routes = routes
        self._client_max_size = client_max_size
        self._shutdown_timeout = shutdown_timeout
        self._drain = drain
        self._draining = False
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._dir: Path | None = None
        self._has_certificate = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.bound_port: int | None = None

    def set_certificate(self, cert_pem: bytes, key_pem: bytes) -> None:
        """Serve ``cert_pem`` (the chain, leaf first) with ``key_pem`` from now on.

        Raises ``ssl.SSLError`` (and keeps the previous certificate) when they do not match."""
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix=f"mpi-controller-{self.name}-"))
        staged = {}
        for name, data in (("tls.crt", cert_pem), ("tls.key", key_pem)):
            path = self._dir / (name + ".new")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            staged[name] = path
        try:
            self._context.load_cert_chain(staged["tls.crt"], staged["tls.key"])
        except (ssl.SSLError, OSError):
            for path in staged.values():
                path.unlink(missing_ok=True)
            raise
        for name, path in staged.items():
            path.replace(self._dir / name)
        self._has_certificate.set()
        _log.info("serving certificate loaded", server=self.name)

    async def run(self) -> None:
        try:
            await self._has_certificate.wait()
            app = web.Application(client_max_size=self._client_max_size,
                                  middlewares=[self._close_when_draining])
            self._routes(app)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=self._shutdown_timeout)
            await runner.setup()
            self._runner = runner
            site = web.TCPSite(runner, self.host, self.port, ssl_context=self._context)
            await site.start()
            self.bound_port = int(runner.addresses[0][1]) if runner.addresses else self.port
            _log.info("https server listening", server=self.name, port=self.bound_port)
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if self._runner is not None and self._drain > 0:
                self._draining = True
                _log.info("https server draining", server=self.name, seconds=self._drain)
                await asyncio.sleep(self._drain)
            raise
        finally:
            self._draining = False
            self.bound_port = None
            runner_, self._runner = self._runner, None
            if runner_ is not None:
                await asyncio.shield(runner_.cleanup())
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None

    def ready(self) -> bool:
        return self.bound_port is not None and not self._draining

    @web.middleware
    async def _close_when_draining(self, request: web.Request,
                                   handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                                   ) -> web.StreamResponse:
        response = await handler(request)
        if self._draining:
            response.force_close()
        return response
