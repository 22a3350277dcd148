"""The PaddleJob kind's sync on the engine, against the in-memory API: training-operator
v1.9's ``ReconcileJobs`` (``pkg/controller.v1/common/job.go``) with the PaddleJob hooks
(paddlepaddle_controller.go, envvar.go): the objects, variables, conditions and events of
collective and parameter-server jobs and of each run-policy branch."""

from __future__ import annotations

from typing import Any

from mpi_controller.kube.resources import SERVICES
from tests.engine_harness import EngineHarness
from tests.kind_steps import KindSteps
from tests.unit.paddle.jobs import IMAGE, env, paddlejob, replica, selector, simple_cpu

NS = "ns"
KIND = "PaddleJob"
CPU = "paddle-simple-cpu"
STEPS = KindSteps(KIND, container="paddle", framework="paddle")
harness, conditions, status, set_pod = STEPS.harness, STEPS.conditions, STEPS.status, STEPS.set_pod
pod_names, service_names, pod = STEPS.pod_names, STEPS.service_names, STEPS.pod
metric, modify_job, started = STEPS.metric, STEPS.modify_job, STEPS.started


def ps(name: str = "ps", *, masters: int = 1, workers: int = 2, restart: str | None = None,
       **spec: Any) -> dict[str, Any]:
    """A parameter-server job: ``masters`` Masters, ``workers`` Workers, default ports."""
    return paddlejob(name, {"Master": replica(masters, restart=restart),
                            "Worker": replica(workers, restart=restart)}, **spec)


def labels(job: str, rtype: str, index: int, *, master: bool = False) -> dict[str, str]:
    out = {"group-name": "kubeflow.org", "job-name": job,
           "training.kubeflow.org/operator-name": "paddlejob-controller",
           "training.kubeflow.org/job-name": job,
           "training.kubeflow.org/replica-type": rtype,
           "training.kubeflow.org/replica-index": str(index)}
    if master:
        out["training.kubeflow.org/job-role"] = "master"
    return out


# -- collective mode: upstream's example -------------------------------------------------------


