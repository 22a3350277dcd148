"""PodGroups of the training-operator kinds (common/job.go, scheduling.go, util.go,
control/podgroup_control.go)."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.training import gang as g
from mpi_controller.engine.training.api import ReplicaSpec, run_policy

REF = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "j", "uid": "U",
       "controller": True, "blockOwnerDeletion": True}
JOB: dict[str, Any] = {"metadata": {"name": "j", "namespace": "ns",
                                    "annotations": {"a": "b"}}, "spec": {}}


def replica(rtype: str, replicas: int, resources: dict[str, Any],
            priority_class: str = "") -> ReplicaSpec:
    spec: dict[str, Any] = {"containers": [{"name": "tensorflow", "resources": resources}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return ReplicaSpec(rtype=rtype, replicas=replicas, restart_policy="Never",
                       template={"spec": spec})


def test_the_flag_selects_the_scheduler() -> None:
    assert g.gang_scheduler("") is None
    volcano = g.gang_scheduler("VOLCANO")
    assert volcano == g.GangScheduler("volcano", volcano=True)
    assert volcano.resource == g.VOLCANO_POD_GROUPS
    plugins = g.gang_scheduler("scheduler-plugins-scheduler")
    assert plugins == g.GangScheduler("scheduler-plugins-scheduler", volcano=False)
    assert plugins.resource.api_version == "scheduling.x-k8s.io/v1alpha1"


def test_min_resources_take_the_first_pods_by_priority() -> None:
    specs = {"Worker": replica("Worker", 3, {"requests": {"cpu": "1"}}, "low"),
             "PS": replica("PS", 2, {"limits": {"cpu": "500m", "memory": "1Gi"}}, "high"),
             "Chief": replica("Chief", 1, {"requests": {"memory": "2Gi"},
                                           "limits": {"cpu": "8"}})}
    values = {"high": 100, "low": 1}
    # PS (priority 100) first, by limits (no requests); then 2 of the 3 workers.
    assert g.min_resources(4, specs, values.get) == {"cpu": "3", "memory": "2Gi"}
    # All 6: the chief counts its requests only (its limits are ignored).
    assert g.min_resources(6, specs, values.get) == {"cpu": "4", "memory": "4Gi"}
    assert g.min_resources(0, specs, values.get) == {}


def test_volcano_pod_group() -> None:
    volcano = g.gang_scheduler("volcano")
    assert volcano is not None
    specs = {"Worker": replica("Worker", 2, {"requests": {"cpu": "1"}})}
    group = g.new_pod_group(JOB, specs, run_policy(JOB), volcano, owner_ref=REF,
                            priority=lambda _: None)
    assert group == {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                     "metadata": {"name": "j", "namespace": "ns", "ownerReferences": [REF],
                                  "annotations": {"a": "b"}},
                     "spec": {"minMember": 2, "queue": "default",
                              "minResources": {"cpu": "2"}}}
    job = {**JOB, "spec": {"runPolicy": {"schedulingPolicy": {
        "minAvailable": 1, "queue": "q", "priorityClass": "p", "minResources": {"gpu": 1}}}}}
    existing = {"spec": {"queue": "kept"}}
    group = g.new_pod_group(job, specs, run_policy(job), volcano, owner_ref=REF,
                            priority=lambda _: None, existing=existing)
    assert group["spec"] == {"minMember": 1, "queue": "kept", "priorityClassName": "p",
                             "minResources": {"gpu": 1}}
    assert not g.pod_group_changed(group, g.with_spec({"metadata": {}}, group))
    assert g.pod_group_changed(group, {"spec": {**group["spec"], "minMember": 2}})
    assert not g.pod_group_changed({"spec": {"minResources": {"cpu": "1000m"}}},
                                   {"spec": {"minResources": {"cpu": "1"}}})


def test_scheduler_plugins_pod_group() -> None:
    plugins = g.gang_scheduler("sp")
    assert plugins is not None
    specs = {"Worker": replica("Worker", 2, {})}
    group = g.new_pod_group(JOB, specs, run_policy(JOB), plugins, owner_ref=REF,
                            priority=lambda _: None)
    assert group["spec"] == {"minMember": 2}
    job = {**JOB, "spec": {"runPolicy": {"schedulingPolicy": {"scheduleTimeoutSeconds": 5}}}}
    assert g.new_pod_group(job, specs, run_policy(job), plugins, owner_ref=REF,
                           priority=lambda _: None)["spec"] == {
        "minMember": 2, "scheduleTimeoutSeconds": 5}


def test_volcano_delays_pods_until_the_group_is_admitted() -> None:
    volcano, plugins = g.gang_scheduler("volcano"), g.gang_scheduler("sp")
    assert volcano is not None
    assert plugins is not None
    assert g.delays_pod_creation(volcano, None)
    assert g.delays_pod_creation(volcano, {"status": {}})
    assert g.delays_pod_creation(volcano, {"status": {"phase": "Pending"}})
    assert not g.delays_pod_creation(volcano, {"status": {"phase": "Inqueue"}})
    assert not g.delays_pod_creation(plugins, None)


def test_custom_scheduler_set() -> None:
    plugins = g.gang_scheduler("sp")
    assert plugins is not None
    own = ReplicaSpec("Worker", 1, "Never", {"spec": {"schedulerName": "other"}})
    same = ReplicaSpec("PS", 1, "Never", {"spec": {"schedulerName": "sp"}})
    assert g.custom_scheduler_set({"Worker": own, "PS": same}, plugins)
    assert not g.custom_scheduler_set({"PS": same}, plugins)
