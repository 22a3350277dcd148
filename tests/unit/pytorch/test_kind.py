"""The PyTorchJob kind's sync on the engine, against the in-memory API: training-operator v1.9's
``ReconcileHPA`` then ``ReconcileJobs`` with the PyTorchJob hooks (``pkg/controller.v1/pytorch/``,
``pkg/controller.v1/common/job.go``): every object, variable, condition and event of each branch."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.kube.resources import SERVICES
from mpi_controller.pytorch.hooks import HPAS, PyTorchOptions
from mpi_controller.pytorch.initcontainer import InitContainerTemplate
from mpi_controller.runtime.errors import ApiError
from mpi_controller.testing import conflict, internal_error
from tests.engine_harness import EngineHarness
from tests.kind_steps import KindSteps
from tests.pytorchjobs import (
    CPU_METRIC,
    IMAGE,
    init_container,
    master_env,
    pytorchjob,
    replica,
    selector,
    simple,
)

NS = "ns"
KIND = "PyTorchJob"
JOB = "pytorch-simple"
STEPS = KindSteps(KIND, container="pytorch", framework="pytorch", job=JOB)
harness, conditions, status, set_pod = STEPS.harness, STEPS.conditions, STEPS.status, STEPS.set_pod
pod_names, service_names, pod = STEPS.pod_names, STEPS.service_names, STEPS.pod
metric, modify_job, started = STEPS.metric, STEPS.modify_job, STEPS.started


# -- the issue's manifest ------------------------------------------------------------------------


async def test_first_sync_of_the_issues_manifest() -> None:
    """A master and a worker pod, each with upstream's labels, owner reference, default port and
    environment; the worker with the init container that waits for the master; a headless
    Service each; Created, startTime, and the replica statuses with their selectors."""
    async with harness() as h:
        h.create(simple())
        created = metric("created")
        h.mark()
        await h.sync(JOB, KIND)
        names = [f"{JOB}-master-0", f"{JOB}-worker-0"]
        writes = h.writes()
        assert sorted(writes[:-1]) == sorted(
            [("create", "pods", NS, n) for n in names]
            + [("create", "services", NS, n) for n in names])
        assert writes[-1] == ("update", "pytorchjobs/status", NS, JOB)
        uid = h.job(JOB, KIND)["metadata"]["uid"]
        for rank, name in enumerate(names):
            rt = name.split("-")[-2]
            labels = {"group-name": "kubeflow.org", "job-name": JOB,
                      "training.kubeflow.org/operator-name": "pytorchjob-controller",
                      "training.kubeflow.org/job-name": JOB,
                      "training.kubeflow.org/replica-type": rt,
                      "training.kubeflow.org/replica-index": "0"}
            if rt == "master":
                labels["training.kubeflow.org/job-role"] = "master"
            got = pod(h, name)
            assert got["metadata"]["labels"] == labels
            assert got["metadata"]["ownerReferences"] == [{
                "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": JOB, "uid": uid,
                "controller": True, "blockOwnerDeletion": True}]
            spec = {"containers": [{
                "name": "pytorch", "image": IMAGE, "imagePullPolicy": "Always",
                "command": ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"],
                "ports": [{"name": "pytorchjob-port", "containerPort": 23456}],
                "env": master_env(JOB, rank=rank, world=2, nnodes="2")}],
                "restartPolicy": "OnFailure"}
            if rt == "worker":
                spec["initContainers"] = [init_container(JOB)]
            assert got["spec"] == spec
            service = h.stored(SERVICES, name)
            assert service is not None
            svc_labels = {k: v for k, v in labels.items()
                          if k != "training.kubeflow.org/job-role"}
            assert service["spec"] == {"clusterIP": "None", "selector": svc_labels,
                                       "ports": [{"name": "pytorchjob-port", "port": 23456}]}
        st = status(h)
        assert st["conditions"] == [{
            "type": "Created", "status": "True", "reason": "PyTorchJobCreated",
            "message": f"PyTorchJob {JOB} is created.", "lastUpdateTime": "2026-01-01T00:00:00Z",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]
        assert st["startTime"] == "2026-01-01T00:00:00Z"
        assert st["replicaStatuses"] == {"Master": {"selector": selector(JOB, "Master")},
                                         "Worker": {"selector": selector(JOB, "Worker")}}
        assert sorted(h.events()) == sorted(
            [("Normal", "SuccessfulCreatePod", f"Created pod: {n}") for n in names]
            + [("Normal", "SuccessfulCreateService", f"Created service: {n}") for n in names])
        assert metric("created") == created + 1


async def test_the_master_finishing_makes_the_job_succeed() -> None:
    """Running (master active), then Succeeded when the master exits 0 (the running worker
    counted as succeeded in the same status write; the next sync writes nothing and,
    cleanPodPolicy None, deletes nothing)."""
    async with harness() as h:
        await started(h, simple())
        assert conditions(h) == [("Created", "True", "PyTorchJobCreated"),
                                 ("Running", "True", "PyTorchJobRunning")]
        assert status(h)["conditions"][1]["message"] == f"PyTorchJob {JOB} is running."
        successful = metric("successful")
        h.clock.advance(4)
        set_pod(h, f"{JOB}-master-0", "Succeeded", code=0)
        await h.sync(JOB, KIND)
        assert conditions(h) == [("Created", "True", "PyTorchJobCreated"),
                                 ("Running", "False", "PyTorchJobRunning"),
                                 ("Succeeded", "True", "PyTorchJobSucceeded")]
        st = status(h)
        message = f"PyTorchJob {JOB} is successfully completed."
        assert st["conditions"][2]["message"] == message
        assert st["completionTime"] == "2026-01-01T00:00:04Z"
        assert h.events()[-2:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.{JOB}-master-0 exited with code 0"),
            ("Normal", "PyTorchJobSucceeded", message)]
        assert metric("successful") == successful + 1
        h.mark()
        await h.sync(JOB, KIND)
        assert h.writes() == []
        assert status(h)["replicaStatuses"] == {
            "Master": {"succeeded": 1, "selector": selector(JOB, "Master")},
            "Worker": {"succeeded": 1, "selector": selector(JOB, "Worker")}}
        assert pod_names(h) == [f"{JOB}-master-0", f"{JOB}-worker-0"]


async def test_the_master_is_created_on_its_own_before_the_workers_and_services() -> None:
    """The master pod's create is sent alone, and the workers' and every Service's only once it
    has been answered: in a burst of jobs the masters (on which Running and Succeeded hinge)
    reach the scheduler before the workers."""
    async with harness() as h:
        h.create(pytorchjob("np", {"Master": replica(1), "Worker": replica(3)}))
        meanwhile, writes = await STEPS.held_create(h, "np", "np-master-0")
        assert meanwhile == [("create", "pods", NS, "np-master-0")]
        workers = [f"np-worker-{i}" for i in range(3)]
        assert sorted(writes[1:-1]) == sorted(
            [("create", "pods", NS, n) for n in workers]
            + [("create", "services", NS, n) for n in ["np-master-0", *workers]])
        assert writes[-1] == ("update", "pytorchjobs/status", NS, "np")


async def test_without_a_master_every_pod_is_created_at_once() -> None:
    """Without a Master, upstream's rules read every worker (``Succeeded`` when all have), so
    worker 0 (the master role) is not created first: the others are sent while it waits."""
    async with harness() as h:
        h.create(pytorchjob("w", {"Worker": replica(3)}))
        meanwhile, _ = await STEPS.held_create(h, "w", "w-worker-0")
        assert sorted(meanwhile) == STEPS.creates([f"w-worker-{i}" for i in range(3)])


async def test_a_master_that_cannot_be_created_ends_the_sync_before_the_workers() -> None:
    """Upstream creates one pod at a time and stops at its first error: here the master is
    created first, so when it fails neither a worker nor a Service is created in that sync;
    the next sync creates everything."""
    async with harness() as h:
        h.create(pytorchjob("np", {"Master": replica(1), "Worker": replica(2)}))
        h.api.interceptor = _fail_once("np-master-0")
        h.mark()
        with pytest.raises(ApiError):
            await h.sync("np", KIND)
        await h.settle()
        assert h.writes() == [("create", "pods", NS, "np-master-0")]
        # upstream's "Error creating: %v" of a StatusError: its message alone
        assert h.events() == [("Warning", "FailedCreatePod",
                               "Error creating: Internal error occurred: etcdserver: request "
                               "timed out")]
        h.mark()
        await h.sync("np", KIND)
        assert pod_names(h) == ["np-master-0", "np-worker-0", "np-worker-1"]
        assert service_names(h) == ["np-master-0", "np-worker-0", "np-worker-1"]


def _fail_once(name: str) -> Any:
    """An interceptor failing the first create of pod ``name`` with a 500, then passing all."""
    failed: list[str] = []

    def intercept(req: Any) -> None:
        if req.verb == "create" and req.name == name and not failed:
            failed.append(name)
            raise internal_error("etcdserver: request timed out")
    return intercept


async def test_nproc_per_node_4_with_three_workers() -> None:
    async with harness() as h:
        h.create(pytorchjob("np", {"Master": replica(1), "Worker": replica(3)},
                            nprocPerNode="4"))
        await h.sync("np", KIND)
        names = ["np-master-0"] + [f"np-worker-{i}" for i in range(3)]
        assert pod_names(h) == names
        for rank, name in enumerate(names):
            assert pod(h, name)["spec"]["containers"][0]["env"] == master_env(
                "np", rank=rank, world=16, nnodes="4", nproc="4")


async def test_workers_only_worker_0_has_the_master_role_and_no_init_container() -> None:
    async with harness() as h:
        await started(h, pytorchjob("w", {"Worker": replica(2)}))
        for index in (0, 1):
            got = pod(h, f"w-worker-{index}")
            assert "initContainers" not in got["spec"]
            role = got["metadata"]["labels"].get("training.kubeflow.org/job-role")
            assert role == ("master" if index == 0 else None)
        assert status(h, "w")["conditions"][-1]["message"] == f"PyTorchJob {NS}/w is running."
        set_pod(h, "w-worker-0", "Succeeded", code=0)
        await h.sync("w", KIND)
        assert conditions(h, "w")[-1] == ("Running", "True", "PyTorchJobRunning")
        set_pod(h, "w-worker-1", "Succeeded", code=0)
        await h.sync("w", KIND)
        assert conditions(h, "w")[-1] == ("Succeeded", "True", "PyTorchJobSucceeded")
        assert h.events()[-1] == ("Normal", "PyTorchJobSucceeded",
                                  f"PyTorchJob {NS}/w successfully completed.")


async def test_init_container_options_reach_the_workers() -> None:
    template = InitContainerTemplate(image="busybox:1.36", max_tries=7)
    async with harness(pytorch=PyTorchOptions(init_container=template)) as h:
        h.create(simple())
        await h.sync(JOB, KIND)
        assert pod(h, f"{JOB}-worker-0")["spec"]["initContainers"] == [
            init_container(JOB, tries=7, image="busybox:1.36")]


# -- elastic training and the HPA ------------------------------------------------------------


def elastic_job(**policy: Any) -> dict[str, Any]:
    policy = {"minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_METRIC], **policy}
    return pytorchjob("el", {"Worker": replica(2, annotations={"a": "b"})}, elastic=policy)


def hpa(h: EngineHarness) -> dict[str, Any] | None:
    return h.stored(HPAS, "el")


async def test_the_hpa_comes_first_and_is_not_waited_for() -> None:
    """The HPA is written before the pods, without expectations (nothing watches it): the
    next sync goes on at once; the workers get the elastic variables."""
    async with harness() as h:
        h.create(elastic_job())
        h.mark()
        await h.sync("el", KIND)
        writes = h.writes()
        assert writes[0] == ("create", "horizontalpodautoscalers", NS, "el")
        assert len(writes) == 6
        stored = hpa(h)
        assert stored is not None
        uid = h.job("el", KIND)["metadata"]["uid"]
        assert stored["metadata"]["ownerReferences"] == [{
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "el", "uid": uid,
            "controller": True, "blockOwnerDeletion": True}]
        assert stored["spec"] == {
            "scaleTargetRef": {"kind": "PyTorchJob", "name": "el",
                               "apiVersion": "kubeflow.org/v1"},
            "minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_METRIC]}
        assert [(e["name"], e["value"]) for e in
                pod(h, "el-worker-1")["spec"]["containers"][0]["env"]] == [
            ("PYTHONUNBUFFERED", "1"), ("PET_NPROC_PER_NODE", "auto"),
            ("PET_RDZV_ENDPOINT", "el-worker-0:23456"), ("PET_RDZV_BACKEND", "c10d"),
            ("PET_NNODES", "1:3")]
        for name in pod_names(h):
            set_pod(h, name, "Running")
        h.mark()
        await h.sync("el", KIND)
        assert h.writes() == [("update", "pytorchjobs/status", NS, "el")]
        assert status(h, "el")["replicaStatuses"] == {
            "Worker": {"active": 2, "selector": selector("el", "Worker")}}


async def test_the_hpa_follows_the_spec_and_goes_when_metrics_do() -> None:
    async with harness() as h:
        await started(h, elastic_job())
        modify_job(h, "el", lambda j: j["spec"]["elasticPolicy"].update(maxReplicas=5))
        await h.sync("el", KIND)
        assert h.writes()[0] == ("update", "horizontalpodautoscalers", NS, "el")
        stored = hpa(h)
        assert stored is not None
        assert stored["spec"]["maxReplicas"] == 5
        h.mark()
        await h.sync("el", KIND)
        assert h.writes() == []
        modify_job(h, "el", lambda j: j["spec"]["elasticPolicy"].pop("metrics"))
        h.mark()
        await h.sync("el", KIND)
        assert h.writes() == [("delete", "horizontalpodautoscalers", NS, "el")]
        assert hpa(h) is None


async def test_a_foreign_hpa_is_reported_and_left_alone() -> None:
    async with harness() as h:
        h.api.add(HPAS, {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                         "metadata": {"name": "el", "namespace": NS},
                         "spec": {"maxReplicas": 9, "scaleTargetRef": {
                             "kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}}})
        h.create(elastic_job())
        h.mark()
        with pytest.raises(Exception, match="already exists and is not managed by PyTorchJob"):
            await h.sync("el", KIND)
        await h.settle()
        assert h.writes() == []
        assert h.events() == [(
            "Warning", "ErrResourceExists", 'Resource "el" of Kind "HorizontalPodAutoscaler" '
            "already exists and is not managed by PyTorchJob")]


async def test_an_hpa_changed_meanwhile_retries_the_sync() -> None:
    """A conflict on the HPA update: nothing watches the HPA to bring the job back, so the
    sync fails (and is retried with backoff) instead of ending quietly."""
    from mpi_controller.engine.training.reconcile import CompanionConflict

    async with harness() as h:
        await started(h, elastic_job())
        modify_job(h, "el", lambda j: j["spec"]["elasticPolicy"].update(maxReplicas=4))
        h.api.fail(conflict(HPAS, "el"), verb="update", resource=HPAS)
        with pytest.raises(CompanionConflict):
            await h.sync("el", KIND)
        await h.sync("el", KIND)
        stored = hpa(h)
        assert stored is not None
        assert stored["spec"]["maxReplicas"] == 4


async def test_suspend_deletes_the_hpa_and_resume_creates_it_again() -> None:
    async with harness() as h:
        await started(h, elastic_job())
        modify_job(h, "el", lambda j: j["spec"].setdefault("runPolicy", {}).update(suspend=True))
        await h.sync("el", KIND)
        assert h.writes()[0] == ("delete", "horizontalpodautoscalers", NS, "el")
        assert hpa(h) is None
        assert pod_names(h) == []
        assert service_names(h) == []
        assert conditions(h, "el")[-2:] == [("Running", "False", "PyTorchJobSuspended"),
                                            ("Suspended", "True", "PyTorchJobSuspended")]
        assert status(h, "el")["replicaStatuses"] == {
            "Worker": {"selector": selector("el", "Worker")}}
        h.mark()
        await h.sync("el", KIND)
        assert h.writes() == []
        modify_job(h, "el", lambda j: j["spec"]["runPolicy"].update(suspend=False))
        await h.sync("el", KIND)
        assert h.writes()[0] == ("create", "horizontalpodautoscalers", NS, "el")
        assert hpa(h) is not None
        assert pod_names(h) == ["el-worker-0", "el-worker-1"]
        assert conditions(h, "el")[-1] == ("Suspended", "False", "PyTorchJobResumed")


async def test_scaling_the_workers_creates_and_deletes_by_index() -> None:
    """2 -> 3 -> 1 workers (what the scale subresource writes): pods and Services by index;
    the elastic job succeeds when any worker has."""
    async with harness() as h:
        await started(h, elastic_job())

        def scale(n: int) -> None:
            modify_job(h, "el", lambda j: j["spec"]["pytorchReplicaSpecs"]["Worker"].update(
                replicas=n))
        scale(3)
        await h.sync("el", KIND)
        assert sorted(w for w in h.writes() if w[0] == "create") == [
            ("create", "pods", NS, "el-worker-2"), ("create", "services", NS, "el-worker-2")]
        set_pod(h, "el-worker-2", "Running")
        scale(1)
        h.mark()
        await h.sync("el", KIND)
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, "el-worker-1"), ("delete", "pods", NS, "el-worker-2"),
            ("delete", "services", NS, "el-worker-1"), ("delete", "services", NS, "el-worker-2")]
        assert pod_names(h) == ["el-worker-0"]
        assert service_names(h) == ["el-worker-0"]
        set_pod(h, "el-worker-0", "Succeeded", code=0)
        await h.sync("el", KIND)
        assert conditions(h, "el")[-1] == ("Succeeded", "True", "PyTorchJobSucceeded")


# -- restarts, failures and the run policy --------------------------------------------------


async def test_on_failure_restarts_a_failing_worker() -> None:
    """The Failed worker is deleted and created again: Restarting (the engine's condition is
    replaced by the status rules': the running master sets Running first, which removes it,
    as upstream's do), both Warning events, the restarted metric; Running again when it
    runs."""
    async with harness() as h:
        await started(h, simple())
        restarted = metric("restarted")
        set_pod(h, f"{JOB}-worker-0", "Failed", code=1)
        await h.sync(JOB, KIND)
        assert h.writes() == [("delete", "pods", NS, f"{JOB}-worker-0"),
                              ("update", "pytorchjobs/status", NS, JOB)]
        message = f"job {JOB} is restarting because Worker replica(s) failed."
        rule = f"PyTorchJob {JOB} is restarting because 1 Worker replica(s) failed."
        assert conditions(h) == [("Created", "True", "PyTorchJobCreated"),
                                 ("Restarting", "True", "PyTorchJobRestarting")]
        assert status(h)["conditions"][-1]["message"] == rule
        assert h.events()[-4:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.{JOB}-worker-0 exited with code 1"),
            ("Warning", "PyTorchJobRestarting", message),
            ("Normal", "SuccessfulDeletePod", f"Deleted pod: {JOB}-worker-0"),
            ("Warning", "PyTorchJobRestarting", rule)]
        assert metric("restarted") == restarted + 1
        h.mark()
        await h.sync(JOB, KIND)
        assert h.writes() == [("create", "pods", NS, f"{JOB}-worker-0"),
                              ("update", "pytorchjobs/status", NS, JOB)]
        set_pod(h, f"{JOB}-worker-0", "Running")
        await h.sync(JOB, KIND)
        assert conditions(h)[-1] == ("Running", "True", "PyTorchJobRunning")


async def test_a_failing_master_under_never_fails_the_job() -> None:
    async with harness() as h:
        await started(h, pytorchjob("nv", {"Master": replica(1, restart="Never"),
                                           "Worker": replica(1)}))
        failed = metric("failed")
        set_pod(h, "nv-master-0", "Failed", code=2)
        await h.sync("nv", KIND)
        message = "PyTorchJob nv is failed because 1 Master replica(s) failed."
        assert conditions(h, "nv")[-1] == ("Failed", "True", "PyTorchJobFailed")
        assert status(h, "nv")["conditions"][-1]["message"] == message
        assert status(h, "nv")["completionTime"] == "2026-01-01T00:00:00Z"
        assert h.events()[-1] == ("Normal", "PyTorchJobFailed", message)
        assert metric("failed") == failed + 1


async def test_backoff_limit_fails_the_job_and_deletes_its_pods() -> None:
    async with harness() as h:
        await started(h, pytorchjob("bo", {"Master": replica(1), "Worker": replica(1)},
                                    run_policy={"backoffLimit": 2}))
        set_pod(h, "bo-worker-0", "Running", restarts=2)
        await h.sync("bo", KIND)
        assert sorted(h.writes()[:-1]) == [
            ("delete", "pods", NS, "bo-master-0"), ("delete", "pods", NS, "bo-worker-0"),
            ("delete", "services", NS, "bo-master-0"), ("delete", "services", NS, "bo-worker-0")]
        message = "Job bo has failed because it has reached the specified backoff limit"
        assert conditions(h, "bo")[-1] == ("Failed", "True", "PyTorchJobFailed")
        assert status(h, "bo")["conditions"][-1]["message"] == message
        assert h.events()[-1] == ("Normal", "PyTorchJobFailed", message)


async def test_ttl_deletes_the_job_with_upstreams_pod_reasons() -> None:
    async with harness() as h:
        await started(h, pytorchjob("ttl", {"Worker": replica(1)},
                                    run_policy={"ttlSecondsAfterFinished": 5}))
        set_pod(h, "ttl-worker-0", "Succeeded", code=0)
        result = await h.sync("ttl", KIND)
        assert result.requeue_after == 5
        h.clock.advance(5)
        h.mark()
        await h.sync("ttl", KIND)
        assert h.writes() == [("delete", "pytorchjobs", NS, "ttl")]
        assert h.events()[-1] == ("Normal", "SuccessfulDeletePod", "Deleted job: ttl")


async def test_an_invalid_job_gets_a_warning_event_and_nothing_else() -> None:
    async with harness() as h:
        h.create(pytorchjob("bad", {"Master": replica(2), "Worker": replica(1)},
                            elastic={"nProcPerNode": 2}, nprocPerNode="1"))
        h.mark()
        await h.sync("bad", KIND)
        assert h.writes() == []
        assert h.events() == [(
            "Warning", "PyTorchJobFailedValidation",
            "PyTorchJob failed validation because [spec.elasticPolicy.nProcPerNode: Forbidden: "
            "must not be used with spec.nprocPerNode, "
            "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1]")]


async def test_volcano_gang_scheduling() -> None:
    async with harness(gang_scheduling="volcano") as h:
        h.create(simple())
        await h.sync(JOB, KIND)
        group = h.stored(h.kind.pod_groups.resource, JOB)
        assert group is not None
        assert group["spec"] == {"minMember": 2, "queue": "default", "minResources": {}}
        assert pod_names(h) == []
        h.api.modify(h.kind.pod_groups.resource, JOB,
                     lambda g: g.update(status={"phase": "Running"}), namespace=NS)
        await h.sync(JOB, KIND)
        for name in (f"{JOB}-master-0", f"{JOB}-worker-0"):
            got = pod(h, name)
            assert got["spec"]["schedulerName"] == "volcano"
            assert got["metadata"]["annotations"] == {
                "scheduling.k8s.io/group-name": JOB,
                "volcano.sh/task-spec": name.split("-")[-2]}
