"""The webhook HTTP endpoints, served over TLS by
:class:`~mpi_controller.runtime.https.HttpsServer` on every replica.

:func:`webhook_routes` adds ``POST /convert`` (ConversionReview) and one ``POST <path>`` per
validating or mutating webhook (AdmissionReview) of a :class:`~.registry.WebhookRegistry`. A
body that is not JSON gets HTTP 400 with a review whose message names the problem; every other
answer is HTTP 200 with the review (see :mod:`.reviews`). A webhook that reads other objects
(``validate_async``) reads them through the ``lookup`` the routes are given. Request bodies
up to 64 MiB are read (a ConversionReview of a large list carries every object).

Metrics: :mod:`.metrics`. This module imports aiohttp: :func:`~mpi_controller.webhook.build_webhook`
imports it when a webhook is served.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog
from aiohttp import web

from mpi_controller.runtime.codec import dumps, loads
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



def _json(doc: Any, status: int = 200) -> web.Response:
    return web.Response(body=dumps(doc), status=status, content_type="application/json")


async def _body(request: web.Request) -> tuple[Any, str | None]:
    try:
        return loads(await request.read()), None
    except ValueError as err:
        return None, f"the body is not JSON: {err}"


def _measured(path: str, handler: Callable[[web.Request], Any]
              ) -> Callable[[web.Request], Any]:
    async def serve(request: web.Request) -> web.StreamResponse:
        start = time.perf_counter()
        IN_FLIGHT.labels(path).inc()
        try:
            response: web.StreamResponse = await handler(request)
        finally:
            IN_FLIGHT.labels(path).dec()
            LATENCY.labels(path).observe(time.perf_counter() - start)
        REQUESTS.labels(path, str(response.status)).inc()
        return response

    return serve


def _conversion_handler(registry: WebhookRegistry) -> Callable[[web.Request], Any]:
    async def convert(request: web.Request) -> web.Response:
        body, problem = await _body(request)
        if problem is not None:
            _log.warning("malformed ConversionReview", problem=problem)
            return _json(conversion_failure("", problem), status=400)
        review = convert_review(body, registry.converters)
        result = review["response"]["result"]
        if result["status"] != "Success":
            _log.warning("conversion failed", message=result.get("message"))
        return _json(review)

    return convert


def _admission_handler(webhook: AdmissionWebhook,
                       lookup: Lookup) -> Callable[[web.Request], Any]:
    async def admit(request: web.Request) -> web.Response:
        body, problem = await _body(request)
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
                   lookup: Lookup | None = None) -> Callable[[web.Application], None]:
    """The routes callback for an HttpsServer serving ``registry``; ``lookup`` reads the
    objects a webhook's ``validate_async`` needs (required when one has it)."""
    if lookup is None and any(w.validate_async for w in registry.validating):
        raise ValueError("a webhook reads objects of the API: webhook_routes needs a lookup")
    reader: Lookup = lookup or _no_lookup

    def add(app: web.Application) -> None:
        if registry.converters:
            app.router.add_post(CONVERT_PATH, _measured(
                CONVERT_PATH, _conversion_handler(registry)))
        for webhook in registry.admissions:
            app.router.add_post(webhook.path, _measured(webhook.path,
                                                           _admission_handler(webhook, reader)))

    return add
