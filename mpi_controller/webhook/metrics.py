"""The webhooks' metrics, as controller-runtime names them (label ``webhook`` is the path):
``controller_runtime_webhook_requests_total{webhook,code}``,
``controller_runtime_webhook_latency_seconds{webhook}``,
``controller_runtime_webhook_requests_in_flight{webhook}``.

They are registered in :data:`~mpi_controller.runtime.metrics.REGISTRY` when
:mod:`mpi_controller.webhook` is imported, served or not (``/metrics`` names them either way);
this module imports no HTTP server.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from mpi_controller.runtime.metrics import REGISTRY

__all__ = ["IN_FLIGHT", "LATENCY", "REQUESTS"]

REQUESTS = Counter("controller_runtime_webhook_requests", "Total number of admission requests "
                   "by HTTP status code.", ["webhook", "code"], registry=REGISTRY)
LATENCY = Histogram("controller_runtime_webhook_latency_seconds", "Histogram of the latency of "
                    "processing admission requests", ["webhook"], registry=REGISTRY)
IN_FLIGHT = Gauge("controller_runtime_webhook_requests_in_flight", "Current number of admission "
                  "requests being served.", ["webhook"], registry=REGISTRY)