async def test_first_sync_of_the_cpu_example() -> None:
    """Collective mode: two worker pods with upstream's labels (no job-role: no Master),
    owner reference, the example's port and restart policy, the PADDLE_* environment (worker 0
    through its pod IP); a headless Service each with the paddle container's ports; Created,
    startTime and the selectors; the created metric."""
    async with harness() as h:
        h.create(simple_cpu())
        created = metric("created")
        h.mark()
        await h.sync(CPU, KIND)
        names = [f"{CPU}-worker-0", f"{CPU}-worker-1"]
        writes = h.writes()
        assert sorted(writes[:-1]) == sorted(
            [("create", "pods", NS, n) for n in names]
            + [("create", "services", NS, n) for n in names])
        assert writes[-1] == ("update", "paddlejobs/status", NS, CPU)
        uid = h.job(CPU, KIND)["metadata"]["uid"]
        masters = ["$(POD_IP_DUMMY):37777", f"{CPU}-worker-0:37777"]
        for index, name in enumerate(names):
            got = pod(h, name)
            assert got["metadata"]["labels"] == labels(CPU, "worker", index)
            assert got["metadata"]["ownerReferences"] == [{
                "apiVersion": "kubeflow.org/v1", "kind": "PaddleJob", "name": CPU, "uid": uid,
                "controller": True, "blockOwnerDeletion": True}]
            assert got["spec"] == {"containers": [{
                "name": "paddle", "image": IMAGE, "command": ["python"],
                "args": ["-m", "paddle.distributed.launch", "run_check"],
                "ports": [{"containerPort": 37777, "name": "master"}],
                "imagePullPolicy": "Always",
                "env": env(CPU, nnodes=2, master=masters[index])}],
                "restartPolicy": "OnFailure"}
            service = h.stored(SERVICES, name)
            assert service is not None
            assert service["metadata"]["labels"] == labels(CPU, "worker", index)
            assert service["spec"] == {"clusterIP": "None",
                                       "selector": labels(CPU, "worker", index),
                                       "ports": [{"name": "master", "port": 37777}]}
        assert pod(h, names[0])["spec"]["containers"][0]["env"][3] == {
            "name": "POD_IP_DUMMY", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        st = status(h, CPU)
        assert st["conditions"] == [{
            "type": "Created", "status": "True", "reason": "PaddleJobCreated",
            "message": f"PaddleJob {CPU} is created.", "lastUpdateTime": "2026-01-01T00:00:00Z",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]
        assert st["startTime"] == "2026-01-01T00:00:00Z"
        assert st["replicaStatuses"] == {"Worker": {"selector": selector(CPU, "Worker")}}
        assert sorted(h.events()) == sorted(
            [("Normal", "SuccessfulCreatePod", f"Created pod: {n}") for n in names]
            + [("Normal", "SuccessfulCreateService", f"Created service: {n}") for n in names])
        assert metric("created") == created + 1


async def test_collective_job_runs_until_every_worker_succeeds() -> None:
    """Running (<ns>/<name> message) while one worker is done and one runs; Succeeded when
    both are, with the PaddleJobSucceeded event, completionTime and the successful metric."""
    async with harness() as h:
        await started(h, simple_cpu())
        assert conditions(h, CPU) == [("Created", "True", "PaddleJobCreated"),
                                      ("Running", "True", "PaddleJobRunning")]
        assert status(h, CPU)["conditions"][1]["message"] == f"PaddleJob {NS}/{CPU} is running."
        assert status(h, CPU)["replicaStatuses"] == {
            "Worker": {"active": 2, "selector": selector(CPU, "Worker")}}
        successful = metric("successful")
        set_pod(h, f"{CPU}-worker-0", "Succeeded", code=0)
        await h.sync(CPU, KIND)
        assert conditions(h, CPU)[-1] == ("Running", "True", "PaddleJobRunning")
        h.clock.advance(3)
        set_pod(h, f"{CPU}-worker-1", "Succeeded", code=0)
        await h.sync(CPU, KIND)
        message = f"PaddleJob {NS}/{CPU} successfully completed."
        assert conditions(h, CPU) == [("Created", "True", "PaddleJobCreated"),
                                      ("Running", "False", "PaddleJobRunning"),
                                      ("Succeeded", "True", "PaddleJobSucceeded")]
        assert status(h, CPU)["conditions"][-1]["message"] == message
        assert status(h, CPU)["completionTime"] == "2026-01-01T00:00:03Z"
        assert h.events()[-2:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.{CPU}-worker-1 exited with code 0"),
            ("Normal", "PaddleJobSucceeded", message)]
        assert metric("successful") == successful + 1


async def test_an_elastic_job_gets_no_autoscaler_and_no_early_success() -> None:
    """elasticPolicy (even with metrics) changes neither the objects nor the env; one worker
    succeeding does not end the job."""
    metric_spec = {"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}
    async with harness() as h:
        h.create(paddlejob("el", {"Worker": replica(2)}, elastic={
            "minReplicas": 1, "maxReplicas": 3, "metrics": [metric_spec]}))
        h.mark()
        await h.sync("el", KIND)
        assert sorted(w[1] for w in h.writes()) == ["paddlejobs/status", "pods", "pods",
                                                    "services", "services"]
        assert pod(h, "el-worker-1")["spec"]["containers"][0]["env"] == env(
            "el", nnodes=2, master="el-worker-0:36543")
        for name in pod_names(h):
            set_pod(h, name, "Running")
        await h.sync("el", KIND)
        set_pod(h, "el-worker-1", "Succeeded", code=0)
        await h.sync("el", KIND)
        assert conditions(h, "el")[-1] == ("Running", "True", "PaddleJobRunning")


# -- parameter-server mode ---------------------------------------------------------------------


async def test_parameter_server_job_pods_and_services() -> None:
    """A Master and two Workers: the master pod has the job-role label and its own IP as
    PADDLE_MASTER with PADDLE_SERVER_NUM; the workers name master 0 and get
    PADDLE_TRAINER_NUM; PADDLE_NNODES counts all three; the default port 36543 everywhere."""
    async with harness() as h:
        h.create(ps())
        await h.sync("ps", KIND)
        assert pod_names(h) == ["ps-master-0", "ps-worker-0", "ps-worker-1"]
        assert service_names(h) == pod_names(h)
        master = pod(h, "ps-master-0")
        assert master["metadata"]["labels"] == labels("ps", "master", 0, master=True)
        assert master["spec"]["containers"][0]["env"] == env(
            "ps", nnodes=3, master="$(POD_IP_DUMMY):36543", server=True)
        for index in (0, 1):
            worker = pod(h, f"ps-worker-{index}")
            assert worker["metadata"]["labels"] == labels("ps", "worker", index)
            assert worker["spec"]["containers"][0]["env"] == env(
                "ps", nnodes=3, master="ps-master-0:36543", server=False)
            assert worker["spec"]["containers"][0]["ports"] == [
                {"name": "master", "containerPort": 36543}]
            assert worker["spec"]["restartPolicy"] == "OnFailure"
        service = h.stored(SERVICES, "ps-master-0")
        assert service is not None
        assert service["spec"]["ports"] == [{"name": "master", "port": 36543}]
        assert "training.kubeflow.org/job-role" not in service["metadata"]["labels"]
        assert status(h, "ps")["replicaStatuses"] == {
            "Master": {"selector": selector("ps", "Master")},
            "Worker": {"selector": selector("ps", "Worker")}}


async def test_every_master_pod_has_the_master_role() -> None:
    """IsMasterRole is rtype == Master, whatever the index: both masters get job-role master, the
    worker none; master 1 names master 0."""
    async with harness() as h:
        h.create(ps(masters=2, workers=1))
        await h.sync("ps", KIND)
        roles = {n: pod(h, n)["metadata"]["labels"].get("training.kubeflow.org/job-role")
                 for n in pod_names(h)}
        assert roles == {"ps-master-0": "master", "ps-master-1": "master", "ps-worker-0": None}
        assert pod(h, "ps-master-1")["spec"]["containers"][0]["env"] == env(
            "ps", nnodes=3, master="ps-master-0:36543", server=True)


async def test_the_master_finishing_makes_the_job_succeed() -> None:
    """Running while the master is active ("PaddleJob <name> is running."), Succeeded when it
    exits 0 although the workers still run, counted as succeeded in that same status write;
    the next sync writes nothing and (cleanPodPolicy None) deletes nothing."""
    async with harness() as h:
        await started(h, ps())
        assert conditions(h, "ps") == [("Created", "True", "PaddleJobCreated"),
                                       ("Running", "True", "PaddleJobRunning")]
        assert status(h, "ps")["conditions"][1]["message"] == "PaddleJob ps is running."
        set_pod(h, "ps-master-0", "Succeeded", code=0)
        await h.sync("ps", KIND)
        message = "PaddleJob ps is successfully completed."
        assert conditions(h, "ps")[-1] == ("Succeeded", "True", "PaddleJobSucceeded")
        assert status(h, "ps")["conditions"][-1]["message"] == message
        assert h.events()[-1] == ("Normal", "PaddleJobSucceeded", message)
        h.mark()
        await h.sync("ps", KIND)
        assert h.writes() == []
        assert status(h, "ps")["replicaStatuses"] == {
            "Master": {"succeeded": 1, "selector": selector("ps", "Master")},
            "Worker": {"succeeded": 2, "selector": selector("ps", "Worker")}}
        assert pod_names(h) == ["ps-master-0", "ps-worker-0", "ps-worker-1"]


async def test_workers_finishing_do_not_end_a_parameter_server_job() -> None:
    """UpdateJobStatus with a Master spec looks at the Master alone for success. The
    workers' counts alone changed while the master runs: held for 1 s, then written."""
    async with harness() as h:
        await started(h, ps())
        for index in (0, 1):
            set_pod(h, f"ps-worker-{index}", "Succeeded", code=0)
        result = await h.sync("ps", KIND)
        assert (h.writes(), result.requeue_after) == ([], 1.0)
        h.clock.advance(1)
        await h.sync("ps", KIND)
        assert h.writes() == [("update", "paddlejobs/status", NS, "ps")]
        assert conditions(h, "ps")[-1] == ("Running", "True", "PaddleJobRunning")
        assert status(h, "ps")["replicaStatuses"]["Worker"] == {
            "succeeded": 2, "selector": selector("ps", "Worker")}


# -- restarts and failures ---------------------------------------------------------------------


async def test_on_failure_restarts_a_failing_worker() -> None:
    """The Failed worker (exit 1) is deleted and created again: Restarting with the status
    rule's message, both Warning events, the restarted metric; Running again afterwards."""
    async with harness() as h:
        await started(h, simple_cpu())
        restarted = metric("restarted")
        set_pod(h, f"{CPU}-worker-1", "Failed", code=1)
        await h.sync(CPU, KIND)
        assert h.writes() == [("delete", "pods", NS, f"{CPU}-worker-1"),
                              ("update", "paddlejobs/status", NS, CPU)]
        engine = f"job {CPU} is restarting because Worker replica(s) failed."
        rule = f"PaddleJob {CPU} is restarting because 1 Worker replica(s) failed."
        assert conditions(h, CPU) == [("Created", "True", "PaddleJobCreated"),
                                      ("Restarting", "True", "PaddleJobRestarting")]
        assert status(h, CPU)["conditions"][-1]["message"] == rule
        assert h.events()[-4:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.{CPU}-worker-1 exited with code 1"),
            ("Warning", "PaddleJobRestarting", engine),
            ("Normal", "SuccessfulDeletePod", f"Deleted pod: {CPU}-worker-1"),
            ("Warning", "PaddleJobRestarting", rule)]
        assert metric("restarted") == restarted + 1
        h.mark()
        await h.sync(CPU, KIND)
        assert h.writes() == [("create", "pods", NS, f"{CPU}-worker-1"),
                              ("update", "paddlejobs/status", NS, CPU)]
        set_pod(h, f"{CPU}-worker-1", "Running")
        await h.sync(CPU, KIND)
        assert conditions(h, CPU)[-1] == ("Running", "True", "PaddleJobRunning")


async def test_never_fails_the_job_on_a_failed_master() -> None:
    """restartPolicy Never: the Failed master pod stays, UpdateJobStatus fails the job (Normal
    PaddleJobFailed, completionTime, the failed metric)."""
    async with harness() as h:
        await started(h, ps("nv", restart="Never"))
        failed = metric("failed")
        set_pod(h, "nv-master-0", "Failed", code=2)
        await h.sync("nv", KIND)
        message = "PaddleJob nv is failed because 1 Master replica(s) failed."
        assert conditions(h, "nv") == [("Created", "True", "PaddleJobCreated"),
                                       ("Running", "False", "PaddleJobRunning"),
                                       ("Failed", "True", "PaddleJobFailed")]
        assert status(h, "nv")["conditions"][-1]["message"] == message
        assert status(h, "nv")["completionTime"] == "2026-01-01T00:00:00Z"
        assert h.events()[-1] == ("Normal", "PaddleJobFailed", message)
        assert metric("failed") == failed + 1
        assert pod_names(h) == ["nv-master-0", "nv-worker-0", "nv-worker-1"]


async def test_exit_code_retryable_restarts_and_permanent_fails() -> None:
    """ExitCode: 137 (>= 128) deletes the pod to be created again; 1 fails the job with the
    common code's message (the paddle container's exit code is read)."""
    async with harness() as h:
        await started(h, paddlejob("ec", {"Worker": replica(2, restart="ExitCode")}))
        assert pod(h, "ec-worker-0")["spec"]["restartPolicy"] == "Never"
        set_pod(h, "ec-worker-0", "Failed", code=137)
        await h.sync("ec", KIND)
        assert ("delete", "pods", NS, "ec-worker-0") in h.writes()
        assert conditions(h, "ec")[-1] == ("Restarting", "True", "PaddleJobRestarting")
        await h.sync("ec", KIND)
        set_pod(h, "ec-worker-0", "Running")
        set_pod(h, "ec-worker-1", "Failed", code=1)
        h.mark()
        await h.sync("ec", KIND)
        assert [w for w in h.writes() if w[0] == "delete"] == []
        assert conditions(h, "ec")[-1] == ("Failed", "True", "PaddleJobFailed")
        assert status(h, "ec")["conditions"][-1]["message"] == (
            'job "ec" is failing because "Worker" replica(s) failed.')


async def test_backoff_limit_fails_the_job_and_deletes_its_pods() -> None:
    """ReconcileJobs' PastBackoffLimit: restarts of running OnFailure pods reach backoffLimit;
    every pod and Service deleted, PaddleJobFailed."""
    async with harness() as h:
        await started(h, ps("bo", workers=1, run_policy={"backoffLimit": 2}))
        set_pod(h, "bo-worker-0", "Running", restarts=2)
        await h.sync("bo", KIND)
        assert sorted(h.writes()[:-1]) == [
            ("delete", "pods", NS, "bo-master-0"), ("delete", "pods", NS, "bo-worker-0"),
            ("delete", "services", NS, "bo-master-0"), ("delete", "services", NS, "bo-worker-0")]
        message = "Job bo has failed because it has reached the specified backoff limit"
        assert conditions(h, "bo")[-1] == ("Failed", "True", "PaddleJobFailed")
        assert status(h, "bo")["conditions"][-1]["message"] == message
        assert h.events()[-1] == ("Normal", "PaddleJobFailed", message)


async def test_active_deadline_requeues_then_fails_the_job() -> None:
    """ReconcileJobs' PastActiveDeadline: requeue at the deadline, then everything deleted and the
    job Failed."""
    async with harness() as h:
        h.create(paddlejob("dl", {"Worker": replica(1)},
                           run_policy={"activeDeadlineSeconds": 30}))
        result = await h.sync("dl", KIND)
        assert result.requeue_after == 30
        h.clock.advance(30)
        h.mark()
        await h.sync("dl", KIND)
        assert sorted(h.writes()[:-1]) == [("delete", "pods", NS, "dl-worker-0"),
                                           ("delete", "services", NS, "dl-worker-0")]
        assert status(h, "dl")["conditions"][-1]["message"] == (
            "Job dl has failed because it was active longer than specified deadline")


# -- run policy --------------------------------------------------------------------------------


async def test_ttl_deletes_the_job_with_upstreams_pod_reasons() -> None:
    """DeleteJob records SuccessfulDeletePod (control.SuccessfulDeletePodReason), as
    upstream's PaddleJob controller does."""
    async with harness() as h:
        await started(h, paddlejob("ttl", {"Worker": replica(1)},
                                   run_policy={"ttlSecondsAfterFinished": 5}))
        deleted = metric("deleted")
        set_pod(h, "ttl-worker-0", "Succeeded", code=0)
        result = await h.sync("ttl", KIND)
        assert result.requeue_after == 5
        h.clock.advance(5)
        h.mark()
        await h.sync("ttl", KIND)
        assert h.writes() == [("delete", "paddlejobs", NS, "ttl")]
        assert h.events()[-1] == ("Normal", "SuccessfulDeletePod", "Deleted job: ttl")
        assert metric("deleted") == deleted + 1


async def finish(h: EngineHarness, policy: str) -> None:
    """A PS job whose master succeeds while worker 0 runs and worker 1 is Pending."""
    await started(h, ps("cp", run_policy={"cleanPodPolicy": policy}))
    set_pod(h, "cp-worker-1", "Pending")
    set_pod(h, "cp-master-0", "Succeeded", code=0)
    await h.finishing_sync("cp", KIND)
    assert conditions(h, "cp")[-1] == ("Succeeded", "True", "PaddleJobSucceeded")


async def test_clean_pod_policy_all_deletes_every_pod_and_its_service() -> None:
    """DeletePodsAndServices of a finished job under All: every pod and its Service."""
    async with harness() as h:
        await finish(h, "All")
        names = ["cp-master-0", "cp-worker-0", "cp-worker-1"]
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, n) for n in names] + [
            ("delete", "services", NS, n) for n in names]


async def test_clean_pod_policy_running_deletes_running_and_pending_pods() -> None:
    """Under Running: the Running and Pending pods (the succeeded master stays)."""
    async with harness() as h:
        await finish(h, "Running")
        names = ["cp-worker-0", "cp-worker-1"]
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, n) for n in names] + [
            ("delete", "services", NS, n) for n in names]


