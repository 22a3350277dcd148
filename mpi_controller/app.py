"""``mpi-controller run``: wires the client, the job kinds on the engine, leader election,
events, health and metrics together, and runs until SIGTERM.

:func:`build_controllers` is the wiring of the kinds (one shared informer factory and pod
informer, one engine controller and event recorder per kind); the tests use it too.

The kinds are those of :mod:`mpi_controller.kinds` (each a
:class:`~mpi_controller.engine.plugin.KindPlugin`); ``--enable-scheme`` selects some; without
it every kind whose CRD is installed runs.

Startup follows the Go operators: build the client (QPS/burst), check that the CRDs of the
selected kinds are installed (exit 1 with "CRD doesn't exist. Exiting", naming the CRDs,
when one is not, or without ``--enable-scheme`` when none is), serve health, run leader
election on Lease ``<lock-namespace>/mpi-operator`` (15 s / 5 s / 3 s), and when leading start
the informers and the controllers. The webhooks (:mod:`mpi_controller.webhook`), when enabled,
run on every replica, leader or not. Losing the lease exits with status 1 (so the pod restarts
as a candidate); SIGTERM drains the queue and exits 0, and so does the log's reader going away
(:mod:`mpi_controller.logging`).
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

import structlog

from mpi_controller.engine.controller import JobController
from mpi_controller.engine.plugin import KindContext
from mpi_controller.engine.pods import pod_informer
from mpi_controller.kinds import plugin, schemes
from mpi_controller.kube.resources import Resource
from mpi_controller.kube.timefmt import utcnow
from mpi_controller.logging import on_reader_gone
from mpi_controller.mpi import constants
from mpi_controller.mpi import metrics as jobmetrics
from mpi_controller.mpi.options import MPIJobOptions
from mpi_controller.options import ServerOptions
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer
from mpi_controller.runtime.kubeclient import KubeClient
from mpi_controller.runtime.kubeconfig import ConfigError
from mpi_controller.runtime.leaderelection import LeaderElector, LeaseLock
from mpi_controller.runtime.manager import (
    HttpEndpoint,
    LeadershipLost,
    Manager,
    Runnable,
    install_signal_handlers,
)
from mpi_controller.runtime.rest import RestClient
from mpi_controller.webhook import build_webhook

__all__ = ["Controllers", "build_controllers", "run"]

# The Go operator's clientsets besides the Kubernetes one, each with its own --kube-api-qps
# token bucket (cmd/mpi-operator/app/server.go createClientSets): MPIJobs, leader election,
# and the gang schedulers' PodGroups.
CLIENT_GROUPS = {constants.GROUP: "mpijobs", "coordination.k8s.io": "leader-election",
                 "scheduling.volcano.sh": "volcano", "scheduling.x-k8s.io": "scheduler-plugins"}
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


DEFAULT_SCHEMES = ("mpijob",)
"""What :func:`build_controllers` builds when nothing selects kinds (callers that wire
MPIJobs alone); ``run`` always selects them (from the flag or the installed CRDs)."""


async def _crd_installed(client: KubeClient, namespace: str, *,
                         retry_for: float = STARTUP_RETRY_SECONDS,
                         clock: Clock | None = None, scheme: str = "mpijob",
                         resource: Resource | None = None) -> bool:
    """Whether the CRD of ``scheme`` (or ``resource``) is served. Retriable errors (API
    server restarting or overloaded) are retried with backoff for ``retry_for`` seconds, so a
    restart during an API server outage waits for it instead of crash-looping."""
    clock = clock or LoopClock()
    deadline = clock.now() + retry_for
    delay = 0.5
    resource = resource or plugin(scheme).resource
    while True:
        try:
            await client.list(resource, namespace=namespace or None, limit=1)
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


def build_controllers(client: KubeClient, opts: ServerOptions, *,
                      schemes: Sequence[str] | None = None, clock: Clock | None = None,
                      wall: Callable[[], datetime] = utcnow) -> Controllers:
    """One engine controller per job kind of ``schemes`` (default: ``opts.enabled_schemes``,
    else :data:`DEFAULT_SCHEMES`), sharing one informer factory and one pod informer (whose
    selector covers every kind's operator name); ``clock`` and ``wall`` are injected by
    tests."""
    chosen = [plugin(s) for s in (schemes or opts.enabled_schemes or DEFAULT_SCHEMES)]
    factory = InformerFactory(client, clock=clock)
    namespace = opts.namespace or None
    pods = pod_informer(factory, namespace, [n for k in chosen for n in k.operator_names])
    built = Controllers(controllers=[], recorders=[])
    # One more clientset, as controller-runtime's event recorder provider has (one token
    # bucket for the Events of every kind that records through it).
    events_client = (client.with_own_bucket() if isinstance(client, RestClient) else client)
    for described in chosen:
        kind = described.build(KindContext(
            factory=factory, pods=pods, namespace=opts.namespace, training=opts.training,
            options=opts.kind_options(described.scheme)))
        recorder = EventRecorder(
            events_client if described.events_bucket_of_their_own else client,
            described.component, clock=clock, wall=wall)
        built.controllers.append(JobController(kind, client, recorder, pods=pods,
                                               config=opts.engine, clock=clock, wall=wall))
        built.recorders.append(recorder)
    return built


def _explain(err: ApiError) -> str:
    """One line on a start-up request that failed for good."""
    if err.status == 0:
        return f"unreachable ({err.message or err.reason})"
    if err.status == 401:
        return "401 Unauthorized: the kubeconfig's credentials were refused"
    if err.is_forbidden():
        return f"403 Forbidden: {err.message} (check the ClusterRole and its binding)"
    return str(err)


async def _schemes_to_run(client: KubeClient, opts: ServerOptions, *,
                          retry_for: float = STARTUP_RETRY_SECONDS) -> list[str] | None:
    """The kinds to run: the enabled ones (``None`` when a CRD of one is missing), else every
    kind whose CRD is installed (``None`` when none is), never an :attr:`~KindPlugin.explicit`
    kind unless enabled. Logs the missing CRDs; raises :class:`ConfigError` when a kind to run
    needs a resource of another project (``requires``) that is not served."""
    wanted = opts.enabled_schemes or [s for s in schemes() if not plugin(s).explicit]
    installed = [s for s in wanted
                 if await _crd_installed(client, opts.namespace, scheme=s,
                                         retry_for=retry_for)]
    missing = [plugin(s).crd_name for s in wanted if s not in installed]
    if (opts.enabled_schemes and missing) or not installed:
        _log.error("CRD doesn't exist. Exiting", crd=", ".join(missing))
        return None
    for scheme in installed:
        for needed in plugin(scheme).requires:
            if not await _crd_installed(client, opts.namespace, retry_for=retry_for,
                                        resource=needed):
                raise ConfigError(
                    f"{plugin(scheme).kind} needs the {needed.kind} CRD "
                    f"{needed.group_resource} ({needed.api_version}), which is not installed: "
                    f"install {needed.kind} first, or run without --enable-scheme {scheme}")
    return installed


def _feature_gates(opts: ServerOptions) -> list[str] | None:
    """The MPIJob kind's opt-ins that are on (for the start-up line), or ``None``."""
    mpi = opts.kind_options("mpijob")
    return (mpi.features.enabled() or None) if isinstance(mpi, MPIJobOptions) else None


def _identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


async def run(opts: ServerOptions) -> int:
    """Run the controller until SIGTERM (returns 0) or lost leadership (returns 1). Raises
    :class:`ConfigError` (one line) when the configuration is unusable or the API server
    cannot be used at start-up (unreachable for ``opts.startup_timeout`` seconds, credentials
    refused, forbidden)."""
    client, target = await RestClient.connect(
        opts.kubeconfig, opts.master, qps=opts.kube_api_qps, burst=opts.kube_api_burst,
        user_agent="mpi-operator", client_groups=CLIENT_GROUPS)
    _log.info("API server", server=target.server, context=target.context or None,
              kubeconfig=target.source)
    if opts.kubeconfig and os.environ.get("KUBECONFIG", opts.kubeconfig) != opts.kubeconfig:
        _log.warning("$KUBECONFIG ignored: --kubeConfig wins (client-go's order; the Go "
                     "mpi-operator lets $KUBECONFIG win)", KUBECONFIG=os.environ["KUBECONFIG"])
    try:
        schemes = await _schemes_to_run(client, opts, retry_for=opts.startup_timeout)
    except ApiError as err:
        await client.close()
        raise ConfigError(f"API server {target.server}: {_explain(err)}") from None
    except BaseException:
        await client.close()
        raise
    if schemes is None:
        await client.close()
        return 1
    built = build_controllers(client, opts, schemes=schemes)
    elector = None
    if opts.leader_elect:
        lock = LeaseLock(client, opts.lock_namespace, opts.lease_name, _identity())
        elector = _GaugedElector(LeaderElector(
            lock, lease_duration=15.0, renew_deadline=5.0, retry_period=3.0))
    else:
        jobmetrics.IS_LEADER.set(1)
    runnables: list[Runnable] = [*built.recorders]
    # The health endpoint serves /metrics too: the same address given to both is one server.
    if opts.monitoring_port and ((opts.monitoring_host, opts.monitoring_port)
                                 != (opts.health_host, opts.health_port)):
        runnables.append(HttpEndpoint(opts.monitoring_host, opts.monitoring_port))
    if opts.webhook.enabled(in_pod=bool(os.environ.get("KUBERNETES_SERVICE_HOST"))):
        runnables += build_webhook(
            client, opts.webhook, namespace=opts.webhook.namespace_or(opts.lock_namespace),
            defaulting=any(plugin(s).defaulting for s in schemes))
    manager = Manager(
        informers=built.informers(), controllers=[c.controller for c in built.controllers],
        runnables=runnables, elector=elector, close=client.close,
        host=opts.health_host, port=opts.health_port or None)
    stop = asyncio.Event()
    remove = install_signal_handlers(stop)
    loop = asyncio.get_running_loop()
    # The log's reader gone (a pipe to `head` closed): stop as on SIGTERM (mpi_controller.logging).
    unhook = on_reader_gone(partial(loop.call_soon_threadsafe, stop.set))
    _log.info("mpi-controller starting", namespace=opts.namespace or "(all)",
              schemes=",".join(schemes),
              threadiness=opts.engine.threadiness, qps=opts.kube_api_qps,
              burst=opts.kube_api_burst,
              gang_scheduling=opts.training.gang_scheduler_name or None,
              feature_gates=_feature_gates(opts),
              leader_elect=opts.leader_elect)
    try:
        await manager.run(stop)
    except LeadershipLost as lost:
        _log.error("Leader election stopped", reason=str(lost))
        return 1
    finally:
        unhook()
        remove()
    return 0
