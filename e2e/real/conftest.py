"""Fixtures for the real-node tests (``make e2e-real``): pods that really run.

* ``real_node`` (session): the cluster's real node and the images built for it, read from
  ``realnode/images.env`` in the local cluster's state directory (the directory of
  ``$KUBECONFIG``), written by ``hack/local-cluster.sh up --real-node``. Without one, every test
  here is skipped and the skip says why.
* ``deployed_controller`` (session): mpi-controller applied with ``kubectl apply -k`` from
  ``e2e/real/deploy`` (the standalone deployment, placed on the real node) with the image set to
  the one built from ``deploy/Dockerfile``, the PyTorchJob workers' init container image set
  to the local ``peers`` image and the MPIJob ``v1`` and ``v1alpha2`` launchers' to the local
  ``kubectl-delivery`` image; waits until its pod is Ready. Every job in these tests is run by
  it (MPIJob ``v2beta1`` and ``v1``, TFJob, PyTorchJob).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import REPO, Cluster, wait_for

DEPLOY_OVERLAY = REPO / "e2e" / "real" / "deploy"
CONTROLLER_NAMESPACE = "mpi-operator"


@dataclass(frozen=True)
class RealNode:
    """The real node: its name, label/taint key and the local image names by kind."""

    name: str
    label: str
    images: dict[str, str]
    state_dir: Path

    def image(self, kind: str) -> str:
        """The image ``kind`` (``mpi``, ``mpi-pi-openmpi``, ``controller``...)."""
        return self.images[kind.upper().replace("-", "_") + "_IMAGE"]

    def place(self, pod_spec: dict[str, Any]) -> dict[str, Any]:
        """Adds the node selector and toleration that put a pod on the real node."""
        pod_spec.setdefault("nodeSelector", {})[self.label] = "true"
        pod_spec.setdefault("tolerations", []).append(
            {"key": self.label, "operator": "Exists", "effect": "NoSchedule"})
        return pod_spec


def read_env(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs}


@pytest.fixture(scope="session")
def real_node(cluster: Cluster) -> RealNode:
    state = Path(cluster.kubeconfig).resolve().parent
    env_file = state / "realnode" / "images.env"
    if not env_file.exists():
        pytest.skip(f"the cluster of {cluster.kubeconfig} has no real node ({env_file} is "
                    "missing); start one with `hack/local-cluster.sh up --real-node`")
    env = read_env(env_file)
    node = RealNode(name=env["REAL_NODE"], label=env["REAL_NODE_LABEL"],
                    images={k: v for k, v in env.items() if k.endswith("_IMAGE")},
                    state_dir=state)
    ready = cluster.kubectl("get", "node", node.name, "-o",
                            'jsonpath={.status.conditions[?(@.type=="Ready")].status}')
    assert ready == "True", f"the real node {node.name} is not Ready"
    return node


def pod_ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in pod.get("status", {}).get("conditions", []))


def controller_pods(cluster: Cluster) -> list[dict[str, Any]]:
    out = cluster.kubectl("-n", CONTROLLER_NAMESPACE, "get", "pods", "-l", "app=mpi-operator",
                          "-o", "json")
    return list(json.loads(out)["items"])


@pytest.fixture(scope="session")
def deployed_controller(cluster: Cluster, real_node: RealNode, job_crds: dict[str, str],
                        tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Applies the deployment and yields its Ready pod (as JSON); deletes it afterwards. Every
    kind's CRD is Established first, so the controller runs them all."""
    overlay = tmp_path_factory.mktemp("deploy")
    name, tag = real_node.image("controller").rsplit(":", 1)
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources: [{os.path.relpath(DEPLOY_OVERLAY, overlay)}]\n"  # kustomize: no absolute
        f"images: [{{name: mpi-controller, newName: {name}, newTag: {tag}}}]\n"
        "patches:\n- target: {kind: Deployment, name: mpi-operator}\n  patch: |-\n"
        + "".join("    - op: add\n      path: /spec/template/spec/containers/0/args/-\n"
                  f"      value: {arg}\n" for arg in (
                      f"--pytorch-init-container-image={real_node.image('peers')}",
                      f"--mpi-kubectl-delivery-image={real_node.image('kubectl-delivery')}",
                      f"--kubectl-delivery-image={real_node.image('kubectl-delivery')}")))
    cluster.kubectl("apply", "--server-side", "--force-conflicts", "-k", str(overlay))
    pod = wait_for(lambda: next((p for p in controller_pods(cluster)
                                 if pod_ready(p) and "deletionTimestamp" not in p["metadata"]),
                                None),
                   timeout=180, what="a Ready mpi-operator pod")
    yield pod
    cluster.kubectl("-n", CONTROLLER_NAMESPACE, "delete", "deployment", "mpi-operator",
                    "--ignore-not-found", "--wait=true", "--timeout=60s", check=False)