async def test_clean_pod_policy_none_deletes_nothing() -> None:
    """Under None a finished job's pods stay."""
    async with harness() as h:
        await finish(h, "None")
        assert [w for w in h.writes() if w[0] == "delete"] == []


async def test_suspend_running_then_resume() -> None:
    """Suspend: every pod and Service deleted (cleanPodPolicy aside), active zeroed,
    Running=False and Suspended=True ("PaddleJob <name> is suspended."); resume: Suspended=False
    (PaddleJobResumed), a new startTime, the pods again."""
    async with harness() as h:
        await started(h, ps("sp", workers=1, run_policy={"cleanPodPolicy": "None"}))
        modify_job(h, "sp", lambda j: j["spec"]["runPolicy"].update(suspend=True))
        h.clock.advance(7)
        await h.sync("sp", KIND)
        assert pod_names(h) == []
        assert service_names(h) == []
        assert conditions(h, "sp") == [("Created", "True", "PaddleJobCreated"),
                                       ("Running", "False", "PaddleJobSuspended"),
                                       ("Suspended", "True", "PaddleJobSuspended")]
        assert status(h, "sp")["conditions"][-1]["message"] == "PaddleJob sp is suspended."
        assert status(h, "sp")["replicaStatuses"] == {
            "Master": {"selector": selector("sp", "Master")},
            "Worker": {"selector": selector("sp", "Worker")}}
        assert ("Normal", "PaddleJobSuspended", "PaddleJob sp is suspended.") in h.events()
        modify_job(h, "sp", lambda j: j["spec"]["runPolicy"].update(suspend=False))
        h.clock.advance(3)
        h.mark()
        await h.sync("sp", KIND)
        assert len([w for w in h.writes() if w[0] == "create"]) == 4
        assert conditions(h, "sp")[-1] == ("Suspended", "False", "PaddleJobResumed")
        assert status(h, "sp")["conditions"][-1]["message"] == "PaddleJob sp is resumed."
        assert status(h, "sp")["startTime"] == "2026-01-01T00:00:10Z"


