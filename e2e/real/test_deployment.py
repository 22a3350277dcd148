"""mpi-controller deployed as users deploy it (docs/install.md's single-file manifest
``deploy/mpi-controller.yaml``, ``kubectl apply --server-side``) from the image built from
deploy/Dockerfile, running on the real node: Ready through its
probes, holding the Lease, talking to the API server as its ServiceAccount over the pod network,
as a non-root user on a read-only root filesystem, and running an MPIJob to Succeeded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from e2e.real.conftest import CONTROLLER_NAMESPACE, RealNode
from e2e.real.test_mpi import pi_job
from tests.mpijobs import MPIJobs
from tests.support import Cluster, wait_for

pytestmark = pytest.mark.cluster

SERVICE_ACCOUNT = f"system:serviceaccount:{CONTROLLER_NAMESPACE}:mpi-operator"


def exec_in(cluster: Cluster, pod: str, script: str) -> str:
    return cluster.kubectl("-n", CONTROLLER_NAMESPACE, "exec", pod, "--", "sh", "-c", script)


def audit_events(node: RealNode, user: str) -> list[dict[str, Any]]:
    path = node.state_dir / "logs" / "audit.log"
    events = (json.loads(line) for line in path.read_text().splitlines() if user in line)
    return [e for e in events if e["user"]["username"] == user]


def test_controller_runs_as_a_deployment_on_the_real_node(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    pod = deployed_controller
    name, ip = pod["metadata"]["name"], pod["status"]["podIP"]
    assert pod["spec"]["nodeName"] == real_node.name
    assert pod["spec"]["serviceAccountName"] == "mpi-operator"
    [container] = pod["status"]["containerStatuses"]
    assert container["image"] == real_node.image("controller")
    assert (container["ready"], container["restartCount"]) == (True, 0)
    assert "running" in container["state"]

    holder = wait_for(lambda: cluster.kubectl(
        "-n", CONTROLLER_NAMESPACE, "get", "lease", "mpi-operator",
        "-o", "jsonpath={.spec.holderIdentity}").startswith(f"{name}_"),
        timeout=60, what=f"pod {name} to hold the mpi-operator Lease")
    assert holder

    # runAsUser/runAsGroup 65532 and readOnlyRootFilesystem from deploy/base hold in the pod.
    assert exec_in(cluster, name, "id -u; id -g").split() == ["65532", "65532"]
    out = exec_in(cluster, name, "touch /probe 2>&1; echo rc=$?; mpi-controller --help >/dev/null;"
                  " echo help=$?")
    assert "Read-only file system" in out, out
    assert "rc=1" in out, out
    assert "help=0" in out, out

    jobs = MPIJobs(kube_api, namespace)
    jobs.create(pi_job(real_node, "pi", "openmpi", root=False))
    jobs.wait_condition("pi", "Succeeded", timeout=300)

    # The API server saw the controller's requests as its ServiceAccount, from the pod's IP.
    def created_launcher() -> list[dict[str, Any]]:
        return [e for e in audit_events(real_node, SERVICE_ACCOUNT)
                if e["verb"] == "create" and e["objectRef"].get("resource") == "jobs"
                and e["objectRef"].get("namespace") == namespace]

    [create] = wait_for(created_launcher, timeout=90, interval=1,
                        what="the audit record of the launcher Job's creation")
    assert create["sourceIPs"] == [ip]
    assert create["responseStatus"]["code"] == 201
