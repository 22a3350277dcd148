"""Each MPIJob generation runs as it ran upstream, on the local cluster, applied with kubectl
through the conversion webhook (:func:`tests.webhooks.serving_webhooks`) and reconciled by the
session's controller:

* examples/v1/tensorflow-mnist-elastic.yaml verbatim: training-operator v1.9's kubectl-exec
  mode (``pkg/controller.v1/mpi/mpijob_controller.go``): the launcher's
  ServiceAccount, Role and RoleBinding, ``sleep 365d`` workers, the launcher pod with the
  ``kubectl-delivery`` init container (scheduled: the KWOK nodes advertise
  ``ephemeral-storage``), Succeeded with upstream's conditions and events, the Running workers
  deleted (cleanPodPolicy Running);
* the same job elastic: workers scaled 2 -> 3 -> 1 with ``kubectl patch
  mpijobs.v1.kubeflow.org``, the Role's pod list and ``discover_hosts.sh`` following them;
* examples/v1alpha2/tensorflow-benchmarks.yaml verbatim: mpi-operator v0.2.3's mode (worker
  StatefulSet, launcher batch Job, the ``mpi_job_name`` / ``mpi_role_type`` labels),
  Succeeded with its conditions, ``replicaStatuses`` and events, the StatefulSet scaled to 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.mpijobs import DURATION, EXAMPLES
from tests.processes import ControllerProcess
from tests.support import REPO, Cluster, wait_for
from tests.webhooks import serving_webhooks

pytestmark = pytest.mark.cluster

ELASTIC = "tensorflow-mnist-elastic"
BENCHMARKS = "tensorflow-benchmarks"


@pytest.fixture(scope="module")
def webhooks(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if not cluster.local:
        pytest.skip("the API server must reach a webhook process on 127.0.0.1")
    with serving_webhooks(cluster, tmp_path_factory.mktemp("webhooks")):
        yield


def get(cluster: Cluster, ns: str, *what: str) -> Any:
    return json.loads(cluster.kubectl("get", "-n", ns, *what, "-o", "json"))


def get_or_none(cluster: Cluster, ns: str, *what: str) -> Any:
    out = cluster.kubectl("get", "-n", ns, *what, "-o", "json", "--ignore-not-found")
    return json.loads(out) if out.strip() else None


def conditions(job: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["message"])
            for c in (job.get("status") or {}).get("conditions", [])]


def events(cluster: Cluster, ns: str, name: str) -> set[tuple[str, str, str]]:
    items = get(cluster, ns, "events", "--field-selector", f"involvedObject.name={name}")
    return {(e["type"], e["reason"], e["message"]) for e in items["items"]}


def pod_names(cluster: Cluster, ns: str, selector: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in get(cluster, ns, "pods", "-l", selector)["items"]
                  if not p["metadata"].get("deletionTimestamp"))


def running_pod_names(cluster: Cluster, ns: str, selector: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in get(cluster, ns, "pods", "-l", selector)["items"]
                  if p.get("status", {}).get("phase") == "Running"
                  and not p["metadata"].get("deletionTimestamp"))


def v1_workers(name: str) -> str:
    return (f"training.kubeflow.org/job-name={name},"
            "training.kubeflow.org/replica-type=worker")


def succeeded(cluster: Cluster, ns: str, resource: str, name: str) -> Any:
    def probe() -> Any:
        job = get(cluster, ns, resource, name)
        return job if ("Succeeded", "True") in [c[:2] for c in conditions(job)] else None
    return wait_for(probe, timeout=120, what=f"{resource} {name} to succeed")


def test_the_v1_elastic_manifest_runs_in_kubectl_exec_mode(
        controller: ControllerProcess, webhooks: None, cluster: Cluster, namespace: str) -> None:
    ns, name = namespace, ELASTIC
    cluster.kubectl("apply", "-n", ns, "-f", str(REPO / EXAMPLES["v1"]))
    launcher = wait_for(lambda: get_or_none(cluster, ns, "pod", f"{name}-launcher"),
                        timeout=60, what="the launcher pod")
    assert launcher["metadata"]["labels"] == {
        "group-name": "kubeflow.org", "job-name": name,
        "training.kubeflow.org/job-name": name,
        "training.kubeflow.org/operator-name": "mpijob-controller",
        "training.kubeflow.org/replica-type": "launcher",
        "training.kubeflow.org/job-role": "master"}
    spec = launcher["spec"]
    assert spec["serviceAccountName"] == f"{name}-launcher"
    [init] = spec["initContainers"]
    assert (init["name"], init["image"]) == (
        "kubectl-delivery", "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest")
    assert init["resources"]["requests"]["ephemeral-storage"] == "5Gi"
    env = {e["name"]: e.get("value", "") for e in spec["containers"][0]["env"]}
    assert env["OMPI_MCA_plm_rsh_agent"] == "/etc/mpi/kubexec.sh"
    assert env["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"
    role = get(cluster, ns, "role", f"{name}-launcher")
    assert role["rules"][1] == {"apiGroups": [""], "resources": ["pods/exec"],
                                "verbs": ["create"],
                                "resourceNames": [f"{name}-worker-0", f"{name}-worker-1"]}
    binding = get(cluster, ns, "rolebinding", f"{name}-launcher")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": f"{name}-launcher",
                                    "namespace": ns}]
    assert get(cluster, ns, "serviceaccount", f"{name}-launcher")["metadata"]["labels"] == {
        "app": name}
    worker = get(cluster, ns, "pod", f"{name}-worker-0")
    assert worker["spec"]["containers"][0]["command"] == ["sleep"]
    assert worker["spec"]["containers"][0]["args"] == ["365d"]
    config = get(cluster, ns, "configmap", f"{name}-config")["data"]
    assert config["hostfile"] == f"{name}-worker-0 slots=1\n{name}-worker-1 slots=1\n"

    job = succeeded(cluster, ns, "mpijobs.v1.kubeflow.org", name)
    assert job["apiVersion"] == "kubeflow.org/v1"
    found = conditions(job)
    assert found[0] == ("Created", "True", "MPIJobCreated", f"MPIJob {name} is created.")
    assert found[-1] == ("Succeeded", "True", "MPIJobSucceeded",
                         f"MPIJob {name} is successfully completed.")
    assert ("Running", "False", "MPIJobRunning", f"MPIJob {name} is running.") in found
    assert job["status"]["replicaStatuses"]["Launcher"] == {"succeeded": 1}
    seen = events(cluster, ns, name)
    for event in (("Normal", "SuccessfulCreatePod", f"Created worker pod: {name}-worker-0"),
                  ("Normal", "SuccessfulCreatePod", f"Created worker pod: {name}-worker-1"),
                  ("Normal", "MPIJobRunning", f"launcher pod created success: {name}-launcher"),
                  ("Normal", "MPIJobSucceeded", f"MPIJob {name} is successfully completed."),
                  ("Normal", "mpijobsSucceeded", f"MPIJob {ns}/{name} successfully completed.")):
        assert event in seen, (event, seen)
    # cleanPodPolicy Running: the sleeping workers go, the finished launcher stays
    wait_for(lambda: pod_names(cluster, ns, v1_workers(name)) == [], timeout=60,
             what="the Running workers to be deleted")
    assert get(cluster, ns, "pod", f"{name}-launcher")["status"]["phase"] == "Succeeded"


def _discover_hosts(cluster: Cluster, ns: str, name: str) -> str:
    data: str = get(cluster, ns, "configmap", f"{name}-config")["data"]["discover_hosts.sh"]
    return data


def _exec_names(cluster: Cluster, ns: str, name: str) -> list[str]:
    names: list[str] = get(cluster, ns, "role", f"{name}-launcher")["rules"][1]["resourceNames"]
    return names


def test_the_v1_elastic_job_scales_2_3_1(
        controller: ControllerProcess, webhooks: None, cluster: Cluster, namespace: str) -> None:
    ns, name = namespace, ELASTIC
    doc = yaml.safe_load((REPO / EXAMPLES["v1"]).read_text())
    doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"] = {
        "annotations": {DURATION: "600s"}}  # the launcher runs while the job scales
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(doc))

    def hosts(n: int) -> str:
        return "#!/bin/sh" + "".join(f"\necho {name}-worker-{i}:1" for i in range(n))

    for replicas in (2, 3, 1):
        if replicas != 2:
            cluster.kubectl("patch", "-n", ns, "mpijobs.v1.kubeflow.org", name, "--type",
                            "merge", "-p", json.dumps({"spec": {"mpiReplicaSpecs": {
                                "Worker": {"replicas": replicas}}}}))
        wanted = [f"{name}-worker-{i}" for i in range(replicas)]
        wait_for(lambda wanted=wanted: pod_names(cluster, ns, v1_workers(name)) == wanted
                 and running_pod_names(cluster, ns, v1_workers(name)) == wanted,
                 timeout=60, what=f"{replicas} Running workers")
        wait_for(lambda n=replicas: _discover_hosts(cluster, ns, name) == hosts(n),
                 timeout=60, what=f"discover_hosts.sh with {replicas} workers")
        assert _exec_names(cluster, ns, name) == wanted
        config = get(cluster, ns, "configmap", f"{name}-config")["data"]
        assert config["hostfile"] == "".join(f"{w} slots=1\n" for w in wanted)
    job = get(cluster, ns, "mpijobs.v1.kubeflow.org", name)
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 1
    assert ("Running", "True") in [c[:2] for c in conditions(job)]


def test_the_v1alpha2_benchmarks_manifest_runs_as_v0_2_3(
        controller: ControllerProcess, webhooks: None, cluster: Cluster, namespace: str) -> None:
    ns, name = namespace, BENCHMARKS
    cluster.kubectl("apply", "-n", ns, "-f", str(REPO / EXAMPLES["v1alpha2"]))
    sts = wait_for(lambda: get_or_none(cluster, ns, "statefulset", f"{name}-worker"),
                   timeout=60, what="the worker StatefulSet")
    own = {"group_name": "kubeflow.org", "mpi_job_name": name, "mpi_role_type": "worker"}
    assert sts["metadata"]["labels"] == own
    assert (sts["spec"]["podManagementPolicy"], sts["spec"]["serviceName"]) == (
        "Parallel", f"{name}-worker")
    assert sts["spec"]["template"]["spec"]["containers"][0]["command"] == ["sleep"]
    launcher = get(cluster, ns, "job.batch", f"{name}-launcher")
    assert launcher["spec"]["backoffLimit"] == 6
    assert launcher["spec"]["template"]["spec"]["serviceAccountName"] == f"{name}-launcher"
    assert launcher["spec"]["template"]["spec"]["initContainers"][0]["image"] == (
        "mpioperator/kubectl-delivery:latest")

    job = succeeded(cluster, ns, "mpijobs.v1alpha2.kubeflow.org", name)
    assert job["apiVersion"] == "kubeflow.org/v1alpha2"
    found = conditions(job)
    assert found[0] == ("Created", "True", "MPIJobCreated", f"MPIJob {ns}/{name} is created.")
    assert found[-1] == ("Succeeded", "True", "MPIJobSucceeded",
                         f"MPIJob {ns}/{name} successfully completed.")
    # the launcher ran while both workers were ready; Succeeded flips Running to False
    assert found[1] == ("Running", "False", "MPIJobRunning", f"MPIJob {ns}/{name} is running.")
    assert [c[0] for c in found] == ["Created", "Running", "Succeeded"]
    assert job["status"]["replicaStatuses"]["Launcher"] == {"succeeded": 1}
    assert ("Normal", "MPIJobSucceeded", f"MPIJob {ns}/{name} successfully completed.") in (
        events(cluster, ns, name))
    # docs/mpijob.md's way to find the launcher
    pods = pod_names(cluster, ns, f"mpi_job_name={name},mpi_role_type=launcher")
    [pod] = pods
    assert pod.startswith(f"{name}-launcher-"), pod
    # cleanPodPolicy Running: the StatefulSet scaled to 0, Worker counts nothing
    wait_for(lambda: get(cluster, ns, "statefulset", f"{name}-worker")["spec"]["replicas"] == 0
             and get(cluster, ns, "mpijobs.v1alpha2.kubeflow.org", name)["status"][
                 "replicaStatuses"].get("Worker") == {},
             timeout=60, what="the workers scaled to 0")
