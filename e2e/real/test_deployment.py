"""mpi-controller deployed as users deploy it (docs/install.md's single-file manifest
``deploy/mpi-controller.yaml``, ``kubectl apply --server-side``) from the image built from
deploy/Dockerfile, running on the real node: two replicas Ready through their probes, one
holding the Lease, both serving the webhooks with the one certificate of the Secret (whichever
replica won its creation) and answering a ConversionReview; the leader talking to the API server
as its ServiceAccount over the pod network, as a non-root user on a read-only root filesystem,
and running an MPIJob to Succeeded."""

from __future__ import annotations

import base64
import hashlib
import json
import ssl
from typing import Any

import pytest

from e2e.real.conftest import CONTROLLER_NAMESPACE, RealNode, lease_holder, serving_pods
from e2e.real.test_mpi import pi_job
from tests.mpijobs import MPIJobs
from tests.support import Cluster, wait_for

pytestmark = pytest.mark.cluster

SERVICE_ACCOUNT = f"system:serviceaccount:{CONTROLLER_NAMESPACE}:mpi-operator"


def exec_in(cluster: Cluster, pod: str, script: str) -> str:
    return cluster.kubectl("-n", CONTROLLER_NAMESPACE, "exec", pod, "--", "sh", "-c", script)


WEBHOOK_SECRET = "mpi-operator-webhook-cert"
# Run inside a replica: the SHA-256 of the certificate it serves on the webhook port, then the
# result of a ConversionReview (one v2beta1 MPIJob to v1) posted to its /convert.
SERVE_AND_CONVERT = """
import hashlib, json, socket, ssl, urllib.request
ctx = ssl._create_unverified_context()
with socket.create_connection(("127.0.0.1", 9443), timeout=10) as raw, ctx.wrap_socket(raw) as tls:
    print(hashlib.sha256(tls.getpeercert(True)).hexdigest())
job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
       "metadata": {"name": "probe", "namespace": "default", "uid": "u-probe"},
       "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {
           "containers": [{"name": "w", "image": "busybox"}]}}}}}}
review = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "request": {
    "uid": "r-1", "desiredAPIVersion": "kubeflow.org/v1", "objects": [job]}}
request = urllib.request.Request("https://127.0.0.1:9443/convert", json.dumps(review).encode(),
                                 {"Content-Type": "application/json"})
answer = json.load(urllib.request.urlopen(request, context=ctx, timeout=10))["response"]
print(answer["result"]["status"], answer["convertedObjects"][0]["apiVersion"])
"""


def secret_certificate_sha256(cluster: Cluster) -> str:
    """SHA-256 of the DER of the webhook certificate Secret's ``tls.crt`` (its first
    certificate)."""
    pem = base64.b64decode(cluster.kubectl(
        "-n", CONTROLLER_NAMESPACE, "get", "secret", WEBHOOK_SECRET,
        "-o", r"jsonpath={.data.tls\.crt}")).decode()
    first = pem.split("-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n"
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(first)).hexdigest()


def audit_events(node: RealNode, user: str) -> list[dict[str, Any]]:
    path = node.state_dir / "logs" / "audit.log"
    events = (json.loads(line) for line in path.read_text().splitlines() if user in line)
    return [e for e in events if e["user"]["username"] == user]


def test_controller_runs_as_a_deployment_on_the_real_node(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    pod = deployed_controller
    name, ip = pod["metadata"]["name"], pod["status"]["podIP"]
    replicas = serving_pods(cluster)
    assert len(replicas) == 2, [p["metadata"]["name"] for p in replicas]
    for replica in replicas:
        assert replica["spec"]["nodeName"] == real_node.name
        assert replica["spec"]["serviceAccountName"] == "mpi-operator"
        [container] = replica["status"]["containerStatuses"]
        assert container["image"] == real_node.image("controller")
        assert (container["ready"], container["restartCount"]) == (True, 0)
        assert "running" in container["state"]
    # One leads: the fixture's pod holds the Lease; the other is Ready while it waits for it.
    assert lease_holder(cluster) == name
    assert name in [p["metadata"]["name"] for p in replicas]

    # Both serve the webhooks, with the one certificate of the Secret (the replica that lost the
    # race to create it serves the winner's), and both convert.
    want = secret_certificate_sha256(cluster)
    for replica in replicas:
        out = cluster.kubectl("-n", CONTROLLER_NAMESPACE, "exec", replica["metadata"]["name"],
                              "--", "python3", "-c", SERVE_AND_CONVERT)
        assert out.split("\n")[:2] == [want, "Success kubeflow.org/v1"], (replica, out)

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
