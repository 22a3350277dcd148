"""The webhook protocols: ``ConversionReview`` and ``AdmissionReview`` (both
``apiextensions.k8s.io/v1`` / ``admission.k8s.io/v1``), answered by pure functions.

* :func:`convert_review` answers a ConversionReview with the objects converted by the
  converter registered for their group and kind (:data:`Converters`). Any problem (a body that
  is not a review, an unknown kind, an object of another group, a conversion error) becomes a
  ``Failure`` result whose message names it (``request.objects[2]: ...``); it never raises.
* :func:`admission_review` answers an AdmissionReview for one :class:`ValidatingWebhook`:
  allowed, or denied with ``status: {code: 403, reason: Forbidden, message}``, the errors
  joined as Kubernetes aggregates them (one message, or ``[a, b]``), as controller-runtime's
  validators answer; a malformed review is denied with code 400 and the problem.
* :func:`admission_review_async` answers the same for a webhook whose validator reads other
  objects of the API (:attr:`ValidatingWebhook.validate_async`, given a :data:`Lookup`, as
  Kubeflow Trainer's TrainJob webhook reads the runtime a TrainJob names).
* :func:`mutating_review` answers an AdmissionReview for one :class:`MutatingWebhook`:
  allowed, with the JSON patch (``patchType: JSONPatch``, base64) from the object to what its
  defaulter made of it (no patch when nothing changed), as controller-runtime's defaulting
  webhooks answer; a malformed review is denied with code 400.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mpi_controller.kube.fielderrors import aggregate_message
from mpi_controller.kube.jsonpatch import diff
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource

__all__ = [
    "ADMISSION_API_VERSION",
    "CONVERSION_API_VERSION",
    "AdmissionWebhook",
    "AsyncValidator",
    "Converter",
    "Converters",
    "Lookup",
    "MutatingWebhook",
    "Mutator",
    "ReviewError",
    "ValidatingWebhook",
    "Validator",
    "Verdict",
    "admission_review",
    "admission_review_async",
    "convert_review",
    "mutating_review",
]

CONVERSION_API_VERSION: Final = "apiextensions.k8s.io/v1"
ADMISSION_API_VERSION: Final = "admission.k8s.io/v1"

Converter = Callable[[Mapping[str, Any], str], dict[str, Any]]
"""``(object, version) -> object in version``; raises ``ValueError`` naming the problem."""

Converters = Mapping[tuple[str, str], Converter]
"""Converters by (API group, kind)."""


class ReviewError(ValueError):
    """A review body that cannot be answered; the message names the problem."""


@dataclass(frozen=True)
class Verdict:
    """A validator's answer: the errors (empty: allowed) and warnings, as messages."""

    errors: Sequence[str] = ()
    warnings: Sequence[str] = ()


Validator = Callable[[Mapping[str, Any], Mapping[str, Any] | None, str], Verdict]
"""``(object, old object or None, operation) -> Verdict``. Must not raise."""

Lookup = Callable[[Resource, str, str | None], Awaitable[Obj]]
"""``await lookup(resource, name, namespace or None)``: the object from the API server;
raises :class:`~mpi_controller.runtime.errors.ApiError` (not found, forbidden, ...)."""

AsyncValidator = Callable[[Lookup, Mapping[str, Any], Mapping[str, Any] | None, str],
                          Awaitable[Verdict]]
"""``(lookup, object, old object or None, operation) -> Verdict``, for a validator that reads
other objects. Must not raise (a failed lookup is part of its verdict)."""


@dataclass(frozen=True)
class AdmissionWebhook:
    """Where an admission webhook is served and what it admits.

    ``name`` is the webhook's name in its configuration (shown by kubectl:
    ``admission webhook "<name>" denied the request: ...``). ``failure_policy`` is what the
    API server does when it cannot reach the webhook: ``Fail`` (refuse the request, as
    training-operator's webhooks) or ``Ignore`` (admit it)."""

    name: str
    path: str
    group: str
    version: str
    resource: str
    kind: str
    operations: tuple[str, ...] = ("CREATE", "UPDATE")
    failure_policy: str = "Fail"
    scope: str = "Namespaced"

    def configuration_entry(self, client_config: Mapping[str, Any]) -> dict[str, Any]:
        """This webhook's entry in its (Validating or Mutating) WebhookConfiguration."""
        return {
            "name": self.name,
            "admissionReviewVersions": ["v1"],
            "clientConfig": dict(client_config),
            "failurePolicy": self.failure_policy,
            "matchPolicy": "Exact",
            "rules": [{"apiGroups": [self.group], "apiVersions": [self.version],
                       "operations": list(self.operations), "resources": [self.resource],
                       "scope": self.scope}],
            "sideEffects": "None",
            "timeoutSeconds": 10,
        }


