"""Raw-JSON Kubernetes API access over one long-lived ``kubernetes_asyncio`` ``ApiClient``.

Contract:

* :class:`KubeClient` is the protocol the controller codes against; :class:`RestClient`
  implements it for a real API server. One :class:`RestClient` owns one ``ApiClient`` (one
  aiohttp session, one connection pool,
  ``read_bufsize`` 2 MiB so large objects fit) for the life of the process; close it last.
  Authentication (bearer tokens, with the in-cluster refresh hook, client certificates) comes
  from that ``ApiClient``'s configuration; requests go straight to its aiohttp session with
  plain dicts in and out. No model objects are built: speed matters and the cache holds dicts.
  The proxy (``$HTTPS_PROXY``/``$NO_PROXY``) is resolved once, when the client is made: the
  session's per-request environment and ``~/.netrc`` lookups (``trust_env``), each a hop to a
  thread, are turned off (they cost ~10% of the controller's CPU under load).
* Every request has a timeout (``request_timeout``, default 30 s; watches: connect 10 s and a
  read timeout of the server-side ``timeoutSeconds`` + 30 s) and passes a client-side token
  bucket (``qps``/``burst`` like client-go's ``--kube-api-qps``/``--kube-api-burst``;
  ``qps <= 0`` disables it). ``client_groups`` gives API groups buckets of their own, as a Go
  operator's separate clientsets built from one ``rest.Config`` each have one (client-go's
  ``NewForConfig`` makes one token bucket per clientset); other groups share the default one.
* Every failure is an :class:`ApiError`, classified once here: HTTP errors carry the server's
  ``Status``; timeouts and connection failures have ``status == 0`` and are retriable.
  ``asyncio.CancelledError`` is never converted.
* :meth:`RestClient.watch` returns a :class:`WatchStream`: an async iterator of raw event dicts
  (``{"type": ..., "object": {...}}``; ``ERROR`` events are yielded as they come, see
  :meth:`ApiError.from_status`). It closes its HTTP response on end, error, cancellation or
  :meth:`WatchStream.aclose`; use ``async with`` to be sure.
"""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Protocol

import aiohttp
import structlog

from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.codec import Codec, dumps, loads
from mpi_controller.runtime.ratelimit import BucketRateLimiter

__all__ = [
    "CONFIGMAPS",
    "EVENTS",
    "JOBS",
    "LEASES",
    "NAMESPACES",
    "PODS",
    "PRIORITY_CLASSES",
    "ROLES",
    "ROLE_BINDINGS",
    "SECRETS",
    "SERVICES",
    "SERVICE_ACCOUNTS",
    "STATEFUL_SETS",
    "ApiError",
    "KubeClient",
    "PatchType",
    "Resource",
    "RestClient",
    "WatchEvents",
    "WatchStream",
]

log = structlog.get_logger(__name__)

Obj = dict[str, Any]
PatchType = Literal["merge", "json", "strategic", "apply"]

_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
_WATCH_CONNECT_TIMEOUT = 10.0
_WATCH_READ_SLACK = 30.0
_DEFAULT_KUBECONFIG = os.path.expanduser("~/.kube/config")


@dataclass(frozen=True, slots=True)
class Resource:
    """Where a kind of object lives in the API: ``/api[s]/{group}/{version}/.../{plural}``."""

    group: str
    version: str
    plural: str
    namespaced: bool = True
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``plural.group`` as the API server names it in messages (``pods`` for core)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name is not None:
            if not name:
                raise ValueError(f"empty name for {self.group_resource}")
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base


PODS = Resource("", "v1", "pods", kind="Pod")
SERVICES = Resource("", "v1", "services", kind="Service")
CONFIGMAPS = Resource("", "v1", "configmaps", kind="ConfigMap")
SECRETS = Resource("", "v1", "secrets", kind="Secret")
EVENTS = Resource("", "v1", "events", kind="Event")
NAMESPACES = Resource("", "v1", "namespaces", namespaced=False, kind="Namespace")
LEASES = Resource("coordination.k8s.io", "v1", "leases", kind="Lease")
JOBS = Resource("batch", "v1", "jobs", kind="Job")
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", kind="ServiceAccount")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", kind="Role")
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", kind="RoleBinding")
STATEFUL_SETS = Resource("apps", "v1", "statefulsets", kind="StatefulSet")
PRIORITY_CLASSES = Resource(
    "scheduling.k8s.io", "v1", "priorityclasses", namespaced=False, kind="PriorityClass"
)


