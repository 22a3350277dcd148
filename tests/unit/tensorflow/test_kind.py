"""The TFJob kind's sync on the engine, against the in-memory API: every branch of training-operator
v1.9's ``ReconcileJobs`` (``pkg/controller.v1/common/job.go``) with the TFJob hooks
(``pkg/controller.v1/tensorflow/tfjob_controller.go``), and the events and metrics of each."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mpi_controller.kube.resources import EVENTS, PODS, SERVICES
from tests.engine_harness import EngineHarness
from tests.kind_steps import KindSteps
from tests.tfjobs import dense_config, example, replica, tfjob

NS = "ns"
JOB = "tf-dist-mnist-for-e2e-test"
STEPS = KindSteps("TFJob", container="tensorflow", framework="tensorflow", job=JOB)
harness, conditions, status, set_pod = STEPS.harness, STEPS.conditions, STEPS.status, STEPS.set_pod
pod_names, service_names, metric, started = (STEPS.pod_names, STEPS.service_names, STEPS.metric,
                                             STEPS.started)


def mnist() -> dict[str, Any]:
    """The issue's manifest (2 PS, 4 workers, restartPolicy Never)."""
    return example()


async def succeed(h: EngineHarness, pod: str, job: str = "job") -> tuple[str, str, str]:
    """``pod`` exits 0 and the job syncs: its last condition."""
    set_pod(h, pod, "Succeeded", code=0)
    await h.sync(job, "TFJob")
    return conditions(h, job)[-1]


# -- the issue's manifest, first to last ---------------------------------------------------------


