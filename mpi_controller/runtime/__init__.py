"""A generic asyncio controller runtime with client-go's semantics (nothing MPI-specific).

Parts, one module each: :mod:`.clock` (injected time), :mod:`.ratelimit` and
:mod:`.workqueue` (rate limiters and work queues), :mod:`.client` (raw-JSON API access with
QPS limits and classified errors), :mod:`.cache`, :mod:`.reflector` and :mod:`.informer`
(list + watch into indexed caches), :mod:`.leaderelection` (Lease), :mod:`.events`
(EventRecorder), :mod:`.expectations`, :mod:`.controller` (workers over a queue),
:mod:`.manager` (every-replica runnables, leader-only informers and controllers, health and
metrics, ordered shutdown), :mod:`.https` (TLS server for webhooks) and :mod:`.metrics`.

The public API, for other controllers too, is ``__all__`` (re-exported here); the modules'
other names are internal.
"""

from mpi_controller.runtime.cache import DeletedFinalStateUnknown, Indexer, Lister
from mpi_controller.runtime.client import ApiError, KubeClient, Resource, RestClient
from mpi_controller.runtime.clock import Clock, LoopClock, ManualClock
from mpi_controller.runtime.controller import Controller, Result
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.expectations import ControllerExpectations
from mpi_controller.runtime.https import HttpsServer
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer
from mpi_controller.runtime.leaderelection import LeaderElector, LeaseLock
from mpi_controller.runtime.manager import (
    HttpEndpoint,
    LeadershipLost,
    Manager,
    Runnable,
    install_signal_handlers,
)
from mpi_controller.runtime.ratelimit import default_controller_rate_limiter
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
