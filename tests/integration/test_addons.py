"""Smoke tests of the local cluster's addons (``hack/local-cluster.sh up --addons
kueue,volcano,scheduler-plugins``, hack/lib/addons.sh): each proves its addon works for real.

* Kueue admits a plain ``batch/v1`` Job through a ClusterQueue and a LocalQueue (its webhook
  creates the Job suspended; the Job is unsuspended once its Workload is admitted and runs to
  completion), keeps a Job that exceeds the quota suspended, refuses an invalid queue name and a
  queue change of an admitted Job, and admits a job of each enabled kubeflow.org integration
  (MPIJob, TFJob, PyTorchJob, XGBoostJob, PaddleJob, JAXJob).
* Volcano's ``vc-scheduler`` (scheduler ``volcano``) binds no pod of a PodGroup of 3 while only 2
  fit on the test's KWOK nodes, and binds all 3 once a node is added.
* scheduler-plugins' Coscheduling (scheduler ``scheduler-plugins-scheduler``) does the same with
  a ``scheduling.x-k8s.io`` PodGroup, and refuses a group whose ``minResources`` exceed what
  the nodes have; its controller reports the group Running.

They need a cluster whose addons are up, in a state directory of its own: ``make addons-test``
brings it up (building the addons on first use, several minutes each) and runs this file with
``MPI_CONTROLLER_ADDONS_CLUSTER_DIR`` pointing at it. Without that variable (``make test``)
every test here is skipped; a test whose addon is not among those started is skipped too.
Gang tests put their pods on small KWOK nodes of their own (2 CPUs, labelled with the test's
namespace), so that what fits is known.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from tests.support import unique_name, wait_for

pytestmark = pytest.mark.cluster

ENV = "MPI_CONTROLLER_ADDONS_CLUSTER_DIR"
TEST_NODE_LABEL = "addons-test.mpi-controller.io/namespace"
KUEUE = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


@dataclass(frozen=True)
class Addons:
    """The cluster the addons run on: its state directory, the addons started, an API client."""

    state: Path
    enabled: frozenset[str]
    api: client.ApiClient

    def require(self, addon: str) -> None:
        if addon not in self.enabled:
            pytest.skip(f"{addon} is not up on the cluster in {self.state} "
                        f"(started: {', '.join(sorted(self.enabled)) or 'none'})")

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)

    @property
    def custom(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self.api)

    @property
    def batch(self) -> client.BatchV1Api:
        return client.BatchV1Api(self.api)


@pytest.fixture(scope="module")
def addons() -> Iterator[Addons]:
    directory = os.environ.get(ENV)
    if not directory:
        pytest.skip(f"no addons cluster: `make addons-test` starts one and sets {ENV}")
    state = Path(directory)
    kubeconfig = state / "kubeconfig"
    assert kubeconfig.exists(), f"{ENV}={directory} holds no cluster (no kubeconfig)"
    enabled_file = state / "addons" / "enabled"
    enabled = frozenset(enabled_file.read_text().split()) if enabled_file.exists() else frozenset()
    api = config.new_client_from_config(config_file=str(kubeconfig))
    yield Addons(state=state, enabled=enabled, api=api)
    api.close()


# Each test names its addon by its name's prefix: it is skipped when that addon is not up.
ADDON_OF_TEST = {"test_kueue_": "kueue", "test_volcano_": "volcano",
                 "test_coscheduling_": "scheduler-plugins"}


@pytest.fixture(autouse=True)
def _addon_is_up(request: pytest.FixtureRequest, addons: Addons) -> None:
    """Skips the test before any namespace or node is made for it."""
    for prefix, addon in ADDON_OF_TEST.items():
        if request.node.name.startswith(prefix):
            addons.require(addon)
            return
    raise AssertionError(f"{request.node.name} names no addon ({', '.join(ADDON_OF_TEST)})")


@pytest.fixture
def namespace(addons: Addons) -> Iterator[str]:
    name = unique_name("addons")
    addons.core.create_namespace({"metadata": {"name": name}})
    wait_for(lambda: addons.core.list_namespaced_service_account(
        name, field_selector="metadata.name=default").items,
        timeout=60, what=f"the default ServiceAccount of {name}")
    yield name
    # MPIJobs through the stored version (the namespace controller would list them through v1,
    # whose conversion webhook is not served here), then the namespace.
    with contextlib.suppress(client.ApiException):
        addons.custom.delete_collection_namespaced_custom_object(
            "kubeflow.org", "v2beta1", name, "mpijobs")
    addons.core.delete_namespace(name, propagation_policy="Background")


NodeFactory = Callable[[str], str]


@pytest.fixture
def small_nodes(addons: Addons, namespace: str) -> Iterator[NodeFactory]:
    """``add(cpu)`` creates a Ready KWOK node with that many CPUs, labelled
    ``TEST_NODE_LABEL=<namespace>``, and returns its name; the nodes go with the test."""
    made: list[str] = []

    def add(cpu: str) -> str:
        name = f"{namespace}-n{len(made)}"
        capacity = {"cpu": cpu, "memory": "4Gi", "pods": "10"}
        addons.core.create_node({
            "metadata": {
                "name": name,
                "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                "labels": {"type": "kwok", "kubernetes.io/hostname": name,
                           TEST_NODE_LABEL: namespace},
            },
            "status": {"capacity": capacity, "allocatable": capacity},
        })
        made.append(name)
        wait_for(lambda: _node_ready(addons.core.read_node(name)), timeout=60,
                 what=f"node {name} to be Ready")
        return name

    yield add
    # The test's pods first (without a grace period: once their node is gone, nothing would
    # confirm their end), then the nodes.
    addons.core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
    for name in made:
        with contextlib.suppress(client.ApiException):
            addons.core.delete_node(name)


def _node_ready(node: Any) -> bool:
    taints = node.spec.taints or []
    return not taints and any(c.type == "Ready" and c.status == "True"
                              for c in node.status.conditions or [])


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in obj.get("status", {}).get("conditions") or [] if c["type"] == kind),
                None)


# ---- Kueue ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Queues:
    cluster_queue: str
    local_queue: str


@pytest.fixture
def queues(addons: Addons, namespace: str) -> Iterator[Queues]:
    """A ResourceFlavor and a ClusterQueue (2 CPUs, 2Gi) for the test's namespace, and a
    LocalQueue ``queue`` in it, once the ClusterQueue is Active."""
    flavor, cluster_queue = f"{namespace}-flavor", f"{namespace}-cq"
    custom = addons.custom
    custom.create_cluster_custom_object(KUEUE, KUEUE_VERSION, "resourceflavors", {
        "apiVersion": f"{KUEUE}/{KUEUE_VERSION}", "kind": "ResourceFlavor",
        "metadata": {"name": flavor}})
    custom.create_cluster_custom_object(KUEUE, KUEUE_VERSION, "clusterqueues", {
        "apiVersion": f"{KUEUE}/{KUEUE_VERSION}", "kind": "ClusterQueue",
        "metadata": {"name": cluster_queue},
        "spec": {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
            "resourceGroups": [{
                "coveredResources": ["cpu", "memory"],
                "flavors": [{"name": flavor, "resources": [
                    {"name": "cpu", "nominalQuota": "2"},
                    {"name": "memory", "nominalQuota": "2Gi"}]}],
            }],
        }})
    custom.create_namespaced_custom_object(KUEUE, KUEUE_VERSION, namespace, "localqueues", {
        "apiVersion": f"{KUEUE}/{KUEUE_VERSION}", "kind": "LocalQueue",
        "metadata": {"name": "queue"}, "spec": {"clusterQueue": cluster_queue}})

    def active() -> bool:
        cq = custom.get_cluster_custom_object(KUEUE, KUEUE_VERSION, "clusterqueues", cluster_queue)
        condition = _condition(cq, "Active")
        return bool(condition and condition["status"] == "True")

    wait_for(active, timeout=60, what=f"ClusterQueue {cluster_queue} to be Active")
    yield Queues(cluster_queue=cluster_queue, local_queue="queue")
    for plural, name in (("clusterqueues", cluster_queue), ("resourceflavors", flavor)):
        with contextlib.suppress(client.ApiException):
            custom.delete_cluster_custom_object(KUEUE, KUEUE_VERSION, plural, name)


def _batch_job(name: str, *, queue: str, cpu: str, parallelism: int = 1,
               duration: str = "3s") -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "labels": {QUEUE_LABEL: queue}},
        "spec": {
            "suspend": False, "parallelism": parallelism, "completions": parallelism,
            "template": {
                "metadata": {"annotations": {"sim.mpi-controller.io/duration": duration}},
                "spec": {"restartPolicy": "Never", "containers": [{
                    "name": "main", "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]},
            },
        },
    }


def _workload_of(addons: Addons, namespace: str, owner_uid: str) -> dict[str, Any] | None:
    workloads = addons.custom.list_namespaced_custom_object(
        KUEUE, KUEUE_VERSION, namespace, "workloads")["items"]
    return next((w for w in workloads
                 if any(r["uid"] == owner_uid for r in w["metadata"].get("ownerReferences", []))),
                None)


def _admitted_workload(addons: Addons, namespace: str, owner_uid: str) -> dict[str, Any] | None:
    workload = _workload_of(addons, namespace, owner_uid)
    admitted = workload and _condition(workload, "Admitted")
    return workload if admitted and admitted["status"] == "True" else None


def test_kueue_admits_a_job_through_its_queues(addons: Addons, namespace: str,
                                               queues: Queues) -> None:
    batch = addons.batch
    created = batch.create_namespaced_job(
        namespace, _batch_job("fits", queue=queues.local_queue, cpu="500m", parallelism=2))
    # Kueue's mutating webhook suspends a Job that names a queue, whatever it asked for.
    assert created.spec.suspend is True

    workload = wait_for(lambda: _admitted_workload(addons, namespace, created.metadata.uid),
                        timeout=60, what="the Job's Workload to be admitted")
    assert workload["status"]["admission"]["clusterQueue"] == queues.cluster_queue
    # Read through the older version, the API server converts it through Kueue's webhook.
    old = addons.custom.get_namespaced_custom_object(
        KUEUE, "v1beta1", namespace, "workloads", workload["metadata"]["name"])
    assert old["apiVersion"] == f"{KUEUE}/v1beta1"
    assert old["status"]["admission"]["clusterQueue"] == queues.cluster_queue
    wait_for(lambda: batch.read_namespaced_job("fits", namespace).spec.suspend is False,
             timeout=60, what="Kueue to unsuspend the admitted Job")

    def complete() -> bool:
        job = batch.read_namespaced_job("fits", namespace)
        return any(c.type == "Complete" and c.status == "True"
                   for c in job.status.conditions or [])

    wait_for(complete, timeout=90, what="the admitted Job to complete")

    def finished() -> bool:
        condition = _condition(_workload_of(addons, namespace, created.metadata.uid) or {},
                               "Finished")
        return bool(condition and condition["status"] == "True")

    wait_for(finished, timeout=30, what="Kueue to mark the Job's Workload Finished")

    # Its queue cannot change once it is admitted (unsuspended).
    with pytest.raises(client.ApiException) as refused:
        batch.patch_namespaced_job("fits", namespace,
                                   {"metadata": {"labels": {QUEUE_LABEL: "other"}}})
    message = json.loads(refused.value.body)["message"]
    assert message.startswith('admission webhook "vjob.kb.io" denied the request: '
                              f'metadata.labels[{QUEUE_LABEL}]: Invalid value: "other": '
                              "field is immutable"), message

    # A Job larger than the ClusterQueue's quota is never admitted: it stays suspended.
    big = batch.create_namespaced_job(namespace, _batch_job("too-big", queue=queues.local_queue,
                                                            cpu="3"))

    def no_quota() -> dict[str, Any] | None:
        workload = _workload_of(addons, namespace, big.metadata.uid)
        reserved = workload and _condition(workload, "QuotaReserved")
        judged = reserved and reserved["status"] == "False"
        return reserved if judged and "insufficient quota" in reserved["message"] else None

    wait_for(no_quota, timeout=60, what="Kueue to find no quota for the big Job")
    assert batch.read_namespaced_job("too-big", namespace).spec.suspend is True


def test_kueue_webhook_refuses_an_invalid_queue_name(addons: Addons, namespace: str) -> None:
    with pytest.raises(client.ApiException) as refused:
        addons.batch.create_namespaced_job(namespace, _batch_job("bad", queue="Not_A_Queue",
                                                                 cpu="100m"))
    message = json.loads(refused.value.body)["message"]
    assert message.startswith('admission webhook "vjob.kb.io" denied the request: '
                              f'metadata.labels[{QUEUE_LABEL}]: Invalid value: "Not_A_Queue"'), (
        message)


# kind -> (version, plural, replica specs field, {replica type: container name})
KUBEFLOW_KINDS: dict[str, tuple[str, str, str, dict[str, str]]] = {
    "MPIJob": ("v2beta1", "mpijobs", "mpiReplicaSpecs",
               {"Launcher": "launcher", "Worker": "worker"}),
    "TFJob": ("v1", "tfjobs", "tfReplicaSpecs", {"Worker": "tensorflow"}),
    "PyTorchJob": ("v1", "pytorchjobs", "pytorchReplicaSpecs", {"Master": "pytorch"}),
    "XGBoostJob": ("v1", "xgboostjobs", "xgbReplicaSpecs", {"Master": "xgboost"}),
    "PaddleJob": ("v1", "paddlejobs", "paddleReplicaSpecs", {"Master": "paddle"}),
    "JAXJob": ("v1", "jaxjobs", "jaxReplicaSpecs", {"Worker": "jax"}),
}


@pytest.mark.parametrize("kind", sorted(KUBEFLOW_KINDS))
def test_kueue_admits_each_kubeflow_kind(addons: Addons, namespace: str, queues: Queues,
                                         kind: str) -> None:
    """No operator runs here: Kueue alone suspends the job at creation, makes its Workload
    from the replica specs, admits it and unsuspends it (``runPolicy.suspend``)."""
    version, plural, field, replicas = KUBEFLOW_KINDS[kind]
    container = {"image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
    job = {
        "apiVersion": f"kubeflow.org/{version}", "kind": kind,
        "metadata": {"name": "job", "labels": {QUEUE_LABEL: queues.local_queue}},
        "spec": {"runPolicy": {"suspend": False}, field: {
            replica: {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {
                "containers": [{"name": name, **container}]}}}
            for replica, name in replicas.items()}},
    }
    custom = addons.custom
    created = custom.create_namespaced_custom_object(
        "kubeflow.org", version, namespace, plural, job)
    assert created["spec"]["runPolicy"]["suspend"] is True

    workload = wait_for(lambda: _admitted_workload(addons, namespace, created["metadata"]["uid"]),
                        timeout=60, what=f"the {kind}'s Workload to be admitted")
    assert sorted(p["name"] for p in workload["spec"]["podSets"]) == sorted(
        r.lower() for r in replicas)
    wait_for(lambda: custom.get_namespaced_custom_object(
        "kubeflow.org", version, namespace, plural, "job")["spec"]["runPolicy"]["suspend"] is False,
        timeout=60, what=f"Kueue to unsuspend the {kind}")


# ---- gang scheduling: Volcano and scheduler-plugins ---------------------------------------------


def _gang_pod(name: str, *, namespace: str, scheduler: str, cpu: str,
              labels: dict[str, str] | None = None,
              annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {TEST_NODE_LABEL: namespace},
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}],
        },
    }


def _pods(addons: Addons, namespace: str) -> list[Any]:
    return addons.core.list_namespaced_pod(namespace).items


def _bound(pods: list[Any]) -> list[str]:
    return [p.metadata.name for p in pods if p.spec.node_name]


def _all_running_on(nodes: set[str]) -> Callable[[list[Any]], bool]:
    return lambda pods: bool(pods) and all(
        p.spec.node_name in nodes and p.status.phase == "Running" for p in pods)


def _scheduling_message(pod: Any) -> str:
    """The message of the pod's PodScheduled=False condition ("" when it has none)."""
    return next((c.message or "" for c in pod.status.conditions or []
                 if c.type == "PodScheduled" and c.status == "False"), "")