async def test_a_job_created_suspended_gets_no_pods() -> None:
    """The upstream controller test "Shouldn't create resources if PaddleJob is suspended": Created
    and Suspended, no startTime, no pods or Services."""
    async with harness() as h:
        h.create(ps("cs", run_policy={"suspend": True}))
        h.mark()
        await h.sync("cs", KIND)
        assert h.writes() == [("update", "paddlejobs/status", NS, "cs")]
        assert conditions(h, "cs") == [("Created", "True", "PaddleJobCreated"),
                                       ("Suspended", "True", "PaddleJobSuspended")]
        assert "startTime" not in status(h, "cs")


async def test_multikueue_jobs_are_left_alone() -> None:
    """The upstream controller test "Should not reconcile a job while managed by external
    controller": no writes, conditions stay nil."""
    async with harness() as h:
        h.create(ps("mk", run_policy={"managedBy": "kueue.x-k8s.io/multikueue"}))
        h.mark()
        await h.sync("mk", KIND)
        assert h.writes() == []
        assert h.events() == []
        assert "status" not in h.job("mk", KIND)


async def test_an_invalid_job_gets_a_warning_event_and_nothing_else() -> None:
    """Upstream's webhook checks run in the controller: a Warning PaddleJobFailedValidation event
    with the aggregated messages, nothing written."""
    async with harness() as h:
        body = paddlejob("bad", {"Worker": replica(1), "PS": replica(1)})
        body["spec"]["paddleReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
            "name"] = "main"
        h.create(body)
        h.mark()
        await h.sync("bad", KIND)
        assert h.writes() == []
        assert h.events() == [(
            "Warning", "PaddleJobFailedValidation",
            "PaddleJob failed validation because [spec.paddleReplicaSpecs[Worker].template."
            'spec.containers: Required value: must have at least one container with name '
            '"paddle", spec.paddleReplicaSpecs[PS]: Unsupported value: "PS": supported '
            'values: "Master", "Worker"]')]


