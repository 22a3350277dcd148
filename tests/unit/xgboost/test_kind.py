"""The XGBoostJob kind's sync on the engine, against the in-memory API: training-operator v1.9's
``ReconcileJobs`` (``pkg/controller.v1/common/job.go``) with the XGBoostJob hooks
(``xgboostjob_controller.go``, ``xgboost.go``), the events and metrics of each branch, and the
cases of upstream's ``xgboostjob_controller_test.go``."""

from __future__ import annotations

from mpi_controller.kube.resources import PODS, SERVICES
from tests.engine_harness import EngineHarness
from tests.kind_steps import KindSteps
from tests.unit.xgboost.jobs import IMAGE, example, master_and_workers, replica, xgboostjob

NS = "ns"
KIND = "XGBoostJob"
JOB = "xgboost-dist-iris-test-train"
STEPS = KindSteps(KIND, container="xgboost", framework="xgboost")
harness, conditions, status, set_pod = STEPS.harness, STEPS.conditions, STEPS.status, STEPS.set_pod
messages, pod_names, service_names = STEPS.messages, STEPS.pod_names, STEPS.service_names
metric, modify_job, started = STEPS.metric, STEPS.modify_job, STEPS.started


def env_of(h: EngineHarness, pod: str) -> list[tuple[str, str]]:
    stored = h.stored(PODS, pod)
    assert stored is not None
    return [(e["name"], e["value"]) for e in stored["spec"]["containers"][0]["env"]]


# -- upstream's example, first to last --------------------------------------------------------


