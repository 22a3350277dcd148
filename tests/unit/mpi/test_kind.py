"""The MPIJob kind's sync on the engine, against the in-memory API (every branch of
mpi-operator v0.8.2's ``syncHandler`` in ``pkg/controller/mpi_job_controller.go``, and the
engine's guards)."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.kube.resources import CONFIGMAPS, JOBS, PODS, SECRETS, SERVICES
from mpi_controller.mpi.children import CREATION_ORDER
from mpi_controller.mpi.options import MPIJOBS
from tests.engine_harness import EngineHarness
from tests.mpijobs import small_job

NS = "ns"


def job(name: str = "pi", *, workers: int = 2, **spec: Any) -> dict[str, Any]:
    body = small_job(name, workers=workers, **spec)
    body["metadata"]["namespace"] = NS
    return body


FIRST_SYNC = [
    ("create", "services", NS, "pi"),
    ("create", "configmaps", NS, "pi-config"),
    ("create", "secrets", NS, "pi-ssh"),
    ("create", "pods", NS, "pi-worker-0"),
    ("create", "pods", NS, "pi-worker-1"),
    ("create", "jobs", NS, "pi-launcher"),
    ("update", "mpijobs/status", NS, "pi"),
]


async def test_first_sync_creates_every_child_in_creation_order_and_writes_created() -> None:
    async with EngineHarness() as h:
        h.create(job())
        h.mark()
        await h.sync("pi")
        assert h.writes() == FIRST_SYNC
        kinds = [{"services": "Service", "configmaps": "ConfigMap", "secrets": "Secret",
                  "pods": "Pod", "jobs": "Job"}[w[1]] for w in h.writes()[:-1]]
        assert kinds == sorted(kinds, key=CREATION_ORDER.index)
        status = h.job("pi")["status"]
        assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
            ("Created", "True", "MPIJobCreated")]
        assert status["conditions"][0]["message"] == f"MPIJob {NS}/pi is created."
        assert status["startTime"] == "2026-01-01T00:00:00Z"
        assert status["replicaStatuses"] == {"Launcher": {}, "Worker": {}}
        assert h.events() == [("Normal", "MPIJobCreated", f"MPIJob {NS}/pi is created.")]
        for resource, name in ((SERVICES, "pi"), (CONFIGMAPS, "pi-config"), (SECRETS, "pi-ssh"),
                               (PODS, "pi-worker-0"), (JOBS, "pi-launcher")):
            child = h.stored(resource, name)
            assert child is not None
            ref, = child["metadata"]["ownerReferences"]
            assert ref == {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": "pi",
                           "uid": h.job("pi")["metadata"]["uid"], "controller": True,
                           "blockOwnerDeletion": True}


def set_pod(h: EngineHarness, name: str, phase: str, *, ready: bool = False,
            **status: Any) -> None:
    def change(pod: dict[str, Any]) -> None:
        pod["status"] = {"phase": phase, **status,
                         "conditions": [{"type": "Ready", "status": str(ready)}]}
    h.api.modify(PODS, name, change, namespace=NS)


def finish_launcher(h: EngineHarness, condition: str = "Complete") -> None:
    def change(launcher: dict[str, Any]) -> None:
        launcher["status"] = {"conditions": [{"type": condition, "status": "True"}],
                              "succeeded" if condition == "Complete" else "failed": 1}
        if condition == "Complete":
            launcher["status"]["completionTime"] = "2026-01-01T00:01:00Z"
    h.api.modify(JOBS, "pi-launcher", change, namespace=NS)


def conditions(h: EngineHarness, name: str = "pi") -> list[tuple[str, str, str]]:
    return [(c["type"], c["status"], c["reason"])
            for c in h.job(name).get("status", {}).get("conditions", [])]


def add_launcher_pod(h: EngineHarness, phase: str) -> None:
    """The launcher Job's pod, as the Job controller makes it (the API server also defaults
    the Job's selector to its controller-uid label)."""
    launcher = h.stored(JOBS, "pi-launcher")
    assert launcher is not None
    uid = launcher["metadata"]["uid"]
    selector = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    h.api.modify(JOBS, "pi-launcher", lambda j: j["spec"].update(selector=selector),
                 namespace=NS)
    labels = {**launcher["spec"]["template"]["metadata"]["labels"],
              "batch.kubernetes.io/controller-uid": uid}
    h.api.add(PODS, {
        "metadata": {"name": "pi-launcher-x", "namespace": NS, "labels": labels,
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                          "name": "pi-launcher", "uid": uid,
                                          "controller": True}]},
        "spec": {"containers": []}, "status": {"phase": phase}})