class ApiError(Exception):
    """Any failed API call. ``status`` is the HTTP code, or 0 when no response arrived."""

    def __init__(
        self, status: int, reason: str = "", message: str = "", body: Obj | None = None
    ) -> None:
        super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body

    @classmethod
    def from_status(cls, status: Mapping[str, Any], http_status: int = 0) -> ApiError:
        """Build from a ``metav1.Status`` (a response body or a watch ``ERROR`` object)."""
        code = int(status.get("code") or http_status or 500)
        reason, message = str(status.get("reason", "")), str(status.get("message", ""))
        return cls(code, reason, message, dict(status))

    @classmethod
    def from_response(cls, http_status: int, data: bytes) -> ApiError:
        try:
            body = loads(data)
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("kind") == "Status":
            return cls.from_status(body, http_status)
        text = data[:512].decode("utf-8", "replace")
        return cls(http_status, _default_reason(http_status), text, None)

    @classmethod
    def not_found(cls, resource: Resource | None, name: str) -> ApiError:
        """The error the API returns for a missing object (listers raise it too)."""
        what = resource.group_resource if resource else "object"
        message = f'{what} "{name}" not found'
        details = {"name": name, "kind": resource.plural if resource else ""}
        body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                "reason": "NotFound", "details": details, "code": 404}
        return cls(404, "NotFound", message, body)

    def is_not_found(self) -> bool:
        return self.status == 404

    def is_already_exists(self) -> bool:
        return self.status == 409 and self.reason == "AlreadyExists"

    def is_conflict(self) -> bool:
        """A write lost an optimistic-concurrency race (409 other than AlreadyExists)."""
        return self.status == 409 and self.reason != "AlreadyExists"

    def is_gone(self) -> bool:
        """The resourceVersion (or continue token) is too old: relist."""
        return self.status == 410 or self.reason in ("Expired", "Gone")

    def is_forbidden(self) -> bool:
        return self.status == 403

    def is_too_many_requests(self) -> bool:
        return self.status == 429

    def is_timeout(self) -> bool:
        return self.status in (0, 504) and self.reason in ("Timeout", "GatewayTimeout")

    def is_retriable(self) -> bool:
        """Worth retrying unchanged: throttled, server error, timeout or connection failure."""
        return self.status in (0, 429) or self.status >= 500


MAX_RETRY_AFTER = 10  # client-go's maxRetries for Retry-After answers
_MAX_RETRY_AFTER_SECONDS = 10.0


def _retry_after(resp: aiohttp.ClientResponse) -> float | None:
    """Seconds to wait for a 429 or 5xx answer that carries ``Retry-After``, else None."""
    if resp.status != 429 and not (500 <= resp.status < 600 and resp.status != 501):
        return None
    header = resp.headers.get("Retry-After", "")
    try:
        seconds = float(int(header))
    except ValueError:
        return None
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER_SECONDS)


def _default_reason(status: int) -> str:
    return {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
            405: "MethodNotAllowed", 409: "Conflict", 410: "Expired", 415: "UnsupportedMediaType",
            422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
            503: "ServiceUnavailable", 504: "Timeout"}.get(status, "Unknown")


def _transport_error(exc: BaseException) -> ApiError:
    if isinstance(exc, TimeoutError):  # aiohttp's ServerTimeoutError is one too
        return ApiError(0, "Timeout", str(exc) or type(exc).__name__)
    return ApiError(0, "ConnectionError", f"{type(exc).__name__}: {exc}")


class _RequestThrottle:
    """client-go's client-side flowcontrol: every request takes a token from a
    :class:`~mpi_controller.runtime.ratelimit.BucketRateLimiter` (``burst`` tokens, refilled
    at ``qps`` per second) and sleeps until its reservation is due, so callers are served in
    order at the steady rate. ``qps <= 0`` turns it off."""

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        self._clock = clock
        self._bucket = BucketRateLimiter(qps, max(burst, 1), clock=clock) if qps > 0 else None

    async def acquire(self) -> None:
        if self._bucket is None:
            return
        delay = self._bucket.when(None)
        if delay > 0:
            await self._clock.sleep(delay)


