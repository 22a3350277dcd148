"""XGBoostJob, PaddleJob and JAXJob pods running the real frameworks on the real node.

Each job is run by the deployed controller; its pods run a framework from PyPI (the ``jax``,
``xgboost`` and ``paddle`` images, hack/images) and a program of ours that reads only the
environment the controller gave the pod and starts the framework's own distributed runtime
from it:

* XGBoostJob (Master 1 + Worker 2): the master starts XGBoost's tracker on ``MASTER_PORT``;
  every pod joins XGBoost's collective at ``MASTER_ADDR`` as rank ``RANK`` and trains a few
  boosting rounds on a shard of generated data; the trees are built from histograms summed
  across the ranks, so every pod ends with the same model and sees the same metric. Each pod
  also checks that its own name in ``MASTER_ADDR``/``WORKER_ADDRS`` resolves to itself.
* PaddleJob (Worker 2, collective): ``python3 -m paddle.distributed.launch`` in each pod meets
  the other at ``PADDLE_MASTER`` (worker 0 serves the rendezvous on its own address and port),
  starts one trainer per pod with ``PADDLE_NNODES`` nodes, and the trainer runs
  ``init_parallel_env`` and an ``all_reduce`` over Gloo.
* JAXJob (Worker 2): ``jax.distributed.initialize`` with ``COORDINATOR_ADDRESS``,
  ``COORDINATOR_PORT``, ``NUM_PROCESSES`` and ``PROCESS_ID`` (process 0 hosts the coordination
  service), then a ``psum`` across both processes' devices.

Every test asserts the job Succeeded, its pods ran on the real node, and the exact lines the
programs print (hack/images/{xgboost,paddle,jax}/*.py say what each line means) against the
pods' names, IP addresses and the kinds' default ports.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from e2e.real.conftest import RealNode
from mpi_controller.kinds import plugin
from tests.support import Cluster, WaitTimeout, wait_for
from tests.trainingjobs import TrainingJobs

pytestmark = pytest.mark.cluster

XGBOOST_PORT = 9999   # the kinds' default ports (training-operator v1.9's *DefaultPort)
PADDLE_PORT = 36543
JAX_PORT = 6666
ROUNDS = 5            # hack/images/xgboost/xgboost_train.py
ROUND = re.compile(r"^round (\d+) train-rmse (\d+\.\d+)$")
TRAINED = re.compile(r"^trained (\d+) rounds, model ([0-9a-f]{16})$")
TRAINER = re.compile(r"^trainer (\d+) of (\d+) at (\S+):(\d+), trainers (\S+)$")


def job(kind: str, name: str, replicas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A ``kubeflow.org/v1`` job of ``kind`` with these replica specs."""
    described = plugin(kind)
    return {"apiVersion": f"{described.group}/{described.version}", "kind": described.kind,
            "metadata": {"name": name}, "spec": {described.replica_specs: replicas}}


def replica(node: RealNode, replicas: int, container: dict[str, Any]) -> dict[str, Any]:
    """A replica spec whose pods run ``container`` on the real node (restartPolicy Never: a
    framework that fails fails the job)."""
    return {"replicas": replicas, "restartPolicy": "Never",
            "template": {"spec": node.place({"containers": [container]})}}


def run(cluster: Cluster, jobs: TrainingJobs, body: dict[str, Any], container: str,
        pods: int) -> dict[str, dict[str, Any]]:
    """Creates the job, waits until it Succeeded (or failed: then the pods' logs are the
    assertion's message) and returns its ``pods`` Succeeded pods by name."""
    name = body["metadata"]["name"]
    jobs.create(body)

    def finished() -> str | None:
        for c in (jobs.get(name).get("status") or {}).get("conditions") or []:
            if c["type"] in ("Succeeded", "Failed") and c["status"] == "True":
                return str(c["type"])
        return None

    try:
        outcome = wait_for(finished, timeout=420, interval=2,
                           what=f"{jobs.kind} {name} to finish")
    except WaitTimeout as err:
        outcome = f"did not finish ({err})"
    if outcome != "Succeeded":
        tails = [pod_report(cluster, jobs.namespace, p, container) for p in jobs.pods(name)]
        pytest.fail(f"{jobs.kind} {name} {outcome}: {jobs.get(name)['status']}\n"
                    + "\n".join(tails))
    conditions = jobs.get(name)["status"]["conditions"]
    assert conditions[-1]["reason"] == f"{jobs.kind}Succeeded", conditions

    def succeeded() -> dict[str, dict[str, Any]] | None:
        found = jobs.pods(name)
        done = len(found) == pods and all(p["status"]["phase"] == "Succeeded" for p in found)
        return {p["metadata"]["name"]: p for p in found} if done else None

    return wait_for(succeeded, timeout=60, interval=1, what=f"{pods} Succeeded pods of {name}")


