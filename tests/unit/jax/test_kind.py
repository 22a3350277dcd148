"""The JAXJob kind's sync on the engine, against the in-memory API: training-operator v1.9's
``ReconcileJobs`` (``pkg/controller.v1/common/job.go``) with the JAXJob hooks
(``pkg/controller.v1/jax/jaxjob_controller.go``, ``envvar.go``): every object, variable,
condition and event of each branch, as upstream's ``jaxjob_controller_test.go`` and the
common engine make them."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.jax.kind import JAXJobKind
from mpi_controller.kube.resources import SERVICES
from tests.engine_harness import EngineHarness
from tests.kind_steps import KindSteps
from tests.unit.jax.jaxjobs import env, example, jaxjob, replica, selector

NS = "ns"
KIND = "JAXJob"
JOB = "jaxjob-simple"
DEMO_IMAGE = "ghcr.io/kubeflow/training-v1/jaxjob-simple:latest"
STEPS = KindSteps(KIND, container="jax", framework="jax", job=JOB)
harness, conditions, status, set_pod = STEPS.harness, STEPS.conditions, STEPS.status, STEPS.set_pod
pod_names, service_names, pod = STEPS.pod_names, STEPS.service_names, STEPS.pod
metric, modify_job, run_policy = STEPS.metric, STEPS.modify_job, STEPS.run_policy
started = STEPS.started


def last_message(h: EngineHarness, name: str = JOB) -> str:
    return STEPS.messages(h, name)[-1]


def workers(name: str, n: int, restart: str = "Never", **spec: Any) -> dict[str, Any]:
    return jaxjob(name, {"Worker": replica(n, restart=restart)}, **spec)


# -- upstream's example, first to last ------------------------------------------------------


async def test_the_kind_is_jaxs_on_the_engine() -> None:
    async with harness() as h:
        assert isinstance(h.kind, JAXJobKind)
        assert h.kind.resource.plural == "jaxjobs"
        assert (h.kind.operator_name, h.kind.framework.default_container_name) == (
            "jaxjob-controller", "jax")


async def test_first_sync_of_upstreams_cpu_demo() -> None:
    """examples/jax/demo.yaml: two worker pods with upstream's labels (job-role master on
    worker 0, IsMasterRole ``index == 0``), owner reference, the default jaxjob-port and the
    coordinator environment; a headless Service each; Created, startTime and the Worker's
    selector; SuccessfulCreatePod/Service events; the created metric."""
    async with harness() as h:
        h.create(example())
        created = metric("created")
        h.mark()
        await h.sync(JOB, KIND)
        names = [f"{JOB}-worker-0", f"{JOB}-worker-1"]
        writes = h.writes()
        assert sorted(writes[:-1]) == sorted(
            [("create", "pods", NS, n) for n in names]
            + [("create", "services", NS, n) for n in names])
        assert writes[-1] == ("update", "jaxjobs/status", NS, JOB)
        uid = h.job(JOB, KIND)["metadata"]["uid"]
        for index, name in enumerate(names):
            labels = {"group-name": "kubeflow.org", "job-name": JOB,
                      "training.kubeflow.org/operator-name": "jaxjob-controller",
                      "training.kubeflow.org/job-name": JOB,
                      "training.kubeflow.org/replica-type": "worker",
                      "training.kubeflow.org/replica-index": str(index)}
            if index == 0:
                labels["training.kubeflow.org/job-role"] = "master"
            got = pod(h, name)
            assert got["metadata"]["labels"] == labels
            assert got["metadata"]["ownerReferences"] == [{
                "apiVersion": "kubeflow.org/v1", "kind": "JAXJob", "name": JOB, "uid": uid,
                "controller": True, "blockOwnerDeletion": True}]
            assert got["spec"] == {
                "containers": [{
                    "name": "jax", "image": DEMO_IMAGE, "command": ["python3", "train.py"],
                    "imagePullPolicy": "Always",
                    "ports": [{"name": "jaxjob-port", "containerPort": 6666}],
                    "env": env(JOB, index=index, processes=2)}],
                "restartPolicy": "OnFailure"}
            service = h.stored(SERVICES, name)
            assert service is not None
            svc_labels = {k: v for k, v in labels.items()
                          if k != "training.kubeflow.org/job-role"}
            assert service["metadata"]["labels"] == svc_labels
            assert service["spec"] == {"clusterIP": "None", "selector": svc_labels,
                                       "ports": [{"name": "jaxjob-port", "port": 6666}]}
        st = status(h)
        assert st["conditions"] == [{
            "type": "Created", "status": "True", "reason": "JAXJobCreated",
            "message": f"JAXJob {JOB} is created.", "lastUpdateTime": "2026-01-01T00:00:00Z",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]
        assert st["startTime"] == "2026-01-01T00:00:00Z"
        assert st["replicaStatuses"] == {"Worker": {"selector": selector(JOB)}}
        assert sorted(h.events()) == sorted(
            [("Normal", "SuccessfulCreatePod", f"Created pod: {n}") for n in names]
            + [("Normal", "SuccessfulCreateService", f"Created service: {n}") for n in names])
        assert metric("created") == created + 1


async def test_the_workers_run_then_all_of_them_decide_success() -> None:
    """Running (``JAXJob <ns>/<name> is running.``); worker 0 finishing alone keeps it
    Running; the last worker's success makes it Succeeded (event, completionTime, the
    successful metric); the next sync only writes the status and deletes nothing."""
    async with harness() as h:
        await started(h, example())
        assert conditions(h) == [("Created", "True", "JAXJobCreated"),
                                 ("Running", "True", "JAXJobRunning")]
        assert last_message(h) == f"JAXJob {NS}/{JOB} is running."
        assert status(h)["replicaStatuses"] == {"Worker": {"active": 2,
                                                           "selector": selector(JOB)}}
        successful = metric("successful")
        set_pod(h, f"{JOB}-worker-0", "Succeeded", code=0)
        await h.sync(JOB, KIND)
        assert conditions(h)[-1] == ("Running", "True", "JAXJobRunning")
        h.clock.advance(6)
        set_pod(h, f"{JOB}-worker-1", "Succeeded", code=0)
        await h.sync(JOB, KIND)
        message = f"JAXJob {NS}/{JOB} successfully completed."
        assert conditions(h) == [("Created", "True", "JAXJobCreated"),
                                 ("Running", "False", "JAXJobRunning"),
                                 ("Succeeded", "True", "JAXJobSucceeded")]
        assert last_message(h) == message
        assert status(h)["completionTime"] == "2026-01-01T00:00:06Z"
        assert h.events()[-2:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.{JOB}-worker-1 exited with code 0"),
            ("Normal", "JAXJobSucceeded", message)]
        assert metric("successful") == successful + 1
        h.mark()
        await h.sync(JOB, KIND)
        assert h.writes() == []
        assert pod_names(h) == [f"{JOB}-worker-0", f"{JOB}-worker-1"]


# -- restart policies and exit codes ---------------------------------------------------------


async def test_every_worker_is_created_at_once() -> None:
    """Every worker decides the job's success, so worker 0 (the master role) is not created
    before the others: they are sent while its create waits."""
    async with harness() as h:
        h.create(jaxjob("j", {"Worker": replica(3)}))
        meanwhile, _ = await STEPS.held_create(h, "j", "j-worker-0")
        assert sorted(meanwhile) == STEPS.creates([f"j-worker-{i}" for i in range(3)])


async def test_on_failure_restarts_a_failing_worker() -> None:
    """OnFailure: the Failed worker is deleted (the engine's Restarting condition and event,
    ``job <name> is restarting because Worker replica(s) failed.``), then the status rules'
    Restarting message replaces the Running the other worker set; created again next sync."""
    async with harness() as h:
        await started(h, example())
        restarted = metric("restarted")
        set_pod(h, f"{JOB}-worker-1", "Failed", code=1)
        await h.sync(JOB, KIND)
        assert h.writes() == [("delete", "pods", NS, f"{JOB}-worker-1"),
                              ("update", "jaxjobs/status", NS, JOB)]
        engine = f"job {JOB} is restarting because Worker replica(s) failed."
        rule = f"JAXJob {JOB} is restarting because 1 Worker replica(s) failed."
        assert conditions(h) == [("Created", "True", "JAXJobCreated"),
                                 ("Restarting", "True", "JAXJobRestarting")]
        assert last_message(h) == rule
        assert h.events()[-4:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.{JOB}-worker-1 exited with code 1"),
            ("Warning", "JAXJobRestarting", engine),
            ("Normal", "SuccessfulDeletePod", f"Deleted pod: {JOB}-worker-1"),
            ("Warning", "JAXJobRestarting", rule)]
        assert metric("restarted") == restarted + 1
        h.mark()
        await h.sync(JOB, KIND)
        assert h.writes() == [("create", "pods", NS, f"{JOB}-worker-1"),
                              ("update", "jaxjobs/status", NS, JOB)]
        assert pod(h, f"{JOB}-worker-1")["spec"]["containers"][0]["env"] == env(
            JOB, index=1, processes=2)
        set_pod(h, f"{JOB}-worker-1", "Running")
        await h.sync(JOB, KIND)
        assert conditions(h)[-1] == ("Running", "True", "JAXJobRunning")


async def test_a_single_worker_restarting_keeps_the_engines_message() -> None:
    """One worker, OnFailure: nothing runs, so the rules' Restarting (same reason) does not
    replace the engine's condition (UpdateJobConditions keeps a condition of the same status
    and reason), but its Warning event is recorded."""
    async with harness() as h:
        await started(h, workers("one", 1, "OnFailure"))
        set_pod(h, "one-worker-0", "Failed", code=3)
        await h.sync("one", KIND)
        assert conditions(h, "one")[-1] == ("Restarting", "True", "JAXJobRestarting")
        assert last_message(h, "one") == "job one is restarting because Worker replica(s) failed."
        assert h.events()[-1] == ("Warning", "JAXJobRestarting",
                                  "JAXJob one is restarting because 1 Worker replica(s) failed.")


async def test_exit_code_retryable_restarts_the_pod() -> None:
    async with harness() as h:
        await started(h, workers("ec", 2, "ExitCode"))
        set_pod(h, "ec-worker-0", "Failed", code=137)
        await h.sync("ec", KIND)
        assert h.writes() == [("delete", "pods", NS, "ec-worker-0"),
                              ("update", "jaxjobs/status", NS, "ec")]
        assert conditions(h, "ec")[-1] == ("Restarting", "True", "JAXJobRestarting")
        assert pod(h, "ec-worker-1")["spec"]["restartPolicy"] == "Never"


async def test_exit_code_permanent_fails_the_job() -> None:
    """ExitCode with 1: Failed (``job "<name>" is failing because "Worker" replica(s)
    failed.``, a Warning JAXJobFailed event); the status rules then take the restart branch
    (ExitCode is not Never): a Warning JAXJobRestarting event, the condition unchanged. No
    completionTime (the rule that sets it is Never's)."""
    async with harness() as h:
        await started(h, workers("ec", 2, "ExitCode"))
        failed = metric("failed")
        set_pod(h, "ec-worker-0", "Failed", code=1)
        await h.sync("ec", KIND)
        assert h.writes() == [("update", "jaxjobs/status", NS, "ec")]
        message = 'job "ec" is failing because "Worker" replica(s) failed.'
        assert conditions(h, "ec") == [("Created", "True", "JAXJobCreated"),
                                       ("Running", "False", "JAXJobRunning"),
                                       ("Failed", "True", "JAXJobFailed")]
        assert last_message(h, "ec") == message
        assert "completionTime" not in status(h, "ec")
        assert h.events()[-3:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.ec-worker-0 exited with code 1"),
            ("Warning", "JAXJobFailed", message),
            ("Warning", "JAXJobRestarting",
             "JAXJob ec is restarting because 1 Worker replica(s) failed.")]
        assert metric("failed") == failed + 1


async def test_never_leaves_the_pod_and_fails_the_job() -> None:
    async with harness() as h:
        await started(h, workers("nv", 2))
        set_pod(h, "nv-worker-1", "Failed", code=2)
        await h.sync("nv", KIND)
        assert h.writes() == [("update", "jaxjobs/status", NS, "nv")]
        message = "JAXJob nv is failed because 1 Worker replica(s) failed."
        assert conditions(h, "nv")[-1] == ("Failed", "True", "JAXJobFailed")
        assert last_message(h, "nv") == message
        assert status(h, "nv")["completionTime"] == "2026-01-01T00:00:00Z"
        assert h.events()[-1] == ("Normal", "JAXJobFailed", message)
        assert pod_names(h) == ["nv-worker-0", "nv-worker-1"]


# -- run policy -------------------------------------------------------------------------------


async def test_backoff_limit_fails_the_job_and_deletes_its_pods() -> None:
    async with harness() as h:
        await started(h, workers("bo", 1, "OnFailure", run_policy={"backoffLimit": 2}))
        set_pod(h, "bo-worker-0", "Running", restarts=2)
        await h.sync("bo", KIND)
        assert sorted(h.writes()[:-1]) == [("delete", "pods", NS, "bo-worker-0"),
                                           ("delete", "services", NS, "bo-worker-0")]
        message = "Job bo has failed because it has reached the specified backoff limit"
        assert conditions(h, "bo")[-1] == ("Failed", "True", "JAXJobFailed")
        assert last_message(h, "bo") == message
        assert h.events()[-1] == ("Normal", "JAXJobFailed", message)


async def test_active_deadline_requeues_then_fails_the_job() -> None:
    async with harness() as h:
        h.create(workers("dl", 1, run_policy={"activeDeadlineSeconds": 30}))
        result = await h.sync("dl", KIND)
        assert result.requeue_after == 30
        h.clock.advance(30)
        h.mark()
        await h.sync("dl", KIND)
        assert ("delete", "pods", NS, "dl-worker-0") in h.writes()
        assert last_message(h, "dl") == (
            "Job dl has failed because it was active longer than specified deadline")


async def test_ttl_deletes_the_job_with_upstreams_pod_reasons() -> None:
    """DeleteJob records SuccessfulDeletePod (control.SuccessfulDeletePodReason), ``Deleted
    job: <name>``, and counts the deleted metric."""
    async with harness() as h:
        await started(h, workers("ttl", 1, run_policy={"ttlSecondsAfterFinished": 5}))
        deleted = metric("deleted")
        set_pod(h, "ttl-worker-0", "Succeeded", code=0)
        result = await h.sync("ttl", KIND)
        assert result.requeue_after == 5
        h.clock.advance(5)
        h.mark()
        await h.sync("ttl", KIND)
        assert h.writes() == [("delete", "jaxjobs", NS, "ttl")]
        assert h.events()[-1] == ("Normal", "SuccessfulDeletePod", "Deleted job: ttl")
        assert metric("deleted") == deleted + 1


@pytest.mark.parametrize(("policy", "deleted"), [
    ("All", ["cp-worker-0", "cp-worker-1"]), ("Running", ["cp-worker-0"]), ("None", [])])
async def test_clean_pod_policy_when_the_job_finished(policy: str, deleted: list[str]) -> None:
    """Worker 1 fails under Never (the job Failed) while worker 0 runs on: the sync that
    finishes the job deletes after its status write, with their Services, every pod (All),
    the running one (Running) or none (None)."""
    async with harness() as h:
        await started(h, workers("cp", 2, run_policy={"cleanPodPolicy": policy}))
        set_pod(h, "cp-worker-1", "Failed", code=1)
        await h.finishing_sync("cp", KIND)
        assert conditions(h, "cp")[-1] == ("Failed", "True", "JAXJobFailed")
        assert sorted(w for w in h.writes() if w[0] == "delete") == (
            [("delete", "pods", NS, n) for n in deleted]
            + [("delete", "services", NS, n) for n in deleted])


async def test_created_suspended_then_resumed() -> None:
    """As upstream's "Shouldn't create resources if JAXJob is suspended" and the resume test:
    no pods, Services or startTime; Created then Suspended (``JAXJob <name> is suspended.``);
    resumed: Suspended=False (JAXJobResumed), startTime set, pods and Services."""
    async with harness() as h:
        h.create(workers("sp", 1, run_policy={"suspend": True}))
        h.mark()
        await h.sync("sp", KIND)
        assert h.writes() == [("update", "jaxjobs/status", NS, "sp")]
        assert conditions(h, "sp") == [("Created", "True", "JAXJobCreated"),
                                       ("Suspended", "True", "JAXJobSuspended")]
        assert last_message(h, "sp") == "JAXJob sp is suspended."
        assert "startTime" not in status(h, "sp")
        assert h.events() == [("Normal", "JAXJobSuspended", "JAXJob sp is suspended.")]
        h.clock.advance(4)
        run_policy(h, "sp", suspend=False)
        await h.sync("sp", KIND)
        assert pod_names(h) == service_names(h) == ["sp-worker-0"]
        assert conditions(h, "sp")[-1] == ("Suspended", "False", "JAXJobResumed")
        assert last_message(h, "sp") == "JAXJob sp is resumed."
        assert status(h, "sp")["startTime"] == "2026-01-01T00:00:04Z"
        set_pod(h, "sp-worker-0", "Running")
        await h.sync("sp", KIND)
        assert conditions(h, "sp") == [("Created", "True", "JAXJobCreated"),
                                       ("Suspended", "False", "JAXJobResumed"),
                                       ("Running", "True", "JAXJobRunning")]


async def test_suspending_a_running_job_deletes_everything() -> None:
    """Every pod and Service deleted whatever cleanPodPolicy says; Running=False and
    Suspended=True (JAXJobSuspended), active zeroed, the selector kept, startTime kept."""
    async with harness() as h:
        await started(h, workers("sr", 2, run_policy={"cleanPodPolicy": "None"}))
        start = status(h, "sr")["startTime"]
        run_policy(h, "sr", suspend=True)
        await h.sync("sr", KIND)
        assert pod_names(h) == service_names(h) == []
        assert conditions(h, "sr") == [("Created", "True", "JAXJobCreated"),
                                       ("Running", "False", "JAXJobSuspended"),
                                       ("Suspended", "True", "JAXJobSuspended")]
        assert status(h, "sr")["replicaStatuses"] == {"Worker": {"selector": selector("sr")}}
        assert status(h, "sr")["startTime"] == start


# -- scaling, managedBy, validation, gang scheduling -----------------------------------------


async def test_scaling_the_workers_creates_and_deletes_by_index() -> None:
    """2 -> 3 (what the scale subresource writes): worker 2 gets NUM_PROCESSES 3, the running
    pods are not rewritten; 3 -> 1: workers 1 and 2 and their Services deleted."""
    async with harness() as h:
        await started(h, workers("sc", 2))

        def scale(n: int) -> None:
            modify_job(h, "sc", lambda j: j["spec"]["jaxReplicaSpecs"]["Worker"].update(
                replicas=n))
        scale(3)
        await h.sync("sc", KIND)
        assert sorted(w for w in h.writes() if w[0] != "update") == [
            ("create", "pods", NS, "sc-worker-2"), ("create", "services", NS, "sc-worker-2")]
        assert pod(h, "sc-worker-2")["spec"]["containers"][0]["env"] == env(
            "sc", index=2, processes=3)
        assert pod(h, "sc-worker-0")["spec"]["containers"][0]["env"] == env(
            "sc", index=0, processes=2)
        set_pod(h, "sc-worker-2", "Running")
        scale(1)
        h.mark()
        await h.sync("sc", KIND)
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, "sc-worker-1"), ("delete", "pods", NS, "sc-worker-2"),
            ("delete", "services", NS, "sc-worker-1"), ("delete", "services", NS, "sc-worker-2")]
        assert pod_names(h) == service_names(h) == ["sc-worker-0"]


