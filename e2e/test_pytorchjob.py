"""PyTorchJobs through the whole system: the controller as a process (the session controller
runs every kind whose CRD is installed), KWOK running the pods (masters and workers finish with
exit 0 after a few seconds, as the training program would)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import ControllerProcess
from tests.pytorchjobs import (
    IMAGE,
    PyTorchJobs,
    init_container,
    master_env,
    pytorchjob,
    replica,
    selector,
)
from tests.support import Cluster, wait_for, wait_pods_succeeded
from tests.tfjobs import delete_job, kubeflow_namespace

pytestmark = pytest.mark.cluster

JOB = "pytorch-simple"
NAMES = [f"{JOB}-master-0", f"{JOB}-worker-0"]


@pytest.fixture
def kubeflow(kube_api: Any, controller: ControllerProcess) -> Any:
    """The namespace the issue's manifest names, with the manifest's job deleted afterwards."""
    kubeflow_namespace(kube_api)
    jobs = PyTorchJobs(kube_api, "kubeflow")
    delete_job(jobs, JOB)
    yield jobs
    delete_job(jobs, JOB)


def test_the_issues_manifest_succeeds(cluster: Cluster, kubeflow: PyTorchJobs) -> None:
    """examples/pytorch-simple.yaml, created with kubectl unchanged: a master and a worker pod
    and their headless Services with upstream's names, labels, environment and the worker's
    init container; the master finishing makes the job Succeeded; ``kubectl get pods -l
    job-name=pytorch-simple`` lists both, as the Kubeflow documents show."""
    manifest = Path(__file__).resolve().parents[1] / "examples" / "pytorch-simple.yaml"
    cluster.kubectl("create", "-f", str(manifest))
    job = kubeflow.wait_condition(JOB, "Succeeded", timeout=120)
    status = job["status"]
    assert [(c["type"], c["status"], c["reason"], c["message"])
            for c in status["conditions"]] == [
        ("Created", "True", "PyTorchJobCreated", f"PyTorchJob {JOB} is created."),
        ("Running", "False", "PyTorchJobRunning", f"PyTorchJob {JOB} is running."),
        ("Succeeded", "True", "PyTorchJobSucceeded",
         f"PyTorchJob {JOB} is successfully completed.")]
    assert status["replicaStatuses"] == {
        "Master": {"succeeded": 1, "selector": selector(JOB, "Master")},
        "Worker": {"succeeded": 1, "selector": selector(JOB, "Worker")}}
    assert status["startTime"] <= status["completionTime"]
    pods = wait_pods_succeeded(lambda: kubeflow.pods(JOB), f"{JOB} (KWOK)")
    assert [p["metadata"]["name"] for p in pods] == NAMES
    uid = job["metadata"]["uid"]
    for rank, pod in enumerate(pods):
        rt = pod["metadata"]["name"].split("-")[-2]
        pytorch, = pod["spec"]["containers"]
        assert (pytorch["image"], pytorch["imagePullPolicy"], pytorch["command"]) == (
            IMAGE, "Always", ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"])
        assert pytorch["env"] == master_env(JOB, rank=rank, world=2, nnodes="2")
        assert pytorch["ports"] == [{"containerPort": 23456, "name": "pytorchjob-port",
                                     "protocol": "TCP"}]
        init = [{k: v for k, v in c.items() if k not in (
            "terminationMessagePath", "terminationMessagePolicy", "volumeMounts")}
            for c in pod["spec"].get("initContainers") or []]
        assert init == ([init_container(JOB)] if rt == "worker" else [])
        labels = {"group-name": "kubeflow.org", "job-name": JOB,
                  "training.kubeflow.org/job-name": JOB,
                  "training.kubeflow.org/operator-name": "pytorchjob-controller",
                  "training.kubeflow.org/replica-index": "0",
                  "training.kubeflow.org/replica-type": rt}
        if rt == "master":
            labels["training.kubeflow.org/job-role"] = "master"
        assert pod["metadata"]["labels"] == labels
        assert pod["metadata"]["ownerReferences"] == [{
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": JOB, "uid": uid,
            "controller": True, "blockOwnerDeletion": True}]
        assert pod["spec"]["restartPolicy"] == "OnFailure"
        assert pod["status"]["phase"] == "Succeeded"
    services = kubeflow.services(JOB)
    assert [s["metadata"]["name"] for s in services] == NAMES
    for service in services:
        assert service["spec"]["clusterIP"] == "None"
        assert service["spec"]["ports"] == [{"name": "pytorchjob-port", "port": 23456,
                                             "protocol": "TCP", "targetPort": 23456}]
        assert service["spec"]["selector"] == service["metadata"]["labels"]
    listed = cluster.kubectl("get", "pods", "-l", f"job-name={JOB}", "-n", "kubeflow")
    rows = [line.split()[:3] for line in listed.strip().splitlines()]
    assert rows == [["NAME", "READY", "STATUS"], [NAMES[0], "0/1", "Completed"],
                    [NAMES[1], "0/1", "Completed"]]
    wanted = {("Normal", "ExitedWithCode", f"Pod: kubeflow.{JOB}-master-0 exited with code 0"),
              ("Normal", "PyTorchJobSucceeded", f"PyTorchJob {JOB} is successfully completed.")}
    for name in NAMES:
        wanted |= {("Normal", "SuccessfulCreatePod", f"Created pod: {name}"),
                   ("Normal", "SuccessfulCreateService", f"Created service: {name}")}

    def all_written() -> list[tuple[str, str, str]] | None:  # Events are written asynchronously
        events = kubeflow.events(JOB)
        return events if wanted <= set(events) else None

    events = wait_for(all_written, timeout=30, what="the job's events")
    assert {r for _, r, _ in events} <= {"SuccessfulCreatePod", "SuccessfulCreateService",
                                         "ExitedWithCode", "PyTorchJobSucceeded"}, events
    table = cluster.kubectl("-n", "kubeflow", "get", "pytorchjobs", JOB)
    assert table.split("\n")[1].split()[:2] == [JOB, "Succeeded"]


def test_an_invalid_pytorchjob_beside_a_valid_one(kube_api: Any, namespace: str,
                                                  controller: ControllerProcess) -> None:
    """The invalid job gets one Warning event naming the fields and nothing else; the valid job
    beside it succeeds; the controller stays up."""
    jobs = PyTorchJobs(kube_api, namespace)
    bad = pytorchjob("bad", {"Master": replica(2), "Worker": replica(1)},
                     elastic={"nProcPerNode": 2}, nprocPerNode="2")
    jobs.create(bad)
    jobs.create(pytorchjob("good", {"Master": replica(1), "Worker": replica(2)}))
    jobs.wait_condition("good", "Succeeded", timeout=90)
    message = ("PyTorchJob failed validation because [spec.elasticPolicy.nProcPerNode: "
               "Forbidden: must not be used with spec.nprocPerNode, "
               "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1]")
    wait_for(lambda: jobs.events("bad") == [("Warning", "PyTorchJobFailedValidation", message)],
             timeout=30, what="the validation event of PyTorchJob bad")
    assert "status" not in jobs.get("bad")
    assert jobs.pods("bad") == []
    assert controller.alive()
