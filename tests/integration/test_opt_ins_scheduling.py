"""Scheduling-side opt-ins on the real API server. The MPIJob scale subresource (CRD) and the
``ScaleSelector`` gate,
with the Kubernetes HPA controller (kubeflow/mpi-operator#278, #336): ``kubectl scale`` resizes
the workers and ``discover_hosts.sh`` follows; an HPA drives the scale subresource, but without
the gate it cannot select the worker pods (upstream never writes the selector).

On the local cluster the HPA controller runs as its own kube-controller-manager process (the
cluster's runs without it); on another cluster (kind) its own HPA controller is used. There is
no metrics API here, so an HPA that got the selector stops at reading the pods' metrics.

And the ``GangWaitForWorkersReady`` gate (kubeflow/mpi-operator#608), with a binder that plays
a coscheduling scheduler's rule (see :class:`CoschedulingBinder`)."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from mpi_controller.mpi.features import Features
from tests.controller_harness import running_controller
from tests.mpijobs import MPIJobs, small_job
from tests.support import HACK, Cluster, wait_for
from tests.webhooks import serving_webhooks

pytestmark = pytest.mark.cluster

SELECTOR = ("training.kubeflow.org/job-name=sc,training.kubeflow.org/job-role=worker,"
            "training.kubeflow.org/operator-name=mpi-operator")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def conversion(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The HPA controller reads and writes the scale subresource through the group's preferred
    MPIJob version, v1, so the conversion webhook must answer (deployed, the controller's
    pods serve it)."""
    if not cluster.local:
        pytest.skip("the API server must reach a webhook process on 127.0.0.1")
    with serving_webhooks(cluster, tmp_path_factory.mktemp("webhooks")):
        yield


@pytest.fixture(scope="module")
def hpa_controller(conversion: None, cluster: Cluster, tmp_path_factory: pytest.TempPathFactory,
                   ) -> Iterator[None]:
    if not cluster.local:
        yield  # kind and other clusters run the HPA controller in their controller-manager
        return
    bin_dir = subprocess.run(["bash", str(HACK), "bin-dir"], check=True, capture_output=True,
                             text=True).stdout.strip()
    log = (tmp_path_factory.mktemp("hpa") / "kube-controller-manager.log").open("wb")
    proc = subprocess.Popen(
        [str(Path(bin_dir) / "kube-controller-manager"), f"--kubeconfig={cluster.kubeconfig}",
         "--controllers=horizontal-pod-autoscaler-controller", "--leader-elect=false",
         "--bind-address=127.0.0.1", f"--secure-port={_free_port()}",
         f"--authentication-kubeconfig={cluster.kubeconfig}",
         f"--authorization-kubeconfig={cluster.kubeconfig}",
         "--horizontal-pod-autoscaler-sync-period=1s"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.fixture
def jobs(kube_api: Any, namespace: str, mpijob_crd: str) -> MPIJobs:
    return MPIJobs(kube_api, namespace)


def scale(jobs: MPIJobs, cluster: Cluster, name: str) -> dict[str, Any]:
    """The MPIJob's scale subresource as the API server serves it."""
    raw = cluster.kubectl("get", "--raw",
                          f"/apis/kubeflow.org/v2beta1/namespaces/{jobs.namespace}/mpijobs/"
                          f"{name}/scale")
    return json.loads(raw)  # type: ignore[no-any-return]


def running_workers(jobs: MPIJobs, name: str) -> list[str]:
    return sorted(p.metadata.name for p in jobs.workers(name) if p.status.phase == "Running")


def hpa(jobs: MPIJobs, name: str) -> Any:
    api = client.AutoscalingV2Api(jobs.custom.api_client)
    return api.create_namespaced_horizontal_pod_autoscaler(jobs.namespace, {
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                                    "name": name},
                 "minReplicas": 4, "maxReplicas": 6,
                 "metrics": [{"type": "Resource", "resource": {
                     "name": "cpu", "target": {"type": "Utilization",
                                               "averageUtilization": 50}}}]}})