@pytest.mark.parametrize("manager", ["kueue.x-k8s.io/multikueue", "example.com/other", "",
                                     "kubeflow.org/training-operator"])
async def test_managed_by_never_stops_a_jaxjob(manager: str) -> None:
    """Upstream's JAXJob controller never calls ManagedByExternalController and its webhook
    does not check managedBy: the job is reconciled whatever the field says (MultiKueue
    included)."""
    async with harness() as h:
        h.create(workers("mb", 1, run_policy={"managedBy": manager}))
        await h.sync("mb", KIND)
        assert pod_names(h) == service_names(h) == ["mb-worker-0"]
        assert conditions(h, "mb") == [("Created", "True", "JAXJobCreated")]


async def test_an_invalid_job_gets_a_warning_event_and_nothing_else() -> None:
    async with harness() as h:
        h.create(jaxjob("bad", {"Worker": replica(1), "Chief": replica(1)}))
        h.mark()
        await h.sync("bad", KIND)
        assert h.writes() == []
        assert h.events() == [(
            "Warning", "JAXJobFailedValidation",
            'JAXJob failed validation because spec.jaxReplicaSpecs[Chief]: Unsupported value: '
            '"Chief": supported values: "Worker"')]


async def test_a_lower_case_worker_key_runs_as_worker() -> None:
    """The controller defaults before it validates: ``worker`` is camel-cased (pod names,
    labels, replicaStatuses key)."""
    async with harness() as h:
        h.create(jaxjob("lc", {"worker": replica(2)}))
        await h.sync("lc", KIND)
        assert pod_names(h) == ["lc-worker-0", "lc-worker-1"]
        assert list(status(h, "lc")["replicaStatuses"]) == ["Worker"]