async def test_scaling_the_workers_creates_and_deletes_by_index() -> None:
    """2 -> 3 -> 1 workers: pods and Services by index; the new pod's PADDLE_NNODES counts the
    new total, the running ones are not rewritten."""
    async with harness() as h:
        await started(h, simple_cpu())

        def scale(n: int) -> None:
            modify_job(h, CPU, lambda j: j["spec"]["paddleReplicaSpecs"]["Worker"].update(
                replicas=n))
        scale(3)
        await h.sync(CPU, KIND)
        assert sorted(w for w in h.writes() if w[0] == "create") == [
            ("create", "pods", NS, f"{CPU}-worker-2"),
            ("create", "services", NS, f"{CPU}-worker-2")]
        assert pod(h, f"{CPU}-worker-2")["spec"]["containers"][0]["env"] == env(
            CPU, nnodes=3, master=f"{CPU}-worker-0:37777")
        assert pod(h, f"{CPU}-worker-1")["spec"]["containers"][0]["env"][2] == {
            "name": "PADDLE_NNODES", "value": "2"}
        scale(1)
        h.mark()
        await h.sync(CPU, KIND)
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, f"{CPU}-worker-1"), ("delete", "pods", NS, f"{CPU}-worker-2"),
            ("delete", "services", NS, f"{CPU}-worker-1"),
            ("delete", "services", NS, f"{CPU}-worker-2")]
        assert pod_names(h) == [f"{CPU}-worker-0"]