def logs(cluster: Cluster, namespace: str, pod: str, container: str, *,
         check: bool = True) -> list[str]:
    """The container's log lines (also printed: ``pytest -rP`` shows them)."""
    out = cluster.kubectl("-n", namespace, "logs", pod, "-c", container, check=check)
    print(f"--- {pod} ({container}):\n{out}")
    return out.splitlines()


def pod_report(cluster: Cluster, namespace: str, pod: dict[str, Any], container: str) -> str:
    """What a failed test shows of one of its job's pods: its phase, the container's restarts
    and last termination (exit code and reason), the tail of its log and, when it restarted,
    of its previous container's log (a restarted container's first log is otherwise lost)."""
    name = pod["metadata"]["name"]
    status = pod.get("status") or {}
    [state] = [c for c in status.get("containerStatuses") or [] if c["name"] == container] or [{}]
    restarts = state.get("restartCount", 0)
    head = f"--- {name} ({status.get('phase')}, {restarts} restarts"
    if last := (state.get("lastState") or {}).get("terminated"):
        head += f"; last exit code {last.get('exitCode')}, {last.get('reason')}"
    lines = [head + "):", *logs(cluster, namespace, name, container, check=False)[-30:]]
    if restarts:
        previous = cluster.kubectl("-n", namespace, "logs", name, "-c", container, "--previous",
                                   check=False)
        lines += ["--- its previous container:", *previous.splitlines()[-60:]]
    return "\n".join(lines)


def on_real_node(pods: dict[str, dict[str, Any]], node: RealNode) -> dict[str, str]:
    """Each pod's IP address, once checked it ran on the real node (each its own IP)."""
    assert {p["spec"]["nodeName"] for p in pods.values()} == {node.name}
    ips = {name: p["status"]["podIP"] for name, p in pods.items()}
    assert len(set(ips.values())) == len(ips), ips
    return ips


