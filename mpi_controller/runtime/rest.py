"""Raw-JSON Kubernetes API access: :class:`RestClient`, the
:class:`~mpi_controller.runtime.kubeclient.KubeClient` of a real API server.

Contract:

* One :class:`RestClient` owns one :class:`~mpi_controller.runtime.kubeauth.ApiSession` (or a
  ``kubernetes_asyncio`` ``ApiClient``: one aiohttp session, ``read_bufsize`` 2 MiB) for the
  life of the process; close it last. Authentication (bearer tokens with the
  in-cluster refresh hook, exec plugins, client certificates) comes from its
  ``kubernetes_asyncio`` configuration, loaded without the generated models
  (:mod:`~mpi_controller.runtime.kubeauth`). Plain dicts in and out; no model objects.
  The proxy (``$HTTPS_PROXY``/``$NO_PROXY``) is resolved once, when the client is made; the
  session's per-request environment and ``~/.netrc`` lookups (``trust_env``, each a hop to a
  thread: ~10% of the controller's CPU under load) are turned off.
* Every request has a timeout (``request_timeout``, default 30 s; watches: connect 10 s and a
  read timeout of the server-side ``timeoutSeconds`` + 30 s) and, watches aside, passes a
  client-side token bucket (:class:`~mpi_controller.runtime.throttle.RequestThrottle`;
  ``qps``/``burst`` like client-go's ``--kube-api-qps``/``--kube-api-burst``; ``qps <= 0``
  disables it). client-go does not rate-limit watches either (``Request.Watch``), and an
  informer's streaming list is a watch: with the default 5/s and a burst of 10, taking tokens
  for them held back the start-up of a controller with 22 informers by 1.2 s.
  ``client_groups`` gives API groups buckets of their own, as a Go operator's clientsets built
  from one ``rest.Config`` each have one; other groups share the default one;
  :meth:`RestClient.with_own_bucket` is another clientset (an event recorder's).
* Requests go through the lean HTTP/1.1 client of :mod:`~mpi_controller.runtime.http1` with
  the configuration's ``SSLContext`` and ``tls_server_name``: plain ones through its keep-alive
  pool (at most ``max_connections``), watches each on a connection of its own. With a proxy,
  or ``max_connections=0``, everything goes through aiohttp
  (:mod:`~mpi_controller.runtime.viaaiohttp`), which is imported then and only then.
  :meth:`RestClient.close` closes both.
* Every failure is an :class:`~mpi_controller.runtime.errors.ApiError`: HTTP errors carry the
  server's ``Status``; timeouts and connection failures have ``status == 0`` and are
  retriable. ``asyncio.CancelledError`` is never converted.
* :meth:`RestClient.watch` returns a :class:`~mpi_controller.runtime.watch.WatchStream`.
* ``result=False`` (create, update_status, delete): the answer is read but not decoded; ``{}``.
* A create where the namespace was just refused as being deleted fails alike for a second,
  no request sent (:mod:`~mpi_controller.runtime.terminating`).
"""

from __future__ import annotations

import asyncio
import copy
import functools
import os
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.codec import Codec, loads
from mpi_controller.runtime.errors import transport_error
from mpi_controller.runtime.http1 import Http1Pool
from mpi_controller.runtime.kubeauth import ApiSession, kube_auth
from mpi_controller.runtime.kubeclient import PATCH_CONTENT_TYPES, PatchType
from mpi_controller.runtime.kubeconfig import (
    DEFAULT_KUBECONFIG,
    ConfigError,
    Target,
    inspect_kubeconfig,
    kubeconfig_source,
)
from mpi_controller.runtime.terminating import TerminatingNamespaces
from mpi_controller.runtime.throttle import RequestThrottle
from mpi_controller.runtime.transport import (
    MAX_RETRY_AFTER,
    LeanPools,
    encode_body,
    open_stream,
    query_params,
    request_target,
    resolve_proxy_once,
    wait_or_raise,
)
from mpi_controller.runtime.watch import Body, WatchStream

if TYPE_CHECKING:  # imported on the aiohttp path only (see the module docstring)
    import aiohttp

__all__ = ["DEFAULT_MAX_CONNECTIONS", "MAX_RETRY_AFTER", "RestClient"]

_WATCH_CONNECT_TIMEOUT = 10.0
_WATCH_READ_SLACK = 30.0
_DEFAULT_KUBECONFIG = os.path.expanduser("~/.kube/config")

DEFAULT_MAX_CONNECTIONS = 16
"""Connections of the plain-request pool (idle and in use); see docs/performance.md."""
_T = TypeVar("_T")


