"""The Kubeflow guides' training jobs, really training on the real node.

Each test creates one of the guides' manifests as ``examples/`` has it, changed only where a
local cluster without a registry must change it (:func:`guide`): the image names (images built
here by hack/images recipes, the frameworks from PyPI, the programs written in this repository,
training on generated MNIST-shaped data), ``imagePullPolicy: Always`` (nothing to pull a local
image from) and the node selector and toleration that put the pods on the real node. The
deployed controller runs the job; the test asserts the job Succeeded and what the programs
themselves printed (hack/images/*/ say what each line means):

* ``examples/pytorch-simple.yaml`` (PyTorchJob, Master + Worker): ``mnist.py`` joins a gloo
  process group from ``MASTER_ADDR``/``MASTER_PORT``/``WORLD_SIZE``/``RANK`` and trains with
  ``DistributedDataParallel``; the loss falls and both ranks end with the same parameters.
* ``examples/tensorflow-dist-mnist.yaml`` (TFJob, 2 PS + 4 workers), with
  ``runPolicy.cleanPodPolicy: Running`` added (the manifest leaves the default, ``None``, which
  would leave the parameter servers running): ``tf-dist-mnist`` starts TensorFlow's servers from
  ``TF_CONFIG``; the parameter servers serve until the job ends, the workers train
  asynchronously (between-graph) until the shared global step reaches 400 and exit 0; the job
  Succeeds and the parameter servers are deleted. The chief's (worker 0's) last line holds the
  global step, which must equal the sum of the workers' own steps.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.real.conftest import RealNode
from e2e.real.test_frameworks import logs, on_real_node, run
from mpi_controller.kinds import plugin
from tests.support import REPO, Cluster
from tests.trainingjobs import TrainingJobs

pytestmark = pytest.mark.cluster

EXAMPLES = REPO / "examples"
TORCH_PORT = 23456  # PyTorchJob's default port (training-operator v1.9)
STEP = re.compile(r"^Train Epoch: 1 \[(\d+)/(\d+)\] step (\d+) loss=(\d+\.\d+)$")
MEAN = re.compile(r"^epoch 1: mean loss (\d+\.\d+) -> (\d+\.\d+)$")
SYNCED = re.compile(r"^parameters ([0-9a-f]{16}) identical on (\d+) ranks$")
TF_PORT = 2222  # TFJob's default port
TF_STEPS = 400  # hack/images/tensorflow/dist_mnist.py's default --steps
WORKER_DONE = re.compile(r"^worker (\d) done: (\d+) local steps, loss (\d+\.\d+) -> (\d+\.\d+)$")
GLOBAL_STEP = re.compile(r"^global step (\d+) after (\d+) workers finished$")


def guide(path: Path, node: RealNode, images: dict[str, str]) -> dict[str, Any]:
    """The manifest at ``path`` as a test creates it: no namespace (the test's), every
    container image replaced by ``images[old]``, no ``imagePullPolicy`` (IfNotPresent: the
    image is in the node's containerd already), no simulation annotations, and each pod placed
    on the real node."""
    body: dict[str, Any] = copy.deepcopy(yaml.safe_load(path.read_text()))
    body["metadata"].pop("namespace", None)
    specs = next(v for k, v in body["spec"].items() if k.endswith("ReplicaSpecs"))
    for spec in specs.values():
        template = spec["template"]
        annotations = template.get("metadata", {}).get("annotations", {})
        for key in [k for k in annotations if k.startswith("sim.")]:
            del annotations[key]
        for container in template["spec"]["containers"]:
            container["image"] = images[container["image"]]
            container.pop("imagePullPolicy", None)
        node.place(template["spec"])
    return body


def test_pytorch_simple_trains_with_ddp_across_master_and_worker(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    jobs = TrainingJobs(kube_api, namespace, plugin("pytorchjob"))
    body = guide(EXAMPLES / "pytorch-simple.yaml", real_node, {
        "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727": real_node.image("torch")})
    pods = run(cluster, jobs, body, "pytorch", 2)

    ranks = {"pytorch-simple-master-0": 0, "pytorch-simple-worker-0": 1}
    assert sorted(pods) == sorted(ranks)
    on_real_node(pods, real_node)
    digests = set()
    for pod, rank in ranks.items():
        lines = logs(cluster, namespace, pod, "pytorch")
        expected = [f"rank {rank} of 2: master pytorch-simple-master-0:{TORCH_PORT}",
                    f"joined: backend gloo, rank {rank}, world size 2"]
        assert [line for line in lines if line in expected] == expected, lines
        steps = [m for m in map(STEP.match, lines) if m]
        # 4096 images, 2048 per rank, batches of 32: 64 steps, logged every 10 and the last.
        assert [int(m[3]) for m in steps] == [10, 20, 30, 40, 50, 60, 64], lines
        assert steps[-1][1] == steps[-1][2] == "2048", lines
        [mean] = [m for m in map(MEAN.match, lines) if m]
        assert float(mean[2]) < float(mean[1]) * 0.9, lines  # the loss fell
        assert float(steps[-1][4]) < float(steps[0][4]), lines
        [synced] = [m for m in map(SYNCED.match, lines) if m]
        assert synced[2] == "2", lines
        digests.add(synced[1])
    # DDP all-reduced every step's gradients: both replicas ended with the same weights.
    assert len(digests) == 1, digests


def test_tensorflow_dist_mnist_trains_on_parameter_servers_with_four_workers(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    jobs = TrainingJobs(kube_api, namespace, plugin("tfjob"))
    body = guide(EXAMPLES / "tensorflow-dist-mnist.yaml", real_node, {
        "kubeflow/tf-dist-mnist-test:1.0": real_node.image("tensorflow")})
    body["spec"]["runPolicy"] = {"cleanPodPolicy": "Running"}
    name = body["metadata"]["name"]
    # Succeeded once worker 0 (the chief) exits; then the parameter servers, still serving, are
    # deleted: what is left is the four workers, Succeeded.
    pods = run(cluster, jobs, body, "tensorflow", 4)

    workers = {f"{name}-worker-{i}": i for i in range(4)}
    assert sorted(pods) == sorted(workers)
    on_real_node(pods, real_node)
    local_steps = {}
    for pod, index in workers.items():
        lines = logs(cluster, namespace, pod, "tensorflow")
        assert lines[0] == f"worker {index} of 4: cluster 2 ps, 4 workers", lines
        started = f"server started at {pod}.{namespace}.svc:{TF_PORT}"
        assert any(line.startswith(started) for line in lines), lines
        [done] = [m for m in map(WORKER_DONE.match, lines) if m]
        assert int(done[1]) == index, lines
        assert float(done[4]) < float(done[3]), lines  # this worker's loss fell
        local_steps[index] = int(done[2])
    chief = logs(cluster, namespace, f"{name}-worker-0", "tensorflow")
    [final] = [m for m in map(GLOBAL_STEP.match, chief) if m]
    assert final[2] == "4", chief
    # Every step of every worker added one to the global step on the parameter servers.
    assert int(final[1]) == sum(local_steps.values()) >= TF_STEPS, (final[0], local_steps)
    assert all(steps > 0 for steps in local_steps.values()), local_steps