async def started(h: EngineHarness, body: dict[str, Any] | None = None) -> None:
    """The job created and its first sync done; the request log starts afresh."""
    h.create(body or job())
    await h.sync("pi")
    h.mark()


async def all_running(h: EngineHarness) -> None:
    """Both workers and the launcher's pod Running, and a sync that sees them."""
    for worker in ("pi-worker-0", "pi-worker-1"):
        set_pod(h, worker, "Running", ready=True)
    add_launcher_pod(h, "Running")
    await h.sync("pi")


# -- the engine's guards --------------------------------------------------------------------


async def test_a_sync_on_a_stale_cache_waits_for_the_expected_creates() -> None:
    """Expectations: the pod cache has not seen the workers created by the first sync, so a
    second sync must not create them again; once the cache catches up it goes on."""
    async with EngineHarness() as h:
        await h.pause(h.kind.pods)
        h.create(job())
        await h.sync("pi")
        assert ("create", "pods", NS, "pi-worker-0") in h.writes()
        h.mark()
        await h.sync("pi")
        assert h.writes() == []
        assert not h.controller.expectations.satisfied_expectations(f"{NS}/pi")
        await h.resume(h.kind.pods)
        assert h.controller.expectations.satisfied_expectations(f"{NS}/pi")
        await h.sync("pi")
        assert h.writes() == []
        assert [p["metadata"]["name"] for p in h.api.objects(PODS, NS)] == [
            "pi-worker-0", "pi-worker-1"]


async def test_a_sync_reads_its_own_child_update_before_the_cache_has_it() -> None:
    """One sync updates ``discover_hosts.sh``; the next runs before the ConfigMap informer has
    delivered that update. It reads the version written, not the cache's older one, so it
    sends no update of its own (on the replaced resourceVersion it would earn a 409
    Conflict, which ends the sync before its status write: ``Running`` would wait for the
    next)."""
    async with EngineHarness() as h:
        await started(h)
        await h.pause(h.kind.config_maps)
        for worker in ("pi-worker-0", "pi-worker-1"):
            set_pod(h, worker, "Running", ready=True)
        await h.sync("pi")  # the counts held for the launcher's start
        assert h.writes() == [("update", "configmaps", NS, "pi-config")]
        h.mark()
        add_launcher_pod(h, "Running")
        await h.sync("pi")
        assert h.writes() == [("update", "mpijobs/status", NS, "pi")]
        assert conditions(h)[-1] == ("Running", "True", "MPIJobRunning")
        await h.resume(h.kind.config_maps)  # the update delivered: the cache has it
        h.mark()
        await h.sync("pi")
        assert h.requests() == []


async def test_the_next_sync_waits_for_the_cache_to_deliver_its_own_status_write() -> None:
    """The status-write guard: while the cached MPIJob is the version the last status write
    replaced, a sync does nothing (no request at all), for at most 10 s; after that a write
    on the stale version earns a 409 Conflict, which ends the sync quietly."""
    async with EngineHarness(status_counts_hold=0.0) as h:  # a count is written at once
        await h.pause(h.kind.mpijobs)
        h.create(job())
        await h.resume(h.kind.mpijobs)
        await h.pause(h.kind.mpijobs)
        await h.sync("pi")
        assert ("update", "mpijobs/status", NS, "pi") in h.writes()
        h.mark()
        set_pod(h, "pi-worker-0", "Running")  # something for the status to change
        await h.sync("pi")
        assert h.requests() == []
        h.clock.advance(10.5)
        await h.sync("pi")  # no exception: the conflict is expected
        assert h.writes() == [("update", "configmaps", NS, "pi-config"),
                              ("update", "mpijobs/status", NS, "pi")]
        h.mark()
        await h.resume(h.kind.mpijobs)
        await h.sync("pi")
        assert h.writes() == [("update", "mpijobs/status", NS, "pi")]


