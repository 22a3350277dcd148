"""TFJobs through the whole system: the controller as a process (the session controller runs
every kind whose CRD is installed), KWOK running the pods (workers, chiefs and masters finish,
parameter servers and evaluators serve until deleted)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from e2e.chaos import audit
from tests.processes import ControllerProcess
from tests.support import Cluster, wait_for
from tests.tfjobs import (
    DURATION,
    TFJobs,
    delete_job,
    dense_config,
    kubeflow_namespace,
    replica,
    tfjob,
)

pytestmark = pytest.mark.cluster

JOB = "tf-dist-mnist-for-e2e-test"
NAMES = [f"{JOB}-ps-{i}" for i in range(2)] + [f"{JOB}-worker-{i}" for i in range(4)]


@pytest.fixture
def kubeflow(kube_api: Any, controller: ControllerProcess) -> Any:
    """The namespace the issue's manifest names, with the manifest's job deleted afterwards."""
    kubeflow_namespace(kube_api)
    jobs = TFJobs(kube_api, "kubeflow")
    delete_job(jobs, JOB)
    yield jobs
    delete_job(jobs, JOB)


def test_the_issues_manifest_succeeds(cluster: Cluster, kubeflow: TFJobs) -> None:
    """examples/tensorflow-dist-mnist.yaml, applied with kubectl unchanged: six pods and six
    headless Services with upstream's names, labels and exact TF_CONFIG; worker 0 finishing
    makes the job Succeeded; the parameter servers keep running (cleanPodPolicy None) and are
    counted as succeeded; the events name each child; ``kubectl get pods -l job-name=...``
    selects the pods as the Kubeflow documents do."""
    manifest = Path(__file__).resolve().parents[1] / "examples" / "tensorflow-dist-mnist.yaml"
    cluster.kubectl("create", "-f", str(manifest))
    job = kubeflow.wait_condition(JOB, "Succeeded", timeout=120)
    status = job["status"]
    assert [(c["type"], c["status"], c["reason"], c["message"])
            for c in status["conditions"]] == [
        ("Created", "True", "TFJobCreated", f"TFJob {JOB} is created."),
        ("Running", "False", "TFJobRunning", f"TFJob kubeflow/{JOB} is running."),
        ("Succeeded", "True", "TFJobSucceeded", f"TFJob kubeflow/{JOB} successfully completed.")]
    wait_for(lambda: kubeflow.get(JOB)["status"]["replicaStatuses"] == {
        "PS": {"succeeded": 2}, "Worker": {"succeeded": 4}}, timeout=30,
        what="the running PS counted as succeeded")
    assert status["startTime"] <= status["completionTime"]

    def phases() -> list[tuple[str, str]]:
        return [(p["metadata"]["name"], p["status"]["phase"]) for p in kubeflow.pods(JOB)]
    # Worker 0's exit ends the job; KWOK ends the other workers on their own clocks (each 3 s
    # after it started), which a loaded machine can spread past the job's Succeeded.
    wait_for(lambda: phases() == [(n, "Running" if "-ps-" in n else "Succeeded")
                                  for n in NAMES], timeout=30,
             what="the workers Succeeded, the parameter servers still Running")
    pods = kubeflow.pods(JOB)
    assert [p["metadata"]["name"] for p in pods] == NAMES
    uid = job["metadata"]["uid"]
    for pod in pods:
        name = pod["metadata"]["name"]
        rt, index = name.split("-")[-2], int(name.split("-")[-1])
        tensorflow, = pod["spec"]["containers"]
        assert tensorflow["env"] == [{"name": "TF_CONFIG", "value": dense_config(
            JOB, "kubeflow", {"ps": 2, "worker": 4}, rt, index)}]
        assert tensorflow["ports"] == [{"containerPort": 2222, "name": "tfjob-port",
                                        "protocol": "TCP"}]
        labels = {"group-name": "kubeflow.org", "job-name": JOB,
                  "training.kubeflow.org/job-name": JOB,
                  "training.kubeflow.org/operator-name": "tfjob-controller",
                  "training.kubeflow.org/replica-index": str(index),
                  "training.kubeflow.org/replica-type": rt}
        if name.endswith("worker-0"):
            labels["training.kubeflow.org/job-role"] = "master"
        assert pod["metadata"]["labels"] == labels
        assert pod["metadata"]["ownerReferences"] == [{
            "apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": JOB, "uid": uid,
            "controller": True, "blockOwnerDeletion": True}]
        assert pod["spec"]["restartPolicy"] == "Never"
        assert pod["status"]["phase"] == ("Running" if rt == "ps" else "Succeeded")
    services = kubeflow.services(JOB)
    assert [s["metadata"]["name"] for s in services] == NAMES
    for service in services:
        assert service["spec"]["clusterIP"] == "None"
        assert service["spec"]["ports"] == [{"name": "tfjob-port", "port": 2222,
                                             "protocol": "TCP", "targetPort": 2222}]
        assert service["spec"]["selector"] == {
            k: v for k, v in service["metadata"]["labels"].items()}
    selected = cluster.kubectl("-n", "kubeflow", "get", "pods", "-l", f"job-name={JOB}",
                               "-o", "name").split()
    assert selected == [f"pod/{n}" for n in NAMES]
    wanted = {("Normal", "ExitedWithCode", f"Pod: kubeflow.{JOB}-worker-0 exited with code 0"),
              ("Normal", "TFJobSucceeded", f"TFJob kubeflow/{JOB} successfully completed.")}
    for name in NAMES:
        wanted |= {("Normal", "SuccessfulCreatePod", f"Created pod: {name}"),
                   ("Normal", "SuccessfulCreateService", f"Created service: {name}")}

    def all_written() -> list[tuple[str, str, str]] | None:  # Events are written asynchronously
        events = kubeflow.events(JOB)
        return events if wanted <= set(events) else None

    events = wait_for(all_written, timeout=30, what="the job's events")
    reasons = {r for _, r, _ in events}
    assert reasons <= {"SuccessfulCreatePod", "SuccessfulCreateService", "ExitedWithCode",
                       "TFJobSucceeded"}, events
    state = cluster.kubectl("-n", "kubeflow", "get", "tfjob", JOB, "-o",
                            "custom-columns=STATE:.status.conditions[-1:].type", "--no-headers")
    assert state.strip() == "Succeeded"


def test_an_invalid_tfjob_beside_a_valid_one(kube_api: Any, namespace: str,
                                             controller: ControllerProcess) -> None:
    """The invalid job gets one Warning event naming the field and nothing else; the valid job
    beside it succeeds; the controller stays up."""
    jobs = TFJobs(kube_api, namespace)
    bad = tfjob("bad", {"Worker": replica(2), "Chief": replica(1), "Master": replica(1)})
    jobs.create(bad)
    jobs.create(tfjob("good", {"Worker": replica(2)}))
    jobs.wait_condition("good", "Succeeded", timeout=90)
    message = ("TFJob failed validation because spec.tfReplicaSpecs: Forbidden: must not have "
               "more than 1 Chief or Master role")
    wait_for(lambda: jobs.events("bad") == [("Warning", "TFJobFailedValidation", message)],
             timeout=30, what="the validation event of TFJob bad")
    assert "status" not in jobs.get("bad")
    assert jobs.pods("bad") == []
    assert controller.alive()


def test_the_controller_killed_mid_job_converges_without_duplicates(
        cluster: Cluster, kube_api: Any, controller: ControllerProcess) -> None:
    """SIGKILL while a 2 PS + 12 worker job is being created and runs; the restarted controller
    (after the Lease expires) finishes it: every pod and Service created exactly once (the API
    server's audit log: one 201 each, no AlreadyExists), the job Succeeded."""
    state = Path(cluster.kubeconfig).parent
    log = state / "logs" / "audit.log"
    if not cluster.local or not isinstance(controller, ControllerProcess) or not log.exists():
        pytest.skip("needs the local cluster (audit log) and the controller as a process")
    namespace = f"tf-kill-{uuid.uuid4().hex[:6]}"
    core = client.CoreV1Api(kube_api)
    core.create_namespace({"metadata": {"name": namespace}})
    try:
        wait_for(lambda: core.list_namespaced_service_account(
            namespace, field_selector="metadata.name=default").items, timeout=60,
            what="the namespace's default ServiceAccount")
        jobs = TFJobs(kube_api, namespace)
        start = audit.now()
        jobs.create(tfjob("kill", {"PS": replica(2), "Worker": replica(
            12, annotations={DURATION: "20s"})}))
        wait_for(lambda: len(jobs.pods("kill")) >= 3, timeout=30, what="the first pods")
        controller.kill()
        controller.start()
        jobs.wait_condition("kill", "Succeeded", timeout=150)
        end = audit.now()
        events = audit.read_events(log, start=start, end=end, namespaces=[namespace])
        created = audit.creations(e for e in events if e.user in audit.CONTROLLER_USERS)
        assert created["duplicates"] == {}, json.dumps(created)
        assert created["already_exists"] == 0, json.dumps(created)
        creates = [e for e in events if e.user in audit.CONTROLLER_USERS and e.verb == "create"
                   and e.resource in ("pods", "services")]
        made = {(e.resource, e.name) for e in creates if e.code == 201}
        # A create in flight when the controller was killed is logged 504 (its client went
        # away), stored or not: stored, the restarted controller finds the object and creates
        # it no more; not stored, it creates it (201, and no AlreadyExists anywhere).
        cut_off = {(e.resource, e.name) for e in creates if e.code == 504} - made
        names = [f"kill-ps-{i}" for i in range(2)] + [f"kill-worker-{i}" for i in range(12)]
        assert sorted(made | cut_off) == sorted(
            [("pods", n) for n in names] + [("services", n) for n in names])
        assert [p["metadata"]["name"] for p in jobs.pods("kill")] == sorted(names)
        services = core.list_namespaced_service(namespace).items
        assert sorted(s.metadata.name for s in services) == sorted(names)
        assert jobs.conditions("kill")[-1] == ("Succeeded", "True", "TFJobSucceeded")
    finally:
        core.delete_namespace(namespace, propagation_policy="Background")
        wait_for(lambda: "caches synced" in controller.log().rsplit("mpi-controller starting",
                                                                    1)[-1],
                 timeout=60, what="the session controller to run again")

