"""``mpi-controller convert --to trainer.kubeflow.org/v1alpha1``: a PyTorchJob, XGBoostJob,
JAXJob or MPIJob (any version) becomes its TrainJob (and TrainingRuntime), each field with no
equivalent said on stderr (:mod:`mpi_controller.trainjob.from_v1`).

Every manifest under ``examples/`` is converted (the test enumerates them: a new example must
be added to the table), with its exact exit status and losses; each converted TrainJob on its
runtime builds a JobSet (:func:`~mpi_controller.trainjob.build.desired_objects`) with the v1
job's pods. ``tests/integration/test_trainjob.py`` applies two of them to a cluster and runs
them to Complete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mpi_controller.cli import main
from mpi_controller.trainjob import api
from mpi_controller.trainjob.build import desired_objects
from mpi_controller.trainjob.from_v1 import (
    JAX_ENV_NOTE,
    TORCH_ENV_NOTE,
    XGBOOST_ENV_NOTE,
    Loss,
    NotConvertible,
    to_trainer,
)

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"
TO = ["--to", "trainer.kubeflow.org/v1alpha1"]
CLEAN = "spec.runPolicy.cleanPodPolicy: 'Running': no equivalent (a finished JobSet's pods are " \
        "left to its Jobs)"
DISCOVER = ("spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].args: names "
            "/etc/mpi/discover_hosts.sh, which mpi-operator writes for elastic Horovod and "
            "Trainer's MPI policy does not")
OPENMPI_ONLY = "Trainer v2.3.0's MPI policy has OpenMPI only (OpenMPI is used)"
V1_SSH = ("apiVersion: kubeflow.org/v1 launches with kubectl exec; Trainer's MPI launcher "
          "reaches the nodes over SSH (the workers must run sshd)")
EXIT_CODE = ("spec.xgbReplicaSpecs.Worker.restartPolicy: 'ExitCode': no retry of exit codes "
             "128-255 (the pods restart Never, as the v1 pods did)")
WORKER_DIFFERS = ("spec.xgbReplicaSpecs.Worker.template: differs from the Master's: every node "
                  "runs the Master's template")
NOTES = {"PyTorchJob": TORCH_ENV_NOTE, "XGBoostJob": XGBOOST_ENV_NOTE, "JAXJob": JAX_ENV_NOTE}
RUNTIME_AND_JOB = ["TrainingRuntime", "TrainJob"]
V1ALPHA2_SSH = ("apiVersion: kubeflow.org/v1alpha2 launches with kubectl exec into a "
                "StatefulSet; Trainer's MPI launcher reaches the nodes over SSH (the workers "
                "must run sshd)")

# Example → (the kinds printed, the number of nodes, the warnings (line: text)), or None for
# a kind with no conversion (exit status 2).
CONVERTED: dict[str, tuple[list[str], int, list[str]] | None] = {
    "horovod-elastic.yaml": (["TrainingRuntime", "TrainJob"], 2,
                             [f"13: MPIJob tensorflow-mnist-elastic: {CLEAN}",
                              f"23: MPIJob tensorflow-mnist-elastic: {DISCOVER}"]),
    "jax/demo.yaml": (RUNTIME_AND_JOB, 2, []),
    "jax/jaxjob_dist_spmd_mnist_gloo.yaml": (RUNTIME_AND_JOB, 2, []),
    "paddlepaddle/simple-cpu.yaml": None,
    "paddlepaddle/simple-gpu.yaml": None,
    "pi-intel.yaml": (["TrainingRuntime", "TrainJob"], 2,
                      [f"9: MPIJob pi-intel: spec.mpiImplementation: 'Intel': {OPENMPI_ONLY}",
                       f"11: MPIJob pi-intel: {CLEAN}"]),
    "pi-mpich.yaml": (["TrainingRuntime", "TrainJob"], 2,
                      [f"10: MPIJob pi-mpich: spec.mpiImplementation: 'MPICH': {OPENMPI_ONLY}",
                       f"12: MPIJob pi-mpich: {CLEAN}"]),
    "pi.yaml": (["TrainingRuntime", "TrainJob"], 2, [f"11: MPIJob pi: {CLEAN}"]),
    "pytorch-simple.yaml": (["TrainingRuntime", "TrainJob"], 2, []),
    "tensorflow-benchmarks.yaml": (["TrainingRuntime", "TrainJob"], 2,
                                   [f"10: MPIJob tensorflow-benchmarks: {CLEAN}"]),
    "tensorflow-dist-mnist.yaml": None,
    "v1/tensorflow-mnist-elastic.yaml": (
        ["TrainingRuntime", "TrainJob"], 2,
        ["7: MPIJob tensorflow-mnist-elastic: spec.cleanPodPolicy: \"Running\": no equivalent",
         f"1: MPIJob tensorflow-mnist-elastic: {V1_SSH}",
         f"18: MPIJob tensorflow-mnist-elastic: {DISCOVER}"]),
    "v1alpha2/tensorflow-benchmarks.yaml": (
        ["TrainingRuntime", "TrainJob"], 2,
        ["7: MPIJob tensorflow-benchmarks: spec.cleanPodPolicy: \"Running\": no equivalent",
         f"1: MPIJob tensorflow-benchmarks: {V1ALPHA2_SSH}"]),
    "xgboost/xgboostjob.yaml": (RUNTIME_AND_JOB, 3, [
        f"28: XGBoostJob xgboost-dist-iris-test-train: {EXIT_CODE}",
        f"29: XGBoostJob xgboost-dist-iris-test-train: {WORKER_DIFFERS}"]),
    "xgboost/xgboostjob_v1_iris_predict.yaml": (RUNTIME_AND_JOB, 3, [
        f"26: XGBoostJob xgboost-dist-iris-test-predict: {EXIT_CODE}"]),
    "xgboost/xgboostjob_v1_iris_predict_local.yaml": (RUNTIME_AND_JOB, 3, [
        f"32: XGBoostJob xgboost-dist-iris-test-predict-local: {EXIT_CODE}"]),
    "xgboost/xgboostjob_v1_iris_train.yaml": (RUNTIME_AND_JOB, 3, [
        f"28: XGBoostJob xgboost-dist-iris-test-train: {EXIT_CODE}",
        f"29: XGBoostJob xgboost-dist-iris-test-train: {WORKER_DIFFERS}"]),
    "xgboost/xgboostjob_v1_iris_train_local.yaml": (RUNTIME_AND_JOB, 3, [
        f"35: XGBoostJob xgboost-dist-iris-test-train-local: {EXIT_CODE}",
        f"36: XGBoostJob xgboost-dist-iris-test-train-local: {WORKER_DIFFERS}"]),
    "xgboost/xgboostjob_v1_lightgbm_dist_training.yaml": (RUNTIME_AND_JOB, 3, [
        f"43: XGBoostJob lightgbm-dist-train-test: {EXIT_CODE}"]),
    "xgboost/xgboostjob_v1_rabit_test.yaml": (RUNTIME_AND_JOB, 3, []),
    "xgboost/xgboostjob_v1alpha1_rabit_test.yaml": (RUNTIME_AND_JOB, 3, []),
}


def test_the_table_names_every_example() -> None:
    found = sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.yaml"))
    assert found == sorted(CONVERTED)


def shipped_runtime(name: str) -> dict[str, Any]:
    runtime: dict[str, Any] = yaml.safe_load((REPO / "deploy" / "runtimes" / f"{name}.yaml")
                                             .read_text())
    return runtime


def jobset_of(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The JobSet our builder makes of the converted TrainJob on its (converted or shipped)
    runtime."""
    trainjob = api.set_defaults({**objects[-1], "metadata": {
        "namespace": "default", **objects[-1]["metadata"], "uid": "u"}})
    if len(objects) == 2:
        runtime = objects[0]
        assert trainjob["spec"]["runtimeRef"] == {
            "name": runtime["metadata"]["name"], "kind": "TrainingRuntime",
            "apiGroup": "trainer.kubeflow.org"}
    else:
        runtime = shipped_runtime(trainjob["spec"]["runtimeRef"]["name"])
    assert api.validate(trainjob, runtime["spec"]) == []
    return desired_objects(trainjob, runtime["spec"]).jobset


