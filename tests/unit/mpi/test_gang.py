"""PodGroups and gang decoration (upstream podgroup.go) and resource quantities."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mpi_controller.kube.quantity import parse_quantity
from mpi_controller.mpi.gang import (
    new_pod_group,
    pod_group_api,
    pod_group_needs_update,
    priority_class_values,
    update_pod_group,
)
from mpi_controller.mpi.launcher import new_launcher_job
from mpi_controller.mpi.worker import new_worker
from tests.unit.mpi.conftest import pi_job

Golden = Callable[[str, Any], None]


def _resources(
    job: dict[str, Any],
    role: str,
    requests: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    pc: str | None = None,
) -> None:
    spec = job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    spec["containers"][0]["resources"] = res
    if pc:
        spec["priorityClassName"] = pc


def _job_with_resources() -> dict[str, Any]:
    job = pi_job()
    _resources(job, "Launcher", requests={"cpu": "500m"}, limits={"cpu": 1, "memory": "1Gi"})
    _resources(job, "Worker", requests={"cpu": 2, "memory": "512Mi"})
    return job


def test_volcano_pod_group(golden: Golden) -> None:
    """Volcano PodGroup: minMember = workers + 1, queue from the MPIJob annotation, priority
    class from the launcher template, minResources = requests (limits where no request) x
    replicas: cpu 500m + 2x2 = 4500m, memory 1Gi + 2x512Mi = 2Gi."""
    job = _job_with_resources()
    job["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "q1"}
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["priorityClassName"] = "hi"
    pg = new_pod_group(job, gang_scheduling="volcano")
    assert pg is not None
    assert pg["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert pg["spec"] == {
        "minMember": 3,
        "queue": "q1",
        "priorityClassName": "hi",
        "minResources": {"cpu": "4500m", "memory": "2Gi"},
    }
    assert "labels" not in pg["metadata"]
    golden("volcano_pod_group", [pg])


def test_scheduling_policy_overrides() -> None:
    """schedulingPolicy: minAvailable, queue, priorityClass and minResources win; Volcano
    ignores scheduleTimeoutSeconds."""
    job = _job_with_resources()
    job["spec"]["runPolicy"]["schedulingPolicy"] = {
        "minAvailable": 2,
        "queue": "q2",
        "priorityClass": "p",
        "minResources": {"cpu": "9"},
        "scheduleTimeoutSeconds": 5,
    }
    pg = new_pod_group(job, gang_scheduling="volcano")
    assert pg is not None
    assert pg["spec"] == {
        "minMember": 2,
        "queue": "q2",
        "priorityClassName": "p",
        "minResources": {"cpu": "9"},
    }


def test_scheduler_plugins_pod_group() -> None:
    """scheduler-plugins PodGroup: minMember, scheduleTimeoutSeconds (default 0),
    minResources; no queue or priority class."""
    job = _job_with_resources()
    pg = new_pod_group(job, gang_scheduling="scheduler-plugins-scheduler")
    assert pg is not None
    assert pg["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert pg["spec"] == {
        "minMember": 3,
        "scheduleTimeoutSeconds": 0,
        "minResources": {"cpu": "4500m", "memory": "2Gi"},
    }


@pytest.mark.parametrize(
    ("launcher_pc", "worker_pc", "min_available", "expected_cpu"),
    [
        # Equal priorities: the worker entry is cut to minMember-1 = 1 -> 1 + 1x2.
        (None, None, 2, "3"),
        # Launcher higher: order [L, W]; W (lower) cut to 1 -> 1 + 2.
        ("high", None, 2, "3"),
        # Worker higher: order [W, L]; L (lower) cut to minMember-1 = 0 -> 2x2 + 0x1.
        (None, "high", 1, "4"),
        # replicas (3) <= minMember: nothing is cut.
        (None, None, 3, "5"),
    ],
)
def test_min_resources_with_priority_classes(
    launcher_pc: str | None, worker_pc: str | None, min_available: int, expected_cpu: str
) -> None:
    """calPGMinResource: stable sort by PriorityClass value (missing classes count 0); when
    launcher + worker replicas exceed minMember, cut the worker (equal priorities) or the
    lower-priority replica to minMember - 1, then sum requests x replicas."""
    job = pi_job()
    _resources(job, "Launcher", requests={"cpu": 1}, pc=launcher_pc)
    _resources(job, "Worker", requests={"cpu": 2}, pc=worker_pc)
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"minAvailable": min_available}
    classes = priority_class_values(
        [{"metadata": {"name": "high"}, "value": 1000}, {"metadata": {"name": "bad"}}]
    )
    assert classes == {"high": 1000}
    pg = new_pod_group(job, gang_scheduling="volcano", priority_classes=classes)
    assert pg is not None
    assert pg["spec"]["minResources"] == {"cpu": expected_cpu}


def test_min_member_zero_has_no_min_resources() -> None:
    job = _job_with_resources()
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"minAvailable": 0}
    pg = new_pod_group(job, gang_scheduling="volcano")
    assert pg is not None
    assert pg["spec"] == {}


def test_launcher_as_worker_without_workers_min_member_is_one() -> None:
    """Quirk 9: with runLauncherAsWorker and no Worker spec, minMember is 1 + 0."""
    job = pi_job(runLauncherAsWorker=True)
    del job["spec"]["mpiReplicaSpecs"]["Worker"]
    pg = new_pod_group(job, gang_scheduling="volcano")
    assert pg is not None
    assert pg["spec"]["minMember"] == 1


def test_gang_disabled() -> None:
    assert new_pod_group(pi_job(), gang_scheduling="") is None
    assert pod_group_api("") is None


def test_pod_decoration() -> None:
    """decoratePodTemplateSpec: Volcano sets schedulerName volcano and annotation
    scheduling.k8s.io/group-name; scheduler-plugins sets its schedulerName and label
    scheduling.x-k8s.io/pod-group. Both launcher template and workers are decorated."""
    job = pi_job()
    worker = new_worker(job, 0, gang_scheduling="volcano")
    assert worker["spec"]["schedulerName"] == "volcano"
    assert worker["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "pi"}
    tmpl = new_launcher_job(job, gang_scheduling="sp-sched")["spec"]["template"]
    assert tmpl["spec"]["schedulerName"] == "sp-sched"
    assert tmpl["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "pi"


def test_pod_group_update_is_semantic() -> None:
    """pgSpecsAreEqual uses semantic equality: quantities compare by value."""
    job = _job_with_resources()
    pg = new_pod_group(job, gang_scheduling="volcano")
    assert pg is not None
    same = update_pod_group(pg, pg)
    same["spec"]["minResources"] = {"cpu": "4.5", "memory": "2048Mi"}
    assert not pod_group_needs_update(same, pg)
    other = update_pod_group(pg, pg)
    other["spec"]["minMember"] = 9
    assert pod_group_needs_update(other, pg)


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("1Gi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("500m", "500m"),
        (1, "1"),
        ("1000", "1k"),
        ("2000m", "2"),
        ("0.5", "500m"),
        ("1e3", "1e3"),
        ("1024", "1024"),
        ("2048Ki", "2Mi"),
        ("0", "0"),
        ("100", "100"),
        ("1500", "1500"),
        ("0.1n", "1n"),
    ],
)
def test_quantity_canonical_form(text: object, printed: str) -> None:
    """resource.Quantity String(): canonical suffix, BinarySI falls back to DecimalSI below
    1024, sub-nano values round up."""
    q = parse_quantity(text)
    assert q is not None
    assert str(q) == printed


def test_quantity_arithmetic_keeps_left_format() -> None:
    one_gi, half_gi = parse_quantity("1Gi"), parse_quantity("512Mi")
    assert one_gi is not None
    assert half_gi is not None
    assert str(one_gi * 2 + half_gi) == "2560Mi"
    assert parse_quantity("abc") is None
    assert parse_quantity(True) is None
