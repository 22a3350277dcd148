"""Failed API calls, classified once: :class:`ApiError`.

Every failure of a :class:`~mpi_controller.runtime.kubeclient.KubeClient` is an
:class:`ApiError`. HTTP errors carry the server's ``metav1.Status`` (``reason``, ``message``,
``body``); timeouts and connection failures have ``status == 0`` and are retriable. The
predicates follow apimachinery's ``pkg/api/errors`` (``IsNotFound``, ``IsAlreadyExists``,
``IsConflict``, ``IsGone``/``IsResourceExpired``, ``IsForbidden``, ``IsTooManyRequests``,
``IsTimeout``): callers handle errors by kind, never by matching strings.
``asyncio.CancelledError`` is never converted. :func:`go_error_text` is what Go's
``err.Error()`` says for the same failure, for messages that quote it (Events).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.codec import loads

__all__ = ["ApiError", "default_reason", "go_error_text", "transport_error"]


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
        return cls(http_status, default_reason(http_status), text, None)

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

    def is_namespace_terminating(self) -> bool:
        """A create refused because its namespace is being deleted: 403 with the
        ``NamespaceTerminating`` cause (the NamespaceLifecycle admission plugin; a
        ``StatusCause``'s type is its JSON ``reason``; apimachinery's
        ``HasStatusCause(err, v1.NamespaceTerminatingCause)``)."""
        if self.status != 403 or not isinstance(self.body, dict):
            return False
        details = self.body.get("details")
        causes = details.get("causes") if isinstance(details, dict) else None
        return isinstance(causes, list) and any(
            isinstance(c, dict) and c.get("reason") == "NamespaceTerminating" for c in causes)

    def is_too_many_requests(self) -> bool:
        return self.status == 429

    def is_timeout(self) -> bool:
        return self.status in (0, 504) and self.reason in ("Timeout", "GatewayTimeout")

    def is_retriable(self) -> bool:
        """Worth retrying unchanged: throttled, server error, timeout or connection failure."""
        return self.status in (0, 429) or self.status >= 500


def go_error_text(err: BaseException) -> str:
    """``err`` as Go's ``%v`` prints the same failure: an answer's ``Status`` message alone
    (``StatusError.Error()``: ``pods "a" already exists``), without the code and reason that
    ``str(ApiError)`` adds for logs; anything else as ``str``."""
    if isinstance(err, ApiError) and err.message:
        return err.message
    return str(err)


def default_reason(status: int) -> str:
    """The ``metav1.StatusReason`` the API server gives an HTTP status without a Status body."""
    return {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
            405: "MethodNotAllowed", 409: "Conflict", 410: "Expired", 415: "UnsupportedMediaType",
            422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
            503: "ServiceUnavailable", 504: "Timeout"}.get(status, "Unknown")


def transport_error(exc: BaseException) -> ApiError:
    """A request that got no answer: a timeout, or a connection that failed."""
    if isinstance(exc, TimeoutError):  # aiohttp's ServerTimeoutError is one too
        return ApiError(0, "Timeout", str(exc) or type(exc).__name__)
    return ApiError(0, "ConnectionError", f"{type(exc).__name__}: {exc}")

