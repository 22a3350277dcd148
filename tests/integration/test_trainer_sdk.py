"""The Kubeflow SDK (``kubeflow`` 0.5.0, the newest on PyPI: its ``TrainerClient``, what Kubeflow
Trainer v2's users train with) against our TrainJob controller and the real JobSet controller
(the local cluster's ``jobset`` addon), pods on KWOK nodes.

``TrainerClient`` lists the five shipped ClusterTrainingRuntimes (each with its framework,
trainer type, entry point and node count as the SDK reads them), ``train()``s a
``CustomTrainer`` function with ``num_nodes=2`` on ``torch-distributed`` (the TrainJob it
creates: the runtime, 2 nodes, torchrun running the function's source), follows it to
``Complete`` with ``wait_for_job_status``, finds its two steps (``node-0``, ``node-1``: the
pods it selects by ``jobset.sigs.k8s.io/jobset-name`` and ``replicatedjob-name``, Succeeded),
lists it (also by runtime), reads its events, deletes it and no longer lists it. Logs are not
read: KWOK's pods run no program, and nothing in the SDK's train, wait and steps needs them.

The SDK needs ``kubernetes<36`` and the project pins 37, so it lives in a virtualenv of its
own, ``.venv-kubeflow`` (``make kubeflow-sdk-venv``, pinned by e2e/sdk/kubeflow-constraints.txt;
made here when missing), and e2e/sdk/trainer_driver.py runs on it against the addons cluster.
Run on a cluster with the JobSet addon (``make addons-test``); skipped, saying so, otherwise.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.addons import Addons
from tests.integration.test_trainjob import addons, controller, namespace  # noqa: F401
from tests.support import REPO, wait_for

pytestmark = pytest.mark.cluster

SDK_PYTHON = REPO / ".venv-kubeflow" / "bin" / "python"
DRIVER = REPO / "e2e" / "sdk" / "trainer_driver.py"


@pytest.fixture(scope="session")
def kubeflow_python() -> str:
    """The SDK's virtualenv, made (or brought up to date) by ``make kubeflow-sdk-venv``."""
    subprocess.run(["make", "--no-print-directory", "-s", "-C", str(REPO),
                    "kubeflow-sdk-venv"], check=True, timeout=900)
    return str(SDK_PYTHON)


def drive(python: str, scenario: dict[str, Any]) -> dict[str, Any]:
    """Run the driver on the SDK's virtualenv; its JSON answer."""
    done = subprocess.run([python, str(DRIVER)], input=json.dumps(scenario),
                          capture_output=True, text=True, timeout=400, check=False)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    assert "error" not in out, (out, done.stderr[-3000:])
    return out


def entry(runner: str, *, mpi: bool = False) -> list[str]:
    """The SDK's entry point for a CustomTrainer on a runtime (its ``constants``): the
    function's source written to a file, run by ``runner``; under ``mpirun`` for MPI."""
    script = ("\nread -r -d '' SCRIPT << EOM\n\n{func_code}\nEOM\nprintf \"%s\" \"$SCRIPT\" > "
              f"\"{{func_file}}\"\n{runner} \"{{func_file}}\"")
    return [*(["mpirun", "--hostfile", "/etc/mpi/hostfile"] if mpi else []), "bash", "-c",
            script]


def runtime(name: str, framework: str, command: list[str], slots: str = "Unknown") \
        -> dict[str, Any]:
    return {"name": name, "kind": "ClusterTrainingRuntime", "framework": framework,
            "trainer_type": "CustomTrainer", "command": command, "num_nodes": 1,
            "device": "Unknown", "device_count": slots}


RUNTIMES = [
    runtime("deepspeed-distributed", "deepspeed", entry("python", mpi=True), "1"),
    runtime("jax-distributed", "jax", entry("python")),
    runtime("mlx-distributed", "mlx", entry("python", mpi=True), "1"),
    runtime("torch-distributed", "torch", entry("torchrun")),
    runtime("xgboost-distributed", "xgboost", entry("python")),
]


def test_the_sdk_trains_on_torch_distributed(
        addons: Addons,  # noqa: F811 (the fixtures of test_trainjob.py)
        controller: None,  # noqa: F811
        namespace: str,  # noqa: F811
        kubeflow_python: str) -> None:
    out = drive(kubeflow_python, {"kubeconfig": str(addons.kubeconfig), "namespace": namespace,
                                  "runtime": "torch-distributed", "num_nodes": 2,
                                  "wait_timeout": 180})
    assert out["runtimes"] == RUNTIMES
    assert out["runtime"] == RUNTIMES[3]
    name = out["sent"]["metadata"]["name"]
    spec = out["sent"]["spec"]
    command = spec["trainer"]["command"]
    assert spec == {"managedBy": "trainer.kubeflow.org/trainjob-controller",
                    "runtimeRef": {"apiGroup": "trainer.kubeflow.org",
                                   "kind": "ClusterTrainingRuntime", "name": "torch-distributed"},
                    "suspend": False, "trainer": {"command": command, "numNodes": 2}}
    assert command[:2] == ["bash", "-c"]
    assert "def train_func(epochs: int) -> None:" in command[2]
    assert "train_func(**{'epochs': 2})" in command[2]
    assert command[2].endswith('torchrun "trainer_driver.py"')
    assert out["waited"] == "Complete"
    steps = out["job"].pop("steps")
    assert out["job"] == {"name": name, "runtime": "torch-distributed", "status": "Complete",
                          "num_nodes": 2}
    for step in steps:
        assert step.pop("pod").startswith(f"{name}-node-0-{step['name'][-1]}-")
    assert steps == [{"name": f"node-{i}", "status": "Succeeded", "device": "Unknown",
                      "device_count": "1"} for i in (0, 1)]
    assert out["jobset"] == [{"name": "node", "parallelism": 2, "command": command}]
    assert (out["listed"], out["listed_on_runtime"], out["listed_after_delete"]) == (
        [name], [name], [])
    wait_for(lambda: not addons.core.list_namespaced_pod(
        namespace, label_selector=f"jobset.sigs.k8s.io/jobset-name={name}").items,
        timeout=60, what=f"the pods of TrainJob {name} collected")
