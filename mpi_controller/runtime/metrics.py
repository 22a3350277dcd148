"""Prometheus metrics of the runtime, the project's registry, and the health/metrics HTTP server.

* :data:`REGISTRY` is the one :class:`prometheus_client.CollectorRegistry` the project uses; every
  metric of the controller registers there (not in prometheus_client's global default registry).
  ``_created`` series are disabled for parity with Go's client.
* ``workqueue_*`` metrics (label ``name``) follow client-go's ``util/workqueue/metrics.go``; only
  named queues touch them (see :class:`QueueMetrics`). Histograms use
  ``ExponentialBuckets(10e-9, 10, 12)`` (10 ns .. 1000 s), as controller-runtime does.
* ``controller_runtime_*`` reconcile metrics (label ``controller``) follow controller-runtime.
* :func:`serve_http` serves ``/metrics`` (the registry in Prometheus' text format, as
  ``prometheus_client.CONTENT_TYPE_LATEST``), ``/healthz`` and ``/readyz`` with the small server
  of :mod:`~mpi_controller.runtime.httpserve` (``GET``/``HEAD``; one request per connection). A
  check is a plain callable returning ``True`` when healthy (an exception counts as a failure);
  an endpoint answers ``200 ok`` when all of its checks pass, else ``500`` naming the failing
  checks (``failed: a, b``), as ``text/plain; charset=utf-8``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from mpi_controller.runtime.clock import Clock
from mpi_controller.runtime.httpserve import Reply, Route, Server, serve

__all__ = [
    "ACTIVE_WORKERS",
    "MAX_CONCURRENT_RECONCILES",
    "RECONCILE_ERRORS",
    "RECONCILE_TIME",
    "RECONCILE_TIME_BUCKETS",
    "RECONCILE_TOTAL",
    "REGISTRY",
    "WORKQUEUE_ADDS",
    "WORKQUEUE_BUCKETS",
    "WORKQUEUE_DEPTH",
    "WORKQUEUE_LONGEST_RUNNING_PROCESSOR",
    "WORKQUEUE_QUEUE_DURATION",
    "WORKQUEUE_RETRIES",
    "WORKQUEUE_UNFINISHED_WORK",
    "WORKQUEUE_WORK_DURATION",
    "Check",
    "HTTPServer",
    "QueueMetrics",
    "exponential_buckets",
    "serve_http",
]

prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]

REGISTRY = CollectorRegistry(auto_describe=True)
"""The registry every metric of the project registers in, and that ``/metrics`` serves."""


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Prometheus Go client's ``ExponentialBuckets`` (same float arithmetic)."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return tuple(buckets)


WORKQUEUE_BUCKETS = exponential_buckets(10e-9, 10, 12)

WORKQUEUE_DEPTH = Gauge(
    "workqueue_depth", "Current depth of workqueue", ["name"], registry=REGISTRY
)
WORKQUEUE_ADDS = Counter(
    "workqueue_adds_total", "Total number of adds handled by workqueue", ["name"],
    registry=REGISTRY,
)
WORKQUEUE_QUEUE_DURATION = Histogram(
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in workqueue before being requested",
    ["name"], buckets=WORKQUEUE_BUCKETS, registry=REGISTRY,
)
WORKQUEUE_WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "How long in seconds processing an item from workqueue takes.",
    ["name"], buckets=WORKQUEUE_BUCKETS, registry=REGISTRY,
)
WORKQUEUE_UNFINISHED_WORK = Gauge(
    "workqueue_unfinished_work_seconds",
    "How many seconds of work has been done that is in progress and hasn't been observed by "
    "work_duration. Large values indicate stuck threads. One can deduce the number of stuck "
    "threads by observing the rate at which this increases.",
    ["name"], registry=REGISTRY,
)
WORKQUEUE_LONGEST_RUNNING_PROCESSOR = Gauge(
    "workqueue_longest_running_processor_seconds",
    "How many seconds has the longest running processor for workqueue been running.",
    ["name"], registry=REGISTRY,
)
WORKQUEUE_RETRIES = Counter(
    "workqueue_retries_total", "Total number of retries handled by workqueue", ["name"],
    registry=REGISTRY,
)

RECONCILE_TIME_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7,
    0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0,
    10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
)

RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile_total",
    "Total number of reconciliations per controller", ["controller", "result"],
    registry=REGISTRY,
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors_total",
    "Total number of reconciliation errors per controller", ["controller"], registry=REGISTRY,
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller", ["controller"],
    buckets=RECONCILE_TIME_BUCKETS, registry=REGISTRY,
)
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers",
    "Number of currently used workers per controller", ["controller"], registry=REGISTRY,
)
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of concurrent reconciles per controller", ["controller"], registry=REGISTRY,
)


class QueueMetrics:
    """The workqueue metrics of one named queue (client-go's ``defaultQueueMetrics``).

    Item ages come from the queue's clock. ``add`` is called for non-duplicate adds only;
    ``get`` observes the time since the item's first add; ``done`` observes the processing time;
    ``update_unfinished_work`` refreshes the two in-flight gauges.
    """

    def __init__(self, name: str, *, clock: Clock) -> None:
        self._clock = clock
        self._depth = WORKQUEUE_DEPTH.labels(name=name)
        self._adds = WORKQUEUE_ADDS.labels(name=name)
        self._latency = WORKQUEUE_QUEUE_DURATION.labels(name=name)
        self._work = WORKQUEUE_WORK_DURATION.labels(name=name)
        self._unfinished = WORKQUEUE_UNFINISHED_WORK.labels(name=name)
        self._longest = WORKQUEUE_LONGEST_RUNNING_PROCESSOR.labels(name=name)
        self._retries = WORKQUEUE_RETRIES.labels(name=name)
        self._add_times: dict[object, float] = {}
        self._start_times: dict[object, float] = {}

    def add(self, item: object) -> None:
        self._adds.inc()
        self._depth.inc()
        self._add_times.setdefault(item, self._clock.now())

    def get(self, item: object) -> None:
        now = self._clock.now()
        self._depth.dec()
        self._start_times[item] = now
        added = self._add_times.pop(item, None)
        if added is not None:
            self._latency.observe(now - added)

    def done(self, item: object) -> None:
        started = self._start_times.pop(item, None)
        if started is not None:
            self._work.observe(self._clock.now() - started)

    def retry(self) -> None:
        self._retries.inc()

    def update_unfinished_work(self) -> None:
        now = self._clock.now()
        ages = [now - started for started in self._start_times.values()]
        self._unfinished.set(sum(ages))
        self._longest.set(max(ages, default=0.0))


Check = Callable[[], bool]
"""A health or readiness check: returns True when healthy."""


def _failing(checks: Mapping[str, Check]) -> list[str]:
    failed = []
    for name, check in checks.items():
        try:
            ok = check()
        except Exception:
            ok = False
        if not ok:
            failed.append(name)
    return failed


def _check_route(checks: Mapping[str, Check]) -> Route:
    def handle() -> Reply:
        failed = _failing(checks)
        if failed:
            return Reply(500, ("failed: " + ", ".join(failed) + "\n").encode())
        return Reply(200, b"ok")

    return handle


def _metrics_route(registry: CollectorRegistry) -> Route:
    def handle() -> Reply:
        return Reply(200, prometheus_client.generate_latest(registry),
                     content_type=prometheus_client.CONTENT_TYPE_LATEST)

    return handle


@dataclass
class HTTPServer:
    """A running health/metrics server; ``port`` is the bound port (useful with port 0)."""

    server: Server
    host: str
    port: int
    _closed: bool = field(default=False, repr=False)

    async def close(self) -> None:
        """Stop listening and release the socket (idempotent)."""
        if not self._closed:
            self._closed = True
            await self.server.close()

    async def __aenter__(self) -> HTTPServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.shield(self.close())


async def serve_http(
    host: str,
    port: int,
    *,
    registry: CollectorRegistry = REGISTRY,
    healthz: Mapping[str, Check] | None = None,
    readyz: Mapping[str, Check] | None = None,
) -> HTTPServer:
    """Start serving ``/metrics``, ``/healthz`` and ``/readyz``; close the result to stop.

    The check mappings are read on every request, so a caller may add checks later.
    """
    server = await serve(host, port, {
        "/metrics": _metrics_route(registry),
        "/healthz": _check_route(healthz if healthz is not None else {}),
        "/readyz": _check_route(readyz if readyz is not None else {}),
    })
    return HTTPServer(server=server, host=host, port=server.port)