@dataclass(frozen=True)
class ValidatingWebhook(AdmissionWebhook):
    """One validating webhook and its validator (``validate_async`` for one that reads other
    objects)."""

    validate: Validator = field(kw_only=True)
    validate_async: AsyncValidator | None = field(default=None, kw_only=True)


Mutator = Callable[[Mapping[str, Any], Mapping[str, Any] | None, str], dict[str, Any]]
"""``(object, old object or None, operation) -> the object defaulted`` (a new object). Must
not raise."""


@dataclass(frozen=True)
class MutatingWebhook(AdmissionWebhook):
    """One mutating (defaulting) webhook and its defaulter."""

    mutate: Mutator = field(kw_only=True)

    def configuration_entry(self, client_config: Mapping[str, Any]) -> dict[str, Any]:
        """Its entry in a MutatingWebhookConfiguration (``reinvocationPolicy: Never``, the
        API server's default, said)."""
        return {**super().configuration_entry(client_config), "reinvocationPolicy": "Never"}


def _review(body: object, api_version: str, kind: str) -> tuple[dict[str, Any], str]:
    """The review's ``request`` and its uid; ReviewError naming what is wrong."""
    if not isinstance(body, dict):
        raise ReviewError(f"the body must be a {kind} object")
    if body.get("apiVersion") != api_version or body.get("kind") != kind:
        raise ReviewError(f"expected apiVersion {api_version} kind {kind}, got apiVersion "
                          f"{body.get('apiVersion')!r} kind {body.get('kind')!r}")
    request = body.get("request")
    if not isinstance(request, dict):
        raise ReviewError("request: must be an object")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise ReviewError("request.uid: must be a non-empty string")
    return request, uid


def _uid_of(body: object) -> str:
    request = body.get("request") if isinstance(body, dict) else None
    uid = request.get("uid") if isinstance(request, dict) else None
    return uid if isinstance(uid, str) else ""


def conversion_failure(uid: str, message: str) -> dict[str, Any]:
    """A ConversionReview response with a ``Failure`` result."""
    return {"apiVersion": CONVERSION_API_VERSION, "kind": "ConversionReview",
            "response": {"uid": uid, "result": {"status": "Failure", "message": message}}}


def _convert_one(index: int, obj: object, group: str, version: str,
                 converters: Converters) -> dict[str, Any]:
    where = f"request.objects[{index}]"
    if not isinstance(obj, dict):
        raise ReviewError(f"{where}: must be an object")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    obj_group = api_version.rpartition("/")[0] if isinstance(api_version, str) else None
    if obj_group != group:
        raise ReviewError(f"{where}: apiVersion {api_version!r} is not in group {group!r}")
    converter = converters.get((group, kind if isinstance(kind, str) else ""))
    if converter is None:
        raise ReviewError(f"{where}: no conversion for kind {kind!r} in group {group!r}")
    try:
        return converter(obj, version)
    except ValueError as err:
        name = obj.get("metadata", {}).get("name") if isinstance(obj.get("metadata"), dict) \
            else None
        named = f" ({kind} {name})" if isinstance(name, str) else ""
        raise ReviewError(f"{where}{named}: {err}") from None


def convert_review(body: object, converters: Converters) -> dict[str, Any]:
    """The ConversionReview response to ``body`` (never raises)."""
    uid = _uid_of(body)
    try:
        request, uid = _review(body, CONVERSION_API_VERSION, "ConversionReview")
        desired = request.get("desiredAPIVersion")
        if not isinstance(desired, str) or desired.count("/") != 1:
            raise ReviewError("request.desiredAPIVersion: must be <group>/<version>, got "
                              f"{desired!r}")
        group, version = desired.split("/")
        objects = request.get("objects")
        if not isinstance(objects, list):
            raise ReviewError("request.objects: must be a list")
        converted = [_convert_one(i, o, group, version, converters)
                     for i, o in enumerate(objects)]
    except ReviewError as err:
        return conversion_failure(uid, str(err))
    return {"apiVersion": CONVERSION_API_VERSION, "kind": "ConversionReview",
            "response": {"uid": uid, "convertedObjects": converted,
                         "result": {"status": "Success"}}}