async def test_volcano_gang_scheduling() -> None:
    """A PodGroup (minMember = the workers, queue default); no pod until Volcano admits it;
    then pods with schedulerName volcano and the group annotations."""
    async with harness(gang_scheduling="volcano") as h:
        h.create(example())
        await h.sync(JOB, KIND)
        group = h.stored(h.kind.pod_groups.resource, JOB)
        assert group is not None
        assert group["spec"] == {"minMember": 2, "queue": "default", "minResources": {}}
        assert pod_names(h) == []
        h.api.modify(h.kind.pod_groups.resource, JOB,
                     lambda g: g.update(status={"phase": "Running"}), namespace=NS)
        await h.sync(JOB, KIND)
        for name in (f"{JOB}-worker-0", f"{JOB}-worker-1"):
            got = pod(h, name)
            assert got["spec"]["schedulerName"] == "volcano"
            assert got["metadata"]["annotations"] == {
                "scheduling.k8s.io/group-name": JOB, "volcano.sh/task-spec": "worker"}


async def test_zero_workers_succeed_at_once() -> None:
    """Worker replicas 0 (no minimum in upstream's CRD or webhook): nothing is created and,
    with none expected, the status rules make the job Succeeded in its first sync."""
    async with harness() as h:
        h.create(workers("zero", 0))
        h.mark()
        await h.sync("zero", KIND)
        assert h.writes() == [("update", "jaxjobs/status", NS, "zero")]
        assert conditions(h, "zero") == [("Created", "True", "JAXJobCreated"),
                                         ("Succeeded", "True", "JAXJobSucceeded")]
        assert h.events() == [("Normal", "JAXJobSucceeded",
                               f"JAXJob {NS}/zero successfully completed.")]


async def test_an_empty_replica_map_stays_created() -> None:
    """``jaxReplicaSpecs: {}`` passes validation (upstream checks for a nil map only): the
    job gets Created and a startTime, nothing else, and later syncs write nothing."""
    async with harness() as h:
        h.create(jaxjob("empty", {}))
        await h.sync("empty", KIND)
        assert conditions(h, "empty") == [("Created", "True", "JAXJobCreated")]
        assert status(h, "empty")["replicaStatuses"] == {}
        assert pod_names(h) == service_names(h) == []
        h.mark()
        await h.sync("empty", KIND)
        assert h.writes() == []