# -- gang scheduling ---------------------------------------------------------------------------


async def test_volcano_gang_scheduling() -> None:
    """The PodGroup first (minMember all replicas); pods once Volcano admits it, with the
    scheduler name and the group and task annotations (task: the lower-case type)."""
    async with harness(gang_scheduling="volcano") as h:
        h.create(ps("vg", workers=1))
        await h.sync("vg", KIND)
        group = h.stored(h.kind.pod_groups.resource, "vg")
        assert group is not None
        assert group["spec"] == {"minMember": 2, "queue": "default", "minResources": {}}
        assert pod_names(h) == []
        h.api.modify(h.kind.pod_groups.resource, "vg",
                     lambda g: g.update(status={"phase": "Inqueue"}), namespace=NS)
        await h.sync("vg", KIND)
        for name in ("vg-master-0", "vg-worker-0"):
            got = pod(h, name)
            assert got["spec"]["schedulerName"] == "volcano"
            assert got["metadata"]["annotations"] == {
                "scheduling.k8s.io/group-name": "vg",
                "volcano.sh/task-spec": name.split("-")[-2]}


async def test_scheduler_plugins_gang_scheduling() -> None:
    """Gang scheduling with scheduler-plugins: the PodGroup from the scheduling policy, pods with
    the scheduler name and the pod-group label at once."""
    async with harness(gang_scheduling="scheduler-plugins-scheduler") as h:
        h.create(paddlejob("sg", {"Worker": replica(2)}, run_policy={"schedulingPolicy": {
            "minAvailable": 1, "scheduleTimeoutSeconds": 30}}))
        await h.sync("sg", KIND)
        group = h.stored(h.kind.pod_groups.resource, "sg")
        assert group is not None
        assert group["spec"] == {"minMember": 1, "scheduleTimeoutSeconds": 30}
        got = pod(h, "sg-worker-1")
        assert got["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
        assert got["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "sg"
