"""The ClusterTrainingRuntimes in ``deploy/runtimes/`` (the five Kubeflow Trainer v2.3.0
ships, written here from their documented shape): each is the runtime of its file name, the
kustomization lists them all, and each one's spec and labels are those of Trainer's own
``manifests/base/runtimes/*.yaml`` (fetched with ``go mod download``); a TrainJob on each either
gets its JobSet (the nodes and the policy's environment; for DeepSpeed and MLX, on MPI, the
hostfile of the worker and the launcher).
``tests/integration/test_trainjob.py`` applies them to a real API server with our CRDs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mpi_controller.trainjob import api
from mpi_controller.trainjob.build import desired_jobset, desired_objects
from tests.unit.trainjob.upstream import trainer_dir

REPO = Path(__file__).resolve().parents[3]
RUNTIMES = REPO / "deploy" / "runtimes"
NAMES = ["torch-distributed", "deepspeed-distributed", "mlx-distributed", "jax-distributed",
         "xgboost-distributed"]


def ours(name: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((RUNTIMES / f"{name}.yaml").read_text())
    return document


def test_the_kustomization_lists_the_five() -> None:
    kustomization = yaml.safe_load((RUNTIMES / "kustomization.yaml").read_text())
    assert kustomization["resources"] == [f"{n}.yaml" for n in NAMES]
    assert sorted(p.name for p in RUNTIMES.glob("*.yaml")) == sorted(
        [f"{n}.yaml" for n in NAMES] + ["kustomization.yaml"])


@pytest.mark.parametrize("name", NAMES)
def test_each_is_trainers_runtime(name: str) -> None:
    document = ours(name)
    upstream = yaml.safe_load(
        (trainer_dir() / "manifests" / "base" / "runtimes" /
         f"{name.replace('-', '_')}.yaml").read_text())
    assert (document["apiVersion"], document["kind"], document["metadata"]["name"]) == (
        "trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", name)
    assert document["metadata"] == upstream["metadata"]
    assert document["spec"] == upstream["spec"]


@pytest.mark.parametrize("name", NAMES)
def test_a_trainjob_on_each(name: str) -> None:
    spec = ours(name)["spec"]
    job = api.set_defaults({"metadata": {"name": "tj", "namespace": "ns", "uid": "u"},
                            "spec": {"runtimeRef": {"name": name},
                                     "trainer": {"numNodes": 2}}})
    assert api.validate(job, spec) == []
    policy = next(k for k in ("torch", "mpi", "jax", "xgboost") if k in spec["mlPolicy"])
    if policy == "mpi":
        hostfile = desired_objects(job, spec).hostfile
        assert hostfile is not None
        assert hostfile["data"]["hostfile"] == ("tj-node-0-0.tj slots=1\n"
                                                "tj-launcher-0-0.tj slots=1\n")
        return
    jobset = desired_jobset(job, spec)
    node = jobset["spec"]["replicatedJobs"][0]
    assert node["template"]["spec"]["parallelism"] == 2
    env = node["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    nodes = {"torch": "PET_NNODES", "jax": "JAX_NUM_PROCESSES", "xgboost": "DMLC_NUM_WORKER"}
    assert {"name": nodes[policy], "value": "2"} in env
