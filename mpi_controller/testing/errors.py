"""The API server's error answers as :class:`~mpi_controller.runtime.errors.ApiError` values
carrying the ``metav1.Status`` bodies of ``k8s.io/apimachinery/pkg/api/errors`` (``NewNotFound``,
``NewConflict``, ``NewInvalid``, ...): what :class:`~mpi_controller.testing.FakeApi` answers,
and what a test passes to :meth:`~mpi_controller.testing.FakeApi.fail`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.errors import ApiError

__all__ = [
    "OPTIMISTIC_LOCK_MESSAGE",
    "FieldProblem",
    "already_exists",
    "bad_request",
    "conflict",
    "connection_error",
    "expired",
    "internal_error",
    "invalid",
    "invalid_options",
    "method_not_allowed",
    "not_found",
    "page_not_found",
    "status_details",
    "status_error",
    "too_large",
    "too_many_requests",
]

OPTIMISTIC_LOCK_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def status_error(code: int, reason: str, message: str, details: Obj | None = None,
                 **extra: Any) -> ApiError:
    """An :class:`ApiError` carrying a ``metav1.Status`` body as the server sends it."""
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": extra.pop("metadata", {}),
                 "status": "Failure", "message": message, "reason": reason, "code": code}
    if details is not None:
        body["details"] = details
    body.update(extra)
    return ApiError.from_status(body, code)


def status_details(resource: Resource, name: str, **more: Any) -> Obj:
    out: Obj = {"name": name} if name else {}
    if resource.group:
        out["group"] = resource.group
    out["kind"] = resource.plural
    out.update(more)
    return out


def not_found(resource: Resource, name: str) -> ApiError:
    """``NewNotFound``: 404 ``<plural.group> "<name>" not found``."""
    return status_error(404, "NotFound", f'{resource.group_resource} "{name}" not found',
                        status_details(resource, name))


def already_exists(resource: Resource, name: str) -> ApiError:
    """``NewAlreadyExists``: 409 ``<plural.group> "<name>" already exists``."""
    return status_error(409, "AlreadyExists", f'{resource.group_resource} "{name}" already exists',
                        status_details(resource, name))


def conflict(resource: Resource, name: str, cause: str = OPTIMISTIC_LOCK_MESSAGE) -> ApiError:
    """``NewConflict``: 409 ``Operation cannot be fulfilled on <plural.group> "<name>": ...``."""
    message = f'Operation cannot be fulfilled on {resource.group_resource} "{name}": {cause}'
    return status_error(409, "Conflict", message, status_details(resource, name))


def expired(message: str, **extra: Any) -> ApiError:
    """``NewResourceExpired``: 410 Expired."""
    return status_error(410, "Expired", message, **extra)


def internal_error(message: str) -> ApiError:
    """``NewInternalError``: 500 ``Internal error occurred: ...``."""
    return status_error(500, "InternalError", f"Internal error occurred: {message}",
                        {"causes": [{"message": message}]})


def too_many_requests(message: str = "please try again later", retry_after: int = 1) -> ApiError:
    """``NewTooManyRequests``: 429."""
    return status_error(429, "TooManyRequests", message, {"retryAfterSeconds": retry_after})


def connection_error(message: str = "connection reset by peer") -> ApiError:
    """What ``RestClient`` raises when no response arrives (status 0, retriable)."""
    return ApiError(0, "ConnectionError", message)


def bad_request(message: str) -> ApiError:
    return status_error(400, "BadRequest", message)


def page_not_found() -> ApiError:
    """The router's answer for a path nothing serves (text, not a Status), as RestClient
    reports it."""
    return ApiError(404, "NotFound", "404 page not found\n")


def method_not_allowed() -> ApiError:
    return status_error(405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource", {})


def too_large(rv: int, current: int) -> ApiError:
    return status_error(
        504, "Timeout", f"Timeout: Too large resource version: {rv}, current: {current}",
        {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
         "retryAfterSeconds": 1})


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """One ``field.Error``: ``type`` is Required, Invalid, Forbidden or Unsupported."""

    path: str
    type: str
    detail: str
    value: str | None = None

    _REASONS = {"Required": "FieldValueRequired", "Invalid": "FieldValueInvalid",
                "Forbidden": "FieldValueForbidden", "Unsupported": "FieldValueNotSupported"}

    def body(self) -> str:
        head = {"Required": "Required value", "Invalid": "Invalid value",
                "Forbidden": "Forbidden", "Unsupported": "Unsupported value"}[self.type]
        if self.value is not None:
            head += f': "{self.value}"'
        return f"{head}: {self.detail}"

    def cause(self) -> Obj:
        return {"reason": self._REASONS[self.type], "message": self.body(), "field": self.path}


def invalid(kind: str, group: str, name: str, errors: list[FieldProblem]) -> ApiError:
    """``NewInvalid``: 422 ``<Kind.group> "<name>" is invalid: <errors>``."""
    texts = [f"{e.path}: {e.body()}" for e in errors]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details: Obj = {"name": name} if name else {}
    if group:
        details["group"] = group
    details.update(kind=kind, causes=[e.cause() for e in errors])
    return status_error(422, "Invalid", f'{qualified} "{name}" is invalid: {joined}', details)


def invalid_options(errors: list[FieldProblem]) -> ApiError:
    return invalid("ListOptions", "meta.k8s.io", "", errors)