async def test_first_sync_of_the_issues_manifest() -> None:
    """Six pods and six headless Services, each pod with upstream's labels, owner reference,
    default port and TF_CONFIG; the status has Created, startTime and empty replica counts;
    SuccessfulCreatePod/Service events name each child."""
    async with harness() as h:
        h.create(mnist())
        created = metric("created")
        h.mark()
        await h.sync(JOB, "TFJob")
        names = [f"{JOB}-ps-{i}" for i in range(2)] + [f"{JOB}-worker-{i}" for i in range(4)]
        writes = h.writes()
        assert sorted(w for w in writes if w[1] == "pods") == [
            ("create", "pods", NS, n) for n in names]
        assert sorted(w for w in writes if w[1] == "services") == [
            ("create", "services", NS, n) for n in names]
        assert writes[-1] == ("update", "tfjobs/status", NS, JOB)
        assert len(writes) == 13
        uid = h.job(JOB, "TFJob")["metadata"]["uid"]
        for rt, count in (("ps", 2), ("worker", 4)):
            for i in range(count):
                pod = h.stored(PODS, f"{JOB}-{rt}-{i}")
                assert pod is not None
                labels = {"group-name": "kubeflow.org", "job-name": JOB,
                          "training.kubeflow.org/operator-name": "tfjob-controller",
                          "training.kubeflow.org/job-name": JOB,
                          "training.kubeflow.org/replica-type": rt,
                          "training.kubeflow.org/replica-index": str(i)}
                if (rt, i) == ("worker", 0):
                    labels["training.kubeflow.org/job-role"] = "master"
                assert pod["metadata"]["labels"] == labels
                assert pod["metadata"]["ownerReferences"] == [{
                    "apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": JOB, "uid": uid,
                    "controller": True, "blockOwnerDeletion": True}]
                assert pod["spec"] == {
                    "containers": [{
                        "name": "tensorflow", "image": "kubeflow/tf-dist-mnist-test:1.0",
                        "ports": [{"name": "tfjob-port", "containerPort": 2222}],
                        "env": [{"name": "TF_CONFIG", "value": dense_config(
                            JOB, NS, {"ps": 2, "worker": 4}, rt, i)}]}],
                    "restartPolicy": "Never"}
                service = h.stored(SERVICES, f"{JOB}-{rt}-{i}")
                assert service is not None
                svc_labels = {k: v for k, v in labels.items()
                              if k != "training.kubeflow.org/job-role"}
                assert service["metadata"]["labels"] == svc_labels
                assert service["spec"] == {"clusterIP": "None", "selector": svc_labels,
                                           "ports": [{"name": "tfjob-port", "port": 2222}]}
                assert service["metadata"]["ownerReferences"] == pod["metadata"][
                    "ownerReferences"]
        st = status(h)
        assert st["conditions"] == [{
            "type": "Created", "status": "True", "reason": "TFJobCreated",
            "message": f"TFJob {JOB} is created.", "lastUpdateTime": "2026-01-01T00:00:00Z",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]
        assert st["startTime"] == "2026-01-01T00:00:00Z"
        assert st["replicaStatuses"] == {"PS": {}, "Worker": {}}
        events = h.events()
        assert sorted(events) == sorted(
            [("Normal", "SuccessfulCreatePod", f"Created pod: {n}") for n in names]
            + [("Normal", "SuccessfulCreateService", f"Created service: {n}") for n in names])
        assert metric("created") == created + 1


async def test_the_manifest_runs_then_worker_0_decides_success() -> None:
    """Running pods: Running condition and active counts. Worker 0 succeeded (exit 0): the
    job Succeeded (Running turned False), completionTime, ExitedWithCode and TFJobSucceeded
    events; the still active replicas (the PS, three workers) counted as succeeded in that
    same status write, so the next sync writes nothing and deletes nothing (cleanPodPolicy
    None)."""
    async with harness() as h:
        await started(h, mnist())
        assert conditions(h) == [("Created", "True", "TFJobCreated"),
                                 ("Running", "True", "TFJobRunning")]
        assert status(h)["conditions"][1]["message"] == f"TFJob {NS}/{JOB} is running."
        assert status(h)["replicaStatuses"] == {"PS": {"active": 2}, "Worker": {"active": 4}}
        successful = metric("successful")
        h.clock.advance(5)
        set_pod(h, f"{JOB}-worker-0", "Succeeded", code=0)
        await h.sync(JOB, "TFJob")
        assert conditions(h) == [("Created", "True", "TFJobCreated"),
                                 ("Running", "False", "TFJobRunning"),
                                 ("Succeeded", "True", "TFJobSucceeded")]
        st = status(h)
        assert st["conditions"][2]["message"] == f"TFJob {NS}/{JOB} successfully completed."
        assert st["completionTime"] == "2026-01-01T00:00:05Z"
        assert st["replicaStatuses"] == {"PS": {"succeeded": 2}, "Worker": {"succeeded": 4}}
        assert h.events()[-2:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.{JOB}-worker-0 exited with code 0"),
            ("Normal", "TFJobSucceeded", f"TFJob {NS}/{JOB} successfully completed.")]
        assert metric("successful") == successful + 1
        h.mark()
        await h.sync(JOB, "TFJob")
        assert h.writes() == []
        assert len(pod_names(h)) == 6
        assert metric("successful") == successful + 1


# -- status writes while pods start and end together --------------------------------------------

STATUS_WRITE = ("update", "tfjobs/status", NS, JOB)
STORY: list[tuple[float, dict[str, str]]] = [
    # (seconds after the previous step, pods changed); every step ends with one sync
    (0, {f"{JOB}-{p}": "Pending" for p in ("ps-0", "ps-1", "worker-0", "worker-1", "worker-2",
                                           "worker-3")}),
    (0, {f"{JOB}-ps-0": "Running"}),
    (0.25, {f"{JOB}-worker-0": "Running"}),
    (0.25, {f"{JOB}-ps-1": "Running", f"{JOB}-worker-1": "Running",
            f"{JOB}-worker-2": "Running"}),
    (0.25, {f"{JOB}-worker-3": "Running"}),
    (5, {f"{JOB}-worker-1": "Succeeded"}),
    (0.5, {f"{JOB}-worker-2": "Succeeded"}),
    (0.25, {f"{JOB}-worker-0": "Succeeded"}),
    (0, {}),
]


async def play_story(h: EngineHarness) -> list[tuple[list[tuple[str, str, str, str]], Any]]:
    """The issue's manifest created and synced, then :data:`STORY`: each step's writes and
    the requeue its sync asked for (None: none)."""
    h.create(mnist())
    await h.sync(JOB, "TFJob")
    steps = []
    for seconds, pods in STORY:
        h.clock.advance(seconds)
        for name, phase in pods.items():
            set_pod(h, name, phase, code=0 if phase == "Succeeded" else None)
        h.mark()
        result = await h.sync(JOB, "TFJob")
        steps.append((h.writes(), result.requeue_after if result else None))
    return steps


@pytest.mark.parametrize("policy", ["", "AllWorkers"])
async def test_worker_0_is_created_first_unless_all_workers_decide(policy: str) -> None:
    """Without a Chief or Master, worker 0 decides the job's success under the default policy:
    its create goes first, alone; under ``successPolicy: AllWorkers`` every worker does, and
    everything is sent at once."""
    async with harness() as h:
        h.create(tfjob("t", {"PS": replica(1), "Worker": replica(2)}, successPolicy=policy))
        meanwhile, writes = await STEPS.held_create(h, "t", "t-worker-0")
        everything = STEPS.creates(["t-ps-0", "t-worker-0", "t-worker-1"])
        assert sorted(meanwhile) == (everything if policy
                                     else [("create", "pods", NS, "t-worker-0")])
        assert sorted(writes[:-1]) == everything


async def test_counts_alone_wait_while_pods_start_or_end_together() -> None:
    """A status change of replica counts alone waits (1 s at most) while a pod is Pending or
    one has ended beside a Running one; a condition is written in the sync that sees it, with
    the counts of that moment; the counts are written as soon as no change is due. Four
    status writes in all (eight without the hold: test below)."""
    async with harness() as h:
        steps = await play_story(h)
        assert steps == [
            ([], None),                       # every pod Pending: nothing counted
            ([], 1.0),                        # ps-0 Running: PS active 1, held
            ([STATUS_WRITE], None),           # worker-0 Running: Running, at once
            ([], 1.0),                        # three more Running, worker-3 Pending: held
            ([STATUS_WRITE], None),           # every pod Running: nothing due, written
            ([], 1.0),                        # worker-1 ended beside Running ones: held
            ([], 0.5),                        # worker-2 too: the same window
            ([STATUS_WRITE], None),           # worker-0 decides Succeeded, at once
            ([], None),                       # the finished job: nothing more to write
        ]
        st = status(h)
        assert [c["type"] for c in st["conditions"]] == ["Created", "Running", "Succeeded"]
        assert st["replicaStatuses"] == {"PS": {"succeeded": 2}, "Worker": {"succeeded": 4}}


async def test_a_held_change_is_written_when_its_window_ends() -> None:
    """ps-0 Running, worker-0 still Pending: the count waits; the sync the requeue brings
    1 s later writes it although a pod is still Pending."""
    async with harness() as h:
        h.create(mnist())
        await h.sync(JOB, "TFJob")
        for name in pod_names(h):
            set_pod(h, name, "Pending")
        set_pod(h, f"{JOB}-ps-0", "Running")
        h.mark()
        assert (await h.sync(JOB, "TFJob")).requeue_after == 1.0
        h.clock.advance(0.5)
        assert (await h.sync(JOB, "TFJob")).requeue_after == 0.5
        h.clock.advance(0.5)
        assert await h.sync(JOB, "TFJob") is None
        assert h.writes() == [STATUS_WRITE]
        assert status(h)["replicaStatuses"] == {"PS": {"active": 1}, "Worker": {}}


async def test_the_hold_changes_no_event_no_condition_and_no_final_status() -> None:
    """The same story with the hold off (window 0): a status write for every change, and the
    same Events, conditions (with their times) and final status."""
    async with harness() as held, harness(status_counts_hold=0) as eager:
        held_steps, eager_steps = await play_story(held), await play_story(eager)
        writes = [sum(len(w) for w, _ in steps) for steps in (held_steps, eager_steps)]
        assert writes == [3, 7]  # with the first sync's Created: 4 and 8 in all
        assert all(requeue is None for _, requeue in eager_steps)
        assert held.events() == eager.events()
        assert status(held) == status(eager)


async def test_running_twice_writes_nothing_more() -> None:
    async with harness() as h:
        await started(h, mnist())
        await h.sync(JOB, "TFJob")
        assert h.writes() == []


# -- restart policies and exit codes ----------------------------------------------------------


def one_worker_and_ps(restart: str, **spec: Any) -> dict[str, Any]:
    return tfjob("job", {"PS": replica(1), "Worker": replica(1, restart=restart)}, **spec)


async def test_exit_code_retryable_restarts_the_pod() -> None:
    """ExitCode with 137: the pod is deleted (Restarting, a Warning event, the restarted metric)
    and created again by the next sync; Running again replaces Restarting."""
    async with harness() as h:
        await started(h, one_worker_and_ps("ExitCode"))
        restarted = metric("restarted")
        set_pod(h, "job-worker-0", "Failed", code=137)
        await h.sync("job", "TFJob")
        assert h.writes() == [("delete", "pods", NS, "job-worker-0"),
                              ("update", "tfjobs/status", NS, "job")]
        assert conditions(h, "job") == [("Created", "True", "TFJobCreated"),
                                        ("Restarting", "True", "TFJobRestarting")]
        message = "job job is restarting because Worker replica(s) failed."
        assert status(h, "job")["conditions"][1]["message"] == message
        assert status(h, "job")["replicaStatuses"] == {"PS": {"active": 1},
                                                       "Worker": {"failed": 1}}
        assert h.events()[-3:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.job-worker-0 exited with code 137"),
            ("Warning", "TFJobRestarting", message),
            ("Normal", "SuccessfulDeletePod", "Deleted pod: job-worker-0")]
        assert metric("restarted") == restarted + 1
        h.mark()
        await h.sync("job", "TFJob")
        assert h.writes() == [("create", "pods", NS, "job-worker-0"),
                              ("update", "tfjobs/status", NS, "job")]
        set_pod(h, "job-worker-0", "Running")
        await h.sync("job", "TFJob")
        assert conditions(h, "job") == [("Created", "True", "TFJobCreated"),
                                        ("Running", "True", "TFJobRunning")]


async def test_exit_code_permanent_fails_the_job() -> None:
    """ExitCode with 1: Failed (``job "<name>" is failing because "Worker" replica(s) failed.``,
    a Warning event), then the status rules' Normal TFJobFailed event and completionTime."""
    async with harness() as h:
        await started(h, one_worker_and_ps("ExitCode"))
        failed = metric("failed")
        set_pod(h, "job-worker-0", "Failed", code=1)
        await h.sync("job", "TFJob")
        assert h.writes() == [("update", "tfjobs/status", NS, "job")]
        assert conditions(h, "job") == [("Created", "True", "TFJobCreated"),
                                        ("Running", "False", "TFJobRunning"),
                                        ("Failed", "True", "TFJobFailed")]
        message = 'job "job" is failing because "Worker" replica(s) failed.'
        assert status(h, "job")["conditions"][2]["message"] == message
        assert status(h, "job")["completionTime"] == "2026-01-01T00:00:00Z"
        assert h.events()[-3:] == [
            ("Normal", "ExitedWithCode", f"Pod: {NS}.job-worker-0 exited with code 1"),
            ("Warning", "TFJobFailed", message),
            ("Normal", "TFJobFailed", f"TFJob {NS}/job has failed because 1 Worker replica(s) "
                                      "failed.")]
        assert metric("failed") == failed + 1


async def test_never_counts_the_failure_and_fails_the_job() -> None:
    async with harness() as h:
        await started(h, one_worker_and_ps("Never"))
        set_pod(h, "job-ps-0", "Failed", code=2)
        await h.sync("job", "TFJob")
        assert h.writes() == [("update", "tfjobs/status", NS, "job")]
        assert conditions(h, "job")[-1] == ("Failed", "True", "TFJobFailed")
        assert status(h, "job")["conditions"][-1]["message"] == (
            f"TFJob {NS}/job has failed because 1 PS replica(s) failed.")


async def test_on_failure_restarts_whatever_the_code() -> None:
    async with harness() as h:
        await started(h, one_worker_and_ps("OnFailure"))
        set_pod(h, "job-worker-0", "Failed", code=1)
        await h.sync("job", "TFJob")
        assert ("delete", "pods", NS, "job-worker-0") in h.writes()
        assert conditions(h, "job")[-1] == ("Restarting", "True", "TFJobRestarting")


async def test_a_missing_exit_code_counts_as_retryable() -> None:
    """No terminated ``tensorflow`` container: upstream's 0xbeef, retryable under ExitCode."""
    async with harness() as h:
        await started(h, one_worker_and_ps("ExitCode"))
        set_pod(h, "job-worker-0", "Failed", code=1, container="sidecar")
        await h.sync("job", "TFJob")
        assert ("delete", "pods", NS, "job-worker-0") in h.writes()
        assert not [e for e in h.events() if e[1] == "ExitedWithCode"]


# -- run policy -------------------------------------------------------------------------------


async def test_backoff_limit_counts_restarts_of_running_pods() -> None:
    """OnFailure pods restarted in place twice reach backoffLimit 2: the job fails, every pod
    and Service is deleted."""
    async with harness() as h:
        await started(h, one_worker_and_ps("OnFailure", run_policy={"backoffLimit": 2}))
        set_pod(h, "job-worker-0", "Running", restarts=1)
        await h.sync("job", "TFJob")
        assert h.writes() == []
        set_pod(h, "job-worker-0", "Running", restarts=2)
        await h.sync("job", "TFJob")
        assert sorted(h.writes()[:-1]) == [
            ("delete", "pods", NS, "job-ps-0"), ("delete", "pods", NS, "job-worker-0"),
            ("delete", "services", NS, "job-ps-0"), ("delete", "services", NS, "job-worker-0")]
        message = "Job job has failed because it has reached the specified backoff limit"
        assert conditions(h, "job")[-1] == ("Failed", "True", "TFJobFailed")
        assert status(h, "job")["conditions"][-1]["message"] == message
        assert status(h, "job")["completionTime"] == "2026-01-01T00:00:00Z"
        assert h.events()[-1] == ("Normal", "TFJobFailed", message)


async def test_backoff_limit_zero_fails_at_the_first_new_failure() -> None:
    async with harness() as h:
        await started(h, one_worker_and_ps("Never", run_policy={"backoffLimit": 0}))
        set_pod(h, "job-worker-0", "Failed", code=1)
        await h.sync("job", "TFJob")
        assert status(h, "job")["conditions"][-1]["message"] == (
            "Job job has failed because it has reached the specified backoff limit")


async def test_active_deadline_requeues_then_fails_the_job() -> None:
    async with harness() as h:
        h.create(one_worker_and_ps("Never", run_policy={"activeDeadlineSeconds": 30}))
        result = await h.sync("job", "TFJob")
        assert result.requeue_after == 30
        h.clock.advance(10)
        for pod in pod_names(h):
            set_pod(h, pod, "Running")
        result = await h.sync("job", "TFJob")
        assert result.requeue_after == 20
        h.clock.advance(20)
        h.mark()
        result = await h.sync("job", "TFJob")
        assert result is None
        assert ("delete", "pods", NS, "job-worker-0") in h.writes()
        assert status(h, "job")["conditions"][-1]["message"] == (
            "Job job has failed because it was active longer than specified deadline")


async def test_ttl_requeues_then_deletes_the_finished_job() -> None:
    async with harness() as h:
        await started(h, tfjob("job", {"Worker": replica(1)},
                               run_policy={"ttlSecondsAfterFinished": 60}))
        deleted = metric("deleted")
        set_pod(h, "job-worker-0", "Succeeded", code=0)
        result = await h.sync("job", "TFJob")
        assert result.requeue_after == 60
        h.clock.advance(59)
        result = await h.sync("job", "TFJob")
        assert result.requeue_after == 1
        h.clock.advance(1)
        h.mark()
        await h.sync("job", "TFJob")
        assert h.writes() == [("delete", "tfjobs", NS, "job")]
        assert h.api.stored(h.controller.kind.resource, "job", namespace=NS) is None
        assert h.events()[-1] == ("Normal", "SuccessfulDeleteJob", "Deleted job: job")
        assert metric("deleted") == deleted + 1


async def finish(h: EngineHarness, policy: str) -> None:
    body = tfjob("job", {"Chief": replica(1), "PS": replica(1), "Worker": replica(2),
                         "Evaluator": replica(1)},
                 run_policy={"cleanPodPolicy": policy})
    await started(h, body)
    set_pod(h, "job-worker-1", "Succeeded", code=0)
    set_pod(h, "job-worker-0", "Pending")
    set_pod(h, "job-chief-0", "Succeeded", code=0)
    await h.finishing_sync("job", "TFJob")
    assert conditions(h, "job")[-1] == ("Succeeded", "True", "TFJobSucceeded")


async def test_clean_pod_policy_all_deletes_every_pod_and_its_service() -> None:
    async with harness() as h:
        await finish(h, "All")
        deletes = sorted(w for w in h.writes() if w[0] == "delete")
        names = ["job-chief-0", "job-evaluator-0", "job-ps-0", "job-worker-0", "job-worker-1"]
        assert deletes == [("delete", "pods", NS, n) for n in names] + [
            ("delete", "services", NS, n) for n in names]


async def test_clean_pod_policy_running_deletes_running_and_pending_pods() -> None:
    async with harness() as h:
        await finish(h, "Running")
        deletes = sorted(w for w in h.writes() if w[0] == "delete")
        names = ["job-evaluator-0", "job-ps-0", "job-worker-0"]
        assert deletes == [("delete", "pods", NS, n) for n in names] + [
            ("delete", "services", NS, n) for n in names]


async def test_clean_pod_policy_none_deletes_nothing() -> None:
    async with harness() as h:
        await finish(h, "None")
        assert [w for w in h.writes() if w[0] == "delete"] == []


async def test_suspend_deletes_everything_then_resume_starts_again() -> None:
    """Suspend: pods and Services deleted, active zeroed, Running=False and Suspended=True
    (one TFJobSuspended event). Resume: Suspended=False, TFJobResumed, a new startTime, the
    pods and Services created again."""
    async with harness() as h:
        await started(h, one_worker_and_ps("Never"))
        h.api.modify(h.controller.kind.resource, "job",
                     lambda j: j["spec"].setdefault("runPolicy", {}).update(suspend=True),
                     namespace=NS)
        h.clock.advance(7)
        await h.sync("job", "TFJob")
        assert pod_names(h) == []
        assert service_names(h) == []
        message = "TFJob job is suspended."
        assert conditions(h, "job") == [("Created", "True", "TFJobCreated"),
                                        ("Running", "False", "TFJobSuspended"),
                                        ("Suspended", "True", "TFJobSuspended")]
        assert status(h, "job")["replicaStatuses"] == {"PS": {}, "Worker": {}}
        await h.sync("job", "TFJob")
        assert [e for e in h.events() if e[1] == "TFJobSuspended"] == [
            ("Normal", "TFJobSuspended", message)]
        h.api.modify(h.controller.kind.resource, "job",
                     lambda j: j["spec"]["runPolicy"].update(suspend=False), namespace=NS)
        h.clock.advance(3)
        h.mark()
        await h.sync("job", "TFJob")
        assert len([w for w in h.writes() if w[0] == "create"]) == 4
        assert conditions(h, "job")[-1] == ("Suspended", "False", "TFJobResumed")
        assert status(h, "job")["conditions"][-1]["message"] == "TFJob job is resumed."
        assert status(h, "job")["startTime"] == "2026-01-01T00:00:10Z"
        assert ("Normal", "TFJobResumed", "TFJob job is resumed.") in h.events()


async def test_a_job_created_suspended_gets_no_pods() -> None:
    async with harness() as h:
        h.create(one_worker_and_ps("Never", run_policy={"suspend": True}))
        h.mark()
        await h.sync("job", "TFJob")
        assert h.writes() == [("update", "tfjobs/status", NS, "job")]
        assert conditions(h, "job") == [("Created", "True", "TFJobCreated"),
                                        ("Suspended", "True", "TFJobSuspended")]


async def test_multikueue_jobs_are_left_alone() -> None:
    """managedBy kueue.x-k8s.io/multikueue: no write at all (status stays empty)."""
    async with harness() as h:
        h.create(one_worker_and_ps("Never",
                                   run_policy={"managedBy": "kueue.x-k8s.io/multikueue"}))
        h.mark()
        await h.sync("job", "TFJob")
        assert h.writes() == []
        assert h.events() == []
        assert "status" not in h.job("job", "TFJob")


async def test_training_operator_managed_jobs_are_reconciled() -> None:
    async with harness() as h:
        h.create(one_worker_and_ps(
            "Never", run_policy={"managedBy": "kubeflow.org/training-operator"}))
        await h.sync("job", "TFJob")
        assert pod_names(h) == ["job-ps-0", "job-worker-0"]


async def test_an_invalid_job_gets_a_warning_event_and_nothing_else() -> None:
    async with harness() as h:
        body = tfjob("job", {"Worker": replica(2), "Chief": replica(1), "Master": replica(1)},
                     run_policy={"managedBy": "someone-else"})
        body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
            "name"] = "main"
        h.create(body)
        h.mark()
        await h.sync("job", "TFJob")
        assert h.writes() == []
        assert h.events() == [("Warning", "TFJobFailedValidation",
                               "TFJob failed validation because ["
                               'spec.runPolicy.managedBy: Unsupported value: "someone-else": '
                               'supported values: "kubeflow.org/training-operator", '
                               '"kueue.x-k8s.io/multikueue", '
                               "spec.tfReplicaSpecs[Worker].template.spec.containers: Required "
                               "value: must have at least one container with name tensorflow, "
                               "spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief "
                               "or Master role]")]