async def test_a_conflict_on_a_child_update_ends_the_sync_without_error() -> None:
    from mpi_controller.testing import conflict

    async with EngineHarness() as h:
        await started(h)
        set_pod(h, "pi-worker-0", "Running")
        h.api.fail(conflict(CONFIGMAPS, "pi-config"), verb="update", resource=CONFIGMAPS)
        await h.sync("pi")  # discover_hosts.sh changes; its update conflicts
        assert h.writes() == [("update", "configmaps", NS, "pi-config")]


async def test_no_children_are_created_once_the_job_left_the_cache_mid_sync() -> None:
    """The job is deleted while the first sync waits on its Secret create: the worker pods
    and the launcher are not created (they would only feed the garbage collector)."""
    async with EngineHarness() as h:
        h.create(job())

        async def delete_the_job() -> None:
            h.api.remove(MPIJOBS, "pi", namespace=NS)
            await h.settle()

        def intercept(req: Any) -> Any:
            if req.verb == "create" and req.resource == SECRETS:
                return delete_the_job()
            return None

        h.api.interceptor = intercept
        await h.sync("pi")
        creates = [w for w in h.writes() if w[0] == "create"]
        assert {w[1] for w in creates} == {"services", "configmaps", "secrets"}


async def test_a_child_seen_deleted_is_created_again_only_if_the_job_still_exists() -> None:
    """The garbage collector's pod deletions can reach the cache before the job's own
    deletion: re-creating a vanished child first GETs the job."""
    async with EngineHarness() as h:
        await started(h)
        await h.pause(h.kind.mpijobs)
        h.api.remove(MPIJOBS, "pi", namespace=NS)
        h.api.remove(PODS, "pi-worker-0", namespace=NS)
        await h.sync("pi")
        assert [r.describe() for r in h.requests()] == [("get", "mpijobs", NS, "pi")]
        assert h.stored(PODS, "pi-worker-0") is None


async def test_a_vanished_child_of_a_live_job_is_created_again_after_a_get() -> None:
    async with EngineHarness() as h:
        await started(h)
        h.api.remove(PODS, "pi-worker-1", namespace=NS)
        await h.sync("pi")
        assert [r.describe() for r in h.requests() if r.verb != "list"][:2] == [
            ("get", "mpijobs", NS, "pi"), ("create", "pods", NS, "pi-worker-1")]


# -- skipped jobs ---------------------------------------------------------------------------


