"""TrainJob under real Kueue v0.17.0 (its ``trainer.kubeflow.org/trainjob`` integration, which
the local cluster enables when the JobSet addon is up: ``hack/local-cluster.sh up --addons
jobset,kueue``), run by this controller (``--enable-scheme trainjob``) and the real JobSet
controller: what Kueue's own TrainJob e2e asserts of Kubeflow Trainer
(``test/e2e/singlecluster/trainjob_test.go`` and ``pkg/controller/jobs/trainjob`` of
sigs.k8s.io/kueue v0.17.0).

Each test has the namespace, ResourceFlavor (a node label and a toleration), 3-CPU ClusterQueue,
LocalQueue and two tainted flavor nodes of :func:`tests.addons.kueue_env`; the namespace
carries the label that Kueue's TrainJob webhooks select on the local cluster. The TrainJobs run on
a namespaced copy of the shipped ``torch-distributed`` runtime whose pods carry the KWOK
duration annotation, 1 CPU per node.

* **Admission** (``test_kueue_admits_a_trainjob_and_it_runs``): Kueue's webhook suspends a
  TrainJob that names a queue and adds its runtime patch (manager ``kueue.x-k8s.io/manager``,
  the queue's label for the JobSet);
  the Workload has one PodSet per replicated Job (``node``: 2); once admitted, Kueue writes the
  flavor's node selector, toleration and ``kueue.x-k8s.io/podset`` label into that patch and
  unsuspends the TrainJob; the JobSet this controller applies carries them, its pods run on the
  flavor's nodes; the TrainJob completes and the Workload is ``Finished`` (``Succeeded``, the
  TrainJob's ``Complete`` message).
* **Stop** (``test_a_held_cluster_queue_suspends_the_running_trainjob``): as Kueue's e2e
  "Should allow to suspend a TrainJob when injected nodeSelector": the ClusterQueue's
  ``stopPolicy: HoldAndDrain`` evicts the running TrainJob; it is suspended again, its JobSet
  suspended and its pods gone, and Kueue's patch is emptied of the scheduling directives it had
  injected (``RestorePodSetsInfo``).
* **Quota** (``test_a_trainjob_beyond_the_quota_waits_suspended``): 4 nodes of 1 CPU do not fit
  3 CPUs: the Workload stays pending without quota, the TrainJob suspended, no pod runs.

``make addons-test`` runs this file on a cluster with the addons; elsewhere it is skipped.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.addons import (
    DURATION,
    KUEUE,
    KUEUE_VERSION,
    PODSET_LABEL,
    QUEUE_LABEL,
    Addons,
    KueueEnv,
    Operator,
    condition,
    kueue_env,
    open_addons,
    ours_for_module,
    workload_when,
    workloads_of,
)
from tests.support import REPO, wait_for

pytestmark = pytest.mark.cluster

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
JOBSET = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
KUEUE_MANAGER = "kueue.x-k8s.io/manager"
KUEUE_TRAINJOB_NAMESPACE = "kueue-trainjob.addons-test.mpi-controller.io"
"""The namespace label Kueue's TrainJob webhooks select on the local cluster (hack/lib/addons.sh:
elsewhere they would give every TrainJob of the other tests a runtime patch of Kueue's)."""
RUNTIME, LONG_RUNTIME = "torch-kwok", "torch-kwok-long"
"""Namespaced copies of torch-distributed whose pods end after 8 s, or run for an hour."""


@pytest.fixture(scope="module")
def addons() -> Iterator[Addons]:
    opened = open_addons()
    opened.require("kueue", "jobset")
    yield opened
    opened.api.close()