# -- replicas -------------------------------------------------------------------------------


async def test_scale_down_and_up_by_index() -> None:
    async with harness() as h:
        await started(h, tfjob("job", {"Worker": replica(3)}))
        h.api.modify(h.controller.kind.resource, "job",
                     lambda j: j["spec"]["tfReplicaSpecs"]["Worker"].update(replicas=1),
                     namespace=NS)
        await h.sync("job", "TFJob")
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, "job-worker-1"), ("delete", "pods", NS, "job-worker-2"),
            ("delete", "services", NS, "job-worker-1"),
            ("delete", "services", NS, "job-worker-2")]
        assert pod_names(h) == ["job-worker-0"]
        h.api.modify(h.controller.kind.resource, "job",
                     lambda j: j["spec"]["tfReplicaSpecs"]["Worker"].update(replicas=2),
                     namespace=NS)
        h.mark()
        await h.sync("job", "TFJob")
        assert sorted(w for w in h.writes() if w[0] == "create") == [
            ("create", "pods", NS, "job-worker-1"), ("create", "services", NS, "job-worker-1")]


async def test_chief_worker_evaluator_ps_with_custom_ports() -> None:
    """Each type's own tfjob-port in TF_CONFIG and its Service; the chief has the master role
    and decides success; a Running evaluator does not."""
    async with harness() as h:
        body = tfjob("job", {"Chief": replica(1, port=3333), "Worker": replica(2, port=4444),
                             "Evaluator": replica(1), "PS": replica(1, port=5555)})
        await started(h, body)
        ports = {"chief": 3333, "worker": 4444, "ps": 5555}
        cluster = {"chief": 1, "worker": 2, "evaluator": 1, "ps": 1}
        for rt, count in cluster.items():
            for i in range(count):
                pod = h.stored(PODS, f"job-{rt}-{i}")
                assert pod is not None
                env = pod["spec"]["containers"][0]["env"]
                assert env == [{"name": "TF_CONFIG",
                                "value": dense_config("job", NS, cluster, rt, i, ports)}]
                role = pod["metadata"]["labels"].get("training.kubeflow.org/job-role")
                assert role == ("master" if rt == "chief" else None)
                service = h.stored(SERVICES, f"job-{rt}-{i}")
                assert service is not None
                assert service["spec"]["ports"] == [{"name": "tfjob-port",
                                                     "port": ports.get(rt, 2222)}]
        assert await succeed(h, "job-worker-0") == ("Running", "True", "TFJobRunning")
        assert await succeed(h, "job-chief-0") == ("Succeeded", "True", "TFJobSucceeded")