async def test_first_sync_of_upstreams_example() -> None:
    """examples/xgboost/xgboostjob.yaml: a Master and 2 Workers, each a pod (operator-name
    xgboostjob-controller; job-role master on the Master only; restartPolicy Never, ExitCode
    becoming Never; SetPodEnv's variables) and a headless Service with the xgboost container's
    ports; Created, startTime, empty replica counts; the created metric."""
    async with harness() as h:
        h.create(example())
        created = metric("created")
        h.mark()
        await h.sync(JOB, KIND)
        names = [f"{JOB}-master-0", f"{JOB}-worker-0", f"{JOB}-worker-1"]
        writes = h.writes()
        assert sorted(w for w in writes if w[1] == "pods") == [
            ("create", "pods", NS, n) for n in names]
        assert sorted(w for w in writes if w[1] == "services") == [
            ("create", "services", NS, n) for n in names]
        assert writes[-1] == ("update", "xgboostjobs/status", NS, JOB)
        assert len(writes) == 7
        uid = h.job(JOB, KIND)["metadata"]["uid"]
        for rank, name in enumerate(names):
            rt, index = name.rsplit("-", 2)[1:]
            pod = h.stored(PODS, name)
            assert pod is not None
            labels = {"group-name": "kubeflow.org", "job-name": JOB,
                      "training.kubeflow.org/operator-name": "xgboostjob-controller",
                      "training.kubeflow.org/job-name": JOB,
                      "training.kubeflow.org/replica-type": rt,
                      "training.kubeflow.org/replica-index": index}
            if rt == "master":
                labels["training.kubeflow.org/job-role"] = "master"
            assert pod["metadata"]["labels"] == labels
            assert pod["metadata"]["ownerReferences"] == [{
                "apiVersion": "kubeflow.org/v1", "kind": KIND, "name": JOB, "uid": uid,
                "controller": True, "blockOwnerDeletion": True}]
            container = pod["spec"]["containers"][0]
            assert container["ports"] == [{"containerPort": 9991, "name": "xgboostjob-port"}]
            assert [(e["name"], e["value"]) for e in container["env"]] == [
                ("MASTER_PORT", "9991"), ("MASTER_ADDR", f"{JOB}-master-0"),
                ("WORLD_SIZE", "3"), ("RANK", str(rank)), ("PYTHONUNBUFFERED", "1"),
                ("WORKER_PORT", "9991"), ("WORKER_ADDRS", f"{JOB}-worker-0,{JOB}-worker-1")]
            assert pod["spec"]["restartPolicy"] == "Never"
            service = h.stored(SERVICES, name)
            assert service is not None
            svc_labels = {k: v for k, v in labels.items()
                          if k != "training.kubeflow.org/job-role"}
            assert service["spec"] == {"clusterIP": "None", "selector": svc_labels,
                                       "ports": [{"name": "xgboostjob-port", "port": 9991}]}
        st = status(h, JOB)
        assert st["conditions"] == [{
            "type": "Created", "status": "True", "reason": "XGBoostJobCreated",
            "message": f"XGBoostJob {JOB} is created.", "lastUpdateTime": "2026-01-01T00:00:00Z",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]
        assert st["startTime"] == "2026-01-01T00:00:00Z"
        assert st["replicaStatuses"] == {"Master": {}, "Worker": {}}
        assert sorted(h.events()) == sorted(
            [("Normal", "SuccessfulCreatePod", f"Created pod: {n}") for n in names]
            + [("Normal", "SuccessfulCreateService", f"Created service: {n}") for n in names])
        assert metric("created") == created + 1


async def test_the_master_decides_running_and_success() -> None:
    """Running workers alone: no Running condition. The Master running: Running
    (``XGBoostJob <name> is running.``). The Master succeeded: Succeeded though the workers
    still run, completionTime, ExitedWithCode and XGBoostJobSucceeded events, the active
    workers counted as succeeded in the same status write; the next sync writes nothing and
    deletes nothing (cleanPodPolicy None)."""
    async with harness() as h:
        await started(h, master_and_workers(), running=False)
        set_pod(h, "job-worker-0", "Running")
        set_pod(h, "job-worker-1", "Running")
        await h.sync("job", KIND)
        assert conditions(h) == [("Created", "True", "XGBoostJobCreated")]
        assert status(h)["replicaStatuses"] == {"Master": {}, "Worker": {"active": 2}}
        set_pod(h, "job-master-0", "Running")
        await h.sync("job", KIND)
        assert conditions(h)[-1] == ("Running", "True", "XGBoostJobRunning")
        assert messages(h)[-1] == "XGBoostJob job is running."
        successful = metric("successful")
        h.clock.advance(5)
        set_pod(h, "job-master-0", "Succeeded", code=0)
        await h.sync("job", KIND)
        assert conditions(h) == [("Created", "True", "XGBoostJobCreated"),
                                 ("Running", "False", "XGBoostJobRunning"),
                                 ("Succeeded", "True", "XGBoostJobSucceeded")]
        assert messages(h)[-1] == "XGBoostJob job is successfully completed."
        assert status(h)["completionTime"] == "2026-01-01T00:00:05Z"
        assert h.events()[-2:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.job-master-0 exited with code 0"),
            ("Normal", "XGBoostJobSucceeded", "XGBoostJob job is successfully completed.")]
        assert metric("successful") == successful + 1
        h.mark()
        await h.sync("job", KIND)
        assert h.writes() == []
        assert status(h)["replicaStatuses"] == {"Master": {"succeeded": 1},
                                                "Worker": {"succeeded": 2}}
        assert len(pod_names(h)) == 3


async def test_workers_finishing_first_do_not_finish_the_job() -> None:
    async with harness() as h:
        await started(h, master_and_workers())
        set_pod(h, "job-worker-0", "Succeeded", code=0)
        set_pod(h, "job-worker-1", "Succeeded", code=0)
        result = await h.sync("job", KIND)
        assert (h.writes(), result.requeue_after) == ([], 1.0)  # counts alone: held
        h.clock.advance(1)
        await h.sync("job", KIND)
        assert h.writes() == [("update", "xgboostjobs/status", NS, "job")]
        assert conditions(h)[-1] == ("Running", "True", "XGBoostJobRunning")
        assert status(h)["replicaStatuses"] == {"Master": {"active": 1},
                                                "Worker": {"succeeded": 2}}


# -- restart policies and exit codes ----------------------------------------------------------


async def test_exit_code_retryable_restarts_the_worker() -> None:
    """ExitCode with 137: the pod is deleted (ReconcilePods' Restarting and Warning event), the
    status rules set Restarting again with their own message and event; the restarted metric;
    the next sync creates the pod again, and the Master running replaces Restarting."""
    async with harness() as h:
        await started(h, master_and_workers(workers=1, restart="ExitCode"))
        restarted = metric("restarted")
        set_pod(h, "job-worker-0", "Failed", code=137)
        await h.sync("job", KIND)
        assert h.writes() == [("delete", "pods", NS, "job-worker-0"),
                              ("update", "xgboostjobs/status", NS, "job")]
        message = "XGBoostJob job is restarting because 1 Worker replica(s) failed."
        assert conditions(h) == [("Created", "True", "XGBoostJobCreated"),
                                 ("Restarting", "True", "XGBoostJobRestarting")]
        assert messages(h)[-1] == message
        assert "completionTime" not in status(h)
        assert status(h)["replicaStatuses"] == {"Master": {"active": 1},
                                                "Worker": {"failed": 1}}
        assert h.events()[-4:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.job-worker-0 exited with code 137"),
            ("Warning", "XGBoostJobRestarting",
             "job job is restarting because Worker replica(s) failed."),
            ("Normal", "SuccessfulDeletePod", "Deleted pod: job-worker-0"),
            ("Warning", "XGBoostJobRestarting", message)]
        assert metric("restarted") == restarted + 1
        h.mark()
        await h.sync("job", KIND)
        assert h.writes() == [("create", "pods", NS, "job-worker-0"),
                              ("update", "xgboostjobs/status", NS, "job")]
        set_pod(h, "job-worker-0", "Running")
        await h.sync("job", KIND)
        assert conditions(h) == [("Created", "True", "XGBoostJobCreated"),
                                 ("Running", "True", "XGBoostJobRunning")]


async def test_exit_code_permanent_fails_the_job_without_completion_time() -> None:
    """ExitCode with 1: ReconcilePods fails the job (``job "<name>" is failing because
    "Worker" replica(s) failed.``); the status rules' ExitCode branch only records its
    Restarting event; no completionTime, so ttlSecondsAfterFinished never deletes the job
    (upstream: ``job completion time is nil, cannot cleanup``)."""
    async with harness() as h:
        await started(h, master_and_workers(workers=1, restart="ExitCode",
                                            run_policy={"ttlSecondsAfterFinished": 1}))
        failed = metric("failed")
        set_pod(h, "job-worker-0", "Failed", code=1)
        result = await h.sync("job", KIND)
        assert h.writes() == [("update", "xgboostjobs/status", NS, "job")]
        assert conditions(h) == [("Created", "True", "XGBoostJobCreated"),
                                 ("Running", "False", "XGBoostJobRunning"),
                                 ("Failed", "True", "XGBoostJobFailed")]
        assert messages(h)[-1] == 'job "job" is failing because "Worker" replica(s) failed.'
        assert "completionTime" not in status(h)
        assert h.events()[-3:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.job-worker-0 exited with code 1"),
            ("Warning", "XGBoostJobFailed",
             'job "job" is failing because "Worker" replica(s) failed.'),
            ("Warning", "XGBoostJobRestarting",
             "XGBoostJob job is restarting because 1 Worker replica(s) failed.")]
        assert metric("failed") == failed + 1
        assert result is None
        h.clock.advance(60)
        h.mark()
        await h.sync("job", KIND)
        assert h.writes() == []
        assert pod_names(h) == ["job-master-0", "job-worker-0"]


async def test_never_keeps_the_failed_pod_and_fails_the_job() -> None:
    async with harness() as h:
        await started(h, master_and_workers(restart="Never"))
        set_pod(h, "job-worker-1", "Failed", code=2)
        await h.sync("job", KIND)
        assert h.writes() == [("update", "xgboostjobs/status", NS, "job")]
        assert conditions(h)[-1] == ("Failed", "True", "XGBoostJobFailed")
        message = "XGBoostJob job is failed because 1 Worker replica(s) failed."
        assert messages(h)[-1] == message
        assert status(h)["completionTime"] == "2026-01-01T00:00:00Z"
        assert h.events()[-1] == ("Normal", "XGBoostJobFailed", message)


async def test_on_failure_deletes_the_pod_and_still_fails_the_job() -> None:
    """OnFailure: ReconcilePods deletes the Failed pod to restart it, but it is counted as
    failed and XGBoost's rules fail every policy but ExitCode: the job Fails (Restarting is
    replaced) and the pod is not created again."""
    async with harness() as h:
        await started(h, master_and_workers(workers=1, restart="OnFailure"))
        set_pod(h, "job-worker-0", "Failed", code=1)
        await h.sync("job", KIND)
        assert h.writes() == [("delete", "pods", NS, "job-worker-0"),
                              ("update", "xgboostjobs/status", NS, "job")]
        assert conditions(h) == [("Created", "True", "XGBoostJobCreated"),
                                 ("Running", "False", "XGBoostJobRunning"),
                                 ("Failed", "True", "XGBoostJobFailed")]
        assert messages(h)[-1] == "XGBoostJob job is failed because 1 Worker replica(s) failed."
        h.mark()
        await h.sync("job", KIND)
        assert [w for w in h.writes() if w[0] == "create"] == []
        assert pod_names(h) == ["job-master-0"]


# -- run policy -------------------------------------------------------------------------------


async def test_backoff_limit_fails_the_job_and_deletes_everything() -> None:
    async with harness() as h:
        await started(h, master_and_workers(workers=1, restart="OnFailure",
                                            run_policy={"backoffLimit": 1}))
        set_pod(h, "job-worker-0", "Running", restarts=1)
        await h.sync("job", KIND)
        assert sorted(h.writes()[:-1]) == [
            ("delete", "pods", NS, "job-master-0"), ("delete", "pods", NS, "job-worker-0"),
            ("delete", "services", NS, "job-master-0"),
            ("delete", "services", NS, "job-worker-0")]
        assert conditions(h)[-1] == ("Failed", "True", "XGBoostJobFailed")
        assert messages(h)[-1] == (
            "Job job has failed because it has reached the specified backoff limit")


async def test_active_deadline_fails_the_job() -> None:
    async with harness() as h:
        h.create(master_and_workers(run_policy={"activeDeadlineSeconds": 30}))
        result = await h.sync("job", KIND)
        assert result.requeue_after == 30
        h.clock.advance(30)
        await h.sync("job", KIND)
        assert pod_names(h) == []
        assert messages(h)[-1] == (
            "Job job has failed because it was active longer than specified deadline")


async def test_ttl_deletes_the_succeeded_job_with_upstreams_reasons() -> None:
    """DeleteJob: a Normal SuccessfulDeleteJob event ``Deleted job: <name>``, the deleted
    metric."""
    async with harness() as h:
        await started(h, master_and_workers(run_policy={"ttlSecondsAfterFinished": 60}))
        deleted = metric("deleted")
        set_pod(h, "job-master-0", "Succeeded", code=0)
        result = await h.sync("job", KIND)
        assert result.requeue_after == 60
        h.clock.advance(60)
        h.mark()
        await h.sync("job", KIND)
        assert h.writes() == [("delete", "xgboostjobs", NS, "job")]
        assert h.events()[-1] == ("Normal", "SuccessfulDeleteJob", "Deleted job: job")
        assert metric("deleted") == deleted + 1


async def finish(h: EngineHarness, policy: str) -> None:
    """A Master and 2 Workers under ``policy``; the Master succeeds while worker 0 is Pending
    and worker 1 has succeeded: the sync that finishes the job (EngineHarness.finishing_sync)."""
    await started(h, master_and_workers(run_policy={"cleanPodPolicy": policy}))
    set_pod(h, "job-worker-0", "Pending")
    set_pod(h, "job-worker-1", "Succeeded", code=0)
    set_pod(h, "job-master-0", "Succeeded", code=0)
    await h.finishing_sync("job", KIND)
    assert conditions(h)[-1] == ("Succeeded", "True", "XGBoostJobSucceeded")


async def test_clean_pod_policy_all() -> None:
    async with harness() as h:
        await finish(h, "All")
        names = ["job-master-0", "job-worker-0", "job-worker-1"]
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, n) for n in names] + [
            ("delete", "services", NS, n) for n in names]


