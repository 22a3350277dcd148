"""A generic asyncio controller runtime with client-go's semantics (nothing MPI-specific).

Parts, one module each: :mod:`.clock` (injected time), :mod:`.ratelimit` and
:mod:`.workqueue` (rate limiters and work queues), :mod:`.kubeclient` (the API a controller
codes against), :mod:`.errors` (failed calls, classified once), :mod:`.rest` (its HTTP client,
raw JSON), :mod:`.throttle` (client-side QPS limits), :mod:`.watch` (watch streams),
:mod:`.codec` (JSON bodies), :mod:`.cache`, :mod:`.reflector` and :mod:`.informer` (list +
watch into indexed caches), :mod:`.leaderelection` (Lease), :mod:`.events` (EventRecorder),
:mod:`.expectations`, :mod:`.controller` (workers over a queue), :mod:`.manager` (every-replica
runnables, leader-only informers and controllers, health and metrics, ordered shutdown),
:mod:`.https` (TLS server for webhooks) and :mod:`.metrics`. The resources it reads
(:class:`~mpi_controller.kube.resources.Resource`) are in the pure layer,
:mod:`mpi_controller.kube`.

The public API, for other controllers too, is ``__all__``, importable from here; each name is
loaded from its module on first use, so importing one module of the runtime (or this package)
loads no more than that module needs. The modules' other names are internal.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mpi_controller.kube.resources import Resource
    from mpi_controller.runtime.cache import DeletedFinalStateUnknown, Indexer, Lister
    from mpi_controller.runtime.clock import Clock, LoopClock, ManualClock
    from mpi_controller.runtime.controller import Controller, Result
    from mpi_controller.runtime.errors import ApiError
    from mpi_controller.runtime.events import EventRecorder
    from mpi_controller.runtime.expectations import ControllerExpectations
    from mpi_controller.runtime.https import HttpsServer
    from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer
    from mpi_controller.runtime.kubeclient import KubeClient
    from mpi_controller.runtime.leaderelection import LeaderElector, LeaseLock
    from mpi_controller.runtime.manager import (
        HttpEndpoint,
        LeadershipLost,
        Manager,
        Runnable,
        install_signal_handlers,
    )
    from mpi_controller.runtime.ratelimit import default_controller_rate_limiter
    from mpi_controller.runtime.rest import RestClient
    from mpi_controller.runtime.workqueue import DelayingQueue, Queue, RateLimitingQueue

__all__ = [
    "ApiError",
    "Clock",
    "Controller",
    "ControllerExpectations",
    "DelayingQueue",
    "DeletedFinalStateUnknown",
    "EventRecorder",
    "HttpEndpoint",
    "HttpsServer",
    "Indexer",
    "InformerFactory",
    "KubeClient",
    "LeaderElector",
    "LeadershipLost",
    "LeaseLock",
    "Lister",
    "LoopClock",
    "Manager",
    "ManualClock",
    "Queue",
    "RateLimitingQueue",
    "Resource",
    "RestClient",
    "Result",
    "Runnable",
    "SharedIndexInformer",
    "default_controller_rate_limiter",
    "install_signal_handlers",
]

_MODULES = {
    "ApiError": "errors", "Clock": "clock", "Controller": "controller",
    "ControllerExpectations": "expectations", "DelayingQueue": "workqueue",
    "DeletedFinalStateUnknown": "cache", "EventRecorder": "events", "HttpEndpoint": "manager",
    "HttpsServer": "https", "Indexer": "cache", "InformerFactory": "informer",
    "KubeClient": "kubeclient", "LeaderElector": "leaderelection", "LeadershipLost": "manager",
    "LeaseLock": "leaderelection", "Lister": "cache", "LoopClock": "clock", "Manager": "manager",
    "ManualClock": "clock", "Queue": "workqueue", "RateLimitingQueue": "workqueue",
    "Resource": "mpi_controller.kube.resources", "RestClient": "rest", "Result": "controller",
    "Runnable": "manager", "SharedIndexInformer": "informer",
    "default_controller_rate_limiter": "ratelimit", "install_signal_handlers": "manager",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    path = module if "." in module else f"{__name__}.{module}"
    value = getattr(importlib.import_module(path), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