async def test_a_single_replica_job_gets_no_tf_config_and_template_warnings() -> None:
    """One replica in all: not distributed, no TF_CONFIG. A restartPolicy in the template is
    overwritten by the replica's, with upstream's Warning event."""
    async with harness() as h:
        h.create(tfjob("job", {"Worker": replica(1, restart="OnFailure",
                                                 restartPolicy="Always")}))
        await h.sync("job", "TFJob")
        pod = h.stored(PODS, "job-worker-0")
        assert pod is not None
        assert "env" not in pod["spec"]["containers"][0]
        assert pod["spec"]["restartPolicy"] == "OnFailure"
        assert ("Warning", "SetPodTemplateRestartPolicy",
                "Restart policy in pod template will be overwritten by restart policy in "
                "replica spec") in h.events()


async def test_dynamic_workers_get_sparse_tf_config_and_tolerate_failures() -> None:
    async with harness() as h:
        await started(h, tfjob("job", {"PS": replica(1), "Worker": replica(2)},
                               enableDynamicWorker=True))
        pod = h.stored(PODS, "job-worker-1")
        assert pod is not None
        assert json.loads(pod["spec"]["containers"][0]["env"][0]["value"]) == {
            "cluster": {"worker": {"1": f"job-worker-1.{NS}.svc:2222"},
                        "ps": [f"job-ps-0.{NS}.svc:2222"]},
            "task": {"type": "worker", "index": 1}}
        set_pod(h, "job-worker-1", "Failed", code=1)
        await h.sync("job", "TFJob")
        assert conditions(h, "job")[-1] == ("Running", "True", "TFJobRunning")