def scaling_active(jobs: MPIJobs, name: str) -> tuple[str, str] | None:
    api = client.AutoscalingV2Api(jobs.custom.api_client)
    found = api.read_namespaced_horizontal_pod_autoscaler(name, jobs.namespace)
    for cond in found.status.conditions or []:
        if cond.type == "ScalingActive":
            return cond.status, cond.reason
    return None


def scaled_by_kubectl_and_hpa(jobs: MPIJobs, cluster: Cluster) -> None:
    """kubectl scale 2 -> 3 workers (discover_hosts.sh follows), then an HPA with
    minReplicas 4 scales to 4."""
    ns = jobs.namespace
    jobs.create(small_job("sc", workers=2, launcher_runs="600s"))
    wait_for(lambda: len(running_workers(jobs, "sc")) == 2, timeout=60, what="2 workers")
    cluster.kubectl("scale", "-n", ns, "mpijob/sc", "--replicas=3")
    wait_for(lambda: len(running_workers(jobs, "sc")) == 3, timeout=60, what="3 workers")
    wait_for(lambda: jobs.core.read_namespaced_config_map("sc-config", ns).data[
        "discover_hosts.sh"] == "#!/bin/sh\n" + "".join(
            f"echo sc-worker-{i}.sc.{ns}.svc\n" for i in range(3)),
        timeout=30, what="discover_hosts.sh to list the 3 workers")
    hpa(jobs, "sc")
    wait_for(lambda: jobs.get("sc")["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 4,
             timeout=60, what="the HPA to scale to its minReplicas")
    wait_for(lambda: len(running_workers(jobs, "sc")) == 4, timeout=60, what="4 workers")


def test_without_the_gate_an_hpa_cannot_select_the_workers(
        jobs: MPIJobs, cluster: Cluster, namespace: str, hpa_controller: None) -> None:
    with running_controller(cluster.kubeconfig, namespace):
        scaled_by_kubectl_and_hpa(jobs, cluster)
        wait_for(lambda: scale(jobs, cluster, "sc")["status"] == {"replicas": 4}, timeout=30,
                 what="the scale status: 4 replicas, no selector")
        wait_for(lambda: scaling_active(jobs, "sc") == ("False", "InvalidSelector"),
                 timeout=60, what="the HPA to report the missing selector")

        def hpa_events() -> set[tuple[str, str, str]]:
            return {(e.type, e.reason, e.message) for e in jobs.core.list_namespaced_event(
                namespace, field_selector="involvedObject.kind=HorizontalPodAutoscaler").items}

        wait_for(lambda: ("Warning", "SelectorRequired", "selector is required") in hpa_events(),
                 timeout=30, what="the HPA's SelectorRequired event")


def test_with_the_gate_an_hpa_selects_the_workers(
        jobs: MPIJobs, cluster: Cluster, namespace: str, hpa_controller: None) -> None:
    with running_controller(cluster.kubeconfig, namespace,
                            features=Features(scale_selector=True)):
        scaled_by_kubectl_and_hpa(jobs, cluster)
        wait_for(lambda: scale(jobs, cluster, "sc")["status"] == {"replicas": 4,
                                                                  "selector": SELECTOR},
                 timeout=30, what="the scale status: 4 replicas and the workers' selector")
        # Past the selector, it reads the pods' CPU; this cluster has no metrics API.
        wait_for(lambda: scaling_active(jobs, "sc") == ("False", "FailedGetResourceMetric"),
                 timeout=60, what="the HPA to read the selected pods' metrics")


# -- gang scheduling with WaitForWorkersReady (#608) -----------------------------------------

GANG_SCHEDULER = "coscheduling-test"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


class CoschedulingBinder:
    """Plays a coscheduling scheduler's admission rule for pods with ``schedulerName``
    :data:`GANG_SCHEDULER` in one namespace: the pods of a ``scheduling.x-k8s.io`` PodGroup
    are bound (to a KWOK node) only once at least ``minMember`` of them exist, as
    scheduler-plugins' Coscheduling plugin admits them. (scheduler-plugins itself cannot be
    built here: v0.34.7 needs Kubernetes 1.34 modules the module proxy does not serve, and
    does not compile against the cluster's 1.36.)"""

    def __init__(self, api: Any, namespace: str) -> None:
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.namespace = namespace
        self.stop = threading.Event()
        self.held: dict[str, int] = {}  # group -> pods seen waiting for their group
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> CoschedulingBinder:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        node = "kwok-node-0"
        while not self.stop.wait(0.2):
            with contextlib.suppress(client.ApiException):
                self._bind_admitted(node)

    def _bind_admitted(self, node: str) -> None:
        groups: dict[str, list[Any]] = {}
        for pod in self.core.list_namespaced_pod(self.namespace).items:
            group = (pod.metadata.labels or {}).get(POD_GROUP_LABEL)
            if (pod.spec.scheduler_name == GANG_SCHEDULER and group
                    and not pod.metadata.deletion_timestamp):
                groups.setdefault(group, []).append(pod)
        for group, pods in groups.items():
            spec = self.custom.get_namespaced_custom_object(
                "scheduling.x-k8s.io", "v1alpha1", self.namespace, "podgroups", group)["spec"]
            waiting = [p for p in pods if not p.spec.node_name]
            if len(pods) < int(spec.get("minMember") or 0):
                self.held[group] = len(waiting)
                continue
            for pod in waiting:
                self.core.create_namespaced_pod_binding(
                    pod.metadata.name, self.namespace,
                    {"metadata": {"name": pod.metadata.name},
                     "target": {"apiVersion": "v1", "kind": "Node", "name": node}},
                    _preload_content=False)


def gang_job(name: str) -> dict[str, Any]:
    return small_job(name, workers=2, launcher_runs="2s",
                     launcherCreationPolicy="WaitForWorkersReady")


@pytest.fixture
def pod_group_crd(kube_api: Any) -> None:
    from tests.integration.test_controller import _install_pod_group_crd

    _install_pod_group_crd(kube_api, "scheduling.x-k8s.io", "v1alpha1")


def pod_group(jobs: MPIJobs, name: str) -> dict[str, Any]:
    return jobs.custom.get_namespaced_custom_object(  # type: ignore[no-any-return]
        "scheduling.x-k8s.io", "v1alpha1", jobs.namespace, "podgroups", name)


def test_upstream_gang_scheduling_with_wait_for_workers_ready_deadlocks(
        jobs: MPIJobs, cluster: Cluster, namespace: str, kube_api: Any,
        pod_group_crd: None) -> None:
    with running_controller(cluster.kubeconfig, namespace, gang_scheduling=GANG_SCHEDULER) \
            as controller, CoschedulingBinder(kube_api, namespace) as binder:
        jobs.create(gang_job("gang"))
        wait_for(lambda: binder.held.get("gang") == 2, timeout=60,
                 what="the two workers waiting for their group")
        assert pod_group(jobs, "gang")["spec"]["minMember"] == 3  # workers + launcher
        wait_for(controller.idle, timeout=30, what="the controller to be idle")
        assert [p.spec.node_name for p in jobs.workers("gang")] == [None, None]
        assert jobs.batch.list_namespaced_job(namespace).items == []  # no launcher, ever
        assert "Running" not in jobs.conditions("gang")


def test_with_the_gate_the_pod_group_waits_only_for_the_workers(
        jobs: MPIJobs, cluster: Cluster, namespace: str, kube_api: Any,
        pod_group_crd: None) -> None:
    with running_controller(cluster.kubeconfig, namespace, gang_scheduling=GANG_SCHEDULER,
                            features=Features(gang_wait_for_workers_ready=True)), \
            CoschedulingBinder(kube_api, namespace):
        jobs.create(gang_job("gangok"))
        wait_for(lambda: pod_group(jobs, "gangok"), timeout=30, what="the PodGroup")
        assert pod_group(jobs, "gangok")["spec"]["minMember"] == 2
        jobs.wait_condition("gangok", "Succeeded", timeout=90)
        launcher = jobs.batch.read_namespaced_job("gangok-launcher", namespace)
        assert launcher.spec.template.spec.scheduler_name == GANG_SCHEDULER
