"""Children deleted before the cache sees their owner's deletion are not created again.

When an MPIJob is deleted, the garbage collector deletes its pods and launcher Job. Watches of
different resources are independent streams, so the controller can hear of those deletions
while its MPIJob cache still holds the job (a lagging or resumed watch). A sync then sees
missing children of a live-looking job. The controller must not create them again: it reads
the MPIJob from the API server before re-creating a child it saw deleted. A child deleted
while its job really lives (a user deleting a worker) is created again, as in the Go operator.

A sync can also be in the middle of its API calls when the deletion arrives; what it creates
after that point must not be created either.

The lag is made deterministic by holding back the MPIJob watch's DELETED events (or a create
request of the sync) until the test releases them; an independent watch of the test's own
counts every pod and Job the API server created.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from kubernetes import watch

from mpi_controller.engine.controller import JobController
from mpi_controller.runtime.reflector import ListerWatcher
from tests.controller_harness import InProcessController, running_controller
from tests.mpijobs import MPIJobs, small_job
from tests.support import Cluster, wait_for

pytestmark = pytest.mark.cluster


class HeldDeletes:
    """A lister-watcher whose watch holds back DELETED events until ``release`` is called."""

    def __init__(self, inner: ListerWatcher) -> None:
        self.inner = inner
        self.resource = getattr(inner, "resource", None)
        self.gate = asyncio.Event()
        self.held = 0

    async def list(self, **params: Any) -> dict[str, Any]:
        return await self.inner.list(**params)

    async def watch(self, **params: Any) -> AsyncIterator[dict[str, Any]]:
        async for event in self.inner.watch(**params):
            if event.get("type") == "DELETED" and not self.gate.is_set():
                self.held += 1
                await self.gate.wait()
            yield event


class Creations:
    """ADDED events (name, uid) of one kind in a namespace, from a watch started at ``rv``."""

    def __init__(self, list_fn: Any, namespace: str, rv: str) -> None:
        self.added: list[tuple[str, str]] = []
        self.error: BaseException | None = None
        self.stopped = False
        self._watch = watch.Watch()
        self._thread = threading.Thread(
            target=self._run, args=(list_fn, namespace, rv), daemon=True)
        self._thread.start()

    def _run(self, list_fn: Any, namespace: str, rv: str) -> None:
        try:
            for event in self._watch.stream(list_fn, namespace, resource_version=rv,
                                            timeout_seconds=120):
                if event["type"] == "ADDED":
                    meta = event["object"].metadata
                    self.added.append((meta.name, meta.uid))
        except Exception as exc:  # the connection ends when the namespace goes
            if not self.stopped:
                self.error = exc

    def stop(self) -> None:
        """Stop watching; the watch must not have failed before."""
        self.stopped = True
        self._watch.stop()
        assert self.error is None, self.error


@pytest.fixture
def jobs(kube_api: Any, namespace: str, mpijob_crd: str) -> MPIJobs:
    return MPIJobs(kube_api, namespace)


@pytest.fixture
def held() -> list[HeldDeletes]:
    return []


@pytest.fixture
def controller(cluster: Cluster, namespace: str, mpijob_crd: str, held: list[HeldDeletes],
               ) -> Iterator[InProcessController]:
    def lag_mpijob_deletes(ctl: JobController) -> None:
        wrapper = HeldDeletes(ctl.jobs.reflector.lister_watcher)
        ctl.jobs.reflector.lister_watcher = wrapper
        held.append(wrapper)

    with running_controller(cluster.kubeconfig, namespace,
                            customize=lag_mpijob_deletes) as ctl:
        yield ctl


def test_children_deleted_by_the_collector_are_not_recreated(
        jobs: MPIJobs, controller: InProcessController, held: list[HeldDeletes]) -> None:
    ns = jobs.namespace
    jobs.create(small_job("gone", workers=2, launcher_runs="600s"))
    wait_for(lambda: len(jobs.workers("gone")) == 2
             and jobs.pods("training.kubeflow.org/job-role=launcher"),
             timeout=60, what="two workers and the launcher pod")
    rv = jobs.core.list_namespaced_pod(ns).metadata.resource_version
    pods = Creations(jobs.core.list_namespaced_pod, ns, rv)
    launchers = Creations(jobs.batch.list_namespaced_job, ns, rv)
    try:
        jobs.delete("gone")
        wait_for(lambda: not jobs.core.list_namespaced_pod(ns).items
                 and not jobs.batch.list_namespaced_job(ns).items,
                 timeout=60, what="the garbage collector to delete pods and the launcher")
        assert controller.call(lambda: held[0].held) == 1  # the cache still has the job
        wait_for(controller.idle, timeout=30, what="the controller to sync the deletions")
        assert controller.call(
            lambda: controller.mpijob_controller is not None
            and controller.mpijob_controller.jobs.indexer.get_by_key(f"{ns}/gone")
            is not None)
        controller.call(held[0].gate.set)
        wait_for(lambda: controller.call(
            lambda: controller.mpijob_controller is not None
            and controller.mpijob_controller.jobs.indexer.get_by_key(f"{ns}/gone") is None),
            timeout=30, what="the cache to see the MPIJob's deletion")
        wait_for(controller.idle, timeout=30, what="the controller to settle")
    finally:
        pods.stop()
        launchers.stop()
    assert pods.added == []
    assert launchers.added == []
    assert jobs.core.list_namespaced_pod(ns).items == []


def test_a_sync_in_flight_when_the_job_is_deleted_creates_no_workers(
        cluster: Cluster, jobs: MPIJobs, namespace: str, mpijob_crd: str) -> None:
    ns = jobs.namespace
    gate = threading.Event()
    held = threading.Event()

    def hold_secret_creates(ctl: JobController) -> None:
        create = ctl._client.create

        async def held_create(resource: Any, body: Any, **kw: Any) -> Any:
            if resource.plural == "secrets":
                held.set()
                await asyncio.to_thread(gate.wait, 60)
            return await create(resource, body, **kw)

        ctl._client.create = held_create  # type: ignore[method-assign]

    with running_controller(cluster.kubeconfig, namespace,
                            customize=hold_secret_creates) as ctl:
        rv = jobs.core.list_namespaced_pod(ns).metadata.resource_version
        pods = Creations(jobs.core.list_namespaced_pod, ns, rv)
        try:
            jobs.create(small_job("midway", workers=2, launcher_runs="600s"))
            wait_for(held.is_set, timeout=30, what="the first sync to reach the Secret create")
            jobs.delete("midway")
            wait_for(lambda: ctl.call(
                lambda: ctl.mpijob_controller is not None
                and ctl.mpijob_controller.jobs.indexer.get_by_key(f"{ns}/midway") is None),
                timeout=30, what="the cache to see the MPIJob's deletion")
            gate.set()
            wait_for(ctl.idle, timeout=30, what="the sync to finish")
        finally:
            gate.set()
            pods.stop()
    assert pods.added == []
    assert jobs.core.list_namespaced_pod(ns).items == []


def test_worker_deleted_while_the_job_lives_is_created_again(
        jobs: MPIJobs, controller: InProcessController) -> None:
    ns = jobs.namespace
    jobs.create(small_job("alive", workers=2, launcher_runs="600s"))
    wait_for(lambda: len(jobs.workers("alive")) == 2, timeout=60, what="two workers")
    old = jobs.core.read_namespaced_pod("alive-worker-1", ns).metadata.uid
    jobs.core.delete_namespaced_pod("alive-worker-1", ns, grace_period_seconds=0)

    def recreated() -> bool:
        pod = jobs.core.read_namespaced_pod("alive-worker-1", ns)
        return pod.metadata.uid != old and pod.metadata.deletion_timestamp is None

    wait_for(recreated, timeout=60, what="alive-worker-1 to be created again")
    assert sorted(p.metadata.name for p in jobs.workers("alive")) == [
        "alive-worker-0", "alive-worker-1"]