async def test_all_workers_success_policy_waits_for_every_worker() -> None:
    async with harness() as h:
        await started(h, tfjob("job", {"Worker": replica(2)}, successPolicy="AllWorkers"))
        assert await succeed(h, "job-worker-0") == ("Running", "True", "TFJobRunning")
        assert await succeed(h, "job-worker-1") == ("Succeeded", "True", "TFJobSucceeded")


async def test_cluster_domain_is_appended_to_hosts() -> None:
    async with harness(cluster_domain="cluster.local") as h:
        h.create(tfjob("job", {"Worker": replica(2)}))
        await h.sync("job", "TFJob")
        pod = h.stored(PODS, "job-worker-0")
        assert pod is not None
        config = json.loads(pod["spec"]["containers"][0]["env"][0]["value"])
        assert config["cluster"] == {"worker": [f"job-worker-0.{NS}.svc.cluster.local:2222",
                                                f"job-worker-1.{NS}.svc.cluster.local:2222"]}


async def test_abnormal_pods_are_reported_once() -> None:
    async with harness() as h:
        await started(h, one_worker_and_ps("Never"))
        waiting = {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling"}}

        def stuck(pod: dict[str, Any]) -> None:
            pod["status"] = {"phase": "Pending", "containerStatuses": [
                {"name": "tensorflow", "restartCount": 0, "state": waiting}]}
        h.api.modify(PODS, "job-worker-0", stuck, namespace=NS)
        await h.sync("job", "TFJob")
        await h.sync("job", "TFJob")
        event = ("Warning", "ImagePullBackOff",
                 "Error pod job-worker-0 container tensorflow waiting message: Back-off pulling")
        assert [e for e in h.events() if e[1] == "ImagePullBackOff"] == [event]


# -- engine guards and gang scheduling ------------------------------------------------------


async def test_a_stale_pod_cache_creates_nothing_twice() -> None:
    async with harness() as h:
        await h.pause(h.kind.pods)
        h.create(one_worker_and_ps("Never"))
        await h.sync("job", "TFJob")
        h.mark()
        await h.sync("job", "TFJob")
        assert h.writes() == []
        await h.resume(h.kind.pods)
        await h.sync("job", "TFJob")
        assert [w for w in h.writes() if w[0] == "create"] == []


async def test_volcano_pod_group_admits_the_pods() -> None:
    """Volcano: the PodGroup (minMember 3, queue default, minResources summed) comes first;
    pods wait until it leaves phase Pending (lastReconcileTime set once), then carry the
    scheduler name and the group and task annotations."""
    async with harness(gang_scheduling="volcano") as h:
        body = tfjob("job", {"PS": replica(1), "Worker": replica(2)})
        for spec in body["spec"]["tfReplicaSpecs"].values():
            spec["template"]["spec"]["containers"][0]["resources"] = {
                "requests": {"cpu": "1", "memory": "1Gi"}}
        body["metadata"]["annotations"] = {"team": "a"}
        h.create(body)
        h.mark()
        await h.sync("job", "TFJob")
        assert h.writes() == [("create", "podgroups", NS, "job"),
                              ("update", "tfjobs/status", NS, "job")]
        group = h.stored(h.kind.pod_groups.resource, "job")
        assert group is not None
        assert group["metadata"]["annotations"] == {"team": "a"}
        assert group["spec"] == {"minMember": 3, "queue": "default",
                                 "minResources": {"cpu": "3", "memory": "3Gi"}}
        assert status(h, "job")["lastReconcileTime"] == "2026-01-01T00:00:00Z"
        h.mark()
        h.clock.advance(2)
        await h.sync("job", "TFJob")
        assert h.writes() == []
        h.api.modify(h.kind.pod_groups.resource, "job",
                     lambda g: g.update(status={"phase": "Inqueue"}), namespace=NS)
        await h.sync("job", "TFJob")
        pod = h.stored(PODS, "job-worker-1")
        assert pod is not None
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "job",
                                                  "volcano.sh/task-spec": "worker"}