@pytest.fixture(scope="module")
def controller(addons: Addons, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:
    with ours_for_module(addons, tmp_path_factory.mktemp("kueue-trainjob"),
                         "--enable-scheme", "trainjob") as operator:
        yield operator


@pytest.fixture
def env(addons: Addons, controller: Operator) -> Iterator[KueueEnv]:
    with kueue_env(addons, "kueue-tj", labels={KUEUE_TRAINJOB_NAMESPACE: "true"}) as made:
        shipped = yaml.safe_load(Path(REPO, "deploy/runtimes/torch-distributed.yaml").read_text())
        for name, duration in ((RUNTIME, "8s"), (LONG_RUNTIME, "1h")):
            runtime = copy.deepcopy(shipped)
            runtime["kind"] = "TrainingRuntime"
            runtime["metadata"] = {"name": name, "labels": shipped["metadata"]["labels"]}
            [node] = runtime["spec"]["template"]["spec"]["replicatedJobs"]
            node["template"]["spec"]["template"]["metadata"] = {
                "annotations": {DURATION: duration}}
            addons.custom.create_namespaced_custom_object(GROUP, VERSION, made.namespace,
                                                          "trainingruntimes", runtime)
        yield made


def trainjob(env: KueueEnv, name: str, nodes: int, runtime: str = RUNTIME) -> dict[str, Any]:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "TrainJob",
            "metadata": {"name": name, "labels": {QUEUE_LABEL: env.queues.local_queue}},
            "spec": {"runtimeRef": {"name": runtime, "kind": "TrainingRuntime"},
                     "trainer": {"numNodes": nodes, "image": "busybox",
                                 "command": ["torchrun", "train.py"],
                                 "resourcesPerNode": {"requests": {"cpu": "1",
                                                                   "memory": "100Mi"}}}}}
    created: dict[str, Any] = env.addons.custom.create_namespaced_custom_object(
        GROUP, VERSION, env.namespace, "trainjobs", body)
    return created


def get(env: KueueEnv, name: str) -> dict[str, Any]:
    found: dict[str, Any] = env.addons.custom.get_namespaced_custom_object(
        GROUP, VERSION, env.namespace, "trainjobs", name)
    return found


