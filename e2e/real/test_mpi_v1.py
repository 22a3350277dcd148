"""An MPIJob created through ``kubeflow.org/v1`` runs for real in training-operator v1.9's
kubectl-exec launch mode (``pkg/controller.v1/mpi/mpijob_controller.go``): the
API server serves ``v1`` through the deployed controller's conversion webhook; the launcher's
``kubectl-delivery`` init container (the image built here, ``--mpi-kubectl-delivery-image``)
copies kubectl into the shared ``/opt/kube`` volume and waits for the workers; the workers run
``sleep 365d``; ``mpirun`` (Open MPI, ``OMPI_MCA_plm_rsh_agent=/etc/mpi/kubexec.sh``) starts
its daemons on the workers by ``kubectl exec`` through the API server and the kubelet, as the
job's own ServiceAccount, which its per-job Role allows to exec into those workers only.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from e2e.real.conftest import RealNode
from e2e.real.test_deployment import audit_events
from e2e.real.test_mpi import PI_LINE, RANK_LINE
from tests.mpijobs import MPIJobs
from tests.support import Cluster, wait_for

pytestmark = pytest.mark.cluster

V1_ROLE = "training.kubeflow.org/replica-type"


class V1MPIJobs(MPIJobs):
    """MPIJobs read and written through ``kubeflow.org/v1``."""

    version = "v1"


def v1_pi_job(node: RealNode, name: str, *, workers: int = 2) -> dict[str, Any]:
    """The pi program as a ``v1`` MPIJob: the launcher runs ``mpirun`` as root (Open MPI needs
    ``--allow-run-as-root``); the workers have no command, so they get ``sleep 365d``."""
    image = node.image("mpi-pi-openmpi")
    launcher = {"name": "launcher", "image": image, "command": ["mpirun"],
                "args": ["--allow-run-as-root", "-n", str(workers), "/home/mpiuser/pi"]}
    return {
        "apiVersion": "kubeflow.org/v1", "kind": "MPIJob", "metadata": {"name": name},
        "spec": {
            "slotsPerWorker": 1,
            "runPolicy": {"cleanPodPolicy": "Running"},
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "Never",
                             "template": {"spec": node.place({"containers": [launcher]})}},
                "Worker": {"replicas": workers, "template": {"spec": node.place(
                    {"containers": [{"name": "worker", "image": image}]})}},
            },
        },
    }


def test_v1_pi_runs_across_the_workers_through_kubectl_exec(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    jobs = V1MPIJobs(kube_api, namespace)
    created = jobs.create(v1_pi_job(real_node, "pi"))
    assert created["apiVersion"] == "kubeflow.org/v1"
    job = jobs.wait_condition("pi", "Succeeded", timeout=300)

    succeeded = next(c for c in job["status"]["conditions"] if c["type"] == "Succeeded")
    assert (succeeded["reason"], succeeded["message"]) == (
        "MPIJobSucceeded", "MPIJob pi is successfully completed.")
    assert job["status"]["replicaStatuses"]["Launcher"] == {"succeeded": 1}

    [launcher] = jobs.pods(f"training.kubeflow.org/job-name=pi,{V1_ROLE}=launcher")
    assert launcher.spec.node_name == real_node.name
    assert launcher.status.phase == "Succeeded"
    assert launcher.spec.service_account_name == "pi-launcher"
    [init] = launcher.spec.init_containers
    assert (init.name, init.image) == ("kubectl-delivery", real_node.image("kubectl-delivery"))
    [init_status] = launcher.status.init_container_statuses
    assert init_status.state.terminated.exit_code == 0
    env = {e.name: e.value for e in launcher.spec.containers[0].env}
    assert env["OMPI_MCA_plm_rsh_agent"] == "/etc/mpi/kubexec.sh"
    assert env["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"

    # (kubexec.sh's `set -x` traces are in this log too, but the two scripts run at once and
    # their traces interleave word by word: the audit records below show the execs.)
    lines = cluster.kubectl("-n", namespace, "logs", "pi-launcher").splitlines()
    ranks = sorted((int(m[1]), int(m[2]), m[3]) for m in map(RANK_LINE.match, lines) if m)
    assert ranks == [(0, 2, "pi-worker-0"), (1, 2, "pi-worker-1")], lines
    [result] = [m for m in map(PI_LINE.match, lines) if m]
    assert int(result[2]) == 2
    assert abs(float(result[1]) - math.pi) < 1e-9, result[0]

    # The API server saw each exec as the launcher's ServiceAccount. kubectl (1.36) first asks
    # for a WebSocket stream (GET: verb `get` on pods/exec), which the Role (upstream's rules:
    # `create` only) forbids, then falls back to SPDY (POST: `create`), which the Role allows for
    # the two workers by name and the API server upgrades to a stream to the kubelet (101).
    def execs() -> list[tuple[str, str, int]]:
        return sorted((e["objectRef"]["name"], e["verb"], e["responseStatus"]["code"])
                      for e in audit_events(real_node,
                                            f"system:serviceaccount:{namespace}:pi-launcher")
                      if e["objectRef"].get("subresource") == "exec"
                      and e["objectRef"].get("namespace") == namespace
                      and e["stage"] == "ResponseComplete")

    expected = [(w, verb, code) for w in ("pi-worker-0", "pi-worker-1")
                for verb, code in (("create", 101), ("get", 403))]
    records = wait_for(lambda: found if len(found := execs()) >= len(expected) else None,
                       timeout=60, interval=1, what="the audit records of the launcher's execs")
    assert records == expected