async def test_scheduler_plugins_pod_group_and_labels() -> None:
    async with harness(gang_scheduling="scheduler-plugins-scheduler") as h:
        h.create(tfjob("job", {"Worker": replica(2)}, run_policy={"schedulingPolicy": {
            "minAvailable": 1, "scheduleTimeoutSeconds": 30}}))
        await h.sync("job", "TFJob")
        group = h.stored(h.kind.pod_groups.resource, "job")
        assert group is not None
        assert group["spec"] == {"minMember": 1, "scheduleTimeoutSeconds": 30}
        pod = h.stored(PODS, "job-worker-0")
        assert pod is not None
        assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "job"


async def test_finishing_deletes_the_pod_group_with_events() -> None:
    async with harness(gang_scheduling="scheduler-plugins-scheduler") as h:
        await started(h, tfjob("job", {"Worker": replica(1)}))
        set_pod(h, "job-worker-0", "Succeeded", code=0)
        await h.finishing_sync("job", "TFJob")
        assert ("delete", "podgroups", NS, "job") in h.writes()
        assert h.events()[-2:] == [
            ("Normal", "JobTerminated", "Job has been terminated. Deleting PodGroup"),
            ("Normal", "SuccessfulDeletePodGroup", "Deleted PodGroup: job")]


