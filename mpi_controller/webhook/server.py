"""The webhook HTTP endpoints, served over TLS by
:class:`~mpi_controller.runtime.https.HttpsServer` on every replica.

:func:`webhook_routes` maps ``POST /convert`` (ConversionReview) and one ``POST <path>`` per
validating or mutating webhook (AdmissionReview) of a :class:`~.registry.WebhookRegistry` to
their handlers. A body that is not JSON gets HTTP 400 with a review whose message names the
problem; every other answer is HTTP 200 with the review (see :mod:`.reviews`). A webhook that
reads other objects (``validate_async``) reads them through the ``lookup`` the routes are
given. Request bodies up to 64 MiB are read (a ConversionReview of a large list carries every
object).

Metrics: :mod:`.metrics`.
"""

from __future__ import annotations

import time
from typing import Any

import structlog

from mpi_controller.runtime.codec import dumps, loads
from mpi_controller.runtime.https import Answer, Handler, Request
from mpi_controller.webhook.metrics import IN_FLIGHT, LATENCY, REQUESTS
from mpi_controller.webhook.registry import CONVERT_PATH, WebhookRegistry
from mpi_controller.webhook.reviews import (
    ADMISSION_API_VERSION,
    AdmissionWebhook,
    Lookup,
    MutatingWebhook,
    ValidatingWebhook,
    admission_review_async,
    conversion_failure,
    convert_review,
    mutating_review,
)

__all__ = ["MAX_BODY", "REQUESTS", "webhook_routes"]

MAX_BODY = 64 << 20
_log = structlog.get_logger(__name__)



def _json(doc: Any, status: int = 200) -> Answer:
    return Answer(status, dumps(doc))


def _body(request: Request) -> tuple[Any, str | None]:
    try:
        return loads(request.body), None
    except ValueError as err:
        return None, f"the body is not JSON: {err}"


def _measured(path: str, handler: Handler) -> Handler:
    in_flight, latency = IN_FLIGHT.labels(path), LATENCY.labels(path)

    async def serve(request: Request) -> Answer:
        start = time.perf_counter()
        in_flight.inc()
        try:
            answer = await handler(request)
        finally:
            in_flight.dec()
            latency.observe(time.perf_counter() - start)
        REQUESTS.labels(path, str(answer.status)).inc()
        return answer

    return serve


def _conversion_handler(registry: WebhookRegistry) -> Handler:
    async def convert(request: Request) -> Answer:
        body, problem = _body(request)
        if problem is not None:
            _log.warning("malformed ConversionReview", problem=problem)
            return _json(conversion_failure("", problem), status=400)
        review = convert_review(body, registry.converters)
        result = review["response"]["result"]
        if result["status"] != "Success":
            _log.warning("conversion failed", message=result.get("message"))
        return _json(review)

    return convert


def _admission_handler(webhook: AdmissionWebhook, lookup: Lookup) -> Handler:
    async def admit(request: Request) -> Answer:
        body, problem = _body(request)
        if problem is not None:
            _log.warning("malformed AdmissionReview", webhook=webhook.name, problem=problem)
            return _json({"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview",
                          "response": {"uid": "", "allowed": False, "status": {
                              "code": 400, "reason": "BadRequest", "message": problem}}},
                         status=400)
        if isinstance(webhook, ValidatingWebhook):
            return _json(await admission_review_async(body, webhook, lookup))
        assert isinstance(webhook, MutatingWebhook)
        return _json(mutating_review(body, webhook))

    return admit


async def _no_lookup(resource: Any, name: str, namespace: str | None) -> Any:
    raise RuntimeError(f"this webhook server reads no objects (asked for {name})")


def webhook_routes(registry: WebhookRegistry,
                   lookup: Lookup | None = None) -> dict[str, Handler]:
    """The routes of an HttpsServer serving ``registry``, by path; ``lookup`` reads the
    objects a webhook's ``validate_async`` needs (required when one has it)."""
    if lookup is None and any(w.validate_async for w in registry.validating):
        raise ValueError("a webhook reads objects of the API: webhook_routes needs a lookup")
    reader: Lookup = lookup or _no_lookup
    routes: dict[str, Handler] = {}
    if registry.converters:
        routes[CONVERT_PATH] = _measured(CONVERT_PATH, _conversion_handler(registry))
    for webhook in registry.admissions:
        routes[webhook.path] = _measured(webhook.path, _admission_handler(webhook, reader))
    return routes