def test_volcano_binds_a_gang_only_when_all_of_it_fits(addons: Addons, namespace: str,
                                                       small_nodes: NodeFactory) -> None:
    first = small_nodes("2")
    addons.custom.create_namespaced_custom_object(
        "scheduling.volcano.sh", "v1beta1", namespace, "podgroups", {
            "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "gang"}, "spec": {"minMember": 3, "queue": "default"}})
    for i in range(3):
        addons.core.create_namespaced_pod(namespace, _gang_pod(
            f"member-{i}", namespace=namespace, scheduler="volcano", cpu="1",
            annotations={"scheduling.k8s.io/group-name": "gang"}))

    def held_back() -> dict[str, Any] | None:
        group = addons.custom.get_namespaced_custom_object(
            "scheduling.volcano.sh", "v1beta1", namespace, "podgroups", "gang")
        condition = _condition(group, "Unschedulable")
        # (Before its pods exist, the group is unschedulable with 0 tasks.)
        message = condition["message"] if condition and condition["status"] == "True" else ""
        return condition if "3 minAvailable; Pending: 1 Unschedulable, 2 Schedulable" in (
            message) else None

    # Two of the three fit on the first node ("Schedulable"): Volcano binds none of them.
    wait_for(held_back, timeout=60, what="Volcano to hold back the gang of 3 pods")
    assert _bound(_pods(addons, namespace)) == []

    second = small_nodes("2")
    wait_for(lambda: _all_running_on({first, second})(_pods(addons, namespace)), timeout=60,
             what="Volcano to bind the whole gang once it fits")
    wait_for(lambda: addons.custom.get_namespaced_custom_object(
        "scheduling.volcano.sh", "v1beta1", namespace, "podgroups", "gang")
        .get("status", {}).get("phase") == "Running", timeout=30,
        what="the PodGroup to be Running")


def _coscheduling_group(name: str, *, min_member: int,
                        min_resources: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member}
    if min_resources:
        spec["minResources"] = min_resources
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": name}, "spec": spec}


def test_coscheduling_binds_a_gang_only_when_min_member_fit(
        addons: Addons, namespace: str, small_nodes: NodeFactory) -> None:
    first = small_nodes("2")
    # scheduler-plugins' controller counts the pods labelled with a group's name in every
    # namespace: a name of its own keeps other tests' pods out of the count.
    group = unique_name("gang")
    addons.custom.create_namespaced_custom_object(
        "scheduling.x-k8s.io", "v1alpha1", namespace, "podgroups",
        _coscheduling_group(group, min_member=3))
    for i in range(3):
        addons.core.create_namespaced_pod(namespace, _gang_pod(
            f"member-{i}", namespace=namespace, scheduler="scheduler-plugins-scheduler", cpu="1",
            labels={"scheduling.x-k8s.io/pod-group": group}))

    # Two of the three fit on the first node: those wait at Permit and are rejected with the
    # third ("optimistic rejection"), none is bound. (Until the scheduler sees the PodGroup,
    # its pods are refused for that.)
    def held_back(pods: list[Any]) -> bool:
        messages = [_scheduling_message(p) for p in pods]
        return len(messages) == 3 and all(
            "optimistic rejection in PostFilter" in m or "Insufficient cpu" in m
            for m in messages) and any("optimistic rejection" in m for m in messages)

    wait_for(lambda: held_back(_pods(addons, namespace)), timeout=60,
             what="Coscheduling to hold back every member of the gang")
    assert _bound(_pods(addons, namespace)) == []

    second = small_nodes("2")
    wait_for(lambda: _all_running_on({first, second})(_pods(addons, namespace)), timeout=120,
             what="Coscheduling to bind the whole gang once it fits")
    # scheduler-plugins' controller follows the group's pods.
    def running() -> bool:
        status = addons.custom.get_namespaced_custom_object(
            "scheduling.x-k8s.io", "v1alpha1", namespace, "podgroups", group).get("status", {})
        return status.get("phase") == "Running" and status.get("running") == 3

    wait_for(running, timeout=60,
             what="scheduler-plugins' controller to report the PodGroup Running with 3 pods")


def test_coscheduling_refuses_a_gang_whose_min_resources_do_not_fit(
        addons: Addons, namespace: str, small_nodes: NodeFactory) -> None:
    small_nodes("2")
    # One member is enough by count and the pod fits on the test's node, but the group asks
    # for more CPUs than all the cluster's nodes have: only minResources holds the pod back.
    addons.custom.create_namespaced_custom_object(
        "scheduling.x-k8s.io", "v1alpha1", namespace, "podgroups",
        _coscheduling_group("greedy", min_member=1, min_resources={"cpu": "100000"}))
    addons.core.create_namespaced_pod(namespace, _gang_pod(
        "member", namespace=namespace, scheduler="scheduler-plugins-scheduler", cpu="1",
        labels={"scheduling.x-k8s.io/pod-group": "greedy"}))
    wait_for(lambda: "resource gap: map[cpu:" in _scheduling_message(
        addons.core.read_namespaced_pod("member", namespace)), timeout=60,
        what="Coscheduling to refuse the group's pod for its minResources")
    assert addons.core.read_namespaced_pod("member", namespace).spec.node_name is None