def _admission_response(uid: str, *, allowed: bool, code: int = 200, message: str = "",
                        warnings: Sequence[str] = ()) -> dict[str, Any]:
    response: dict[str, Any] = {"uid": uid, "allowed": allowed}
    if not allowed:
        reason = "Forbidden" if code == 403 else "BadRequest"
        response["status"] = {"code": code, "reason": reason, "message": message}
    if warnings:
        response["warnings"] = list(warnings)
    return {"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview",
            "response": response}


def _check_request(request: dict[str, Any], webhook: AdmissionWebhook
                   ) -> str:
    kind = request.get("kind")
    expected = {"group": webhook.group, "version": webhook.version, "kind": webhook.kind}
    if not isinstance(kind, dict) or {k: kind.get(k) for k in expected} != expected:
        does = "defaults" if isinstance(webhook, MutatingWebhook) else "validates"
        raise ReviewError(f"request.kind: {webhook.path} {does} {webhook.group}/"
                          f"{webhook.version} {webhook.kind}, got {kind!r}")
    operation = request.get("operation")
    if operation not in webhook.operations:
        raise ReviewError(f"request.operation: {operation!r} is not validated here "
                          f"(only {', '.join(webhook.operations)})")
    if not isinstance(request.get("object"), dict):
        raise ReviewError("request.object: must be an object")
    old = request.get("oldObject")
    if operation == "UPDATE" and not isinstance(old, dict):
        raise ReviewError("request.oldObject: must be an object for UPDATE")
    return str(operation)


def _parse_admission(body: object, webhook: AdmissionWebhook
                     ) -> tuple[str, str, dict[str, Any], dict[str, Any] | None] | dict[str, Any]:
    """``(uid, operation, object, old object)``, or the response refusing a malformed review."""
    uid = _uid_of(body)
    try:
        request, uid = _review(body, ADMISSION_API_VERSION, "AdmissionReview")
        operation = _check_request(request, webhook)
    except ReviewError as err:
        return _admission_response(uid, allowed=False, code=400, message=str(err))
    old = request.get("oldObject") if operation == "UPDATE" else None
    return uid, operation, request["object"], old


def admission_review(body: object, webhook: ValidatingWebhook) -> dict[str, Any]:
    """The AdmissionReview response of ``webhook`` to ``body`` (never raises)."""
    parsed = _parse_admission(body, webhook)
    if isinstance(parsed, dict):
        return parsed
    uid, operation, obj, old = parsed
    return _verdict_response(uid, webhook.validate(obj, old, operation))


async def admission_review_async(body: object, webhook: ValidatingWebhook,
                                 lookup: Lookup) -> dict[str, Any]:
    """The AdmissionReview response of ``webhook`` to ``body``, through its
    ``validate_async`` when it has one (never raises but for cancellation)."""
    if webhook.validate_async is None:
        return admission_review(body, webhook)
    parsed = _parse_admission(body, webhook)
    if isinstance(parsed, dict):
        return parsed
    uid, operation, obj, old = parsed
    return _verdict_response(uid, await webhook.validate_async(lookup, obj, old, operation))


def _verdict_response(uid: str, verdict: Verdict) -> dict[str, Any]:
    if verdict.errors:
        return _admission_response(uid, allowed=False, code=403,
                                   message=aggregate_message(verdict.errors),
                                   warnings=verdict.warnings)
    return _admission_response(uid, allowed=True, warnings=verdict.warnings)


def mutating_review(body: object, webhook: MutatingWebhook) -> dict[str, Any]:
    """The AdmissionReview response of ``webhook`` to ``body`` (never raises)."""
    parsed = _parse_admission(body, webhook)
    if isinstance(parsed, dict):
        return parsed
    uid, operation, obj, old = parsed
    review = _admission_response(uid, allowed=True)
    ops = diff(obj, webhook.mutate(obj, old, operation))
    if ops:
        patch = json.dumps(ops, separators=(",", ":")).encode()
        review["response"].update(patchType="JSONPatch", patch=base64.b64encode(patch).decode())
    return review