async def test_mpijob_and_tfjob_run_side_by_side() -> None:
    """Both kinds on one pod informer: each controller creates and counts only its own."""
    from tests.mpijobs import small_job

    async with EngineHarness(schemes=("mpijob", "tfjob")) as h:
        pod_watches = {r.params.get("label_selector") for r in h.api.requests
                       if r.resource == PODS and r.verb in ("list", "watch")}
        assert pod_watches == {  # MPIJob: v2beta1's and v1's operator names
            "training.kubeflow.org/operator-name in "
            "(mpi-operator,mpijob-controller,tfjob-controller)"}
        mpijob = small_job("pi", workers=1)
        h.create(mpijob)
        h.create(tfjob("tf", {"Worker": replica(2)}))
        await h.sync("pi", "MPIJob")
        await h.sync("tf", "TFJob")
        assert sorted(pod_names(h)) == ["pi-worker-0", "tf-worker-0", "tf-worker-1"]
        assert status(h, "tf")["replicaStatuses"] == {"Worker": {}}
        events = h.api.objects(EVENTS, NS)
        sources = {(e["involvedObject"]["kind"], e["source"]["component"]) for e in events}
        assert ("TFJob", "tfjob-controller") in sources
        assert ("MPIJob", "mpi-job-controller") in sources


