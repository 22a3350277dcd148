"""The Kubeflow training SDK (``kubeflow-training`` 1.9.4, the ``TrainingClient`` users drive
training-operator v1.9 with) drives each of the six ``kubeflow.org/v1`` kinds against the
session controller: TFJob, PyTorchJob, XGBoostJob, PaddleJob, JAXJob and MPIJob (``v1``,
through the conversion webhook, :func:`tests.webhooks.serving_webhooks`).

The SDK needs ``kubernetes<36`` and the project pins 37, so it lives in a virtualenv of its
own, ``.venv-sdk`` (``make sdk-venv``, pinned by e2e/sdk/constraints.txt; made here when
missing), and e2e/sdk/driver.py runs on it against the test cluster's kubeconfig: it turns
a manifest into the SDK's model of the kind, then ``create_job``,
``wait_for_job_conditions`` (Succeeded), ``get_job_conditions``, ``get_job_pod_names`` (all,
then ``is_master=True``: ``training.kubeflow.org/job-role=master``), ``list_jobs``,
``delete_job``, and prints what the SDK answered as JSON, which the test compares exactly.

KWOK ends the pods of every training kind (and MPIJob v1's launcher) by itself, as their
programs would exit (0, three seconds after they run), so the manifests carry no simulation
annotations.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.processes import ControllerProcess
from tests.support import REPO, Cluster, wait_for
from tests.webhooks import serving_webhooks

pytestmark = pytest.mark.cluster

SDK_PYTHON = REPO / ".venv-sdk" / "bin" / "python"
DRIVER = REPO / "e2e" / "sdk" / "driver.py"


@pytest.fixture(scope="session")
def sdk_python() -> str:
    """The SDK's virtualenv, made (or brought up to date) by ``make sdk-venv``."""
    subprocess.run(["make", "--no-print-directory", "-s", "-C", str(REPO), "sdk-venv"],
                   check=True, timeout=900)
    return str(SDK_PYTHON)


@pytest.fixture(scope="module")
def webhooks(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The conversion webhook MPIJob ``v1`` needs (the SDK reads and writes ``v1``)."""
    if not cluster.local:
        pytest.skip("the API server must reach a webhook process on 127.0.0.1")
    with serving_webhooks(cluster, tmp_path_factory.mktemp("webhooks")):
        yield


def replica(container: str, image: str, replicas: int, restart: str,
            **container_fields: Any) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": {"containers": [
        {"name": container, "image": image, **container_fields}]}}
    return {"replicas": replicas, "restartPolicy": restart, "template": template}


def manifest(kind: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The job ``sdk-<kind>`` in ``namespace``; ``runPolicy`` empty unless ``spec`` has one
    (the SDK's models require it, as the SDK's own job templates give it)."""
    return {"apiVersion": "kubeflow.org/v1", "kind": kind,
            "metadata": {"name": f"sdk-{kind.lower()}", "namespace": namespace},
            "spec": {"runPolicy": {}, **spec}}


TF_IMAGE = "kubeflow/tf-dist-mnist-test:1.0"
PT_IMAGE = "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"
XGB_IMAGE = "ghcr.io/kubeflow/training-v1/xgboost-dist-rabit-test:latest"
PADDLE_IMAGE = "registry.baidubce.com/paddlepaddle/paddle:2.4.0rc0-cpu"
JAX_IMAGE = "ghcr.io/kubeflow/training-v1/jaxjob-simple:latest"
MPI_IMAGE = "mpioperator/tensorflow-benchmarks:latest"

SPECS: dict[str, Any] = {
    "TFJob": {"tfReplicaSpecs": {"Worker": replica("tensorflow", TF_IMAGE, 2, "Never")}},
    "PyTorchJob": {"pytorchReplicaSpecs": {
        "Master": replica("pytorch", PT_IMAGE, 1, "OnFailure"),
        "Worker": replica("pytorch", PT_IMAGE, 1, "OnFailure")}},
    "XGBoostJob": {"xgbReplicaSpecs": {
        "Master": replica("xgboost", XGB_IMAGE, 1, "Never"),
        "Worker": replica("xgboost", XGB_IMAGE, 1, "Never")}},
    "PaddleJob": {"paddleReplicaSpecs": {
        "Worker": replica("paddle", PADDLE_IMAGE, 2, "OnFailure",
                          command=["python", "-m", "paddle.distributed.launch", "run_check"])}},
    "JAXJob": {"jaxReplicaSpecs": {
        "Worker": replica("jax", JAX_IMAGE, 2, "OnFailure",
                          command=["python3", "train.py"])}},
    "MPIJob": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "None"}, "mpiReplicaSpecs": {
        "Launcher": replica("mpi", MPI_IMAGE, 1, "Never",
                            command=["mpirun", "python", "scripts/tf_cnn_benchmarks.py"]),
        "Worker": replica("mpi", MPI_IMAGE, 2, "Never")}},
}


