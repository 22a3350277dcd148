"""``mpi-controller run``: wires the client, the job kinds on the engine, leader election,
events, health and metrics together, and runs until SIGTERM.

:func:`build_controllers` is the wiring of the kinds (one shared informer factory and pod
informer, one engine controller and event recorder per kind); the tests use it too.

Startup follows the Go operator: build the client (QPS/burst), check that the MPIJob CRD is
installed (exit 1 with "CRD doesn't exist. Exiting" otherwise), serve health, run leader
election on Lease ``<lock-namespace>/mpi-operator`` (15 s / 5 s / 3 s), and when leading start
the informers and the controller. The webhooks (:mod:`mpi_controller.webhook`), when enabled,
run on every replica, leader or not. Losing the lease exits with status 1 (so the pod restarts
as a candidate); SIGTERM drains the queue and exits 0.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

import structlog

from mpi_controller.engine.controller import JobController
from mpi_controller.engine.pods import pod_informer
from mpi_controller.kube.timefmt import utcnow
from mpi_controller.mpi import constants
from mpi_controller.mpi import metrics as jobmetrics
from mpi_controller.mpi.kind import MPIJOBS, MPIJobKind
from mpi_controller.options import ServerOptions
from mpi_controller.runtime.client import ApiError, KubeClient, RestClient
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer
from mpi_controller.runtime.leaderelection import LeaderElector, LeaseLock
from mpi_controller.runtime.manager import (
    HttpEndpoint,
    LeadershipLost,
    Manager,
    Runnable,
    install_signal_handlers,
)
from mpi_controller.webhook import build_webhook

__all__ = ["LEASE_NAME", "Controllers", "build_controllers", "run"]

LEASE_NAME = "mpi-operator"
_log = structlog.get_logger("mpi_controller")


class _GaugedElector:
    """A LeaderElector that keeps ``mpi_operator_is_leader`` up to date."""

    def __init__(self, elector: LeaderElector) -> None:
        self.elector = elector

    async def run(self, on_started_leading: Callable[[], Awaitable[None]]) -> None:
        async def leading() -> None:
            jobmetrics.IS_LEADER.set(1)
            try:
                await on_started_leading()
            finally:
                jobmetrics.IS_LEADER.set(0)

        try:
            await self.elector.run(leading)
        finally:
            jobmetrics.IS_LEADER.set(0)

    def is_leader(self) -> bool:
        return self.elector.is_leader()

    def healthy(self) -> bool:
        return self.elector.healthy()


STARTUP_RETRY_SECONDS = 60.0


async def _crd_installed(client: KubeClient, namespace: str, *,
                         retry_for: float = STARTUP_RETRY_SECONDS,
                         clock: Clock | None = None) -> bool:
    """Whether the MPIJob CRD is served. Retriable errors (API server restarting or
    overloaded) are retried with backoff for ``retry_for`` seconds, so a restart during an
    API server outage waits for it instead of crash-looping."""
    clock = clock or LoopClock()
    deadline = clock.now() + retry_for
    delay = 0.5
    while True:
        try:
            await client.list(MPIJOBS, namespace=namespace or None, limit=1)
        except ApiError as err:
            if err.is_not_found():
                return False
            if not err.is_retriable() or clock.now() + delay > deadline:
                raise
            _log.warning("API server not ready; retrying", error=str(err), delay=delay)
            await clock.sleep(delay)
            delay = min(delay * 2, 5.0)
            continue
        return True


@dataclass
class Controllers:
    """The job kinds' controllers and what the Manager must run for them."""

    controllers: list[JobController]
    recorders: list[EventRecorder]

    def informers(self) -> list[SharedIndexInformer]:
        out: list[SharedIndexInformer] = []
        for controller in self.controllers:
            out += [i for i in controller.informers() if all(i is not o for o in out)]
        return out


def build_controllers(client: KubeClient, opts: ServerOptions, *, clock: Clock | None = None,
                      wall: Callable[[], datetime] = utcnow) -> Controllers:
    """One engine controller per job kind, sharing one informer factory and pod informer
    (``clock`` and ``wall`` are injected by tests)."""
    factory = InformerFactory(client, clock=clock)
    namespace = opts.namespace or None
    pods = pod_informer(factory, namespace, [MPIJobKind.operator_name])
    kind = MPIJobKind(factory, namespace=opts.namespace, pods=pods, options=opts.mpi)
    recorder = EventRecorder(client, MPIJobKind.component, clock=clock, wall=wall)
    controller = JobController(kind, client, recorder, pods=pods, config=opts.engine,
                               clock=clock, wall=wall)
    return Controllers(controllers=[controller], recorders=[recorder])


def _identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


async def run(opts: ServerOptions) -> int:
    """Run the controller until SIGTERM (returns 0) or lost leadership (returns 1)."""
    client = await RestClient.auto(
        kubeconfig=opts.kubeconfig or None, master=opts.master or None,
        qps=opts.kube_api_qps, burst=opts.kube_api_burst, user_agent="mpi-operator")
    try:
        installed = await _crd_installed(client, opts.namespace)
    except BaseException:
        await client.close()
        raise
    if not installed:
        await client.close()
        _log.error("CRD doesn't exist. Exiting", crd=constants.CRD_NAME)
        return 1
    built = build_controllers(client, opts)
    elector = None
    if opts.leader_elect:
        lock = LeaseLock(client, opts.lock_namespace, LEASE_NAME, _identity())
        elector = _GaugedElector(LeaderElector(
            lock, lease_duration=15.0, renew_deadline=5.0, retry_period=3.0))
    else:
        jobmetrics.IS_LEADER.set(1)
    runnables: list[Runnable] = [*built.recorders]
    if opts.monitoring_port:
        runnables.append(HttpEndpoint("0.0.0.0", opts.monitoring_port))
    if opts.webhook.enabled(in_pod=bool(os.environ.get("KUBERNETES_SERVICE_HOST"))):
        runnables += build_webhook(client, opts.webhook,
                                   namespace=opts.webhook.namespace_or(opts.lock_namespace))
    manager = Manager(
        informers=built.informers(), controllers=[c.controller for c in built.controllers],
        runnables=runnables, elector=elector, close=client.close,
        port=opts.health_port or None)
    stop = asyncio.Event()
    remove = install_signal_handlers(stop)
    _log.info("mpi-controller starting", namespace=opts.namespace or "(all)",
              threadiness=opts.engine.threadiness, qps=opts.kube_api_qps,
              burst=opts.kube_api_burst, gang_scheduling=opts.mpi.gang_scheduling or None,
              leader_elect=opts.leader_elect)
    try:
        await manager.run(stop)
    except LeadershipLost as lost:
        _log.error("Leader election stopped", reason=str(lost))
        return 1
    finally:
        remove()
    return 0