async def test_a_malformed_status_does_not_break_the_sync() -> None:
    """A status edited by hand (junk entries, a bad time): the sync goes on, nothing raises."""
    async with harness() as h:
        body = tfjob("job", {"Worker": replica(1)}, run_policy={
            "ttlSecondsAfterFinished": 5, "activeDeadlineSeconds": 9, "backoffLimit": 1})
        h.create(body)
        await h.sync("job", "TFJob")

        def junk(job: dict[str, Any]) -> None:
            job["status"] = {"conditions": [1, {"type": "Succeeded", "status": "True"}],
                             "replicaStatuses": {"Worker": "x", "PS": {"active": "y",
                                                                       "failed": "z"}},
                             "completionTime": "garbage", "startTime": 7}
        h.api.modify(h.controller.kind.resource, "job", junk, namespace=NS)
        assert await h.sync("job", "TFJob") is None
        assert status(h, "job")["replicaStatuses"] == {"Worker": "x", "PS": {"failed": "z"}}

        def running_junk(job: dict[str, Any]) -> None:
            job["status"] = {"conditions": ["?"], "replicaStatuses": {"Worker": {"failed": "z"}},
                             "startTime": "garbage"}
        h.api.modify(h.controller.kind.resource, "job", running_junk, namespace=NS)
        await h.sync("job", "TFJob")
        assert status(h, "job")["replicaStatuses"] == {"Worker": {}}
