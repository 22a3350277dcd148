"""The steps the engine tests of a ``kubeflow.org/v1`` training kind take on an
:class:`~tests.engine_harness.EngineHarness` with that kind enabled: start a job, play the
kubelet on a pod, read the job's status, conditions and messages, list its pods and Services,
change the job, read the ``training_operator_jobs_*`` metrics.

:class:`KindSteps` holds the kind's names (kind, default container, metrics framework, the
usual job name); a test module makes one and binds the steps it uses to short names::

    STEPS = KindSteps("JAXJob", container="jax", framework="jax", job=JOB)
    harness, conditions, set_pod = STEPS.harness, STEPS.conditions, STEPS.set_pod
"""

from __future__ import annotations

import asyncio
from typing import Any

from mpi_controller.kube.resources import PODS, SERVICES
from mpi_controller.runtime.metrics import REGISTRY
from tests.engine_harness import NAMESPACE, EngineHarness

__all__ = ["KindSteps"]

Obj = dict[str, Any]


class KindSteps:
    """The steps of the module doc for ``kind``: ``container`` is the one whose exit code
    :meth:`set_pod` reports, ``framework`` the metrics' label, ``job`` the name a step reads
    when none is given."""

    def __init__(self, kind: str, *, container: str, framework: str, job: str = "job") -> None:
        self.kind = kind
        self.container = container
        self.framework = framework
        self.job = job

    def harness(self, **kw: Any) -> EngineHarness:
        """The harness with this kind alone (``--enable-scheme <kind>``)."""
        return EngineHarness(schemes=(self.kind.lower(),), **kw)

    def status(self, h: EngineHarness, name: str | None = None) -> Obj:
        return dict(h.job(name or self.job, self.kind).get("status") or {})

    def conditions(self, h: EngineHarness, name: str | None = None) -> list[tuple[str, str, str]]:
        """``(type, status, reason)`` of each condition, in order."""
        return [(c["type"], c["status"], c["reason"])
                for c in self.status(h, name).get("conditions") or []]

    def messages(self, h: EngineHarness, name: str | None = None) -> list[str]:
        """The message of each condition, in order."""
        return [c["message"] for c in self.status(h, name).get("conditions") or []]

    def set_pod(self, h: EngineHarness, name: str, phase: str, *, code: int | None = None,
                restarts: int = 0, container: str | None = None, **status: Any) -> None:
        """Play the kubelet: ``phase`` (and ``status``'s other fields); the kind's container
        (or ``container``) running, or terminated with exit ``code``."""
        def change(pod: Obj) -> None:
            state: Obj = {"running": {}}
            if code is not None:
                state = {"terminated": {"exitCode": code,
                                        "reason": "Error" if code else "Completed"}}
            pod["status"] = {"phase": phase, **status, "containerStatuses": [
                {"name": container or self.container, "restartCount": restarts,
                 "state": state}]}
        h.api.modify(PODS, name, change, namespace=h.namespace)

    def pod_names(self, h: EngineHarness) -> list[str]:
        return sorted(p["metadata"]["name"] for p in h.api.objects(PODS, h.namespace))

    def service_names(self, h: EngineHarness) -> list[str]:
        return sorted(s["metadata"]["name"] for s in h.api.objects(SERVICES, h.namespace))

    def pod(self, h: EngineHarness, name: str) -> Obj:
        found = h.stored(PODS, name)
        assert found is not None, name
        return found

    def metric(self, name: str, framework: str | None = None) -> float:
        """``training_operator_jobs_<name>_total`` of the harness's namespace."""
        value = REGISTRY.get_sample_value(
            f"training_operator_jobs_{name}_total",
            {"job_namespace": NAMESPACE, "framework": framework or self.framework})
        return value or 0.0

    def modify_job(self, h: EngineHarness, name: str, change: Any) -> None:
        """``change(job)`` on the stored job (as a user's update)."""
        h.api.modify(h.controller.kind.resource, name, change, namespace=h.namespace)

    def run_policy(self, h: EngineHarness, name: str, **policy: Any) -> None:
        """``spec.runPolicy`` of the stored job updated with ``policy``."""
        self.modify_job(h, name, lambda j: j["spec"].setdefault("runPolicy", {}).update(policy))

    def creates(self, names: list[str]) -> list[tuple[str, str, str, str]]:
        """The sorted writes creating a pod and a Service of each of ``names``."""
        return sorted([("create", "pods", NAMESPACE, n) for n in names]
                      + [("create", "services", NAMESPACE, n) for n in names])

    async def held_create(self, h: EngineHarness, job: str, pod: str,
                          ) -> tuple[list[tuple[str, str, str, str]],
                                     list[tuple[str, str, str, str]]]:
        """Sync ``job`` with the create of pod ``pod`` held until every other request of the
        sync that can go has gone: (the writes sent meanwhile, all the sync's writes)."""
        answer: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        h.api.interceptor = lambda req: (
            answer if req.verb == "create" and req.name == pod else None)
        h.mark()
        syncing = asyncio.ensure_future(h.sync(job, self.kind))
        await h.settle(200)
        meanwhile = h.writes()
        answer.set_result(None)
        await syncing
        h.api.interceptor = None
        return meanwhile, h.writes()

    async def started(self, h: EngineHarness, body: Obj, *, running: bool = True) -> None:
        """The job created, its first sync done, (with ``running``) every pod Running and
        synced again; the request log starts afresh."""
        h.create(body)
        name = body["metadata"]["name"]
        await h.sync(name, self.kind)
        if running:
            for each in self.pod_names(h):
                self.set_pod(h, each, "Running")
            await h.sync(name, self.kind)
        h.mark()
