"""The engine's event handlers: which events enqueue which job, and when (on the in-memory
API; the MPIJob kind supplies the informers)."""

from __future__ import annotations

from typing import Any

from mpi_controller.kube.resources import CONFIGMAPS, JOBS, PODS
from mpi_controller.mpi.options import MPIJOBS
from tests.engine_harness import EngineHarness
from tests.mpijobs import small_job

NS = "ns"
KEY = f"{NS}/pi"


async def started(h: EngineHarness) -> None:
    h.create(small_job("pi", workers=2))
    await h.sync("pi")
    h.controller.controller.queue._queue.clear()  # what the first sync's writes enqueued
    h.controller.controller.queue._dirty.clear()


def labelled_pod(name: str, owner: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": NS,
                         "labels": {"training.kubeflow.org/operator-name": "mpi-operator"},
                         "ownerReferences": [owner]},
            "spec": {"containers": []}}


async def test_a_child_of_the_job_enqueues_it_and_counts_as_an_observed_create() -> None:
    async with EngineHarness() as h:
        await started(h)
        job = h.job("pi")
        h.controller.expectations.raise_expectations(KEY, add=1)
        h.api.add(PODS, labelled_pod("extra", {
            "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": "pi",
            "uid": job["metadata"]["uid"], "controller": True}))
        await h.settle()
        assert h.queued() == [KEY]
        assert h.controller.expectations.satisfied_expectations(KEY)


async def test_a_pod_of_the_launcher_job_enqueues_the_job_through_it() -> None:
    async with EngineHarness() as h:
        await started(h)
        launcher = h.stored(JOBS, "pi-launcher")
        assert launcher is not None
        h.api.add(PODS, labelled_pod("pi-launcher-abcde", {
            "apiVersion": "batch/v1", "kind": "Job", "name": "pi-launcher",
            "uid": launcher["metadata"]["uid"], "controller": True}))
        await h.settle()
        assert h.queued() == [KEY]


async def test_objects_of_other_owners_enqueue_nothing() -> None:
    async with EngineHarness() as h:
        await started(h)
        h.api.add(PODS, labelled_pod("rs-pod", {
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "pi", "uid": "x",
            "controller": True}))
        h.api.add(PODS, labelled_pod("gone-job-pod", {
            "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": "other",
            "uid": "y", "controller": True}))
        h.api.add(CONFIGMAPS, {"metadata": {"name": "cm", "namespace": NS,
                                            "labels": {"app": "pi"}}})  # no owner
        await h.settle()
        assert h.queued() == []


async def test_pod_updates_are_batched_for_a_second() -> None:
    async with EngineHarness() as h:
        await started(h)
        for name in ("pi-worker-0", "pi-worker-1"):
            h.api.modify(PODS, name, lambda p: p.update(status={"phase": "Running"}),
                         namespace=NS)
        await h.settle()
        assert h.queued() == []
        h.clock.advance(0.9)
        await h.settle()
        assert h.queued() == []
        h.clock.advance(0.2)
        await h.settle()
        assert h.queued() == [KEY]


async def test_child_updates_without_a_new_resource_version_are_ignored() -> None:
    async with EngineHarness() as h:
        await started(h)
        h.kind.config_maps.resync()
        h.kind.pods.resync()
        h.clock.advance(5)
        await h.settle()
        assert h.queued() == []
        h.api.modify(CONFIGMAPS, "pi-config", lambda cm: cm["data"].update(x="1"),
                     namespace=NS)
        await h.settle()
        assert h.queued() == [KEY]


async def test_a_deleted_job_is_forgotten() -> None:
    async with EngineHarness() as h:
        await h.pause(h.kind.pods)
        h.create(small_job("pi", workers=2))
        await h.sync("pi")
        assert not h.controller.expectations.satisfied_expectations(KEY)
        h.api.remove(MPIJOBS, "pi", namespace=NS)
        await h.settle()
        # No expectations left for the key: a job re-created with the name syncs at once.
        assert h.controller.expectations.satisfied_expectations(KEY)
        h.mark()
        await h.sync("pi")
        assert h.writes() == []