async def test_clean_pod_policy_running_deletes_running_and_pending_pods() -> None:
    async with harness() as h:
        await finish(h, "Running")
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, "job-worker-0"), ("delete", "services", NS, "job-worker-0")]


async def test_clean_pod_policy_none() -> None:
    async with harness() as h:
        await finish(h, "None")
        assert [w for w in h.writes() if w[0] == "delete"] == []


async def test_created_suspended_gets_no_pods_and_no_start_time() -> None:
    """xgboostjob_controller_test "Shouldn't create resources if XGBoostJob is suspended":
    conditions Created and Suspended, no startTime, no pods or Services."""
    async with harness() as h:
        h.create(master_and_workers(workers=1, run_policy={"suspend": True}))
        h.mark()
        await h.sync("job", KIND)
        assert h.writes() == [("update", "xgboostjobs/status", NS, "job")]
        assert conditions(h) == [("Created", "True", "XGBoostJobCreated"),
                                 ("Suspended", "True", "XGBoostJobSuspended")]
        assert messages(h) == ["XGBoostJob job is created.", "XGBoostJob job is suspended."]
        assert "startTime" not in status(h)


async def test_suspend_then_resume() -> None:
    """xgboostjob_controller_test "Should delete resources after XGBoostJob is suspended;
    Should resume XGBoostJob after XGBoostJob is unsuspended": suspended, pods and Services
    go, active 0, startTime kept, [Created, Running=False (Suspended), Suspended]; resumed
    and running again, [Created, Suspended=False (Resumed), Running] and a new startTime."""
    async with harness() as h:
        await started(h, master_and_workers(workers=1))
        modify_job(h, "job", lambda j: j["spec"].setdefault("runPolicy", {}).update(suspend=True))
        h.clock.advance(7)
        await h.sync("job", KIND)
        assert (pod_names(h), service_names(h)) == ([], [])
        assert conditions(h) == [("Created", "True", "XGBoostJobCreated"),
                                 ("Running", "False", "XGBoostJobSuspended"),
                                 ("Suspended", "True", "XGBoostJobSuspended")]
        assert messages(h)[1:] == ["XGBoostJob job is suspended."] * 2
        assert status(h)["replicaStatuses"] == {"Master": {}, "Worker": {}}
        assert status(h)["startTime"] == "2026-01-01T00:00:00Z"
        modify_job(h, "job", lambda j: j["spec"]["runPolicy"].update(suspend=False))
        h.clock.advance(3)
        await h.sync("job", KIND)
        assert pod_names(h) == ["job-master-0", "job-worker-0"]
        assert service_names(h) == ["job-master-0", "job-worker-0"]
        assert status(h)["startTime"] == "2026-01-01T00:00:10Z"
        for pod in pod_names(h):
            set_pod(h, pod, "Running")
        await h.sync("job", KIND)
        assert conditions(h) == [("Created", "True", "XGBoostJobCreated"),
                                 ("Suspended", "False", "XGBoostJobResumed"),
                                 ("Running", "True", "XGBoostJobRunning")]
        assert messages(h) == ["XGBoostJob job is created.", "XGBoostJob job is resumed.",
                               "XGBoostJob job is running."]


