"""bench/training.py and the harness's side-by-side table (pure): the training-operator
workload's jobs, its lower bounds, and each reference operator's column."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.mpijobs import small_job
from tests.support import REPO

sys.path.insert(0, str(Path(REPO) / "bench"))
import harness  # bench/harness.py
import training  # bench/training.py


def test_a_tfjob_of_the_workload_and_its_bounds() -> None:
    job = training.TFJOB.job("job-0001", "10s")
    assert job["apiVersion"] == "kubeflow.org/v1"
    assert job["kind"] == "TFJob"
    assert job["metadata"] == {"name": "job-0001"}
    specs = job["spec"]["tfReplicaSpecs"]
    assert {t: s["replicas"] for t, s in specs.items()} == {"PS": 2, "Worker": 4}
    for spec in specs.values():
        assert spec["restartPolicy"] == "Never"
        assert spec["template"] == {
            "metadata": {"annotations": {"sim.mpi-controller.io/duration": "10s"}},
            "spec": {"containers": [{"name": "tensorflow",
                                     "image": "kubeflow/tf-dist-mnist-test:1.0"}]}}
    # 6 pods and 6 Services created, Created + Running + Succeeded written, nothing deleted
    assert training.TFJOB.min_writes == 15
    assert training.children_needed(job) == 12


def test_a_pytorchjob_of_the_workload_and_its_bounds() -> None:
    job = training.PYTORCHJOB.job("job-0001", "10s")
    assert job["kind"] == "PyTorchJob"
    specs = job["spec"]["pytorchReplicaSpecs"]
    assert {t: s["replicas"] for t, s in specs.items()} == {"Master": 1, "Worker": 4}
    assert set(job["spec"]) == {"pytorchReplicaSpecs"}
    assert specs["Worker"]["template"]["spec"]["containers"] == [
        {"name": "pytorch", "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"}]
    # 5 pods and 5 Services created, Created + Running + Succeeded written
    assert training.PYTORCHJOB.min_writes == 13
    assert training.children_needed(job) == 10
    assert training.PYTORCHJOB.scheme == "pytorchjob"


def test_an_elastic_pytorchjob_has_its_hpa_in_the_bounds() -> None:
    kind = training.PYTORCHJOB_ELASTIC
    job = kind.job("job-0001", "10s")
    assert job["spec"]["elasticPolicy"] == {
        "minReplicas": 1, "maxReplicas": 8, "rdzvBackend": "c10d",
        "metrics": [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]}
    assert list(job["spec"]["pytorchReplicaSpecs"]) == ["Worker"]
    # 4 pods, 4 Services and the HPA created, three status writes
    assert kind.min_writes == 12
    assert training.children_needed(job) == 8
    assert kind.scheme == "pytorchjob"
    assert "horizontalpodautoscalers" in harness.CHILD_RESOURCES
    job["spec"]["elasticPolicy"]["minReplicas"] = 3  # each job has its own copy
    assert kind.job("job-0002", "10s")["spec"]["elasticPolicy"]["minReplicas"] == 1


def test_children_needed_of_an_mpijob_counts_launcher_service_configmap_and_secret() -> None:
    assert training.children_needed(small_job("pi", workers=3, launcher_runs="1s")) == 7


def _result(operator: str, cpu: float, writes: float) -> dict[str, Any]:
    return {"controller_cpu_ms_per_job": cpu, "flags": ["--kube-api-qps", "100", operator],
            "api_requests": {"child_and_status_writes_per_job": writes},
            "environment": {"scale": 1.0, "date": f"{operator}-date"}}


def test_side_by_side_with_training_operator_has_its_own_column() -> None:
    table = harness.side_by_side({"tfjob": _result("ours", 20.0, 16.0)},
                                 {"tfjob": _result("theirs", 40.0, 30.0)},
                                 harness.REFERENCES["training-operator"])
    lines = table.splitlines()
    assert lines[0] == ("| workload | figure | ours | training-operator v1.9.2 | "
                        "ours / training-operator | at or ahead |")
    assert "| tfjob | controller CPU per job lifecycle (ms) | 20 | 40 | 0.50 | yes |" in lines
    assert "| tfjob | writes per job (children + status) | 16 | 30 | 0.53 | yes |" in lines
    assert not [line for line in lines if line.startswith("| burst")]
    assert "tfjob at scale 1.0: ours ours-date, training-operator theirs-date" in table


def test_each_workload_has_one_reference_operator() -> None:
    assert harness.REFERENCE_OF == {"burst": "go", "steady": "go", "wide": "go",
                                    "arrival": "go", "tfjob": "training-operator",
                                    "pytorchjob": "training-operator",
                                    "pytorchjob-elastic": "training-operator",
                                    "xgboostjob": "training-operator",
                                    "paddlejob": "training-operator",
                                    "jaxjob": "training-operator", "trainjob": "trainer"}


def test_every_training_kind_of_the_registry_has_a_workload() -> None:
    """The bench's job shapes name each kind as its plugin does (kind, plural, replica specs
    field), and every kubeflow.org/v1 kind the controller serves has one."""
    from mpi_controller.kinds import plugins

    served = {p.scheme: p for p in plugins() if p.api_versions == ("v1",)}
    assert {k.scheme for k in training.KINDS.values()} == set(served)
    for kind in training.KINDS.values():
        described = served[kind.scheme]
        assert (kind.kind, kind.plural, kind.replica_specs) == (
            described.kind, described.plural, described.replica_specs)


def test_a_trainjob_of_the_workload_its_runtime_and_its_bounds() -> None:
    kind = training.TRAINJOB
    job = kind.job("job-0001")
    assert job == {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                   "metadata": {"name": "job-0001"},
                   "spec": {"runtimeRef": {"name": "torch-kwok", "kind": "TrainingRuntime",
                                           "apiGroup": "trainer.kubeflow.org"},
                            "trainer": {"numNodes": 2}}}
    # the JobSet and the runtime snapshot created, Complete written
    assert kind.min_writes == 3
    assert training.children_needed(job) == 1
    assert kind.scheme == "trainjob"
    assert {"jobsets", "configmaps", "trainjobs"} <= set(harness.CHILD_RESOURCES)
    assert harness.JOB_KINDS["trainjobs"] == "TrainJob"
    assert "Complete" in harness.SUCCESS


def test_the_trainjob_runtime_is_a_namespaced_torch_distributed_whose_pods_end() -> None:
    import yaml

    shipped = yaml.safe_load(Path(REPO, "deploy/runtimes/torch-distributed.yaml").read_text())
    runtime = training.TRAINJOB.runtime(shipped, "10s")
    assert runtime["kind"] == "TrainingRuntime"
    assert runtime["metadata"] == {"name": "torch-kwok",
                                   "labels": {"trainer.kubeflow.org/framework": "torch"}}
    assert runtime["spec"]["mlPolicy"] == shipped["spec"]["mlPolicy"]
    [node] = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    pod = node["template"]["spec"]["template"]
    assert pod["metadata"] == {"annotations": {"sim.mpi-controller.io/duration": "10s"}}
    assert pod["spec"] == shipped["spec"]["template"]["spec"]["replicatedJobs"][0][
        "template"]["spec"]["template"]["spec"]
    assert node["template"]["metadata"] == {
        "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}}
    assert "metadata" not in shipped["spec"]["template"]["spec"]["replicatedJobs"][0][
        "template"]["spec"]["template"]  # the shipped runtime is left alone


def test_side_by_side_with_trainer_has_the_trainjob_rows() -> None:
    table = harness.side_by_side({"trainjob": _result("ours", 50.0, 6.5)},
                                 {"trainjob": _result("theirs", 70.0, 8.0)},
                                 harness.REFERENCES["trainer"])
    lines = table.splitlines()
    assert lines[0] == ("| workload | figure | ours | Kubeflow Trainer v2.3.0 | "
                        "ours / Kubeflow Trainer | at or ahead |")
    assert "| trainjob | controller CPU per job lifecycle (ms) | 50 | 70 | 0.71 | yes |" in lines
    assert ("| trainjob | writes per job (JobSet + TrainJob status) | 6.5 | 8 | 0.81 | yes |"
            in lines)


def test_the_trainer_process_is_ready_when_its_trainjob_controller_starts_workers() -> None:
    from conformance import trainer

    started = ('{"level":"info","msg":"Starting workers","controller":"trainjob_controller",'
               '"worker count":16}')
    other = '{"level":"info","msg":"Starting workers","controller":"trainingruntime_controller"}'
    assert trainer.is_ready(f"x\n{started}\n")
    assert not trainer.is_ready(f"{other}\n")