async def test_an_invalid_job_gets_a_validation_error_event_and_nothing_else() -> None:
    async with EngineHarness() as h:
        bad = job()
        bad["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
        h.create(bad)
        h.mark()
        await h.sync("pi")
        assert h.writes() == []
        assert h.events() == [(
            "Warning", "ValidationError",
            "Found validation errors: spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: "
            "2: must be 1")]


async def test_a_job_managed_by_multikueue_is_left_alone() -> None:
    async with EngineHarness() as h:
        h.create(job(runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"}))
        h.mark()
        await h.sync("pi")
        assert h.writes() == []
        assert h.events() == []


async def test_a_job_being_deleted_is_left_alone() -> None:
    async with EngineHarness() as h:
        body = job()
        body["metadata"]["finalizers"] = ["example.com/keep"]
        h.create(body)
        await h.api.delete(MPIJOBS, "pi", namespace=NS)
        h.mark()
        await h.sync("pi")
        assert h.writes() == []


# -- ownership ------------------------------------------------------------------------------


async def test_a_foreign_service_in_the_cache_stops_the_sync_with_err_resource_exists() -> None:
    from mpi_controller.engine.writer import ResourceNotControlled

    async with EngineHarness() as h:
        h.api.add(SERVICES, {"metadata": {"name": "pi", "namespace": NS,
                                          "labels": {"app": "other"}},
                             "spec": {"clusterIP": "None"}})
        h.create(job())
        h.mark()
        with pytest.raises(ResourceNotControlled):
            await h.sync("pi")
        assert ("Warning", "ErrResourceExists",
                'Resource "pi" of Kind "Service" already exists and is not managed by MPIJob'
                ) in h.events()
        assert not [w for w in h.writes() if w[1] in ("pods", "jobs")]


async def test_a_foreign_secret_outside_the_cache_is_found_by_its_create() -> None:
    """Caches hold only objects with an ``app`` label: a foreign Secret without one is
    found when the create answers AlreadyExists."""
    from mpi_controller.engine.writer import ResourceNotControlled

    async with EngineHarness() as h:
        h.api.add(SECRETS, {"metadata": {"name": "pi-ssh", "namespace": NS}, "data": {}})
        h.create(job())
        h.mark()
        with pytest.raises(ResourceNotControlled):
            await h.sync("pi")
        assert ("get", "secrets", NS, "pi-ssh") in [r.describe() for r in h.requests()]
        assert ("Warning", "ErrResourceExists",
                'Resource "pi-ssh" of Kind "Secret" already exists and is not managed by '
                "MPIJob") in h.events()


# -- the life of a job ----------------------------------------------------------------------


async def test_running_then_succeeded_with_clean_pod_policy_running() -> None:
    async with EngineHarness() as h:
        await started(h)
        await all_running(h)
        assert conditions(h) == [("Created", "True", "MPIJobCreated"),
                                 ("Running", "True", "MPIJobRunning")]
        assert h.job("pi")["status"]["replicaStatuses"] == {
            "Launcher": {"active": 1}, "Worker": {"active": 2}}
        assert h.events()[-1] == ("Normal", "MPIJobRunning", f"MPIJob {NS}/pi is running")
        h.mark()
        await h.sync("pi")
        assert h.writes() == []
        assert [e[1] for e in h.events()].count("MPIJobRunning") == 1
        finish_launcher(h)
        set_pod(h, "pi-launcher-x", "Succeeded")
        h.mark()
        await h.sync("pi")  # the launcher finished: the status says so
        assert h.writes() == [("update", "mpijobs/status", NS, "pi")]
        assert conditions(h)[-2:] == [("Running", "False", "MPIJobRunning"),
                                      ("Succeeded", "True", "MPIJobSucceeded")]
        assert h.events()[-1] == ("Normal", "MPIJobSucceeded",
                                  f"MPIJob {NS}/pi successfully completed.")
        h.mark()
        await h.sync("pi")  # a finished job: its running workers go (cleanPodPolicy Running)
        assert sorted(h.writes()) == [("delete", "pods", NS, "pi-worker-0"),
                                      ("delete", "pods", NS, "pi-worker-1")]
        assert h.job("pi")["status"]["replicaStatuses"] == {"Launcher": {"succeeded": 1},
                                                            "Worker": {}}
        h.mark()
        await h.sync("pi")
        assert h.writes() == []


async def test_workers_beyond_replicas_are_deleted_on_scale_down() -> None:
    async with EngineHarness() as h:
        await started(h, job(workers=3))
        h.api.modify(MPIJOBS, "pi", lambda j: j["spec"]["mpiReplicaSpecs"]["Worker"].update(
            replicas=1), namespace=NS)
        await h.sync("pi")
        assert sorted(w for w in h.writes() if w[1] == "pods") == [
            ("delete", "pods", NS, "pi-worker-1"), ("delete", "pods", NS, "pi-worker-2")]


async def test_wait_for_workers_ready_holds_the_launcher_back() -> None:
    async with EngineHarness() as h:
        h.create(job(launcherCreationPolicy="WaitForWorkersReady"))
        h.mark()
        await h.sync("pi")
        assert ("create", "jobs", NS, "pi-launcher") not in h.writes()
        set_pod(h, "pi-worker-0", "Running", ready=True)
        h.mark()
        await h.sync("pi")
        assert ("create", "jobs", NS, "pi-launcher") not in h.writes()
        set_pod(h, "pi-worker-1", "Running", ready=True)
        h.mark()
        await h.sync("pi")
        assert ("create", "jobs", NS, "pi-launcher") in h.writes()


async def test_suspend_and_resume() -> None:
    async with EngineHarness() as h:
        h.create(job(runPolicy={"cleanPodPolicy": "Running", "suspend": True}))
        h.mark()
        await h.sync("pi")
        assert [w[1] for w in h.writes()] == ["services", "configmaps", "secrets", "jobs",
                                              "mpijobs/status"]
        assert h.stored(JOBS, "pi-launcher")["spec"]["suspend"] is True  # type: ignore[index]
        assert ("Suspended", "True", "MPIJobSuspended") in conditions(h)
        h.api.modify(MPIJOBS, "pi", lambda j: j["spec"]["runPolicy"].update(suspend=False),
                     namespace=NS)
        h.mark()
        await h.sync("pi")
        assert ("create", "pods", NS, "pi-worker-0") in h.writes()
        assert ("update", "jobs", NS, "pi-launcher") in h.writes()
        assert h.stored(JOBS, "pi-launcher")["spec"]["suspend"] is False  # type: ignore[index]
        assert ("Suspended", "False", "MPIJobResumed") in conditions(h)
        await h.settle()
        set_pod(h, "pi-worker-0", "Running")  # cleanPodPolicy Running keeps pods not running
        h.api.modify(MPIJOBS, "pi", lambda j: j["spec"]["runPolicy"].update(suspend=True),
                     namespace=NS)
        h.mark()
        await h.sync("pi")
        assert ("update", "jobs", NS, "pi-launcher") in h.writes()
        assert ("delete", "pods", NS, "pi-worker-1") not in h.writes()
        assert ("delete", "pods", NS, "pi-worker-0") in h.writes()


async def test_a_failed_launcher_create_is_reported_and_retried() -> None:
    from mpi_controller.runtime.errors import ApiError
    from mpi_controller.testing import internal_error

    async with EngineHarness() as h:
        h.api.fail(internal_error("etcd timeout"), verb="create", resource=JOBS)
        h.create(job())
        with pytest.raises(ApiError):
            await h.sync("pi")
        await h.settle()
        assert h.events()[-1] == (
            "Warning", "MPIJobFailed",
            # mpi-operator's "%v" of a StatusError: its message alone
            "launcher pod created failed: Internal error occurred: etcd timeout")


async def test_a_failed_worker_create_is_reported_and_retried() -> None:
    from mpi_controller.runtime.errors import ApiError
    from mpi_controller.testing import internal_error

    async with EngineHarness() as h:
        h.api.fail(internal_error("etcd timeout"), verb="create", resource=PODS,
                   name="pi-worker-1")
        h.create(job())
        with pytest.raises(ApiError):
            await h.sync("pi")
        await h.settle()
        assert ("create", "jobs", NS, "pi-launcher") not in h.writes()
        assert ("create", "pods", NS, "pi-worker-0") in h.writes()
        assert h.events()[-1] == (
            "Warning", "MPIJobFailed",
            "worker pod created failed: Internal error occurred: etcd timeout")


async def test_gang_scheduling_creates_the_pod_group_before_the_workers() -> None:
    from tests.engine_harness import pod_group_resources

    volcano = pod_group_resources()[0]
    async with EngineHarness(gang_scheduling="volcano") as h:
        h.create(job())
        h.mark()
        await h.sync("pi")
        kinds = [w[1] for w in h.writes()]
        assert kinds.index("podgroups") < kinds.index("pods")
        group = h.stored(volcano, "pi")
        assert group is not None
        assert group["spec"]["minMember"] == 3
        worker = h.stored(PODS, "pi-worker-0")
        assert worker is not None
        assert worker["spec"]["schedulerName"] == "volcano"
