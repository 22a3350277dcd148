"""hack/local-cluster.sh up / down, repeatedly, on a cluster directory of its own: ``up`` prints
the kubeconfig path last, a second ``up`` reuses the running cluster (giving KWOK nodes that lack
it their ephemeral-storage), ``down`` stops exactly the
processes ``up`` started, frees their ports and removes the state, and a later ``up`` starts a
working cluster again."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
from kubernetes import client, config

from tests.support import HACK, Cluster, wait_for

pytestmark = pytest.mark.cluster

COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"]


def _run(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MPI_CONTROLLER_CLUSTER_DIR": str(state)}
    return subprocess.run(["bash", str(HACK), *args], env=env, capture_output=True, text=True,
                          timeout=300, check=True)


def _pids(state: Path) -> dict[str, int]:
    return {c: int((state / "pids" / f"{c}.pid").read_text()) for c in COMPONENTS}


def _ports(state: Path) -> dict[str, int]:
    lines = (state / "ports.env").read_text().splitlines()
    return {k: int(v) for k, v in (line.split("=", 1) for line in lines if "=" in line)}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _ready_nodes(kubeconfig: str) -> int:
    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        nodes = client.CoreV1Api(api).list_node().items
        return sum(1 for n in nodes for c in n.status.conditions or []
                   if c.type == "Ready" and c.status == "True")
    finally:
        api.close()


def _ephemeral_storage(kubeconfig: str) -> dict[str, tuple[str | None, str | None]]:
    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        return {n.metadata.name: ((n.status.capacity or {}).get("ephemeral-storage"),
                                  (n.status.allocatable or {}).get("ephemeral-storage"))
                for n in client.CoreV1Api(api).list_node(label_selector="type=kwok").items}
    finally:
        api.close()


def test_up_reuse_down_and_up_again(cluster: Cluster, tmp_path: Path) -> None:
    if not cluster.local:
        pytest.skip("exercises the local control plane's script")
    state = tmp_path / "cluster"
    try:
        first = _run(state, "up")
        kubeconfig = first.stdout.strip().splitlines()[-1]
        assert kubeconfig == str(state / "kubeconfig")
        pids, ports = _pids(state), _ports(state)
        assert all(_alive(p) for p in pids.values()), pids
        assert {k for k, p in ports.items() if _listening(p)} == set(ports), ports
        assert _ready_nodes(kubeconfig) == 4
        every_node = {f"kwok-node-{i}": ("10Ti", "10Ti") for i in range(4)}
        assert _ephemeral_storage(kubeconfig) == every_node

        # a node made before the nodes advertised ephemeral-storage: up gives it back
        api = config.new_client_from_config(config_file=kubeconfig)
        try:
            client.CoreV1Api(api).patch_node_status("kwok-node-1", [
                {"op": "remove", "path": "/status/capacity/ephemeral-storage"},
                {"op": "remove", "path": "/status/allocatable/ephemeral-storage"}])
        finally:
            api.close()
        assert _ephemeral_storage(kubeconfig)["kwok-node-1"] == (None, None)

        again = _run(state, "up")
        assert again.stdout.strip().splitlines()[-1] == kubeconfig
        assert "reusing the running cluster" in again.stderr
        assert "node kwok-node-1 lacks ephemeral-storage; adding it" in again.stderr
        assert _ephemeral_storage(kubeconfig) == every_node
        assert _pids(state) == pids

        _run(state, "down")
        assert not state.exists()
        assert not any(_alive(p) for p in pids.values()), pids
        wait_for(lambda: not any(_listening(p) for p in ports.values()), timeout=30,
                 what="the cluster's ports to be free")

        third = _run(state, "up")
        assert third.stdout.strip().splitlines()[-1] == kubeconfig
        assert set(_pids(state).values()).isdisjoint(pids.values())
        assert _ready_nodes(kubeconfig) == 4
    finally:
        if state.exists():
            _run(state, "down")
