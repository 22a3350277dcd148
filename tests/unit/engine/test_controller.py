"""The engine's event handlers: which events enqueue which job, and when (on the in-memory
API; the MPIJob kind supplies the informers)."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.controller import pod_update_delay
from mpi_controller.kube.resources import CONFIGMAPS, JOBS, PODS
from mpi_controller.mpi.options import MPIJOBS
from mpi_controller.runtime.throttle import REQUEST_PRIORITY, URGENT
from tests.engine_harness import EngineHarness
from tests.mpijobs import small_job

NS = "ns"
KEY = f"{NS}/pi"


async def started(h: EngineHarness) -> None:
    h.create(small_job("pi", workers=2))
    await h.sync("pi")
    clear_queue(h)  # what the first sync's writes enqueued


def clear_queue(h: EngineHarness) -> None:
    queue = h.controller.controller.queue
    queue._queue.clear()
    queue._dirty.clear()


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


def run_pods(h: EngineHarness) -> None:
    for name in ("pi-worker-0", "pi-worker-1"):
        h.api.modify(PODS, name, lambda p: p.update(status={"phase": "Running"}), namespace=NS)


async def test_an_idle_controller_syncs_a_job_as_soon_as_its_pods_change() -> None:
    async with EngineHarness() as h:
        await started(h)
        run_pods(h)
        await h.settle()
        assert h.queued() == [KEY]  # both updates coalesce into one queued sync


async def test_pod_updates_are_batched_for_a_second_while_every_worker_is_busy() -> None:
    async with EngineHarness() as h:  # one worker
        await started(h)
        h.controller.controller.enqueue("ns/other")  # the worker's next key: a backlog
        run_pods(h)
        await h.settle()
        assert h.queued() == ["ns/other"]
        h.clock.advance(0.9)
        await h.settle()
        assert h.queued() == ["ns/other"]
        h.clock.advance(0.2)
        await h.settle()
        assert h.queued() == ["ns/other", KEY]


async def test_a_sync_within_the_window_drops_the_held_pod_updates() -> None:
    async with EngineHarness() as h:  # one worker
        await started(h)
        h.controller.controller.enqueue("ns/other")  # a backlog
        run_pods(h)
        await h.settle()
        assert h.controller.held() == 1
        h.clock.advance(0.5)
        await h.sync("pi")  # reads both Running pods
        assert h.controller.held() == 0
        clear_queue(h)  # what the sync's writes enqueued (the ConfigMap's echo)
        h.controller.controller.enqueue("ns/other")
        h.clock.advance(1.0)
        await h.settle()
        assert h.queued() == ["ns/other"]  # no second sync for the same updates
        # an update after that sync's start is held afresh, and enqueues after the window
        h.api.modify(PODS, "pi-worker-0", lambda p: p.update(status={"phase": "Succeeded"}),
                     namespace=NS)
        await h.settle()
        assert h.controller.held() == 1
        h.clock.advance(1.1)
        await h.settle()
        assert h.queued() == ["ns/other", KEY]
        assert h.controller.held() == 0


async def test_a_deleted_job_drops_its_held_pod_updates() -> None:
    async with EngineHarness() as h:
        await started(h)
        h.controller.controller.enqueue("ns/other")
        run_pods(h)
        await h.settle()
        assert h.controller.held() == 1
        h.api.remove(MPIJOBS, "pi", namespace=NS)
        await h.settle()
        assert h.controller.held() == 0
        h.clock.advance(1.1)
        await h.settle()
        assert h.queued() == ["ns/other"]


async def test_a_zero_batch_never_holds_a_pod_update() -> None:
    async with EngineHarness(pod_update_batch=0) as h:
        await started(h)
        h.controller.controller.enqueue("ns/other")
        run_pods(h)
        await h.settle()
        assert h.queued() == ["ns/other", KEY]


def test_pod_update_delay_is_the_window_only_with_a_backlog() -> None:
    assert pod_update_delay(1.0, backlog=0) == 0.0
    assert pod_update_delay(1.0, backlog=1) == 1.0
    assert pod_update_delay(0.25, backlog=7) == 0.25
    assert pod_update_delay(0.0, backlog=7) == 0.0


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


async def test_launcher_job_updates_a_sync_never_reads_are_ignored() -> None:
    async with EngineHarness() as h:
        await started(h)
        h.api.modify(JOBS, "pi-launcher", lambda j: j.update(
            status={"startTime": "2026-12-06T12:00:00Z", "active": 1, "ready": 0}),
            namespace=NS)
        await h.settle()
        assert h.queued() == [KEY]  # the launcher started (startTime)
        clear_queue(h)
        h.api.modify(JOBS, "pi-launcher", lambda j: j["status"].update(ready=1), namespace=NS)
        h.api.modify(JOBS, "pi-launcher", lambda j: j["status"].update(
            active=None, ready=0, uncountedTerminatedPods={"succeeded": ["u"]}), namespace=NS)
        await h.settle()
        assert h.queued() == []
        h.api.modify(JOBS, "pi-launcher", lambda j: j["status"].update(
            succeeded=1, conditions=[{"type": "Complete", "status": "True"}]), namespace=NS)
        await h.settle()
        assert h.queued() == [KEY]


async def test_pod_updates_that_change_nothing_a_sync_reads_are_ignored() -> None:
    async with EngineHarness(pod_update_batch=0) as h:
        await started(h)
        # the pod's node and IP: a new resourceVersion, the same slim pod
        h.api.modify(PODS, "pi-worker-0", lambda p: p["spec"].update(nodeName="n1"),
                     namespace=NS)
        h.api.modify(PODS, "pi-worker-1", lambda p: p.update(status={"podIP": "10.0.0.2"}),
                     namespace=NS)
        await h.settle()
        assert h.queued() == []
        h.api.modify(PODS, "pi-worker-1", lambda p: p.update(status={"phase": "Running"}),
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


async def test_a_syncs_requests_carry_the_order_its_job_was_first_seen_in() -> None:
    async with EngineHarness() as h:
        seen: list[int] = []

        async def sync(ctx: Any) -> None:
            seen.append(REQUEST_PRIORITY.get())

        h.create(small_job("first", workers=1))
        h.create(small_job("second", workers=1))
        await h.settle()
        h.controller.kind.sync = sync  # type: ignore[method-assign]
        await h.sync("second")
        await h.sync("first")
        first, second = (h.controller.request_priority(f"{NS}/{n}") for n in ("first", "second"))
        assert first is not None
        assert second is not None
        assert first < second
        assert seen == [second, first]
        assert REQUEST_PRIORITY.get() == URGENT  # only for the length of the sync
        h.api.remove(MPIJOBS, "first", namespace=NS)
        await h.settle()
        assert h.controller.request_priority(f"{NS}/first") is None


async def test_no_event_enqueues_a_job_whose_writes_the_cache_has_not_all_seen() -> None:
    """Expectations: a pod event for a job whose creates the cache has not all seen enqueues
    nothing; the observed create that fulfils them enqueues the job, once."""
    async with EngineHarness() as h:
        controller = h.controller
        h.create(small_job("pi", workers=2))
        await h.pause(controller.pods)  # the workers' ADDED events wait
        await h.sync("pi")
        clear_queue(h)
        assert not controller.expectations.satisfied_expectations(KEY)
        h.api.modify(MPIJOBS, "pi", lambda j: j["metadata"].setdefault("labels", {}).update(
            edited="yes"), namespace=NS)
        await h.settle()
        assert h.queued() == []  # passed over: the sync would be turned away
        await h.resume(controller.pods)
        assert controller.expectations.satisfied_expectations(KEY)
        assert h.queued() == [KEY]
        assert h.stored(PODS, "pi-worker-1") is not None


async def test_a_sync_whose_failed_writes_fulfil_the_expectations_enqueues_a_passed_over_job(
        ) -> None:
    """An event passed over while creates were expected, which then failed (a failed create
    lowers the expectations, and no observation will come): the end of the sync enqueues the
    job."""
    async with EngineHarness() as h:
        controller = h.controller
        h.create(small_job("pi", workers=2))
        await h.sync("pi")
        clear_queue(h)
        controller.expectations.raise_expectations(KEY, add=1)  # a create on its way
        h.api.modify(MPIJOBS, "pi", lambda j: j["metadata"].setdefault("labels", {}).update(
            edited="yes"), namespace=NS)
        await h.settle()
        assert h.queued() == []
        controller.expectations.lower_expectations(KEY, add=1)  # it failed
        await controller.sync(KEY)
        assert h.queued() == [KEY]
        clear_queue(h)
        await controller.sync(KEY)  # nothing passed over since: nothing more
        assert h.queued() == []