async def test_multikueue_jobs_are_left_alone() -> None:
    """xgboostjob_controller_test "Should not reconcile a job while managed by external
    controller": no write, no status, no event (also after unsuspending)."""
    async with harness() as h:
        h.create(master_and_workers(run_policy={"managedBy": "kueue.x-k8s.io/multikueue",
                                                "suspend": True}))
        h.mark()
        await h.sync("job", KIND)
        modify_job(h, "job", lambda j: j["spec"]["runPolicy"].update(suspend=False))
        await h.sync("job", KIND)
        assert h.writes() == []
        assert h.events() == []
        assert "status" not in h.job("job", KIND)


async def test_an_invalid_job_gets_a_warning_event_and_nothing_else() -> None:
    """Workers without a Master (upstream's SetPodEnv would dereference a nil Master spec):
    refused with the webhook's messages, nothing created."""
    async with harness() as h:
        h.create(xgboostjob("job", {"Worker": replica(2)}))
        h.mark()
        await h.sync("job", KIND)
        assert h.writes() == []
        assert h.events() == [("Warning", "XGBoostJobFailedValidation",
                               "XGBoostJob failed validation because "
                               "spec.xgbReplicaSpecs[Master]: Required value: must be present")]


# -- replicas -----------------------------------------------------------------------------------


