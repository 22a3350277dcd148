"""Fixtures for the real-node tests (``make e2e-real``): pods that really run.

* ``real_node`` (session): the cluster's real node and the images built for it, read from
  ``realnode/images.env`` in the local cluster's state directory (the directory of
  ``$KUBECONFIG``), written by ``hack/local-cluster.sh up --real-node``. Without one, every test
  here is skipped and the skip says why.
* ``deployed_controller`` (session): mpi-controller installed as docs/install.md says ("From
  the single-file manifest"): its command, taken from the page, sets the image built from
  ``deploy/Dockerfile`` (imported into the node as ``hack/lib/images.sh`` does) in
  ``deploy/mpi-controller.yaml``; before ``kubectl apply --server-side`` the Deployment is
  placed on the real node (the local cluster's other nodes are KWOK's) and given the local
  images of the PyTorchJob workers' init container (``peers``) and of the MPIJob ``v1`` and
  ``v1alpha2`` launchers (``kubectl-delivery``), which a cluster with registry access pulls
  instead; then the page's ``rollout status`` waits for it. The Deployment runs two replicas
  (both on the real node: the anti-affinity is preferred); the fixture yields the one holding
  the Lease. Every job in these tests is run by it (every kind and MPIJob generation).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import REPO, Cluster, wait_for

CONTROLLER_NAMESPACE = "mpi-operator"
INSTALL_DOC = REPO / "docs" / "install.md"
DOC_IMAGE = "registry.example.com/team/mpi-controller:0.1.0"  # the image the page's commands set
APPLY = "| kubectl apply --server-side -f -"


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


def install_commands() -> tuple[str, list[str]]:
    """docs/install.md's single-file install: the shell pipeline that prints the manifest with
    the image set (the command up to ``| kubectl apply``), and the ``kubectl`` arguments of the
    command that waits for the rollout."""
    section = INSTALL_DOC.read_text().split("### From the single-file manifest", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    command, rollout = block.replace("\\\n", "").strip().splitlines()
    assert command.endswith(APPLY), f"docs/install.md's install command changed: {command}"
    assert DOC_IMAGE in command, f"docs/install.md's install command changed: {command}"
    assert rollout.startswith("kubectl "), f"docs/install.md's rollout command changed: {rollout}"
    return command.removesuffix(APPLY).strip(), rollout.split()[1:]


def placed_on(node: RealNode, manifest: str) -> str:
    """The manifest with the controller Deployment placed on the real node and pointed at the
    node's local images of the init and kubectl-delivery containers."""
    docs = [d for d in yaml.safe_load_all(manifest) if d]
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    node.place(pod)
    pod["containers"][0]["args"] += [
        f"--pytorch-init-container-image={node.image('peers')}",
        f"--mpi-kubectl-delivery-image={node.image('kubectl-delivery')}",
        f"--kubectl-delivery-image={node.image('kubectl-delivery')}"]
    return yaml.safe_dump_all(docs, sort_keys=False)


def serving_pods(cluster: Cluster) -> list[dict[str, Any]]:
    """The controller's Ready pods that are not being deleted."""
    return [p for p in controller_pods(cluster)
            if pod_ready(p) and "deletionTimestamp" not in p["metadata"]]


def lease_holder(cluster: Cluster) -> str:
    """The pod name in the ``mpi-operator`` Lease's holder identity (``<pod>_<uuid>``; "" when
    none holds it)."""
    holder = cluster.kubectl("-n", CONTROLLER_NAMESPACE, "get", "lease", "mpi-operator",
                             "-o", "jsonpath={.spec.holderIdentity}", check=False)
    return holder.rpartition("_")[0]


def webhooks_answer(cluster: Cluster) -> bool:
    """A server-side dry run of a PyTorchJob (its validating webhook fails closed) is
    admitted; False while the API server cannot reach the webhook."""
    probe = yaml.safe_load((REPO / "examples" / "pytorch-simple.yaml").read_text())
    probe["metadata"] = {"name": "webhook-probe", "namespace": "default"}
    try:
        cluster.kubectl("create", "--dry-run=server", "-f", "-", input=json.dumps(probe))
    except RuntimeError as err:
        if "failed calling webhook" in str(err):
            return False
        raise
    return True


@pytest.fixture(scope="session")
def deployed_controller(cluster: Cluster, real_node: RealNode,
                        job_crds: dict[str, str]) -> Iterator[dict[str, Any]]:
    """Installs the controller as docs/install.md says and yields its leading pod (as JSON:
    Ready, holding the Lease) once every replica of the Deployment is Ready; deletes the
    Deployment afterwards. Every kind's CRD is Established first, so the controller runs them
    all."""
    command, rollout = install_commands()
    image = real_node.image("controller")
    manifest = subprocess.run(["bash", "-c", command.replace(DOC_IMAGE, image)], cwd=REPO,
                              check=True, capture_output=True, text=True).stdout
    assert f"image: {image}\n" in manifest, "the page's command did not set the image"
    cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-",
                    input=placed_on(real_node, manifest))
    cluster.kubectl(*rollout, "--timeout=180s")

    def leader() -> dict[str, Any] | None:
        holder = lease_holder(cluster)
        return next((p for p in serving_pods(cluster) if p["metadata"]["name"] == holder), None)
    leading = wait_for(leader, timeout=180, what="a Ready mpi-operator pod holding the Lease")
    # A Ready pod is not yet a reachable Service: until its endpoints reach the API server's
    # path, a kind whose webhook fails closed (PyTorchJob, TFJob) is refused with
    # "failed calling webhook ... connection refused".
    wait_for(lambda: webhooks_answer(cluster), timeout=120,
             what="the API server to reach the controller's webhooks")
    yield leading
    cluster.kubectl("-n", CONTROLLER_NAMESPACE, "delete", "deployment", "mpi-operator",
                    "--ignore-not-found", "--wait=true", "--timeout=60s", check=False)
