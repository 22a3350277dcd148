"""The controllers exactly as ``mpi-controller run`` wires them
(:func:`mpi_controller.app.build_controllers`), on the in-memory
:class:`~mpi_controller.testing.FakeApi` with a :class:`~mpi_controller.runtime.clock.ManualClock`,
for unit tests of the engine and the job kinds.

Informers and event recorders run as tasks; syncs are not run by workers but called by the
test (:meth:`EngineHarness.sync`), so each test decides when a sync happens and what the
cache has seen by then. :meth:`EngineHarness.settle` lets every pending watch event reach the
caches.

``schemes`` chooses the kinds (``--enable-scheme``; default MPIJob alone); ``h.controller`` and
``h.kind`` are the first one's, :meth:`EngineHarness.controller_for` finds the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from mpi_controller.app import build_controllers
from mpi_controller.engine.controller import EngineConfig, JobController
from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.kinds import plugins
from mpi_controller.kube.resources import EVENTS, Resource
from mpi_controller.mpi.features import Features
from mpi_controller.mpi.gang import SCHEDULER_PLUGINS_POD_GROUP, VOLCANO_POD_GROUP
from mpi_controller.mpi.options import MPIJobOptions
from mpi_controller.options import ServerOptions
from mpi_controller.pytorch.hooks import PyTorchOptions
from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.informer import SharedIndexInformer
from mpi_controller.testing import BUILTIN_TYPES, FakeApi, Request

Obj = dict[str, Any]
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
NAMESPACE = "ns"


def pod_group_resources() -> list[Resource]:
    return [Resource(api.group, api.version, api.plural, True, api.kind)
            for api in (VOLCANO_POD_GROUP, SCHEDULER_PLUGINS_POD_GROUP)]


class EngineHarness:
    """See the module doc. Use as ``async with EngineHarness() as h:``."""

    def __init__(self, *, namespace: str = NAMESPACE, gang_scheduling: str = "",
                 worker_create_concurrency: int = 16, pod_update_batch: float = 1.0,
                 status_counts_hold: float = 1.0,
                 schemes: tuple[str, ...] = ("mpijob",), cluster_domain: str = "",
                 features: Features | None = None,
                 pytorch: PyTorchOptions | None = None) -> None:
        self.namespace = namespace
        self.clock = ManualClock()
        self.api = FakeApi(clock=self.clock, wall=self.now)
        for kind in plugins():
            self.api.register(kind.resource, status_subresource=True)
        built_in = {t.resource.plural for t in BUILTIN_TYPES}
        for resource in {r.plural: r for k in plugins() for r in k.children}.values():
            if resource.plural not in built_in:
                self.api.register(resource, status_subresource=True, custom=False)
        for resource in pod_group_resources():
            self.api.register(resource)
        options = ServerOptions(
            namespace=namespace,
            engine=EngineConfig(threadiness=1, pod_update_batch=pod_update_batch,
                                status_counts_hold=status_counts_hold),
            kinds={"mpijob": MPIJobOptions(gang_scheduling=gang_scheduling,
                                           worker_create_concurrency=worker_create_concurrency,
                                           features=features or Features()),
                   "pytorchjob": pytorch or PyTorchOptions()},
            training=TrainingOptions(gang_scheduler_name=gang_scheduling,
                                     cluster_domain=cluster_domain,
                                     create_concurrency=worker_create_concurrency),
            enabled_schemes=schemes)
        self.built = build_controllers(self.api, options, clock=self.clock, wall=self.now)
        self.controller: JobController = self.built.controllers[0]
        self.kind: Any = self.controller.kind
        self._tasks: list[asyncio.Task[None]] = []
        self._informer_tasks: dict[int, asyncio.Task[None]] = {}
        self._mark = 0

    def now(self) -> datetime:
        """The wall clock: EPOCH plus the manual clock's time."""
        return EPOCH + timedelta(seconds=self.clock.now())

    async def __aenter__(self) -> EngineHarness:
        for informer in self.built.informers():
            self._informer_tasks[id(informer)] = asyncio.create_task(informer.run())
        self._tasks = [asyncio.create_task(r.run()) for r in self.built.recorders]
        for _ in range(100):
            await self.settle()
            if all(i.has_synced() for i in self.built.informers()):
                return self
        raise AssertionError("the informers did not sync on the fake API")

    async def __aexit__(self, *exc: object) -> None:
        tasks = [*self._tasks, *self._informer_tasks.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def pause(self, informer: SharedIndexInformer) -> None:
        """Stop ``informer``: its cache goes stale (nothing it holds changes)."""
        task = self._informer_tasks.pop(id(informer))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    async def resume(self, informer: SharedIndexInformer) -> None:
        """Start ``informer`` again: it lists, and its handlers see what changed."""
        self._informer_tasks[id(informer)] = asyncio.create_task(informer.run())
        await self.settle(60)

    async def settle(self, rounds: int = 30) -> None:
        """Let every ready task run: watch events reach the caches, events are written."""
        for _ in range(rounds):
            await asyncio.sleep(0)

    # -- acting ---------------------------------------------------------------------------

    def controller_for(self, kind: str) -> JobController:
        """The controller of the job kind ``kind`` (``MPIJob``, ``TFJob``, ``PyTorchJob``)."""
        return next(c for c in self.built.controllers if c.kind.resource.kind == kind)

    def _resource(self, kind: str) -> Resource:
        return self.controller_for(kind).kind.resource

    def create(self, job: Mapping[str, Any]) -> Obj:
        """Store a job of any built kind (an MPIJob without ``kind``), as a user's create
        would, and return it."""
        body = dict(job)
        body["metadata"] = {**job["metadata"], "namespace": self.namespace}
        return self.api.add(self._resource(job.get("kind", "MPIJob")), body)

    async def sync(self, name: str, kind: str | None = None) -> Any:
        """Let the caches catch up, run one sync of ``name`` (by the controller of ``kind``,
        default the first), let its effects settle; the sync's result (a requeue)."""
        await self.settle()
        controller = self.controller_for(kind) if kind else self.controller
        result = await controller.sync(f"{self.namespace}/{name}")
        await self.settle()
        return result

    async def finishing_sync(self, name: str, kind: str) -> None:
        """The sync that finishes job ``name`` of a training kind, the request log afresh
        before it: its status write comes before any delete (upstream's order: step 2 of
        ``TrainingReconcile`` follows the stored finished status), and a sync after it, the
        one the write's echo would have started, writes nothing."""
        self.mark()
        await self.sync(name, kind)
        verbs = ["status" if what.endswith("/status") else verb
                 for verb, what, _, _ in self.writes()]
        assert "status" in verbs, verbs
        assert "delete" not in verbs[:verbs.index("status")], verbs
        made = len(self.writes())
        await self.sync(name, kind)
        assert self.writes()[made:] == []

    def queued(self) -> list[str]:
        """The keys waiting in the controller's queue (not delayed ones)."""
        queue = self.controller.controller.queue
        return list(queue._queue)  # the order workers would take them

    # -- observing ------------------------------------------------------------------------

    def mark(self) -> None:
        """Start a new window for :meth:`writes`."""
        self._mark = len(self.api.requests)

    def requests(self) -> list[Request]:
        return [r for r in self.api.requests[self._mark:] if r.resource != EVENTS]

    def writes(self) -> list[tuple[str, str, str, str]]:
        """``(verb, plural[/subresource], namespace, name)`` of the writes since :meth:`mark`
        (Events left out); creates by ``generateName`` show the generated name."""
        out = []
        for req in self.requests():
            if req.is_write:
                verb, what, ns, name = req.describe()
                if verb == "create" and not name:
                    name = (req.body or {}).get("metadata", {}).get("name", "")
                out.append((verb, what, ns, name))
        return out

    def events(self) -> list[tuple[str, str, str]]:
        """``(type, reason, message)`` of the Events written, oldest first."""
        stored = sorted(self.api.objects(EVENTS, self.namespace),
                        key=lambda e: int(e["metadata"]["resourceVersion"]))
        return [(e["type"], e["reason"], e["message"]) for e in stored]

    def job(self, name: str, kind: str = "MPIJob") -> Obj:
        obj = self.api.stored(self._resource(kind), name, namespace=self.namespace)
        assert obj is not None, f"{kind} {name} is not stored"
        return obj

    def stored(self, resource: Resource, name: str) -> Obj | None:
        return self.api.stored(resource, name, namespace=self.namespace)