async def test_scaling_workers_up_then_down() -> None:
    """More workers: the new pod gets the new WORLD_SIZE, RANK and WORKER_ADDRS, the running
    pods keep what they were created with. Fewer: pods and Services of the surplus indices go."""
    async with harness() as h:
        await started(h, master_and_workers(workers=1))
        modify_job(h, "job", lambda j: j["spec"]["xgbReplicaSpecs"]["Worker"].update(replicas=3))
        await h.sync("job", KIND)
        assert sorted(w for w in h.writes() if w[0] == "create") == [
            ("create", "pods", NS, "job-worker-1"), ("create", "pods", NS, "job-worker-2"),
            ("create", "services", NS, "job-worker-1"),
            ("create", "services", NS, "job-worker-2")]
        assert env_of(h, "job-worker-2")[2:4] == [("WORLD_SIZE", "4"), ("RANK", "3")]
        assert env_of(h, "job-worker-2")[-1] == (
            "WORKER_ADDRS", "job-worker-0,job-worker-1,job-worker-2")
        assert env_of(h, "job-worker-0")[2:4] == [("WORLD_SIZE", "2"), ("RANK", "1")]
        modify_job(h, "job", lambda j: j["spec"]["xgbReplicaSpecs"]["Worker"].update(replicas=1))
        h.mark()
        await h.sync("job", KIND)
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, "job-worker-1"), ("delete", "pods", NS, "job-worker-2"),
            ("delete", "services", NS, "job-worker-1"),
            ("delete", "services", NS, "job-worker-2")]


