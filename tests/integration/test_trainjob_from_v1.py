"""``mpi-controller convert --to trainer.kubeflow.org/v1alpha1`` round trip on a cluster: the
TrainingRuntime and TrainJob converted from ``examples/pytorch-simple.yaml`` (a PyTorchJob),
``examples/pi.yaml`` (an MPIJob) and ``examples/jax/demo.yaml`` (a JAXJob) pass the API server's
validation of our CRDs and, run by our controller and the real JobSet controller (the ``jobset``
addon; pods on KWOK nodes), reach ``Complete``; the JobSet has the v1 job's nodes (2 for the
PyTorchJob's Master and Worker; the MPIJob's 2 workers and its launcher; the JAXJob's 2 workers)
and containers.

Run on a cluster with the JobSet addon (``make addons-test``); skipped, saying so, otherwise.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import yaml

from tests.addons import Addons
from tests.integration.test_trainjob import (  # noqa: F401 (fixtures)
    GROUP,
    VERSION,
    addons,
    condition,
    controller,
    jobset,
    namespace,
)
from tests.support import REPO, wait_for

pytestmark = pytest.mark.cluster


def converted(example: str) -> list[dict[str, Any]]:
    done = subprocess.run([sys.executable, "-m", "mpi_controller", "convert", "-f",
                           str(REPO / "examples" / example), "--to", f"{GROUP}/{VERSION}"],
                          capture_output=True, text=True, check=True, cwd=REPO, timeout=60)
    return list(yaml.safe_load_all(done.stdout))


@pytest.mark.parametrize(("example", "nodes", "image"), [
    ("pytorch-simple.yaml", {"node": 2}, "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"),
    ("pi.yaml", {"node": 2, "launcher": 1}, "mpioperator/mpi-pi:openmpi"),
    ("jax/demo.yaml", {"node": 2}, "ghcr.io/kubeflow/training-v1/jaxjob-simple:latest"),
])
def test_a_converted_job_completes(
        addons: Addons,  # noqa: F811
        controller: None,  # noqa: F811
        namespace: str,  # noqa: F811
        example: str, nodes: dict[str, int], image: str) -> None:
    runtime, trainjob = converted(example)
    for obj in (runtime, trainjob):
        obj["metadata"]["namespace"] = namespace
    addons.custom.create_namespaced_custom_object(GROUP, VERSION, namespace,
                                                  "trainingruntimes", runtime)
    addons.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "trainjobs",
                                                  trainjob)
    name = trainjob["metadata"]["name"]
    complete = wait_for(lambda: condition(addons, namespace, name, "Complete"), timeout=120,
                        what=f"the TrainJob converted from {example} Complete")
    assert (complete["status"], complete["reason"]) == ("True", "AllJobsCompleted")
    made = jobset(addons, namespace, name)
    assert made is not None
    jobs = made["spec"]["replicatedJobs"]
    assert {r["name"]: r["template"]["spec"]["parallelism"] for r in jobs} == nodes
    containers = [r["template"]["spec"]["template"]["spec"]["containers"][0] for r in jobs]
    assert [(c["name"], c["image"]) for c in containers] == [("node", image)] * len(jobs)