def _query(params: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


def _name_ns(body: Mapping[str, Any], namespace: str | None) -> tuple[str, str | None]:
    meta = body.get("metadata") or {}
    return str(meta.get("name", "")), namespace or meta.get("namespace")


def _resolve_proxy_once(api_client: Any) -> None:
    """Take the proxy for the API server from the environment now, and stop the aiohttp
    session from looking up proxy variables and ~/.netrc (in a thread) on every request."""
    rest = getattr(api_client, "rest_client", None)
    session: Any = getattr(rest, "pool_manager", None)
    if rest is None or not getattr(session, "_trust_env", False):
        return
    if not rest.proxy:
        url = urllib.parse.urlsplit(str(api_client.configuration.host))
        if url.hostname and not urllib.request.proxy_bypass(url.hostname):
            rest.proxy = urllib.request.getproxies().get(url.scheme) or None
    session._trust_env = False


class WatchEvents(Protocol):
    """An open watch: an async iterator of raw event dicts that can be closed."""

    def __aiter__(self) -> WatchEvents: ...

    async def __anext__(self) -> Obj: ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> WatchEvents: ...

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None: ...


class KubeClient(Protocol):
    """What the controller needs of the API: raw-JSON verbs on any :class:`Resource`.

    :class:`RestClient` talks to a real API server; tests use an in-memory implementation.
    Every failure is an :class:`ApiError`."""

    async def create(self, resource: Resource, body: Mapping[str, Any], *,
                     namespace: str | None = None, field_manager: str | None = None) -> Obj: ...

    async def get(self, resource: Resource, name: str, *,
                  namespace: str | None = None) -> Obj: ...

    async def list(self, resource: Resource, *, namespace: str | None = None,
                   label_selector: str | None = None, field_selector: str | None = None,
                   limit: int | None = None, continue_: str | None = None,
                   resource_version: str | None = None,
                   resource_version_match: str | None = None,
                   timeout_seconds: int | None = None, codec: Codec | None = None) -> Obj: ...

    def watch(self, resource: Resource, *, namespace: str | None = None,
              label_selector: str | None = None, field_selector: str | None = None,
              resource_version: str | None = None, allow_watch_bookmarks: bool = True,
              timeout_seconds: int | None = None, send_initial_events: bool | None = None,
              resource_version_match: str | None = None,
              codec: Codec | None = None) -> WatchEvents: ...

    async def update(self, resource: Resource, body: Mapping[str, Any], *,
                     namespace: str | None = None, field_manager: str | None = None) -> Obj: ...

    async def update_status(self, resource: Resource, body: Mapping[str, Any], *,
                            namespace: str | None = None,
                            field_manager: str | None = None) -> Obj: ...

    async def patch(self, resource: Resource, name: str, body: Any, *,
                    namespace: str | None = None, patch_type: PatchType = "merge",
                    field_manager: str | None = None, force: bool | None = None,
                    subresource: str | None = None) -> Obj: ...

    async def delete(self, resource: Resource, name: str, *, namespace: str | None = None,
                     propagation_policy: str | None = None,
                     preconditions: Mapping[str, str] | None = None,
                     grace_period_seconds: int | None = None) -> Obj: ...

    async def close(self) -> None: ...


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
    ) -> None:
        self.api_client = api_client
        self.request_timeout = request_timeout
        self.user_agent = user_agent
        self._clock: Clock = clock or LoopClock()
        self._client_groups = dict(client_groups or {})
        self._buckets = {name: _RequestThrottle(qps, burst, self._clock)
                         for name in {"", *self._client_groups.values()}}
        _resolve_proxy_once(api_client)

    def _bucket(self, path: str) -> _RequestThrottle:
        """The token bucket of the client that ``path``'s API group belongs to."""
        group = path.split("/")[2] if path.startswith("/apis/") else ""
        return self._buckets[self._client_groups.get(group, "")]

    # -- construction -------------------------------------------------------------------

    @classmethod
    async def from_kubeconfig(
        cls, path: str | None = None, context: str | None = None, **options: Any
    ) -> RestClient:
        """Load a kubeconfig (``path``, else ``$KUBECONFIG``, else ``~/.kube/config``)."""
        from kubernetes_asyncio import client, config

        cfg = client.Configuration()
        path = path or os.environ.get("KUBECONFIG") or _DEFAULT_KUBECONFIG
        await config.load_kube_config(
            config_file=path, context=context, client_configuration=cfg, persist_config=False
        )
        return cls._with_configuration(cfg, options)

    @classmethod
    async def from_incluster(cls, **options: Any) -> RestClient:
        """Use the pod's service account (the token file is re-read as it rotates)."""
        from kubernetes_asyncio import client, config

        cfg = client.Configuration()
        config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        return cls._with_configuration(cfg, options)

    @classmethod
    async def auto(
        cls, kubeconfig: str | None = None, master: str | None = None, **options: Any
    ) -> RestClient:
        """In-cluster when ``KUBERNETES_SERVICE_HOST`` is set and no kubeconfig is given."""
        if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
            kube = await cls.from_incluster(**options)
        else:
            kube = await cls.from_kubeconfig(kubeconfig, **options)
        if master:
            kube.api_client.configuration.host = master.rstrip("/")
        return kube

    @classmethod
    def _with_configuration(cls, cfg: Any, options: dict[str, Any]) -> RestClient:
        from kubernetes_asyncio import client

        return cls(client.ApiClient(configuration=cfg), **options)

    async def close(self) -> None:
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
        auth = await self.api_client.configuration.auth_settings()
        for setting in auth.values():
            if setting.get("in") == "header":
                headers[setting["key"]] = setting["value"]
        return headers

    async def _open(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        client_timeout: aiohttp.ClientTimeout | None = None,
    ) -> aiohttp.ClientResponse:
        """Send a request and return the open response; raise :class:`ApiError` on >= 400.

        As client-go does, a 429 or 5xx answer with a ``Retry-After`` header is retried after
        that many seconds (at most :data:`MAX_RETRY_AFTER` times; the caller's deadline still
        bounds the whole): an overloaded API server asks callers to come back, and a Lease
        renewal that gives up at once loses leadership for nothing."""
        for attempt in range(MAX_RETRY_AFTER + 1):
            resp = await self._open_once(method, path, query=query, body=body,
                                         content_type=content_type,
                                         client_timeout=client_timeout,
                                         retry=attempt < MAX_RETRY_AFTER)
            if isinstance(resp, aiohttp.ClientResponse):
                return resp
            await self._clock.sleep(resp)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _open_once(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None,
        body: Any,
        content_type: str | None,
        client_timeout: aiohttp.ClientTimeout | None,
        retry: bool,
    ) -> aiohttp.ClientResponse | float:
        """One attempt: the response, or the seconds to wait before retrying."""
        await self._bucket(path).acquire()
        data = None if body is None else dumps(body)
        if data is not None and content_type is None:
            content_type = "application/json"
        kwargs: dict[str, Any] = {
            "params": _query(query or {}),
            "data": data,
            "headers": await self._headers(content_type),
            "timeout": client_timeout or aiohttp.ClientTimeout(total=self.request_timeout),
        }
        rest = self.api_client.rest_client
        if rest.proxy:
            kwargs["proxy"] = rest.proxy
        if rest.server_hostname:
            kwargs["server_hostname"] = rest.server_hostname
        try:
            resp: aiohttp.ClientResponse = await rest.pool_manager.request(
                method, self.host + path, **kwargs
            )
            if resp.status >= 400:
                async with resp:
                    payload = await resp.read()
                    wait = _retry_after(resp) if retry else None
                    if wait is None:
                        raise ApiError.from_response(resp.status, payload)
                    return wait
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _transport_error(exc) from exc
        return resp

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
        resp = await self._open(method, path, query=query, body=body, content_type=content_type)
        try:
            async with resp:
                data = await resp.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _transport_error(exc) from exc
        return decode(data) if data else None

    # -- verbs --------------------------------------------------------------------------

    async def create(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
    ) -> Obj:
        """POST; ``namespace`` defaults to ``body.metadata.namespace``."""
        _, ns = _name_ns(body, namespace)
        query = {"fieldManager": field_manager}
        result: Obj = await self.request("POST", resource.path(ns), query=query, body=body)
        return result

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
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=_WATCH_CONNECT_TIMEOUT, sock_read=read
        )
        decode = codec.decode_event if codec is not None else loads
        return WatchStream(self, resource.path(namespace), query, timeout, decode)

    async def update(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
    ) -> Obj:
        """PUT the whole object; its ``metadata.resourceVersion`` makes it a guarded write."""
        return await self._put(resource, body, namespace, None, field_manager)

    async def update_status(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
    ) -> Obj:
        """PUT the ``status`` subresource."""
        return await self._put(resource, body, namespace, "status", field_manager)

    async def _put(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        namespace: str | None,
        subresource: str | None,
        field_manager: str | None,
    ) -> Obj:
        name, ns = _name_ns(body, namespace)
        path = resource.path(ns, name, subresource)
        result: Obj = await self.request(
            "PUT", path, query={"fieldManager": field_manager}, body=body
        )
        return result

    async def patch(
        self,
        resource: Resource,
        name: str,
        body: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        field_manager: str | None = None,
        force: bool | None = None,
        subresource: str | None = None,
    ) -> Obj:
        """PATCH with the content type for ``patch_type``; ``apply`` is server-side apply.

        Server-side apply needs ``field_manager``; ``force=True`` takes fields that another
        manager owns instead of failing with 409 Conflict.
        """
        if patch_type == "apply" and not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        query = {"fieldManager": field_manager, "force": force if patch_type == "apply" else None}
        path = resource.path(namespace, name, subresource)
        content_type = _PATCH_CONTENT_TYPES[patch_type]
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
    ) -> Obj:
        """DELETE; ``preconditions`` may hold ``uid`` and/or ``resourceVersion``."""
        options: Obj = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = dict(preconditions)
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        result: Obj = await self.request(
            "DELETE", resource.path(namespace, name), body=options
        )
        return result