async def test_a_master_alone() -> None:
    """One replica in all: no WORKER_* variables; it decides success alone."""
    async with harness() as h:
        await started(h, xgboostjob("job", {"Master": replica(1)}))
        assert env_of(h, "job-master-0") == [
            ("MASTER_PORT", "9999"), ("MASTER_ADDR", "job-master-0"), ("WORLD_SIZE", "1"),
            ("RANK", "0"), ("PYTHONUNBUFFERED", "1")]
        set_pod(h, "job-master-0", "Succeeded", code=0)
        await h.sync("job", KIND)
        assert conditions(h)[-1] == ("Succeeded", "True", "XGBoostJobSucceeded")


async def test_lower_case_replica_types_are_camel_cased() -> None:
    async with harness() as h:
        await started(h, xgboostjob("job", {"master": replica(1), "WORKER": replica(1)}))
        assert pod_names(h) == ["job-master-0", "job-worker-0"]
        assert status(h)["replicaStatuses"] == {"Master": {"active": 1},
                                                "Worker": {"active": 1}}


async def test_a_sidecar_gets_the_environment_and_its_ports_stay_off_the_service() -> None:
    """SetPodEnv writes every container; the Service exposes the xgboost container's ports."""
    async with harness() as h:
        body = xgboostjob("job", {"Master": replica(1, port=9000)})
        body["spec"]["xgbReplicaSpecs"]["Master"]["template"]["spec"]["containers"].insert(
            0, {"name": "proxy", "image": IMAGE,
                "ports": [{"name": "http", "containerPort": 8080}]})
        h.create(body)
        await h.sync("job", KIND)
        pod = h.stored(PODS, "job-master-0")
        assert pod is not None
        proxy, xgb = pod["spec"]["containers"]
        assert proxy["env"] == xgb["env"]
        assert proxy["env"][0] == {"name": "MASTER_PORT", "value": "9000"}
        service = h.stored(SERVICES, "job-master-0")
        assert service is not None
        assert service["spec"]["ports"] == [{"name": "xgboostjob-port", "port": 9000}]


# -- gang scheduling ----------------------------------------------------------------------------


async def test_volcano_pod_group_and_task_annotations() -> None:
    async with harness(gang_scheduling="volcano") as h:
        h.create(master_and_workers())
        h.mark()
        await h.sync("job", KIND)
        assert h.writes() == [("create", "podgroups", NS, "job"),
                              ("update", "xgboostjobs/status", NS, "job")]
        group = h.stored(h.kind.pod_groups.resource, "job")
        assert group is not None
        assert group["spec"] == {"minMember": 3, "queue": "default", "minResources": {}}
        h.api.modify(h.kind.pod_groups.resource, "job",
                     lambda g: g.update(status={"phase": "Inqueue"}), namespace=NS)
        await h.sync("job", KIND)
        for name, task in (("job-master-0", "master"), ("job-worker-1", "worker")):
            pod = h.stored(PODS, name)
            assert pod is not None
            assert pod["spec"]["schedulerName"] == "volcano"
            assert pod["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "job",
                                                      "volcano.sh/task-spec": task}


async def test_scheduler_plugins_pod_group() -> None:
    async with harness(gang_scheduling="scheduler-plugins-scheduler") as h:
        h.create(master_and_workers(run_policy={"schedulingPolicy": {
            "minAvailable": 2, "scheduleTimeoutSeconds": 30}}))
        await h.sync("job", KIND)
        group = h.stored(h.kind.pod_groups.resource, "job")
        assert group is not None
        assert group["spec"] == {"minMember": 2, "scheduleTimeoutSeconds": 30}
        pod = h.stored(PODS, "job-master-0")
        assert pod is not None
        assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "job"
