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
* An elastic PyTorchJob (no guide manifest: upstream's elastic echo example with the
  ``elastic.py`` trainer, ``nprocPerNode: "1"``, workers 2 to 3, c10d): ``python3 -m
  torch.distributed.run`` takes its rendezvous from the controller's ``PET_*`` variables; the
  test scales the workers 2 -> 3 -> 2 while it trains and each change starts a new rendezvous
  round (torchrun's own ``Rendezvous complete`` lines, the trainer's ``round:`` lines with the
  new world size, resuming at the step the job had reached); then it asks the trainer to stop
  (``/tmp/stop`` in worker 0) and the job Succeeds.
* ``examples/v1alpha2/tensorflow-benchmarks.yaml`` (MPIJob ``v1alpha2``, 2 workers), without the
  workers' ``nvidia.com/gpu`` limit (no GPU here): the v0.2.3-style launcher Job runs the
  manifest's ``mpirun`` (Open MPI, ``kubexec.sh``) and the ``horovod`` image's
  ``tf_cnn_benchmarks.py`` (TensorFlow 2.12 and Horovod 0.28.1 built here from its sdist)
  trains ResNet-101 on synthetic data on both ranks; each rank's images/sec and the total are in
  the launcher's log.
* ``examples/v1/tensorflow-mnist-elastic.yaml`` (MPIJob ``v1``, training-operator's elastic
  Horovod example), without its CPU and memory limits (more CPUs than the node has): the
  launcher's ``horovodrun`` finds the workers through ``/etc/mpi/discover_hosts.sh`` and starts
  the ranks through ``/etc/mpi/kubexec.sh`` (Horovod's own Kubeflow mode); the test scales the
  workers 2 -> 3 -> 2 while ``tensorflow2_mnist_elastic.py`` trains, and rank 0's log shows each
  world size, the ranks re-forming at the committed step, with one launcher never restarted;
  ``/tmp/stop`` in the workers ends it and the job Succeeds.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.real.conftest import RealNode
from e2e.real.test_frameworks import logs, on_real_node, pod_report, run
from e2e.real.test_mpi_v1 import V1_ROLE, V1MPIJobs
from mpi_controller.kinds import plugin
from tests.mpijobs import MPIJobs
from tests.support import REPO, Cluster, WaitTimeout, wait_for
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
ROUND = re.compile(r"^round: rank (\d+) of (\d+), restart (\d+), resumed at step (\d+) from")
TRAINING = re.compile(r"^step (\d+) world (\d+) loss=(\d+\.\d+)$")
STOPPED = re.compile(r"^stopped at step (\d+): world (\d+), loss (\d+\.\d+) -> (\d+\.\d+)$")
BENCH_RATE = re.compile(r"^rank (\d) images/sec: (\d+\.\d+)$")
BENCH_STEP = re.compile(r"^Step (\d+) (\d) images/sec: (\d+\.\d+)$")
BENCH_TOTAL = re.compile(r"^total images/sec: (\d+\.\d+)$")
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


def worlds(lines: list[str]) -> list[int]:
    """The world sizes the trainer trained in, in order, repeats collapsed."""
    out: list[int] = []
    for m in map(TRAINING.match, lines):
        if m and (not out or out[-1] != int(m[2])):
            out.append(int(m[2]))
    return out


def test_elastic_pytorchjob_trains_through_rendezvous_rounds_as_workers_scale(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    jobs = TrainingJobs(kube_api, namespace, plugin("pytorchjob"))
    name = "elastic-mnist"
    container = {"name": "pytorch", "image": real_node.image("torch"),
                 "command": ["python3", "-m", "torch.distributed.run",
                             "/opt/pytorch-mnist/elastic.py"],
                 "env": [{"name": "LOGLEVEL", "value": "INFO"},
                         # torch 2.15's shared TCPStore: an agent that joins a running job waits
                         # for MASTER_ADDR under the new round's prefix, which rank 0 (already
                         # serving) never writes again; the agents deadlock in
                         # _assign_worker_ranks ("DistStoreError: wait timeout after 60000ms,
                         # keys: /torch.rendezvous.none.1/MASTER_ADDR"). Without sharing, rank
                         # 0 publishes it every round.
                         {"name": "TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "value": "1"}]}
    jobs.create({
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": name},
        "spec": {
            "nprocPerNode": "1",  # "auto" would start one process per CPU of the machine
            "elasticPolicy": {"rdzvBackend": "c10d", "minReplicas": 2, "maxReplicas": 3,
                              "maxRestarts": 100,
                              # close a round 5 s after the last join, not 30
                              "rdzvConf": [{"key": "last_call_timeout", "value": "5"}]},
            "pytorchReplicaSpecs": {"Worker": {
                "replicas": 2, "restartPolicy": "OnFailure",
                "template": {"spec": real_node.place({"containers": [container]})}}}}})
    worker0 = f"{name}-worker-0"

    def log() -> list[str]:
        return cluster.kubectl("-n", namespace, "logs", worker0, "-c", "pytorch",
                               check=False).splitlines()

    def trained_in(*sizes: int) -> bool:
        return worlds(log())[:len(sizes)] == list(sizes)

    def scale(replicas: int) -> None:
        cluster.kubectl("-n", namespace, "patch", "pytorchjob", name, "--type", "merge", "-p",
                        json.dumps({"spec": {"pytorchReplicaSpecs": {"Worker": {
                            "replicas": replicas}}}}))

    def waited(sizes: tuple[int, ...], what: str) -> None:
        try:
            wait_for(lambda: trained_in(*sizes), timeout=300, interval=2, what=what)
        except WaitTimeout as err:  # every pod's log is the message
            pytest.fail(f"{err}\n" + "\n".join(pod_report(cluster, namespace, pod, "pytorch")
                                                for pod in jobs.pods(name)))

    waited((2,), "training in a world of 2")
    scale(3)
    waited((2, 3), "training in a world of 3")
    scale(2)
    waited((2, 3, 2), "training in a world of 2 again")
    cluster.kubectl("-n", namespace, "exec", worker0, "-c", "pytorch", "--", "touch",
                    "/tmp/stop")

    def finished() -> str | None:
        for c in (jobs.get(name).get("status") or {}).get("conditions") or []:
            if c["type"] in ("Succeeded", "Failed") and c["status"] == "True":
                return str(c["type"])
        return None

    outcome = wait_for(finished, timeout=180, interval=2, what=f"PyTorchJob {name} to finish")
    lines = logs(cluster, namespace, worker0, "pytorch")
    assert outcome == "Succeeded", lines[-40:]
    # torchrun's own log: a rendezvous round per membership, with the world of each.
    sizes = [int(line.rsplit("=", 1)[1]) for line in lines if "group_world_size=" in line]
    assert [n for i, n in enumerate(sizes) if i == 0 or sizes[i - 1] != n] == [2, 3, 2], sizes
    # The trainer: one "round:" line per round, each resuming where the job was.
    rounds = [m for m in map(ROUND.match, lines) if m]
    assert [int(m[2]) for m in rounds][:1] == [2], lines
    assert 3 in [int(m[2]) for m in rounds], lines
    resumed = [int(m[4]) for m in rounds]
    assert resumed == sorted(resumed), resumed
    assert resumed[0] == 0, resumed
    assert resumed[-1] > 0, resumed
    assert worlds(lines) == [2, 3, 2], worlds(lines)
    [stopped] = [m for m in map(STOPPED.match, lines) if m]
    assert stopped[2] == "2", stopped[0]
    assert float(stopped[4]) < float(stopped[3]), stopped[0]


class V1Alpha2MPIJobs(MPIJobs):
    """MPIJobs read and written through ``kubeflow.org/v1alpha2``."""

    version = "v1alpha2"


# Two ResNet-101 ranks on 2 shared CPUs: 8 to 10 minutes under a load average of 14 (the
# suite's 600 s per test is too short for it).
@pytest.mark.timeout(1800)
def test_tensorflow_benchmarks_v1alpha2_runs_horovod_under_mpirun(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    body = guide(EXAMPLES / "v1alpha2" / "tensorflow-benchmarks.yaml", real_node, {
        "mpioperator/tensorflow-benchmarks:latest": real_node.image("horovod")})
    worker = body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    del worker["resources"]  # only `limits: {nvidia.com/gpu: 1}`: this node has no GPU
    name = body["metadata"]["name"]
    jobs = V1Alpha2MPIJobs(kube_api, namespace)
    jobs.create(body)
    try:
        jobs.wait_condition(name, "Succeeded", timeout=1500)
    finally:
        lines = cluster.kubectl("-n", namespace, "logs", f"job/{name}-launcher", "-c",
                                "tensorflow-benchmarks", check=False).splitlines()
        print(f"--- {name}-launcher:\n" + "\n".join(lines))
        print(cluster.kubectl("-n", namespace, "get", "pods,jobs,events", "-o", "wide",
                              check=False))

    for rank in (0, 1):
        assert (f"rank {rank} of 2: horovod 0.28.1, mpi True, model resnet101, batch 64, "
                "image 32") in lines, lines
        steps = [m for m in map(BENCH_STEP.match, lines) if m and m[2] == str(rank)]
        assert [int(m[1]) for m in steps] == [1, 2, 3], lines
    rates = {int(m[1]): float(m[2]) for m in map(BENCH_RATE.match, lines) if m}
    assert sorted(rates) == [0, 1], lines
    assert all(rate > 0 for rate in rates.values()), rates
    [total] = [float(m[1]) for m in map(BENCH_TOTAL.match, lines) if m]
    # rank 0 prints the allreduce (Horovod over MPI) of the two ranks' rates
    assert abs(total - sum(rates.values())) < 0.02, (total, rates)


HVD_ROUND = re.compile(r"^\[\d+\]<stdout>:round: rank (\d+) of (\d+), resumed at step (\d+)$")
HVD_STEP = re.compile(r"^\[\d+\]<stdout>:step (\d+) world (\d+) loss=(\d+\.\d+)$")
HVD_STOPPED = re.compile(
    r"^\[\d+\]<stdout>:stopped at step (\d+): world (\d+), loss (\d+\.\d+) -> (\d+\.\d+)$")


def hvd_worlds(lines: list[str]) -> list[int]:
    """The world sizes rank 0 logged training steps in, in order, repeats collapsed."""
    out: list[int] = []
    for m in map(HVD_STEP.match, lines):
        if m and (not out or out[-1] != int(m[2])):
            out.append(int(m[2]))
    return out


def test_elastic_horovod_mpijob_v1_follows_the_workers_as_they_scale(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    body = guide(EXAMPLES / "v1" / "tensorflow-mnist-elastic.yaml", real_node, {
        "horovod/horovod:0.20.0-tf2.3.0-torch1.6.0-mxnet1.5.0-py3.7-cpu":
            real_node.image("horovod")})
    for spec in body["spec"]["mpiReplicaSpecs"].values():
        # cpu 1 + 2 per worker (3 workers at most): more than this 2-CPU node has
        del spec["template"]["spec"]["containers"][0]["resources"]
    name = body["metadata"]["name"]
    jobs = V1MPIJobs(kube_api, namespace)
    jobs.create(body)
    selector = f"training.kubeflow.org/job-name={name},{V1_ROLE}"

    def log() -> list[str]:
        return cluster.kubectl("-n", namespace, "logs", f"{name}-launcher", "-c",
                               "mpi-launcher", check=False).splitlines()

    def scale(replicas: int) -> None:
        cluster.kubectl("-n", namespace, "patch", "mpijob.v1.kubeflow.org", name, "--type",
                        "merge", "-p", json.dumps({"spec": {"mpiReplicaSpecs": {"Worker": {
                            "replicas": replicas}}}}))

    def waited(sizes: list[int], what: str) -> None:
        try:
            wait_for(lambda: hvd_worlds(log())[:len(sizes)] == sizes, timeout=300,
                     interval=3, what=what)
        except WaitTimeout as err:
            pytest.fail(f"{err}\n" + "\n".join(log()[-80:]))

    waited([2], "training in a world of 2")
    scale(3)
    waited([2, 3], "training in a world of 3")
    scale(2)
    waited([2, 3, 2], "training in a world of 2 again")
    workers = [p.metadata.name for p in jobs.pods(f"{selector}=worker")
               if p.status.phase == "Running" and not p.metadata.deletion_timestamp]
    assert sorted(workers) == [f"{name}-worker-0", f"{name}-worker-1"], workers
    for worker in workers:
        cluster.kubectl("-n", namespace, "exec", worker, "--", "touch", "/tmp/stop")
    try:
        jobs.wait_condition(name, "Succeeded", timeout=180)
    finally:
        print(f"--- {name}-launcher:\n" + "\n".join(log()))

    lines = log()
    # One launcher, never restarted: horovodrun itself followed the workers.
    [launcher] = jobs.pods(f"{selector}=launcher")
    assert [c.restart_count for c in launcher.status.container_statuses] == [0]
    assert hvd_worlds(lines) == [2, 3, 2], lines
    # Every (re)formed world: each rank's "round:" line, the world's ranks 0..n-1, resuming
    # where the job was (the committed step never goes back).
    rounds = [m for m in map(HVD_ROUND.match, lines) if m]
    sizes = [int(m[2]) for m in rounds]
    assert sizes[:2] == [2, 2], lines
    assert 3 in sizes, lines
    resumed = [int(m[3]) for m in rounds if m[1] == "0"]
    assert resumed[0] == 0, resumed
    assert resumed[-1] > 0, resumed
    assert resumed == sorted(resumed), resumed
    [stopped] = [m for m in map(HVD_STOPPED.match, lines) if m]
    assert stopped[2] == "2", stopped[0]
    assert float(stopped[4]) < float(stopped[3]) * 0.9, stopped[0]  # the loss fell
    steps = [int(m[1]) for m in map(HVD_STEP.match, lines) if m]
    assert steps == sorted(steps), steps
    assert int(stopped[1]) >= steps[-1], (stopped[0], steps)
