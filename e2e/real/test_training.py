"""TFJobs and PyTorchJobs whose pods really run on the real node, run by the deployed controller.

Every pod runs the peers program (hack/images/peers/peers.py): it reads the wiring the
controller gave it (``TF_CONFIG``; ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``),
listens on its own port and connects to every peer named there, and exits 0 only once it has
reached every peer and been reached by every peer. So a Succeeded job whose logs show each
peer reached at that peer's pod IP proves the names resolve to the right pods over the pod
network, the ports are the ones the pods listen on, and the ranks and world size are
consistent (rank 0 at ``MASTER_ADDR`` hands out the table of ranks, as torch.distributed's
rendezvous does). The PyTorchJob workers' init container (upstream's template, waiting with
``nslookup`` until the master's name resolves) runs the local peers image
(``--pytorch-init-container-image``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from e2e.real.conftest import RealNode
from tests.pytorchjobs import PyTorchJobs, pytorchjob
from tests.support import Cluster, wait_for
from tests.tfjobs import TFJobs, tfjob

pytestmark = pytest.mark.cluster

TF_PORT = 2222
TORCH_PORT = 23456
REACHED = re.compile(r"^reached (\S+) at (\S+):(\d+) \((\S+)\)$")
REACHED_BY = re.compile(r"^reached by (\S+) from (\S+)$")


def peers_replica(node: RealNode, container: str, port_name: str, port: int, args: list[str],
                  replicas: int) -> dict[str, Any]:
    """A replica spec running the peers program on the real node (restartPolicy Never: any
    failure to reach a peer fails the job)."""
    spec = node.place({"containers": [{
        "name": container, "image": node.image("peers"), "args": args,
        "ports": [{"name": port_name, "containerPort": port}]}]})
    return {"replicas": replicas, "restartPolicy": "Never", "template": {"spec": spec}}


def finished_pods(jobs: TFJobs, name: str, count: int) -> dict[str, dict[str, Any]]:
    """The job's ``count`` pods once every one has Succeeded, by name."""
    def probe() -> dict[str, dict[str, Any]] | None:
        pods = jobs.pods(name)
        done = len(pods) == count and all(p["status"]["phase"] == "Succeeded" for p in pods)
        return {p["metadata"]["name"]: p for p in pods} if done else None
    return wait_for(probe, timeout=120, interval=1, what=f"{count} Succeeded pods of {name}")


def logs(cluster: Cluster, namespace: str, pod: str, container: str) -> list[str]:
    return cluster.kubectl("-n", namespace, "logs", pod, "-c", container).splitlines()


def reached(lines: list[str]) -> dict[str, tuple[str, int, str]]:
    """peer -> (host, port, ip) this process connected to."""
    return {m[1]: (m[2], int(m[3]), m[4]) for m in map(REACHED.match, lines) if m}


def reached_by(lines: list[str]) -> dict[str, str]:
    """peer -> the ip it connected from."""
    return {m[1]: m[2] for m in map(REACHED_BY.match, lines) if m}


def test_tfjob_tasks_reach_every_peer_named_in_tf_config(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    jobs = TFJobs(kube_api, namespace)
    replicas = {rtype: peers_replica(real_node, "tensorflow", "tfjob-port", TF_PORT, ["tf"], n)
                for rtype, n in (("PS", 1), ("Worker", 2))}
    jobs.create(tfjob("tf-peers", replicas, run_policy={"cleanPodPolicy": "None"}))
    job = jobs.wait_condition("tf-peers", "Succeeded", timeout=240)
    assert job["status"]["conditions"][-1]["reason"] == "TFJobSucceeded"

    pods = finished_pods(jobs, "tf-peers", 3)
    tasks = {f"tf-peers-{t}": t for t in ("ps-0", "worker-0", "worker-1")}
    assert sorted(pods) == sorted(tasks)
    ip = {task: pods[pod]["status"]["podIP"] for pod, task in tasks.items()}
    assert len(set(ip.values())) == 3, ip
    for pod, task in tasks.items():
        assert pods[pod]["spec"]["nodeName"] == real_node.name
        lines = logs(cluster, namespace, pod, "tensorflow")
        others = {t for t in tasks.values() if t != task}
        assert f"me {task} listening on {TF_PORT}" in lines, lines
        # Each peer was reached at the host and port TF_CONFIG names, which resolved to the
        # peer's own pod IP, and each peer connected back from it.
        assert reached(lines) == {
            t: (f"tf-peers-{t}.{namespace}.svc", TF_PORT, ip[t]) for t in others}, lines
        assert reached_by(lines) == {t: ip[t] for t in others}, lines
        assert lines[-1] == "all 2 peers reached", lines


def test_pytorchjob_ranks_rendezvous_at_master_addr_and_reach_each_other(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    jobs = PyTorchJobs(kube_api, namespace)
    replicas = {rtype: peers_replica(real_node, "pytorch", "pytorchjob-port", TORCH_PORT,
                                     ["pytorch"], n)
                for rtype, n in (("Master", 1), ("Worker", 2))}
    jobs.create(pytorchjob("pt-peers", replicas, run_policy={"cleanPodPolicy": "None"}))
    job = jobs.wait_condition("pt-peers", "Succeeded", timeout=240)
    assert job["status"]["conditions"][-1]["reason"] == "PyTorchJobSucceeded"

    pods = finished_pods(jobs, "pt-peers", 3)
    ranks = {"pt-peers-master-0": 0, "pt-peers-worker-0": 1, "pt-peers-worker-1": 2}
    assert sorted(pods) == sorted(ranks)
    ip = {rank: pods[pod]["status"]["podIP"] for pod, rank in ranks.items()}
    assert len(set(ip.values())) == 3, ip
    table = "table " + " ".join(f"rank-{r}={ip[r]}" for r in range(3))
    for pod, rank in ranks.items():
        assert pods[pod]["spec"]["nodeName"] == real_node.name
        lines = logs(cluster, namespace, pod, "pytorch")
        others = {r for r in ranks.values() if r != rank}
        assert f"me rank-{rank} listening on {TORCH_PORT}" in lines, lines
        assert table in lines, lines
        if rank == 0:
            assert {f"rank-{r} joined from {ip[r]}" for r in others} <= set(lines), lines
        else:
            # MASTER_ADDR (the master's Service name) resolved to the master pod.
            assert f"joined rank-0 at pt-peers-master-0:{TORCH_PORT} ({ip[0]})" in lines, lines
            # The init container waited for that name with nslookup, in the local image.
            [init] = pods[pod]["status"]["initContainerStatuses"]
            assert (init["name"], init["image"]) == ("init-pytorch", real_node.image("peers"))
            assert init["state"]["terminated"]["exitCode"] == 0
        assert reached(lines) == {
            f"rank-{r}": (ip[r], TORCH_PORT, ip[r]) for r in others}, lines
        assert reached_by(lines) == {f"rank-{r}": ip[r] for r in others}, lines
        assert lines[-1] == "all 2 peers reached", lines