def expected(kind: str, ns: str) -> dict[str, Any]:
    """What the SDK answers for ``SPECS[kind]`` as training-operator v1.9.2 runs it: the
    conditions (upstream's reasons and messages; the job named with its namespace where
    upstream does), the pods (API order: by name) and the one with ``job-role: master``
    (TFJob's worker 0 without a chief, PyTorchJob's and XGBoostJob's master, JAXJob's worker
    0, MPIJob v1's launcher; a collective PaddleJob has none), the replica statuses."""
    name = f"sdk-{kind.lower()}"
    running, succeeded = {
        "TFJob": (f"{ns}/{name} is running.", f"{ns}/{name} successfully completed."),
        "PyTorchJob": (f"{name} is running.", f"{name} is successfully completed."),
        "XGBoostJob": (f"{name} is running.", f"{name} is successfully completed."),
        "PaddleJob": (f"{ns}/{name} is running.", f"{ns}/{name} successfully completed."),
        "JAXJob": (f"{ns}/{name} is running.", f"{ns}/{name} successfully completed."),
        "MPIJob": (f"{name} is running.", f"{name} is successfully completed."),
    }[kind]
    conditions = [["Created", "True", f"{kind}Created", f"{kind} {name} is created."],
                  ["Running", "False", f"{kind}Running", f"{kind} {running}"],
                  ["Succeeded", "True", f"{kind}Succeeded", f"{kind} {succeeded}"]]
    pods, master = {
        "TFJob": (["worker-0", "worker-1"], ["worker-0"]),
        "PyTorchJob": (["master-0", "worker-0"], ["master-0"]),
        "XGBoostJob": (["master-0", "worker-0"], ["master-0"]),
        "PaddleJob": (["worker-0", "worker-1"], []),
        "JAXJob": (["worker-0", "worker-1"], ["worker-0"]),
        "MPIJob": (["launcher", "worker-0", "worker-1"], ["launcher"]),
    }[kind]
    selector = (f"group-name=kubeflow.org,job-name={name},training.kubeflow.org/job-name={name},"
                f"training.kubeflow.org/operator-name={kind.lower()}-controller,"
                "training.kubeflow.org/replica-type=")
    statuses = {
        "TFJob": {"Worker": {"succeeded": 2}},
        "PyTorchJob": {"Master": {"succeeded": 1, "selector": selector + "master"},
                       "Worker": {"succeeded": 1, "selector": selector + "worker"}},
        "XGBoostJob": {"Master": {"succeeded": 1}, "Worker": {"succeeded": 1}},
        "PaddleJob": {"Worker": {"succeeded": 2, "selector": selector + "worker"}},
        "JAXJob": {"Worker": {"succeeded": 2, "selector": selector + "worker"}},
        # v1's updateMPIJobStatus counts no worker once the launcher has finished
        "MPIJob": {"Launcher": {"succeeded": 1}, "Worker": {}},
    }[kind]
    return {"model": f"KubeflowOrgV1{'XGBoostJob' if kind == 'XGBoostJob' else kind}",
            "conditions": conditions, "waited_conditions": conditions,
            "pods": [f"{name}-{p}" for p in pods], "master_pods": [f"{name}-{p}" for p in master],
            "replica_statuses": statuses, "listed": [name], "listed_after_delete": []}


def drive(python: str, kubeconfig: str, job: dict[str, Any]) -> dict[str, Any]:
    """Run the driver on the SDK's virtualenv; its JSON answer."""
    scenario = {"kubeconfig": kubeconfig, "job": job, "wait_timeout": 120}
    done = subprocess.run([python, str(DRIVER)], input=json.dumps(scenario),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    assert "error" not in out, (out, done.stderr[-3000:])
    return out


@pytest.mark.parametrize("kind", list(SPECS))
def test_the_sdk_drives_the_kind(request: pytest.FixtureRequest, cluster: Cluster,
                                 kube_api: Any, namespace: str, controller: ControllerProcess,
                                 sdk_python: str, kind: str) -> None:
    """``TrainingClient`` creates the job from its model object (serialized exactly as the
    manifest), waits for Succeeded, and reads back upstream's conditions, the job's pods, the
    master pod, the replica statuses and the job in ``list_jobs``; ``delete_job`` removes it
    (the garbage collector then its pods)."""
    if kind == "MPIJob":
        request.getfixturevalue("webhooks")
    job = manifest(kind, namespace, SPECS[kind])
    out = drive(sdk_python, cluster.kubeconfig, job)
    assert out["sent"] == job
    want = expected(kind, namespace)
    got = {**out, "waited_conditions": out["waited"][1]}
    assert out["waited"][0] == want["model"]
    assert {k: got[k] for k in want} == want
    name = job["metadata"]["name"]
    wait_for(lambda: not client.CoreV1Api(kube_api).list_namespaced_pod(
        namespace, label_selector=f"training.kubeflow.org/job-name={name}").items, timeout=60,
        what=f"the pods of {kind} {name} collected")
