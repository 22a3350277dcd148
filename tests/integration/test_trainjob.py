"""TrainJob (``trainer.kubeflow.org/v1alpha1``) end to end: our controller
(``mpi-controller run --enable-scheme trainjob``) and the real JobSet controller (the local
cluster's ``jobset`` addon, the version Kubeflow Trainer v2.3.0 requires) on a real API server
with KWOK nodes that end the Jobs' pods.

* the five ClusterTrainingRuntimes of ``deploy/runtimes`` pass the API server's validation of
  our CRDs; a TrainJob the CRD's rules refuse is refused with Trainer's message;
* a TrainJob of 2 nodes on ``torch-distributed`` gets its JobSet (2 pods, the ``PET_*``
  environment, the owner reference) and reaches ``Complete`` (the JobSet's reason and
  message), with ``jobsStatus``;
* a TrainJob created suspended has a suspended JobSet and ``Suspended`` True; resumed, the
  JobSet runs, ``Suspended`` turns False (``Resumed``) and the TrainJob completes;
* a ``runtimeRef`` of another kind fails the TrainJob (``TrainingRuntimeNotSupported``).

Run on a cluster with the JobSet addon up (``MPI_CONTROLLER_CLUSTER_DIR=DIR
hack/local-cluster.sh up --addons jobset``; ``make addons-test`` does it) with
``MPI_CONTROLLER_ADDONS_CLUSTER_DIR=DIR``; skipped, saying so, otherwise.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.addons import (
    Addons,
    drop_namespace,
    new_namespace,
    trainjob_addons,
    trainjob_controller,
)
from tests.support import HACK, REPO, wait_for

pytestmark = pytest.mark.cluster

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
JOBSET = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
RANK = {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {
    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}


def _kubectl(addons: Addons, *args: str, stdin: str | None = None) -> str:
    binary = subprocess.run(["bash", str(HACK), "bin-dir"], capture_output=True, text=True,
                            check=True).stdout.strip() + "/kubectl"
    done = subprocess.run([binary, *args], input=stdin, capture_output=True, text=True,
                          check=False, env={**os.environ, "KUBECONFIG": str(addons.kubeconfig)})
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def addons() -> Iterator[Addons]:
    yield from trainjob_addons()


@pytest.fixture(scope="module")
def controller(addons: Addons, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    _kubectl(addons, "apply", "--server-side", "--force-conflicts", "-k",
             str(REPO / "deploy" / "runtimes"))
    with trainjob_controller(addons, tmp_path_factory.mktemp("trainjob") / "controller.log"):
        yield


@pytest.fixture
def namespace(addons: Addons) -> Iterator[str]:
    name = new_namespace(addons, "trainjob")
    yield name
    drop_namespace(addons, name)


def trainjob(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "TrainJob", "metadata": {"name": name},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, **spec}}


def get(addons: Addons, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = addons.custom.get_namespaced_custom_object(
        GROUP, VERSION, namespace, "trainjobs", name)
    return found


def condition(addons: Addons, namespace: str, name: str, kind: str) -> dict[str, Any] | None:
    status = get(addons, namespace, name).get("status") or {}
    return next((c for c in status.get("conditions") or [] if c["type"] == kind), None)


def jobset(addons: Addons, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = addons.custom.get_namespaced_custom_object(
            *JOBSET[:2], namespace, JOBSET[2], name)
    except client.ApiException as err:
        if err.status == 404:
            return None
        raise
    return found


def test_the_shipped_runtimes_pass_the_crds_validation(addons: Addons, controller: None) -> None:
    names = _kubectl(addons, "get", "clustertrainingruntimes", "-o",
                     "jsonpath={.items[*].metadata.name}").split()
    assert {"torch-distributed", "deepspeed-distributed", "mlx-distributed", "jax-distributed",
            "xgboost-distributed"} <= set(names)


def test_the_crd_refuses_a_bad_managed_by(addons: Addons, namespace: str) -> None:
    with pytest.raises(client.ApiException) as refused:
        addons.custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "trainjobs", trainjob("bad", managedBy="me"))
    assert refused.value.status == 422
    assert ("ManagedBy must be trainer.kubeflow.org/trainjob-controller or "
            "kueue.x-k8s.io/multikueue if set") in str(refused.value.body)


def test_a_torch_trainjob_completes_through_jobset(addons: Addons, controller: None,
                                                   namespace: str) -> None:
    addons.custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "trainjobs",
        trainjob("pi", trainer={"numNodes": 2, "image": "busybox",
                                "command": ["torchrun", "train.py"]}))
    complete = wait_for(lambda: condition(addons, namespace, "pi", "Complete"), timeout=120,
                        what="the TrainJob Complete")
    assert (complete["status"], complete["reason"], complete["message"]) == (
        "True", "AllJobsCompleted", "jobset completed successfully")
    status = get(addons, namespace, "pi")["status"]
    assert status["jobsStatus"] == [{"name": "node", "active": 0, "failed": 0, "ready": 0,
                                     "succeeded": 1, "suspended": 0}]
    assert [c["type"] for c in status["conditions"]] == ["Complete"]
    made = jobset(addons, namespace, "pi")
    assert made is not None
    owner = made["metadata"]["ownerReferences"]
    assert [(o["kind"], o["name"], o["controller"]) for o in owner] == [("TrainJob", "pi", True)]
    job = made["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert (job["parallelism"], job["completions"]) == (2, 2)
    node = job["template"]["spec"]["containers"][0]
    assert node["env"] == [{"name": "PET_NNODES", "value": "2"},
                           {"name": "PET_NPROC_PER_NODE", "value": "1"}, RANK,
                           {"name": "PET_MASTER_ADDR", "value": "pi-node-0-0.pi"},
                           {"name": "PET_MASTER_PORT", "value": "29500"}]
    pods = addons.core.list_namespaced_pod(
        namespace, label_selector="jobset.sigs.k8s.io/jobset-name=pi").items
    assert sorted(p.status.phase for p in pods) == ["Succeeded", "Succeeded"]


def test_suspend_then_resume(addons: Addons, controller: None, namespace: str) -> None:
    addons.custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "trainjobs",
        trainjob("held", suspend=True, trainer={"image": "busybox"}))
    suspended = wait_for(lambda: condition(addons, namespace, "held", "Suspended"),
                         timeout=60, what="Suspended")
    assert (suspended["status"], suspended["reason"], suspended["message"]) == (
        "True", "Suspended", "TrainJob is suspended")
    made = wait_for(lambda: jobset(addons, namespace, "held"), timeout=30, what="the JobSet")
    assert made["spec"]["suspend"] is True
    assert addons.core.list_namespaced_pod(namespace).items == []
    addons.custom.patch_namespaced_custom_object(
        GROUP, VERSION, namespace, "trainjobs", "held", {"spec": {"suspend": False}})
    wait_for(lambda: condition(addons, namespace, "held", "Complete"), timeout=120,
             what="the resumed TrainJob Complete")
    resumed = condition(addons, namespace, "held", "Suspended")
    assert resumed is not None
    assert (resumed["status"], resumed["reason"], resumed["message"]) == (
        "False", "Resumed", "TrainJob is resumed")
    made = jobset(addons, namespace, "held")
    assert made is not None
    assert made["spec"]["suspend"] is False


def test_an_unsupported_runtime_kind_fails_the_trainjob(addons: Addons, controller: None,
                                                        namespace: str) -> None:
    addons.custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "trainjobs",
        {**trainjob("odd"), "spec": {"runtimeRef": {"name": "x", "kind": "Other"}}})
    failed = wait_for(lambda: condition(addons, namespace, "odd", "Failed"), timeout=60,
                      what="Failed")
    assert (failed["status"], failed["reason"], failed["message"]) == (
        "True", "TrainingRuntimeNotSupported",
        "unsupported runtime: Other.trainer.kubeflow.org")
    assert jobset(addons, namespace, "odd") is None


@pytest.mark.parametrize("runtime", ["deepspeed-distributed", "mlx-distributed",
                                     "jax-distributed", "xgboost-distributed"])
def test_each_shipped_runtime_completes(addons: Addons, controller: None, namespace: str,
                                        runtime: str) -> None:
    """The other four runtimes, 2 nodes each: Complete through JobSet; on MPI (DeepSpeed,
    MLX: one worker and the launcher as a node), the launcher starts once the worker is
    Ready, and the SSH Secret and the hostfile ConfigMap are the TrainJob's."""
    addons.custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "trainjobs",
        {**trainjob("tj"), "spec": {"runtimeRef": {"name": runtime},
                                    "trainer": {"numNodes": 2}}})
    complete = wait_for(lambda: condition(addons, namespace, "tj", "Complete"), timeout=120,
                        what=f"the TrainJob on {runtime} Complete")
    assert complete["status"] == "True"
    made = jobset(addons, namespace, "tj")
    assert made is not None
    names = [r["name"] for r in made["spec"]["replicatedJobs"]]
    if runtime.startswith(("deepspeed", "mlx")):
        assert names == ["node", "launcher"]
        hostfile = addons.core.read_namespaced_config_map("tj-mpi-hostfile", namespace)
        assert hostfile.data == {"hostfile": "tj-node-0-0.tj slots=1\n"
                                             "tj-launcher-0-0.tj slots=1\n"}
        secret = addons.core.read_namespaced_secret("tj-mpi-ssh-auth", namespace)
        assert (secret.type, secret.immutable) == ("kubernetes.io/ssh-auth", True)
        assert [o.name for o in secret.metadata.owner_references] == ["tj"]
    else:
        assert names == ["node"]
        assert made["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 2


def test_runtime_patches_and_the_runtime_snapshot(addons: Addons, controller: None,
                                                  namespace: str) -> None:
    """A TrainJob whose runtime patch (as Kueue writes one) gives the trainer's pods a node
    selector, a volume and its mount: the JobSet has them merged into the runtime's template
    (Trainer v2.3.0 ``mergeRuntimePatches``), and the runtime snapshot
    ``<trainjob>-runtime-snapshot`` holds the runtime, controlled by the TrainJob
    (``snapshot.go``)."""
    patch = {"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": {"template": {
        "metadata": {"labels": {"patched": "yes"}},
        "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
            "spec": {"nodeSelector": {"type": "kwok"},
                     "volumes": [{"name": "scratch", "emptyDir": {}}],
                     "containers": [{"name": "node", "volumeMounts": [
                         {"name": "scratch", "mountPath": "/scratch"}]}]}}}}}]}}}}
    addons.custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "trainjobs",
        trainjob("patched", runtimePatches=[patch], trainer={"image": "busybox"}))
    complete = wait_for(lambda: condition(addons, namespace, "patched", "Complete"),
                        timeout=120, what="the patched TrainJob Complete")
    assert complete["status"] == "True"
    made = jobset(addons, namespace, "patched")
    assert made is not None
    assert made["metadata"]["labels"]["patched"] == "yes"
    pod = made["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"type": "kwok"}
    assert pod["volumes"] == [{"name": "scratch", "emptyDir": {}}]
    node = pod["containers"][0]
    assert (node["name"], node["image"]) == ("node", "busybox")
    assert node["volumeMounts"] == [{"name": "scratch", "mountPath": "/scratch"}]
    uid = get(addons, namespace, "patched")["metadata"]["uid"]
    snapshot = addons.core.read_namespaced_config_map("patched-runtime-snapshot", namespace)
    assert [(o.kind, o.name, o.uid, o.controller) for o in snapshot.metadata.owner_references] \
        == [("TrainJob", "patched", uid, True)]
    assert "kind: ClusterTrainingRuntime\n" in snapshot.data["runtime"]
    assert "name: torch-distributed\n" in snapshot.data["runtime"]