@pytest.mark.parametrize("example", sorted(CONVERTED))
def test_every_example_converts_or_is_refused(example: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / example
    expected = CONVERTED[example]
    status = main(["convert", "-f", str(path), *TO])
    out, err = capsys.readouterr()
    source = yaml.safe_load(path.read_text())
    if expected is None:
        assert (status, out) == (2, "")
        assert err == (f"error: {path}:1: kind {source['kind']!r} (apiVersion "
                       f"'kubeflow.org/v1') has no conversion to trainer.kubeflow.org/v1alpha1 "
                       "(PyTorchJob, XGBoostJob, JAXJob and MPIJob have)\n")
        return
    kinds, nodes, warnings = expected
    objects = list(yaml.safe_load_all(out))
    assert status == 0
    assert [o["kind"] for o in objects] == kinds
    lines = [f"warning: {path}:{w}" for w in warnings]
    if source["kind"] in NOTES:
        meta = source["metadata"]
        name = f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]
        lines.append(f"note: {source['kind']} {name}: {NOTES[source['kind']]}")
    assert err.splitlines() == lines
    assert objects[-1]["spec"]["trainer"]["numNodes"] == nodes
    jobset = jobset_of(objects)
    pods = {r["name"]: r["template"]["spec"]["parallelism"]
            for r in jobset["spec"]["replicatedJobs"]}
    if source["kind"] == "MPIJob":
        assert pods == {"node": nodes, "launcher": 1}
    else:
        assert pods == {"node": nodes}