def _unread(data: bytes) -> Obj:
    return {}  # the answer of a write whose caller does not read it (result=False)


def _name_ns(body: Mapping[str, Any], namespace: str | None) -> tuple[str, str | None]:
    meta = body.get("metadata") or {}
    return str(meta.get("name", "")), namespace or meta.get("namespace")


class RestClient:
    """:class:`KubeClient` over HTTP: raw-JSON CRUD, watch and patch for any
    :class:`Resource`."""

    def __init__(
        self,
        api_client: Any,
        *,
        qps: float = 5.0,
        burst: int = 10,
        request_timeout: float = 30.0,
        user_agent: str = "mpi-controller",
        clock: Clock | None = None,
        client_groups: Mapping[str, str] | None = None,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self.api_client = api_client
        self._lean = LeanPools(max_connections)
        self.request_timeout = request_timeout
        self.user_agent = user_agent
        self._clock: Clock = clock or LoopClock()
        self._client_groups = dict(client_groups or {})
        self._qps, self._burst = qps, burst
        self._buckets = {name: RequestThrottle(qps, burst, self._clock)
                         for name in {"", *self._client_groups.values()}}
        self.terminating = TerminatingNamespaces(self._clock)
        resolve_proxy_once(api_client)

    def with_own_bucket(self) -> RestClient:
        """This client with a token bucket of its own (same QPS and burst) for every request,
        sharing its connections, authentication and state: a Go operator's second clientset
        built from the same ``rest.Config`` (its event recorder's). Close the original only."""
        view = copy.copy(self)
        view._client_groups = {}
        view._buckets = {"": RequestThrottle(self._qps, self._burst, self._clock)}
        return view

    def _bucket(self, path: str) -> RequestThrottle:
        """The token bucket of the client that ``path``'s API group belongs to."""
        group = path.split("/")[2] if path.startswith("/apis/") else ""
        return self._buckets[self._client_groups.get(group, "")]

    # -- construction -------------------------------------------------------------------

    @classmethod
    async def from_kubeconfig(
        cls, path: str | None = None, context: str | None = None, **options: Any
    ) -> RestClient:
        """Load a kubeconfig (``path``, else ``$KUBECONFIG``, else ``~/.kube/config``)."""
        auth = kube_auth()
        cfg = auth.Configuration()
        path = path or os.environ.get("KUBECONFIG") or _DEFAULT_KUBECONFIG
        await auth.load_kube_config(
            config_file=path, context=context, client_configuration=cfg, persist_config=False
        )
        return cls._with_configuration(cfg, options)

    @classmethod
    async def from_incluster(cls, **options: Any) -> RestClient:
        """Use the pod's service account (the token file is re-read as it rotates)."""
        auth = kube_auth()
        cfg = auth.Configuration()
        auth.load_incluster_config(client_configuration=cfg)
        return cls._with_configuration(cfg, options)

    @classmethod
    async def connect(
        cls, kubeconfig: str = "", master: str = "", **options: Any
    ) -> tuple[RestClient, Target]:
        """The client of the API server the flags select, as client-go's
        ``BuildConfigFromFlags``: ``kubeconfig`` (``--kubeConfig``) first, then
        ``$KUBECONFIG``, then ``~/.kube/config``, else in-cluster; ``master`` overrides the
        server. Raises :class:`ConfigError` (one line naming the file and the problem) when
        none of them gives a usable configuration; makes no request."""
        auth = kube_auth()
        source = kubeconfig_source(kubeconfig)
        try:
            if source.paths:
                target = inspect_kubeconfig(source, master=master)
                kube = await cls.from_kubeconfig(os.pathsep.join(source.paths), **options)
            elif os.environ.get("KUBERNETES_SERVICE_HOST"):
                kube = await cls.from_incluster(**options)
                target = Target(master.rstrip("/") or kube.host, "", "", "in-cluster")
            elif master:
                kube = cls._with_configuration(auth.Configuration(), options)
                target = Target(master.rstrip("/"), "", "", f"--master {master}")
            else:
                raise ConfigError("no kubeconfig: pass --kubeConfig, set $KUBECONFIG or create "
                                  f"{DEFAULT_KUBECONFIG} (or run in a pod)")
        except (auth.ConfigException, OSError, ValueError) as err:
            raise ConfigError(f"{source.origin}: {str(err).splitlines()[0]}") from None
        if master:
            kube.api_client.configuration.host = master.rstrip("/")
        return kube, target

    @classmethod
    def _with_configuration(cls, cfg: Any, options: dict[str, Any]) -> RestClient:
        return cls(ApiSession(cfg), **options)

    async def close(self) -> None:
        await self._lean.close()
        await self.api_client.close()

    async def __aenter__(self) -> RestClient:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def host(self) -> str:
        return str(self.api_client.configuration.host)

    # -- transport ----------------------------------------------------------------------

    async def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": self.user_agent}
        if content_type:
            headers["Content-Type"] = content_type
        configuration = self.api_client.configuration
        if not configuration.api_key:  # no token: auth_settings() would return nothing
            return headers
        auth = await configuration.auth_settings()
        for setting in auth.values():
            if setting.get("in") == "header":
                headers[setting["key"]] = setting["value"]
        return headers

    async def _retrying(self, attempt: Callable[[bool], Awaitable[_T | float]]) -> _T:
        """``attempt(retry)`` until it returns an answer rather than seconds to wait.

        As client-go does, a 429 or 5xx answer with a ``Retry-After`` header is retried after
        that many seconds (at most :data:`MAX_RETRY_AFTER` times; the caller's deadline still
        bounds the whole): an overloaded API server asks callers to come back, and a Lease
        renewal that gives up at once loses leadership for nothing."""
        for n in range(MAX_RETRY_AFTER + 1):
            result = await attempt(n < MAX_RETRY_AFTER)
            if not isinstance(result, float):
                return result
            await self._clock.sleep(result)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _open(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        stream: tuple[float, float | None] | None = None,
    ) -> aiohttp.ClientResponse:
        """Send a request through aiohttp and return the open response; raise
        :class:`ApiError` on >= 400 (after the ``Retry-After`` retries of :meth:`_retrying`).
        ``stream``: a watch's connect and read timeouts, instead of ``request_timeout``."""
        from mpi_controller.runtime import viaaiohttp

        data, content_type = encode_body(body, content_type)
        params = query_params(query or {})
        rest = self.api_client.rest_client
        timeout = (viaaiohttp.stream_timeout(*stream) if stream is not None
                   else viaaiohttp.request_timeout(self.request_timeout))

        async def attempt(retry: bool) -> aiohttp.ClientResponse | float:
            if stream is None:  # watches take no token (module doc)
                await self._bucket(path).acquire()
            return await viaaiohttp.open_response(
                rest, method, self.host + path, params=params, data=data,
                headers=await self._headers(content_type), timeout=timeout, retry=retry)

        return await self._retrying(attempt)

    async def _lean_request(self, pool: Http1Pool, target: str, method: str, path: str, *,
                            body: Any, content_type: str | None) -> bytes:
        """A plain request through the lean pool, with the contract of :meth:`_open` and the
        read of the answer: the body of a < 400 answer."""
        data, content_type = encode_body(body, content_type)

        async def attempt(retry: bool) -> bytes | float:
            await self._bucket(path).acquire()
            headers = await self._headers(content_type)
            try:
                async with asyncio.timeout(self.request_timeout):
                    resp = await pool.request(method, target, headers, data)
            except OSError as exc:  # TimeoutError, connection and TLS failures
                raise transport_error(exc) from exc
            if resp.status < 400:
                return resp.body
            return wait_or_raise(resp.status, resp.headers.get("retry-after", ""), resp.body,
                                  retry=retry)

        return await self._retrying(attempt)

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        decode: Callable[[bytes], Any] = loads,
    ) -> Any:
        """One request; the decoded JSON response (``None`` for an empty body)."""
        lean = self._lean.pool(self.api_client)
        if lean is not None:
            target = request_target(lean[1], path, query_params(query or {}))
            data = await self._lean_request(lean[0], target, method, path, body=body,
                                            content_type=content_type)
            return decode(data) if data else None
        from mpi_controller.runtime.viaaiohttp import read_all

        resp = await self._open(method, path, query=query, body=body, content_type=content_type)
        data = await read_all(resp)
        return decode(data) if data else None

    # -- verbs --------------------------------------------------------------------------

    async def create(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        result: bool = True,
    ) -> Obj:
        """POST; ``namespace`` defaults to ``body.metadata.namespace``."""
        _, ns = _name_ns(body, namespace)
        created: Obj = await self.terminating.guard(ns, lambda: self.request(
            "POST", resource.path(ns), query={"fieldManager": field_manager}, body=body,
            decode=loads if result else _unread))
        return created

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        result: Obj = await self.request("GET", resource.path(namespace, name))
        return result

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        codec: Codec | None = None,
    ) -> Obj:
        """One LIST page: ``{"metadata": {"resourceVersion", "continue"}, "items": [...]}``
        (items decoded by ``codec`` when given)."""
        query = {
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
            "limit": limit or None,
            "continue": continue_ or None,
            "resourceVersion": resource_version,
            "resourceVersionMatch": resource_version_match or None,
            "timeoutSeconds": timeout_seconds,
        }
        decode = codec.decode_list if codec is not None else loads
        result: Obj = await self.request("GET", resource.path(namespace), query=query,
                                         decode=decode)
        return result

    def watch(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        allow_watch_bookmarks: bool = True,
        timeout_seconds: int | None = None,
        send_initial_events: bool | None = None,
        resource_version_match: str | None = None,
        codec: Codec | None = None,
    ) -> WatchStream:
        """Open a WATCH lazily (on first iteration); see :class:`WatchStream` (events decoded
        by ``codec`` when given)."""
        query = {
            "watch": True,
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
            "resourceVersion": resource_version or None,
            "resourceVersionMatch": resource_version_match or None,
            "allowWatchBookmarks": allow_watch_bookmarks or None,
            "timeoutSeconds": timeout_seconds,
            "sendInitialEvents": send_initial_events,
        }
        read = (timeout_seconds or 0) + _WATCH_READ_SLACK if timeout_seconds else None
        decode = codec.decode_event if codec is not None else loads
        connect = functools.partial(self._open_stream, resource.path(namespace), query, read)
        return WatchStream(connect, decode)

    async def _open_stream(self, path: str, query: Mapping[str, Any],
                           read_timeout: float | None) -> Body:
        """A GET read as it arrives (a watch), on a lean connection of its own or through
        aiohttp (see :func:`~mpi_controller.runtime.transport.open_stream`)."""
        lean = self._lean.pool(self.api_client)
        if lean is None:
            from mpi_controller.runtime.viaaiohttp import AiohttpBody

            return AiohttpBody(await self._open("GET", path, query=query,
                                                stream=(_WATCH_CONNECT_TIMEOUT, read_timeout)))
        target = request_target(lean[1], path, query_params(query))

        async def attempt(retry: bool) -> Body | float:
            return await open_stream(lean[0], target, await self._headers(None),
                                     connect_timeout=_WATCH_CONNECT_TIMEOUT,
                                     read_timeout=read_timeout, retry=retry)

        return await self._retrying(attempt)

    async def update(self, resource: Resource, body: Mapping[str, Any], *,
                     namespace: str | None = None, field_manager: str | None = None) -> Obj:
        """PUT the whole object; its ``metadata.resourceVersion`` makes it a guarded write."""
        return await self._put(resource, body, namespace, None, field_manager)

    async def update_status(self, resource: Resource, body: Mapping[str, Any], *,
                            namespace: str | None = None, field_manager: str | None = None,
                            result: bool = True) -> Obj:
        """PUT the ``status`` subresource."""
        return await self._put(resource, body, namespace, "status", field_manager,
                               result=result)

    async def _put(self, resource: Resource, body: Mapping[str, Any], namespace: str | None,
                   subresource: str | None, field_manager: str | None, *,
                   result: bool = True) -> Obj:
        name, ns = _name_ns(body, namespace)
        path = resource.path(ns, name, subresource)
        updated: Obj = await self.request(
            "PUT", path, query={"fieldManager": field_manager}, body=body,
            decode=loads if result else _unread,
        )
        return updated

    async def patch(self, resource: Resource, name: str, body: Any, *,
                    namespace: str | None = None, patch_type: PatchType = "merge",
                    field_manager: str | None = None, force: bool | None = None,
                    subresource: str | None = None) -> Obj:
        """PATCH with the content type for ``patch_type``; ``apply`` is server-side apply.

        Server-side apply needs ``field_manager``; ``force=True`` takes fields that another
        manager owns instead of failing with 409 Conflict.
        """
        if patch_type == "apply" and not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        query = {"fieldManager": field_manager, "force": force if patch_type == "apply" else None}
        path = resource.path(namespace, name, subresource)
        content_type = PATCH_CONTENT_TYPES[patch_type]
        result: Obj = await self.request(
            "PATCH", path, query=query, body=body, content_type=content_type
        )
        return result

    async def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
        grace_period_seconds: int | None = None,
        result: bool = True,
    ) -> Obj:
        """DELETE; ``preconditions`` may hold ``uid`` and/or ``resourceVersion``."""
        options: Obj = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = dict(preconditions)
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        deleted: Obj = await self.request(
            "DELETE", resource.path(namespace, name), body=options,
            decode=loads if result else _unread,
        )
        return deleted
