"""``mpi-controller run``: wires the client, informers, controller, leader election, events,
health and metrics together, and runs until SIGTERM.

Startup follows the Go operator: build the client (QPS/burst), check that the MPIJob CRD is
installed (exit 1 with "CRD doesn't exist. Exiting" otherwise), serve health, run leader
election on Lease ``<lock-namespace>/mpi-operator`` (15 s / 5 s / 3 s), and when leading start
the informers and the controller. Losing the lease exits with status 1 (so the pod restarts
as a candidate); SIGTERM drains the queue and exits 0.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import Awaitable, Callable

import structlog

from mpi_controller import jobmetrics
from mpi_controller.api import constants as c
from mpi_controller.controller import MPIJOBS, ControllerConfig, MPIJobController
from mpi_controller.options import ServerOptions
from mpi_controller.runtime.client import ApiError, KubeClient
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.informer import InformerFactory
from mpi_controller.runtime.leaderelection import LeaderElector, LeaseLock
from mpi_controller.runtime.manager import LeadershipLost, Manager, install_signal_handlers
from mpi_controller.runtime.metrics import HTTPServer, serve_http

__all__ = ["LEASE_NAME", "run"]

LEASE_NAME = "mpi-operator"
# The Go operator's clientsets besides the Kubernetes one, each with its own --kube-api-qps
# token bucket (cmd/mpi-operator/app/server.go createClientSets): MPIJobs, leader election,
# and the gang schedulers' PodGroups.
CLIENT_GROUPS = {c.GROUP: "mpijobs", "coordination.k8s.io": "leader-election",
                 "scheduling.volcano.sh": "volcano", "scheduling.x-k8s.io": "scheduler-plugins"}
_log = structlog.get_logger("mpi_controller")


class _RecorderTask:
    """Runs the EventRecorder beside the informers (always 'synced')."""

    def __init__(self, recorder: EventRecorder) -> None:
        self.recorder = recorder

    async def run(self) -> None:
        await self.recorder.run()

    def has_synced(self) -> bool:
        return True


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
                         retry_for: float = STARTUP_RETRY_SECONDS) -> bool:
    """Whether the MPIJob CRD is served. Retriable errors (API server restarting or
    overloaded) are retried with backoff for ``retry_for`` seconds, so a restart during an
    API server outage waits for it instead of crash-looping."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + retry_for
    delay = 0.5
    while True:
        try:
            await client.list(MPIJOBS, namespace=namespace or None, limit=1)
        except ApiError as err:
            if err.is_not_found():
                return False
            if not err.is_retriable() or loop.time() + delay > deadline:
                raise
            _log.warning("API server not ready; retrying", error=str(err), delay=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
            continue
        return True


def _identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


async def run(opts: ServerOptions) -> int:
    """Run the controller until SIGTERM (returns 0) or lost leadership (returns 1)."""
    client = await KubeClient.auto(
        kubeconfig=opts.kubeconfig or None, master=opts.master or None,
        qps=opts.kube_api_qps, burst=opts.kube_api_burst, user_agent="mpi-operator",
        client_groups=CLIENT_GROUPS)
    try:
        installed = await _crd_installed(client, opts.namespace)
    except BaseException:
        await client.close()
        raise
    if not installed:
        await client.close()
        _log.error("CRD doesn't exist. Exiting", crd=c.CRD_NAME)
        return 1
    recorder = EventRecorder(client, c.CONTROLLER_AGENT_NAME)
    factory = InformerFactory(client)
    controller = MPIJobController(client, factory, recorder, ControllerConfig(
        namespace=opts.namespace, gang_scheduling=opts.gang_scheduling,
        cluster_domain=opts.cluster_domain, threadiness=opts.threadiness,
        queue_qps=opts.controller_queue_rate_limit, queue_burst=opts.controller_queue_burst,
        worker_create_concurrency=opts.worker_create_concurrency))
    elector = None
    if opts.leader_elect:
        lock = LeaseLock(client, opts.lock_namespace, LEASE_NAME, _identity())
        elector = _GaugedElector(LeaderElector(
            lock, lease_duration=15.0, renew_deadline=5.0, retry_period=3.0))
    else:
        jobmetrics.IS_LEADER.set(1)
    manager = Manager(
        informers=[*controller.informers(), _RecorderTask(recorder)],
        controllers=[controller.controller], elector=elector, close=client.close,
        port=opts.health_port or None)
    stop = asyncio.Event()
    remove = install_signal_handlers(stop)
    metrics_server: HTTPServer | None = None
    if opts.monitoring_port:
        metrics_server = await serve_http("0.0.0.0", opts.monitoring_port)
    _log.info("mpi-controller starting", namespace=opts.namespace or "(all)",
              threadiness=opts.threadiness, qps=opts.kube_api_qps, burst=opts.kube_api_burst,
              gang_scheduling=opts.gang_scheduling or None, leader_elect=opts.leader_elect)
    try:
        await manager.run(stop)
    except LeadershipLost as lost:
        _log.error("Leader election stopped", reason=str(lost))
        return 1
    finally:
        remove()
        if metrics_server is not None:
            await metrics_server.close()
    return 0