class WatchStream:
    """An open (or about to open) watch: async iterator of raw event dicts.

    Lines are split by hand from the chunks aiohttp delivers, so an event of any size fits.
    The response is released on end of stream, on any error (including cancellation) and on
    :meth:`aclose`.
    """

    def __init__(
        self, kube: RestClient, path: str, query: dict[str, Any], timeout: aiohttp.ClientTimeout,
        decode: Callable[[bytes], Any] = loads,
    ) -> None:
        self._kube = kube
        self._decode = decode
        self._path = path
        self._query = query
        self._timeout = timeout
        self._resp: aiohttp.ClientResponse | None = None
        self._events: AsyncGenerator[Obj, None] | None = None
        self._closed = False

    def __aiter__(self) -> WatchStream:
        return self

    async def __anext__(self) -> Obj:
        if self._closed:
            raise StopAsyncIteration
        try:
            if self._events is None:
                self._resp = await self._kube._open(
                    "GET", self._path, query=self._query, client_timeout=self._timeout
                )
                self._events = self._read(self._resp, self._decode)
            return await anext(self._events)
        except StopAsyncIteration:
            await self.aclose()
            raise
        except (aiohttp.ClientError, TimeoutError) as exc:
            stopped = self._closed  # aclose() from another task broke the connection
            await self.aclose()
            if stopped:
                raise StopAsyncIteration from exc
            raise _transport_error(exc) from exc
        except BaseException:
            await self.aclose()
            raise

    @staticmethod
    async def _read(resp: aiohttp.ClientResponse, decode: Callable[[bytes], Any],
                    ) -> AsyncGenerator[Obj, None]:
        pending = b""
        async for chunk in resp.content.iter_any():
            if b"\n" not in chunk:
                pending += chunk
                continue
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                if line.strip():
                    yield decode(line)
        if pending.strip():
            yield decode(pending)

    async def aclose(self) -> None:
        """Stop the watch and release its connection (idempotent).

        May be called from another task while one iterates: the connection is closed and
        the iterating task's next (or pending) read ends the iteration.
        """
        self._closed = True
        resp, self._resp = self._resp, None
        if resp is not None:
            resp.close()
        events = self._events
        if events is not None and not events.ag_running:  # type: ignore[attr-defined]
            self._events = None
            await events.aclose()

    async def __aenter__(self) -> WatchStream:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