def test_strict_refuses_a_lossy_conversion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", "-f", str(EXAMPLES / "pi.yaml"), *TO, "--strict"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"error: {EXAMPLES / 'pi.yaml'}:11: MPIJob pi: {CLEAN}\n"
    assert main(["convert", "-f", str(EXAMPLES / "pytorch-simple.yaml"), *TO,
                 "--strict"]) == 0
    assert main(["convert", "-f", str(EXAMPLES / "pi.yaml"), "--to", "v1", "--strict"]) == 2
    assert capsys.readouterr().err.endswith(
        "error: --strict goes with --to trainer.kubeflow.org/v1alpha1\n")


def pytorchjob(**spec: Any) -> dict[str, Any]:
    replica = {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {
        "containers": [{"name": "pytorch", "image": "img", "command": ["torchrun", "t.py"],
                        "env": [{"name": "A", "value": "1"}],
                        "resources": {"limits": {"cpu": "1"}}}]}}}
    worker = {**replica, "replicas": 3}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "pt", "namespace": "ns",
                         "labels": {"kueue.x-k8s.io/queue-name": "q"}},
            "spec": {"pytorchReplicaSpecs": {"Master": replica, "Worker": worker}, **spec}}


def test_a_plain_pytorchjob_runs_on_torch_distributed() -> None:
    converted = to_trainer(pytorchjob(nprocPerNode="2", runPolicy={
        "suspend": True, "activeDeadlineSeconds": 60,
        "managedBy": "kubeflow.org/training-operator"}))
    assert converted.losses == []
    assert converted.objects == [{
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "pt", "namespace": "ns",
                     "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {"runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"},
                 "trainer": {"numNodes": 4, "numProcPerNode": 2, "image": "img",
                             "command": ["torchrun", "t.py"],
                             "env": [{"name": "A", "value": "1"}],
                             "resourcesPerNode": {"limits": {"cpu": "1"}}},
                 "suspend": True, "activeDeadlineSeconds": 60}}]
    node = jobset_of(converted.objects)["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert node["parallelism"] == 4
    container = node["template"]["spec"]["containers"][0]
    assert (container["image"], container["command"]) == ("img", ["torchrun", "t.py"])


def test_what_a_runtime_carries_and_what_is_lost() -> None:
    job = pytorchjob(elasticPolicy={"minReplicas": 1}, nprocPerNode="auto", runPolicy={
        "ttlSecondsAfterFinished": 30, "backoffLimit": 2, "cleanPodPolicy": "All",
        "schedulingPolicy": {"minAvailable": 2}, "managedBy": "kueue.x-k8s.io/multikueue"})
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    converted = to_trainer(job)
    assert converted.losses == [
        Loss("spec.pytorchReplicaSpecs.Worker.restartPolicy",
             "'ExitCode': no retry of exit codes 128-255 (the pods restart Never, as the v1 "
             "pods did)"),
    Loss("spec.pytorchReplicaSpecs.Worker.template",
         "differs from the Master's: every node runs the Master's template"),
        Loss("spec.nprocPerNode", "'auto': numProcPerNode is a number here"),
        Loss("spec.elasticPolicy", "no equivalent (Trainer v2.3.0 has no elastic training)"),
        Loss("spec.runPolicy.cleanPodPolicy",
             "'All': no equivalent (a finished JobSet's pods are left to its Jobs)"),
        Loss("spec.runPolicy.schedulingPolicy",
             "no equivalent in the TrainJob (gang scheduling is the runtime's podGroupPolicy)"),
    ]
    runtime, trainjob = converted.objects
    assert trainjob["spec"] == {"runtimeRef": {"name": "pt", "kind": "TrainingRuntime"},
                                "trainer": {"numNodes": 4},
                                "managedBy": "kueue.x-k8s.io/multikueue"}
    template = runtime["spec"]["template"]["spec"]
    assert template["ttlSecondsAfterFinished"] == 30
    node = template["replicatedJobs"][0]
    assert node["template"]["spec"]["backoffLimit"] == 2
    assert node["template"]["metadata"]["labels"] == {
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
    assert node["template"]["spec"]["template"]["spec"]["containers"][0]["name"] == "node"


def test_an_mpijob_becomes_an_mpi_runtime() -> None:
    pod = {"spec": {"containers": [{"name": "c", "image": "i"}]}}
    converted = to_trainer({
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m"},
        "spec": {"slotsPerWorker": 4, "runLauncherAsWorker": True,
                 "launcherCreationPolicy": "WaitForWorkersReady",
                 "runPolicy": {"backoffLimit": 3},
                 "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": pod},
                                     "Worker": {"replicas": 3, "restartPolicy": "Always",
                                                "template": pod}}}})
    assert converted.losses == [Loss("spec.mpiReplicaSpecs.Worker.restartPolicy",
                                     "'Always': a Job's pods restart OnFailure or Never "
                                     "(OnFailure is used)")]
    runtime, trainjob = converted.objects
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 1, "mpi": {
        "numProcPerNode": 4, "mpiImplementation": "OpenMPI", "sshAuthMountPath": "/root/.ssh",
        "runLauncherAsNode": True}}
    node, launcher = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert node["template"]["spec"]["parallelism"] == 3
    assert launcher["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert launcher["template"]["spec"]["backoffLimit"] == 3
    assert trainjob["spec"]["trainer"] == {"numNodes": 4}
    jobset = jobset_of(converted.objects)
    assert [r["template"]["spec"]["parallelism"] for r in jobset["spec"]["replicatedJobs"]] \
        == [3, 1]


def test_another_kind_is_not_convertible() -> None:
    with pytest.raises(NotConvertible, match="kind 'TFJob'"):
        to_trainer({"apiVersion": "kubeflow.org/v1", "kind": "TFJob"})
    with pytest.raises(NotConvertible, match="needs its conversion to v2beta1"):
        to_trainer({"apiVersion": "kubeflow.org/v1", "kind": "MPIJob"})


def test_a_plain_jaxjob_runs_on_jax_distributed() -> None:
    converted = to_trainer({
        "apiVersion": "kubeflow.org/v1", "kind": "JAXJob", "metadata": {"name": "j"},
        "spec": {"jaxReplicaSpecs": {"Worker": {
            "replicas": 3, "restartPolicy": "OnFailure",
            "template": {"spec": {"containers": [{"name": "jax", "image": "img",
                                                  "command": ["python3", "train.py"]}]}}}}}})
    assert (converted.losses, converted.notes) == ([], (JAX_ENV_NOTE,))
    assert converted.objects == [{
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "j"},
        "spec": {"runtimeRef": {"name": "jax-distributed", "kind": "ClusterTrainingRuntime"},
                 "trainer": {"numNodes": 3, "image": "img",
                             "command": ["python3", "train.py"]}}}]
    node = jobset_of(converted.objects)["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert node["parallelism"] == 3
    assert [e["name"] for e in node["template"]["spec"]["containers"][0]["env"]] == [
        "JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS"]