def test_xgboostjob_trains_across_master_and_workers_with_the_tracker(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    jobs = TrainingJobs(kube_api, namespace, plugin("xgboostjob"))
    container = {"name": "xgboost", "image": real_node.image("xgboost"),
                 "ports": [{"name": "xgboostjob-port", "containerPort": XGBOOST_PORT}]}
    pods = run(cluster, jobs, job("xgboostjob", "xgb-train", {
        "Master": replica(real_node, 1, container),
        "Worker": replica(real_node, 2, container)}), "xgboost", 3)

    ranks = {"xgb-train-master-0": 0, "xgb-train-worker-0": 1, "xgb-train-worker-1": 2}
    assert sorted(pods) == sorted(ranks)
    ips = on_real_node(pods, real_node)
    curves, models = set(), set()
    for pod, rank in ranks.items():
        lines = logs(cluster, namespace, pod, "xgboost")
        expected = [
            f"rank {rank} of 3: tracker xgb-train-master-0:{XGBOOST_PORT}",
            # MASTER_ADDR (rank 0) or this worker's entry of WORKER_ADDRS names this very pod
            f"{pod} is this pod ({ips[pod]})",
            f"joined the collective as rank {rank} of 3",
            "rows 6000 across 3 ranks",
        ]
        assert [line for line in lines if line in expected] == expected, lines
        rounds = [(int(m[1]), float(m[2])) for m in map(ROUND.match, lines) if m]
        assert [i for i, _ in rounds] == list(range(ROUNDS)), lines
        rmse = [value for _, value in rounds]
        assert rmse == sorted(rmse, reverse=True), rmse
        assert rmse[-1] < rmse[0], rmse
        [trained] = [m for m in map(TRAINED.match, lines) if m]
        assert int(trained[1]) == ROUNDS, lines
        curves.add(tuple(rmse))
        models.add(trained[2])
    # The metric is computed over every rank's rows, and the trees from histograms summed
    # across the ranks: the three pods saw the same curve and built the same model.
    assert len(curves) == 1, curves
    assert len(models) == 1, models


def test_paddlejob_launches_one_trainer_per_worker_and_all_reduces(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    jobs = TrainingJobs(kube_api, namespace, plugin("paddlejob"))
    container = {"name": "paddle", "image": real_node.image("paddle"), "command": ["python3"],
                 "args": ["-m", "paddle.distributed.launch", "/usr/local/bin/paddle-allreduce"],
                 "ports": [{"name": "master", "containerPort": PADDLE_PORT}]}
    pods = run(cluster, jobs, job("paddlejob", "paddle-ar", {
        "Worker": replica(real_node, 2, container)}), "paddle", 2)

    assert sorted(pods) == ["paddle-ar-worker-0", "paddle-ar-worker-1"]
    ips = on_real_node(pods, real_node)
    seen: dict[int, tuple[str, str, str]] = {}  # trainer rank -> (pod, endpoint, all endpoints)
    out = {pod: logs(cluster, namespace, pod, "paddle") for pod in pods}
    for pod, lines in out.items():
        assert "job paddle-ar, 2 nodes" in lines, lines
        [trainer] = [m for m in map(TRAINER.match, lines) if m]
        assert (trainer[2], trainer[3]) == ("2", ips[pod]), lines
        seen[int(trainer[1])] = (pod, f"{trainer[3]}:{trainer[4]}", trainer[5])
        assert "all_reduce sum 3 expected 3" in lines, lines
    # One trainer per pod, ranks 0 and 1; both know every trainer's endpoint, in rank order.
    assert sorted(seen) == [0, 1], seen
    endpoints = ",".join(seen[rank][1] for rank in (0, 1))
    assert {s[2] for s in seen.values()} == {endpoints}, seen
    hosts = "hosts " + ",".join(seen[rank][0] for rank in (0, 1))
    assert all(hosts in lines for lines in out.values()), out
    # Worker 1's launcher met worker 0's at PADDLE_MASTER, worker 0's Service and the port.
    master = f"http://paddle-ar-worker-0:{PADDLE_PORT}/"
    assert any(master in line for line in out["paddle-ar-worker-1"]), out["paddle-ar-worker-1"]


def test_jaxjob_initializes_jax_distributed_and_psums_across_processes(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    jobs = TrainingJobs(kube_api, namespace, plugin("jaxjob"))
    # No ports, as upstream's example: the kind's default port (jaxjob-port, 6666) is added.
    container = {"name": "jax", "image": real_node.image("jax")}
    pods = run(cluster, jobs, job("jaxjob", "jax-psum", {
        "Worker": replica(real_node, 2, container)}), "jax", 2)

    ids = {"jax-psum-worker-0": 0, "jax-psum-worker-1": 1}
    assert sorted(pods) == sorted(ids)
    on_real_node(pods, real_node)
    for pod, process in ids.items():
        [ctr] = pods[pod]["spec"]["containers"]
        assert ctr["ports"] == [{"name": "jaxjob-port", "containerPort": JAX_PORT,
                                 "protocol": "TCP"}], ctr
        lines = logs(cluster, namespace, pod, "jax")
        expected = [
            f"process {process} of 2: coordinator jax-psum-worker-0:{JAX_PORT}",
            f"initialized: process_index {process}, process_count 2, devices 2 global, 1 local",
            "processes 0,1 took part",
            "psum 3 expected 3",
        ]
        assert [line for line in lines if line in expected] == expected, lines