def jobset(env: KueueEnv, name: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = env.addons.custom.get_namespaced_custom_object(
            *JOBSET[:2], env.namespace, JOBSET[2], name)
    except client.ApiException as err:
        if err.status == 404:
            return None
        raise
    return found


def kueue_patch(job: dict[str, Any]) -> dict[str, Any]:
    [patch] = [p for p in job["spec"].get("runtimePatches") or []
               if p["manager"] == KUEUE_MANAGER]
    return patch


def live_pods(env: KueueEnv, name: str) -> list[Any]:
    pods = env.addons.core.list_namespaced_pod(
        env.namespace, label_selector=f"jobset.sigs.k8s.io/jobset-name={name}").items
    return [p for p in pods if not p.metadata.deletion_timestamp]


def test_kueue_admits_a_trainjob_and_it_runs(env: KueueEnv) -> None:
    created = trainjob(env, "train", 2)
    # Kueue's mutating webhook: suspended, and a patch of its own that gives the JobSet the
    # queue's label.
    assert created["spec"]["suspend"] is True
    assert kueue_patch(created) == {"manager": KUEUE_MANAGER, "trainingRuntimeSpec": {
        "template": {"metadata": {"labels": {QUEUE_LABEL: env.queues.local_queue}},
                     "spec": {}}}}
    uid = created["metadata"]["uid"]

    workload = workload_when(env, uid, "Admitted")
    assert {p["name"]: p["count"] for p in workload["spec"]["podSets"]} == {"node": 2}
    admission = workload["status"]["admission"]
    assert admission["clusterQueue"] == env.queues.cluster_queue
    assert {a["name"]: a["flavors"] for a in admission["podSetAssignments"]} == {
        "node": {"cpu": env.queues.flavor, "memory": env.queues.flavor}}

    job = wait_for(lambda: (lambda j: j if j["spec"].get("suspend") is False else None)(
        get(env, "train")), timeout=60, what="Kueue to unsuspend the TrainJob")
    [injected] = kueue_patch(job)["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    pod_patch = injected["template"]["spec"]["template"]
    assert injected["name"] == "node"
    assert pod_patch["spec"]["nodeSelector"] == env.queues.node_labels
    assert pod_patch["spec"]["tolerations"] == [env.queues.toleration]
    assert pod_patch["metadata"]["labels"] == {
        PODSET_LABEL: "node", "kueue.x-k8s.io/cluster-queue-name": env.queues.cluster_queue,
        "kueue.x-k8s.io/local-queue-name": env.queues.local_queue}

    # The JobSet this controller applied carries what Kueue injected, and so do the pods.
    made = wait_for(lambda: (lambda s: s if s and s["spec"].get("suspend") is False else None)(
        jobset(env, "train")), timeout=60, what="the JobSet to be resumed")
    template = made["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert template["spec"]["nodeSelector"] == env.queues.node_labels
    assert env.queues.toleration in template["spec"]["tolerations"]
    assert {k: template["metadata"]["labels"].get(k) for k in pod_patch["metadata"]["labels"]} \
        == pod_patch["metadata"]["labels"]
    pods = wait_for(lambda: (lambda p: p if len(p) == 2 and all(x.spec.node_name for x in p)
                             else None)(live_pods(env, "train")),
                    timeout=60, what="the TrainJob's two pods scheduled")
    for pod in pods:
        assert pod.spec.node_selector == env.queues.node_labels
        assert pod.spec.node_name in env.nodes
        assert pod.metadata.labels[PODSET_LABEL] == "node"

    complete = wait_for(lambda: condition(get(env, "train"), "Complete"), timeout=120,
                        what="the TrainJob Complete")
    assert (complete["status"], complete["reason"]) == ("True", "AllJobsCompleted")
    finished = workload_when(env, uid, "Finished")
    got = condition(finished, "Finished") or {}
    assert (got["reason"], got["message"]) == ("Succeeded", complete["message"]), got
    assert len(workloads_of(env.addons, env.namespace, uid)) == 1


def test_a_held_cluster_queue_suspends_the_running_trainjob(env: KueueEnv) -> None:
    created = trainjob(env, "held", 2, LONG_RUNTIME)
    uid = created["metadata"]["uid"]
    workload_when(env, uid, "Admitted")
    wait_for(lambda: len([p for p in live_pods(env, "held") if p.status.phase == "Running"]) == 2,
             timeout=60, what="the TrainJob's two pods running")
    env.addons.custom.patch_cluster_custom_object(
        KUEUE, KUEUE_VERSION, "clusterqueues", env.queues.cluster_queue,
        {"spec": {"stopPolicy": "HoldAndDrain"}})

    job = wait_for(lambda: (lambda j: j if j["spec"].get("suspend") is True else None)(
        get(env, "held")), timeout=60, what="Kueue to suspend the TrainJob again")
    suspended = wait_for(lambda: (lambda c: c if c and c["status"] == "True" else None)(
        condition(get(env, "held"), "Suspended")), timeout=60, what="Suspended=True")
    assert (suspended["reason"], suspended["message"]) == ("Suspended", "TrainJob is suspended")
    made = jobset(env, "held")
    assert made is not None
    assert made["spec"]["suspend"] is True
    wait_for(lambda: live_pods(env, "held") == [], timeout=60, what="the pods to be removed")
    # Kueue restores its patch once nothing is active (jobsStatus says so).
    wait_for(lambda: not kueue_patch(get(env, "held"))["trainingRuntimeSpec"]["template"]
             ["spec"].get("replicatedJobs"), timeout=60,
             what="Kueue to take its scheduling directives back")
    evicted = workload_when(env, uid, "Evicted")
    assert (condition(evicted, "Evicted") or {}).get("reason") == "ClusterQueueStopped"
    assert job["metadata"]["uid"] == uid


def test_a_trainjob_beyond_the_quota_waits_suspended(env: KueueEnv) -> None:
    created = trainjob(env, "big", 4)
    uid = created["metadata"]["uid"]
    pending = workload_when(env, uid, "QuotaReserved", status="False")
    reserved = condition(pending, "QuotaReserved") or {}
    assert reserved["reason"] == "Pending"
    assert "insufficient quota for cpu in flavor" in reserved["message"], reserved
    # Nothing changes while it waits: the same for 5 s.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        assert get(env, "big")["spec"]["suspend"] is True
        assert live_pods(env, "big") == []
        time.sleep(0.5)
    held = jobset(env, "big")
    assert held is None or held["spec"]["suspend"] is True
